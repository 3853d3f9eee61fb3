package elle

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/txray/txray/check"
)

// withVO sets the recorded version order of the keys in vo (key -> values,
// oldest first), as version_order records do.
func (b *hb) withVO(vo map[string][]string) *hb {
	if vo == nil {
		return b
	}
	if b.h.VersionOrder == nil {
		b.h.VersionOrder = map[int32][]int32{}
	}
	for k, vs := range vo {
		ord := []int32{}
		for _, v := range vs {
			ord = append(ord, b.scalar(b.h.Values, v))
		}
		b.h.VersionOrder[b.scalar(b.h.Keys, k)] = ord
	}
	b.h.Evidence.VersionOrder = true
	return b
}

// voCase is a rw-register case on a history with a recorded version order.
type voCase struct {
	caseT
	vo map[string][]string
	// expl: a substring some anomaly's explanation must contain; warn: a
	// substring of some warning.
	expl, warn string
	// by: stats keys_ordered_by (nil: not checked)
	by map[string]int
}

func runVOCases(t *testing.T, cases []voCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHB(t).add(tc.txns...).withVO(tc.vo).h
			r, err := RWRegister{}.Check(context.Background(), h, check.Options{Model: tc.model, Params: tc.params})
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != tc.verdict {
				t.Errorf("verdict %v, want %v (reason %q)", r.Verdict, tc.verdict, r.Reason)
			}
			if !slices.Equal(r.AnomalyTypes, tc.types) {
				t.Errorf("anomaly types %v, want %v", r.AnomalyTypes, tc.types)
			}
			if tc.not != nil && !slices.Equal(r.Not, tc.not) {
				t.Errorf("not %q, want %q", r.Not, tc.not)
			}
			if tc.reason != "" && !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("reason %q does not mention %q", r.Reason, tc.reason)
			}
			if tc.reason == "" && r.Verdict == check.Valid && r.Reason != "" {
				t.Errorf("valid with reason %q, want none (no completion needed)", r.Reason)
			}
			if tc.expl != "" && !slices.ContainsFunc(r.Anomalies, func(a check.Anomaly) bool { return strings.Contains(a.Explanation, tc.expl) }) {
				for _, a := range r.Anomalies {
					t.Logf("%s: %s", a.Type, a.Explanation)
				}
				t.Errorf("no explanation mentions %q", tc.expl)
			}
			if tc.warn != "" && !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, tc.warn) }) {
				t.Errorf("warnings %q do not mention %q", r.Warnings, tc.warn)
			}
			if tc.by != nil {
				got, _ := r.Stats["keys_ordered_by"].(map[string]int)
				for k, n := range tc.by {
					if got[k] != n {
						t.Errorf("keys_ordered_by %v, want %s = %d", got, k, n)
					}
				}
			}
			if testing.Verbose() {
				for _, a := range r.Anomalies {
					t.Logf("%s:\n%s", a.Type, a.Explanation)
				}
				t.Logf("reason %q warnings %q stats %v", r.Reason, r.Warnings, r.Stats)
			}
		})
	}
}

// blindG0 is two transactions writing x and y blindly: no read orders
// anything, so only the recorded order shows the write cycle.
var blindG0 = []spec{
	ok("0", "w x 1", "w y 1"),
	ok("1", "w x 2", "w y 2"),
}

// readThenOverwritten: T1 read x = 1 (T0's) and wrote y = 2; the record
// puts y = 2 before T0's y = 1.
var readThenOverwritten = []spec{
	ok("0", "w x 1", "w y 1"),
	ok("1", "r x 1", "w y 2"),
}

// wfrAgainstRecord: T1 read x = 1 and then wrote x = 2, but the record lists
// 2 before 1.
var wfrAgainstRecord = []spec{
	ok("0", "w x 1"),
	ok("1", "r x 1", "w x 2"),
	ok("2", "r x 1"),
}

const recordedEdge = "the recorded version order of key"

