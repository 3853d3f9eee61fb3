package elle

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// caseT is one table-driven checker test: a small history showing one
// anomaly, the model it is checked under, and the exact anomaly types and
// model boundary (Result.Not / AlsoNot) expected.
type caseT struct {
	name    string // the anomaly shown
	def     string // the definition it follows
	model   string
	params  map[string]string
	txns    []spec
	verdict check.Verdict
	types   []string
	not     []string
	alsoNot []string // nil: not checked
	reason  string   // substring of Result.Reason (Unknown verdicts)
}

func runCases(t *testing.T, c check.Checker, cases []caseT) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHB(t).add(tc.txns...).h
			r, err := c.Check(context.Background(), h, check.Options{Model: tc.model, Params: tc.params})
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if r.Verdict != tc.verdict {
				t.Errorf("verdict %v, want %v (reason %q)", r.Verdict, tc.verdict, r.Reason)
			}
			if !slices.Equal(r.AnomalyTypes, tc.types) {
				t.Errorf("anomaly types %v, want %v", r.AnomalyTypes, tc.types)
			}
			if !slices.Equal(r.Not, tc.not) {
				t.Errorf("not %q, want %q", r.Not, tc.not)
			}
			if tc.alsoNot != nil && !slices.Equal(r.AlsoNot, tc.alsoNot) {
				t.Errorf("also-not %q, want %q", r.AlsoNot, tc.alsoNot)
			}
			if tc.reason != "" && !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("reason %q does not mention %q", r.Reason, tc.reason)
			}
			for _, a := range r.Anomalies {
				if a.Explanation == "" {
					t.Errorf("%s: empty explanation", a.Type)
				}
				if strings.HasPrefix(a.Type, "G0") || strings.HasPrefix(a.Type, "G1c") || strings.HasPrefix(a.Type, "G-") || strings.HasPrefix(a.Type, "G2") {
					if len(a.Cycle) < 2 || len(a.Txns) != len(a.Cycle) {
						t.Errorf("%s: cycle %v txns %v", a.Type, a.Cycle, a.Txns)
					}
				}
				if testing.Verbose() {
					t.Logf("%s (allowed=%v):\n%s", a.Type, a.Allowed, a.Explanation)
				}
			}
		})
	}
}