// TestRWRegisterRecordedOrderAnomalies: with the database's version order
// recorded, rw-register finds the cycles Adya defines over it (Adya 1999
// §3.1.2-§4) that inference alone cannot see, and says which edges came
// from the record.
func TestRWRegisterRecordedOrderAnomalies(t *testing.T) {
	cases := []voCase{
		{caseT: caseT{name: "G0/blind-writes", def: "Adya G0: T0 -ww-> T1 on x, T1 -ww-> T0 on y (recorded)", model: "read-uncommitted",
			txns: blindG0, verdict: check.Invalid, types: []string{"G0"}},
			vo: map[string][]string{"x": {"1", "2"}, "y": {"2", "1"}}, expl: recordedEdge + " x", by: map[string]int{"recorded": 2}},
		{caseT: caseT{name: "G0/blind-writes/without-record", def: "the same history with the record ignored: nothing is known", model: "read-uncommitted",
			params: map[string]string{"use-version-order": "false"}, txns: blindG0, verdict: check.Unknown, types: []string{"empty-transaction-graph"}},
			vo: map[string][]string{"x": {"1", "2"}, "y": {"2", "1"}}, by: map[string]int{"recorded": 0, "completion": 2}},
		{caseT: caseT{name: "G1c/read-then-overwritten-earlier", def: "Adya G1c: T0 -wr-> T1 on x, T1 -ww-> T0 on y (recorded 2 < 1)", model: "read-committed",
			txns: readThenOverwritten, verdict: check.Invalid, types: []string{"G1c"}},
			vo: map[string][]string{"x": {"1"}, "y": {"2", "1"}}, expl: "lists 2 right before 1"},
		{caseT: caseT{name: "G1c/write-follows-read-against-record", def: "T1 read x = 1 and wrote 2, recorded before 1: T0 -wr-> T1 -ww-> T0", model: "read-committed",
			txns: wfrAgainstRecord, verdict: check.Invalid, types: []string{"G1c"}},
			vo: map[string][]string{"x": {"2", "1"}}, expl: recordedEdge + " x"},
		{caseT: caseT{name: "cyclic-versions/record-against-wfr-keys", def: "wfr-keys infers 1 < 2, the record says 2 < 1: both sources named; the record is kept, so the G1c shows too", model: "read-committed",
			params: wfrKeys, txns: wfrAgainstRecord, verdict: check.Invalid, types: []string{"G1c", "cyclic-versions"}},
			vo: map[string][]string{"x": {"2", "1"}}, expl: "given by initial-state, recorded version order, wfr-keys is cyclic"},
		{caseT: caseT{name: "G-single-item/recorded", def: "Adya G-single: C read x = 1, B wrote the next version 2 (recorded), B -wr-> C", model: "repeatable-read",
			txns: singleUnordered, verdict: check.Invalid, types: []string{"G-single-item"}},
			vo: map[string][]string{"x": {"1", "2"}, "y": {"3"}, "z": {"4"}}, expl: "lists 1 right before 2", by: map[string]int{"recorded": 3, "completion": 0}},
		{caseT: caseT{name: "G2-item/write-skew-recorded", def: "Adya G2-item: x and y recorded 1 < 2; Q -rw-> R -rw-> Q", model: "serializable",
			txns: writeSkewUnordered, verdict: check.Invalid, types: []string{"G2-item"}},
			vo: map[string][]string{"x": {"1", "2"}, "y": {"1", "2"}}, expl: recordedEdge},
		{caseT: caseT{name: "G2-item/write-skew-recorded/under-snapshot-isolation", def: "SI allows the write skew: valid on the recorded order, no completion", model: "snapshot-isolation",
			txns: writeSkewUnordered, verdict: check.Valid, types: []string{}},
			vo: map[string][]string{"x": {"1", "2"}, "y": {"1", "2"}}, by: map[string]int{"recorded": 2, "inference": 0, "completion": 0}},
		{caseT: caseT{name: "G1c/write-skew-recorded-the-other-way", def: "x recorded 2 < 1: Q -ww-> P -wr-> Q", model: "serializable",
			txns: writeSkewUnordered, verdict: check.Invalid, types: []string{"G1c"}},
			vo: map[string][]string{"x": {"2", "1"}, "y": {"1", "2"}}},
		{caseT: caseT{name: "valid/serial-recorded", def: "a serial history whose order inference leaves open; the record orders it, no completion", model: "serializable",
			txns: serialUnordered, verdict: check.Valid, types: []string{}},
			vo: map[string][]string{"x": {"1", "2"}, "y": {"7"}}, by: map[string]int{"recorded": 2, "completion": 0}},
		{caseT: caseT{name: "G1c/serial-history-recorded-the-other-way", def: "x recorded 2 < 1: B -ww-> A (recorded), A -wr-> B (y = 7); and C read 2, whose next version is A's: C -rw-> A -wr-> B -wr-> C (G-single-item)", model: "serializable",
			txns: serialUnordered, verdict: check.Invalid, types: []string{"G-single-item", "G1c"}},
			vo: map[string][]string{"x": {"2", "1"}, "y": {"7"}}, expl: "lists 2 right before 1"},
		{caseT: caseT{name: "G2-item/explicit-initial-transaction-leads-the-record", def: "the initial transaction's value leads the recorded order as the initial state", model: "serializable",
			txns:    []spec{ok("0", "w x 0", "w y 0"), ok("1", "r x 0", "r y 0", "w x 1"), ok("2", "r x 0", "r y 0", "w y 2")},
			verdict: check.Invalid, types: []string{"G2-item"}},
			vo: map[string][]string{"x": {"0", "1"}, "y": {"0", "2"}}, by: map[string]int{"recorded": 2}},
	}
	runVOCases(t, cases)
}