// Histories mostly follow jepsen-io/elle's list_append_test.clj cases.
var listAppendCases = []caseT{
	{
		name: "valid", def: "a serial history", model: "strict-serializable",
		txns: []spec{
			ok("a", "append x 1").at(1, 2),
			ok("b", "r x [1]", "append x 2").at(3, 4),
			ok("a", "r x [1 2]", "r y nil").at(5, 6),
		},
		verdict: check.Valid, types: []string{},
	},
	{
		name: "G0", def: "Adya G0: a cycle of ww edges", model: "strict-serializable",
		txns: []spec{
			ok("", "append x 1", "append y 1"),
			ok("", "append x 2", "append y 2"),
			ok("", "r x [1 2]", "r y [2 1]"),
		},
		verdict: check.Invalid, types: []string{"G0"}, not: []string{"read-uncommitted"},
	},
	{
		name: "G1a", def: "Adya G1a: a committed txn reads an aborted txn's write", model: "read-committed",
		txns: []spec{
			fail("", "append x 1"),
			ok("", "r x [1]"),
		},
		verdict: check.Invalid, types: []string{"G1a", "empty-transaction-graph"}, not: []string{"read-committed"},
	},
	{
		name: "G1b", def: "Adya G1b: a committed txn reads a non-final write", model: "strict-serializable",
		txns: []spec{
			ok("", "append x 1", "append x 2"),
			ok("", "r x [1]"),
		},
		verdict: check.Invalid, types: []string{"G-single-item", "G1b"}, not: []string{"read-committed"},
	},
	{
		name: "G1c", def: "Adya G1c: a cycle of ww/wr edges with a wr edge", model: "read-committed",
		txns: []spec{
			ok("", "append x 1", "r y [1]"),
			ok("", "append x 2", "append y 1"),
			ok("", "r x [1 2]", "r y [1]"),
		},
		verdict: check.Invalid, types: []string{"G1c"}, not: []string{"read-committed"},
	},
	{
		name: "G-single-item", def: "Elle G-single-item: a cycle with exactly one rw edge", model: "serializable",
		txns: []spec{
			ok("", "append x 1", "append y 1"),
			ok("", "append x 2", "r y nil"),
			ok("", "r x [1 2]"),
		},
		verdict: check.Invalid, types: []string{"G-single-item"}, not: []string{"consistent-view", "repeatable-read"},
	},
	{
		name: "G-nonadjacent-item", def: "Elle G-nonadjacent-item: two or more non-adjacent rw edges", model: "serializable",
		txns: []spec{
			ok("", "append x 1"),
			ok("", "r x [1]", "r y nil"),
			ok("", "append y 1"),
			ok("", "r y [1]", "r x nil"),
		},
		verdict: check.Invalid, types: []string{"G-nonadjacent-item"}, not: []string{"repeatable-read", "snapshot-isolation"},
	},
	{
		name: "G2-item", def: "Adya G2-item: an item anti-dependency cycle (two adjacent rw)", model: "serializable",
		txns: []spec{
			ok("", "append x 1", "r y nil"),
			ok("", "append y 1", "r x nil"),
		},
		verdict: check.Invalid, types: []string{"G2-item"}, not: []string{"repeatable-read"},
	},
	{
		name: "G2-item/allowed-under-snapshot-isolation", def: "write skew is legal under SI", model: "snapshot-isolation",
		txns: []spec{
			ok("", "append x 1", "r y nil"),
			ok("", "append y 1", "r x nil"),
		},
		verdict: check.Valid, types: []string{}, not: nil,
	},
	{
		name: "G0-process", def: "Elle: G0 closed by session order", model: "strict-serializable",
		txns: []spec{
			ok("a", "append x 2"),
			ok("a", "append x 1"),
			ok("", "r x [1 2]"),
		},
		verdict: check.Invalid, types: []string{"G0-process"}, not: []string{"strong-session-read-uncommitted"},
	},
	{
		name: "G1c-process", def: "Elle: G1c closed by session order", model: "strict-serializable",
		txns: []spec{
			ok("a", "r y [1]"),
			ok("a", "append y 1"),
		},
		verdict: check.Invalid, types: []string{"G1c-process"}, not: []string{"strong-session-read-committed"},
	},
	{
		name: "G-single-item-process", def: "Elle: G-single-item closed by session order", model: "strong-session-snapshot-isolation",
		txns: []spec{
			ok("p0", "append x 1"),
			ok("p1", "append x 2"),
			ok("p1", "r x [1]"),
			ok("p2", "r x [1 2]"),
		},
		verdict: check.Invalid, types: []string{"G-single-item-process"}, not: []string{"strong-session-snapshot-isolation"},
	},
	{
		name: "G-nonadjacent-item-process", def: "Elle issue #17: non-adjacent rw edges closed by session order", model: "strong-session-snapshot-isolation",
		txns: []spec{
			ok("p0", "r x nil", "r z [1]"),
			ok("p1", "append x 1"),
			ok("p1", "r z nil"),
			ok("p2", "append z 1"),
		},
		verdict: check.Invalid, types: []string{"G-nonadjacent-item-process"}, not: []string{"strong-session-snapshot-isolation"},
	},
	{
		name: "G2-item-process", def: "Elle: G2-item closed by session order", model: "strict-serializable",
		txns: []spec{
			ok("a", "append y 1"),
			ok("a", "r x nil"),
			ok("b", "r y nil", "append x 1"),
		},
		verdict: check.Invalid, types: []string{"G2-item-process"}, not: []string{"strong-session-serializable"},
	},
	{
		name: "G0-realtime", def: "Elle: G0 closed by real-time order", model: "strict-serializable",
		txns: []spec{
			ok("", "append x 2").at(1, 2),
			ok("", "append x 1").at(3, 4),
			ok("", "r x [1 2]").at(5, 6),
		},
		verdict: check.Invalid, types: []string{"G0-realtime"}, not: []string{"strong-read-uncommitted"},
	},
	{
		name: "G1c-realtime", def: "Elle: G1c closed by real-time order", model: "strict-serializable",
		txns: []spec{
			ok("", "r y [1]").at(1, 2),
			ok("", "append y 1").at(3, 4),
		},
		verdict: check.Invalid, types: []string{"G1c-realtime"}, not: []string{"strong-read-committed"},
	},
	{
		name: "G-single-item-realtime", def: "Elle 'Strong SI violation': one rw edge closed by real-time order", model: "strict-serializable",
		txns: []spec{
			ok("", "append x 1").at(1, 2),
			ok("", "append x 2").at(3, 4),
			ok("", "r x [1]").at(5, 6),
			ok("", "r x [1 2]").at(7, 8),
		},
		verdict: check.Invalid, types: []string{"G-single-item-realtime"}, not: []string{"strong-snapshot-isolation"},
	},
	{
		name: "G-single-item-realtime/allowed-under-serializable", def: "serializability ignores real time", model: "serializable",
		txns: []spec{
			ok("", "append x 1").at(1, 2),
			ok("", "append x 2").at(3, 4),
			ok("", "r x [1]").at(5, 6),
			ok("", "r x [1 2]").at(7, 8),
		},
		verdict: check.Valid, types: []string{},
	},
	{
		name: "G-nonadjacent-item-realtime", def: "Elle: non-adjacent rw edges closed by real-time order", model: "strict-serializable",
		txns: []spec{
			ok("", "r x nil", "r z [1]").at(1, 7),
			ok("", "append x 1").at(3, 4),
			ok("", "r z nil").at(5, 6),
			ok("", "append z 1").at(1, 10),
		},
		verdict: check.Invalid, types: []string{"G-nonadjacent-item-realtime"}, not: []string{"strong-snapshot-isolation"},
	},
	{
		name: "G2-item-realtime", def: "Elle: adjacent rw edges closed by real-time order", model: "strict-serializable",
		txns: []spec{
			ok("", "append y 1").at(1, 2),
			ok("", "r x nil").at(3, 4),
			ok("", "r y nil", "append x 1").at(1, 10),
		},
		verdict: check.Invalid, types: []string{"G2-item-realtime"}, not: []string{"strict-serializable"},
	},
	{
		name: "internal", def: "Cerone et al. INT: a read disagrees with the txn's own earlier read and append", model: "strict-serializable",
		txns: []spec{
			ok("", "append x 1"),
			ok("", "r x [1]", "append x 3", "r x [1]"),
		},
		verdict: check.Invalid, types: []string{"internal", "not-my-own-write"}, not: []string{"read-uncommitted"},
	},
	{
		name: "internal/unknown-prefix", def: "Elle FaunaDB example: append then read without the appended element", model: "strict-serializable",
		txns: []spec{
			ok("", "append 0 6", "r 0 nil"),
		},
		verdict: check.Invalid, types: []string{"empty-transaction-graph", "internal", "not-my-own-write"}, not: []string{"read-uncommitted"},
	},
	{
		name: "future-read", def: "Elle: a txn reads an element it appends only later", model: "read-committed",
		txns: []spec{
			ok("", "r x [1]", "append x 1"),
		},
		verdict: check.Invalid, types: []string{"empty-transaction-graph", "future-read"}, not: []string{"read-committed"},
	},
	{
		name: "incompatible-order", def: "Elle: two reads of a key are not prefixes of one order", model: "strict-serializable",
		txns: []spec{
			ok("", "append x 1"),
			ok("", "append x 2"),
			ok("", "r x [1 2]"),
			ok("", "r x [2 1]"),
		},
		verdict: check.Invalid, types: []string{"incompatible-order"}, not: []string{"read-committed"},
	},
	{
		name: "incompatible-order/with-G1c", def: "Elle 'contradictory read orders'", model: "read-committed",
		txns: []spec{
			ok("", "append x 1", "r y [1]"),
			ok("", "append x 2"),
			ok("", "append x 3", "append y 1"),
			ok("", "r x [1 3]"),
			ok("", "r x [1 2 3]"),
		},
		verdict: check.Invalid, types: []string{"G1c", "incompatible-order"}, not: []string{"read-committed"},
	},
	{
		name: "duplicate-elements", def: "Elle: a list holds an element twice", model: "strict-serializable",
		txns: []spec{
			ok("", "append x 1"),
			ok("", "append x 2"),
			ok("", "r x [1 2 1]"),
		},
		verdict: check.Invalid, types: []string{"duplicate-elements"}, not: []string{"read-uncommitted"},
	},
	{
		name: "dirty-update", def: "Elle: a committed append follows an aborted one in the version order", model: "strict-serializable",
		txns: []spec{
			fail("", "append x 1"),
			ok("", "append x 2"),
			ok("", "r x [1 2]"),
		},
		verdict: check.Invalid, types: []string{"G1a", "dirty-update"}, not: []string{"read-committed"},
	},
	{
		name: "dirty-update/through-unknown", def: "Elle 'indirect' dirty update: an unknown-outcome append in between", model: "strict-serializable",
		txns: []spec{
			fail("", "append x 1"),
			info("", "append x 2"),
			ok("", "append x 3"),
			ok("", "r x [1 2 3]"),
		},
		verdict: check.Invalid, types: []string{"G1a", "dirty-update"}, not: []string{"read-committed"},
	},
	{
		name: "lost-update", def: "Elle: two committed txns read the same version and both append", model: "strict-serializable",
		txns: []spec{
			ok("", "append x 0"),
			ok("", "r x [0]", "append x 1"),
			ok("", "r x [0]", "append x 2"),
		},
		verdict: check.Invalid, types: []string{"G2-item", "lost-update"}, not: []string{"cursor-stability", "update-atomic"},
	},
	{
		name: "lost-update/one-txn-double-write", def: "Elle: one txn appending twice after a read is legal", model: "strict-serializable",
		txns: []spec{
			ok("", "r x nil", "append x 1", "append x 2"),
			ok("", "r x [1 2]"),
		},
		verdict: check.Valid, types: []string{},
	},
	{
		name: "garbage-versions", def: "a read shows an element no transaction appended", model: "strict-serializable",
		txns: []spec{
			ok("a", "append x 1"),
			ok("a", "r x [1 9]"),
		},
		verdict: check.Invalid, types: []string{"garbage-versions"}, not: []string{"read-uncommitted"},
	},
	{
		name: "unknown-outcome-observed", def: "an observed append of an unknown-outcome txn means it committed", model: "serializable",
		txns: []spec{
			info("", "append x 2", "r y nil"),
			ok("", "append x 1", "append y 1"),
			ok("", "r x [1 2]", "r y [1]"),
		},
		verdict: check.Valid, types: []string{},
	},
	{
		name: "unknown-outcome-in-cycle", def: "an unknown-outcome txn whose append is observed takes part in cycles", model: "serializable",
		txns: []spec{
			info("", "append x 1", "r y [1]"),
			ok("", "append x 2", "append y 1"),
			ok("", "r x [1 2]"),
		},
		verdict: check.Invalid, types: []string{"G1c"}, not: []string{"read-committed"},
	},
	{
		name: "duplicate-appends", def: "Elle verify-unique-appends: unknown, naming op, key and value", model: "strict-serializable",
		txns: []spec{
			ok("", "append x 1"),
			ok("", "append y 2", "append x 1"),
		},
		verdict: check.Unknown, types: []string{}, reason: "value 1 appended to key x more than once",
	},
	{
		name: "unsupported-ops", def: "Elle verify-mop-types: only appends and list reads", model: "strict-serializable",
		txns: []spec{
			ok("", "append x 1"),
			ok("", "w y 2"),
		},
		verdict: check.Unknown, types: []string{}, reason: "operations other than appends and list reads",
	},
}

func TestListAppendAnomalies(t *testing.T) { runCases(t, ListAppend{}, listAppendCases) }

func TestListAppendApplies(t *testing.T) {
	la := newHB(t).add(ok("", "append x 1")).h
	rw := newHB(t).add(ok("", "w x 1")).h
	ro := newHB(t).add(ok("", "r x 1")).h
	for _, c := range []struct {
		c    check.Checker
		h    *history.History
		rank int
	}{
		{ListAppend{}, la, 60}, {ListAppend{}, rw, 0}, {ListAppend{}, ro, 0},
		{RWRegister{}, la, 0}, {RWRegister{}, rw, 50}, {RWRegister{}, ro, 0},
	} {
		r, why := c.c.Applies(c.h, "serializable")
		if r != c.rank || (r == 0 && why == "") {
			t.Errorf("%s.Applies = %d %q, want %d", c.c.Name(), r, why, c.rank)
		}
	}
	for _, n := range []string{"list-append", "rw-register"} {
		if _, ok := check.Lookup(n); !ok {
			t.Errorf("%s not registered", n)
		}
	}
}