// TestRWRegisterRecordedOrderContradictions: a recorded order that is not
// a version order of the history is not used for its key, and the verdict
// is never valid on it: unknown with the contradiction as the reason, or
// invalid (from what was found without it) with a warning.
func TestRWRegisterRecordedOrderContradictions(t *testing.T) {
	cases := []voCase{
		{caseT: caseT{name: "unknown/value-nobody-wrote", def: "the record lists 9, which no transaction wrote", model: "serializable",
			txns: serialUnordered, verdict: check.Unknown, types: []string{}, reason: "key x lists 9, which no transaction wrote to key x"},
			vo: map[string][]string{"x": {"1", "9", "2"}}},
		{caseT: caseT{name: "unknown/aborted-writer", def: "the record lists 5, written by an aborted transaction", model: "serializable",
			txns: append(slices.Clone(serialUnordered), fail("3", "w x 5")), verdict: check.Unknown, types: []string{}, reason: "which aborted"},
			vo: map[string][]string{"x": {"1", "2", "5"}}},
		{caseT: caseT{name: "unknown/committed-write-missing", def: "the record omits committed B's 2", model: "serializable",
			txns: serialUnordered, verdict: check.Unknown, types: []string{}, reason: "key x omits 2, which committed T1 wrote"},
			vo: map[string][]string{"x": {"1"}}},
		{caseT: caseT{name: "unknown/intermediate-write", def: "the record lists T3's first write of x, which T3 overwrote", model: "serializable",
			txns: append(slices.Clone(serialUnordered), ok("3", "w x 5", "w x 6")), verdict: check.Unknown, types: []string{}, reason: "an intermediate write"},
			vo: map[string][]string{"x": {"1", "2", "5", "6"}}},
		{caseT: caseT{name: "unknown/listed-twice", def: "the record lists 1 twice", model: "serializable",
			txns: serialUnordered, verdict: check.Unknown, types: []string{}, reason: "lists 1 twice"},
			vo: map[string][]string{"x": {"1", "2", "1"}}},
		{caseT: caseT{name: "unknown/contradiction-with-valid-completion", def: "valid by inference and completion, but the record of x contradicts the history: unknown, never valid", model: "serializable",
			txns: serialUnordered, verdict: check.Unknown, types: []string{}, reason: "contradicts the history on 1 key(s)"},
			vo: map[string][]string{"x": {"1", "2", "9"}, "y": {"7"}}, by: map[string]int{"recorded": 1, "completion": 1}},
		{caseT: caseT{name: "G2-item/anomaly-stands-beside-a-contradiction", def: "y's record is contradictory (not used); x's record and wfr-keys show the write skew", model: "serializable",
			params: wfrKeys, txns: writeSkewUnordered, verdict: check.Invalid, types: []string{"G2-item"}},
			vo: map[string][]string{"x": {"1", "2"}, "y": {"2"}}, warn: "contradicts the history on 1 key(s)"},
	}
	runVOCases(t, cases)
}

// TestRWRegisterRecordedOrderPartial: keys the record leaves out, and
// unknown-outcome writes it does not list, are inferred and completed as
// without a record; the stats say which keys were ordered how.
func TestRWRegisterRecordedOrderPartial(t *testing.T) {
	cases := []voCase{
		{caseT: caseT{name: "valid/key-without-record-completed", def: "y recorded; x left to completion, which finds a witness", model: "serializable",
			txns: serialUnordered, verdict: check.Valid, types: []string{}, reason: "valid with a completed version order: 1 key(s) (e.g. key x)"},
			vo: map[string][]string{"y": {"7"}}, by: map[string]int{"recorded": 1, "inference": 0, "completion": 1}},
		{caseT: caseT{name: "unknown/write-skew-half-recorded", def: "x recorded 1 < 2; every order of y closes a cycle (G2-item or G1c), which completion cannot prove", model: "serializable",
			txns: writeSkewUnordered, verdict: check.Unknown, types: []string{}, reason: "e.g. key y"},
			vo: map[string][]string{"x": {"1", "2"}}, by: map[string]int{"recorded": 1, "completion": 1}},
		{caseT: caseT{name: "valid/unknown-outcome-writer-listed", def: "the record lists an unknown-outcome transaction's write: it committed, and orders as any version", model: "serializable",
			txns: []spec{ok("0", "w x 1"), info("1", "w x 2"), ok("2", "r x 2")}, verdict: check.Valid, types: []string{}},
			vo: map[string][]string{"x": {"1", "2"}}, by: map[string]int{"recorded": 1}},
		{caseT: caseT{name: "valid/unknown-outcome-writer-unlisted", def: "an unknown-outcome write the record omits is left to completion (it may have aborted)", model: "serializable",
			txns: []spec{ok("0", "w x 1"), info("1", "w x 2"), ok("2", "r x 1")}, verdict: check.Valid, types: []string{}, reason: "valid with a completed version order"},
			vo: map[string][]string{"x": {"1"}}, by: map[string]int{"recorded": 0, "completion": 1}},
		{caseT: caseT{name: "inference/no-record-for-key", def: "x has no record; wfr-keys orders it", model: "serializable",
			params: wfrKeys, txns: []spec{ok("0", "w x 1", "w y 5"), ok("1", "r x 1", "w x 2"), ok("2", "r x 2", "r y 5")}, verdict: check.Valid, types: []string{}},
			vo: map[string][]string{"y": {"5"}}, by: map[string]int{"recorded": 1, "inference": 1, "completion": 0}},
	}
	runVOCases(t, cases)
}
