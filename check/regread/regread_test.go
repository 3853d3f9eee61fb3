package regread

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// tx is a test transaction: status (c committed, a aborted, u unknown),
// session, and ops "w x 1", "r x 1", "r x nil".
type tx struct {
	st   byte
	sess int
	ops  string
}

func build(t testing.TB, txs []tx) *history.History {
	h := history.New()
	seq := map[int32]int32{}
	for i, x := range txs {
		st := map[byte]history.Status{'c': history.Committed, 'a': history.Aborted, 'u': history.Unknown}[x.st]
		s := h.Sessions.Int(int64(x.sess))
		tt := history.Txn{Status: st, Session: s, Seq: seq[s], ID: fmt.Sprint(i)}
		seq[s]++
		for _, op := range strings.Split(x.ops, ",") {
			f := strings.Fields(op)
			if len(f) != 3 {
				t.Fatalf("bad op %q", op)
			}
			kind, _ := history.ParseKind(f[0])
			v := history.NoValue
			if f[2] != "nil" {
				var n int64
				fmt.Sscan(f[2], &n)
				v = h.Values.Int(n)
			}
			tt.Ops = append(tt.Ops, history.Op{Kind: kind, Key: h.Keys.Str(f[1]), Value: v})
		}
		h.Add(tt)
	}
	return h
}

// TestReadAnomalies has one tiny history per anomaly (and per accepted
// pattern), named by what it shows.
func TestReadAnomalies(t *testing.T) {
	type w struct{ t, i, writer int32 }
	cases := []struct {
		name    string
		init    string
		txs     []tx
		types   []string // anomaly types, in order
		writers []w      // expected WriterOf
		initTxn int32
	}{
		{name: "valid/reads-from-committed-and-initial", txs: []tx{
			{'c', 0, "w x 1, w y 1"}, {'c', 1, "r x 1, r y nil, r z nil"}},
			writers: []w{{1, 0, 0}, {1, 1, Initial}, {1, 2, Initial}}, initTxn: -1},
		{name: "thin-air-read", txs: []tx{
			{'c', 0, "w x 1"}, {'c', 1, "r x 2"}},
			types: []string{model.ThinAirRead}, writers: []w{{1, 0, NoWriter}}, initTxn: -1},
		{name: "thin-air-read/value-written-to-another-key", txs: []tx{
			{'c', 0, "w y 2"}, {'c', 1, "r x 2"}},
			types: []string{model.ThinAirRead}, writers: []w{{1, 0, NoWriter}}, initTxn: -1},
		{name: "thin-air-read/zero-without-convention", txs: []tx{
			{'c', 0, "w x 1"}, {'c', 1, "r x 0"}},
			types: []string{model.ThinAirRead}, initTxn: -1},
		{name: "valid/zero-is-initial-under-convention", init: "0", txs: []tx{
			{'c', 0, "w x 1"}, {'c', 1, "r x 0"}},
			writers: []w{{1, 0, Initial}}, initTxn: -1},
		{name: "duplicate-write/zero-initial-and-written", init: "0", txs: []tx{
			{'c', 0, "w x 0"}, {'c', 1, "w y 3"}, {'c', 2, "r x 0"}},
			types: []string{model.DuplicateWrite}, writers: []w{{2, 0, NoWriter}}, initTxn: -1},
		{name: "aborted-read", txs: []tx{
			{'a', 0, "w x 1"}, {'c', 1, "r x 1"}},
			types: []string{model.AbortedRead}, writers: []w{{1, 0, NoWriter}}, initTxn: -1},
		{name: "valid/unknown-outcome-writer-is-usable", txs: []tx{
			{'u', 0, "w x 1"}, {'c', 1, "r x 1"}},
			writers: []w{{1, 0, 0}}, initTxn: -1},
		{name: "intermediate-read", txs: []tx{
			{'c', 0, "w x 1, w x 2"}, {'c', 1, "r x 1"}},
			types: []string{model.IntermediateRead}, writers: []w{{1, 0, 0}}, initTxn: -1},
		{name: "valid/final-write-repeats-intermediate-value", txs: []tx{
			{'c', 0, "w x 1, w x 2, w x 1"}, {'c', 1, "r x 1"}},
			writers: []w{{1, 0, 0}}, initTxn: -1},
		{name: "future-read", txs: []tx{
			{'c', 0, "r x 1, w x 1"}},
			types: []string{model.FutureRead}, writers: []w{{0, 0, NoWriter}}, initTxn: -1},
		{name: "not-my-own-write", txs: []tx{
			{'c', 0, "w x 5"}, {'c', 1, "w x 1, r x 5"}},
			types: []string{model.NotMyOwnWrite}, writers: []w{{1, 1, NoWriter}}, initTxn: -1},
		{name: "not-my-own-write/reads-nil-after-write", txs: []tx{
			{'c', 0, "w x 1, r x nil"}},
			types: []string{model.NotMyOwnWrite}, initTxn: -1},
		{name: "not-my-last-write", txs: []tx{
			{'c', 0, "w x 1, w x 2, r x 1"}},
			types: []string{model.NotMyLastWrite}, writers: []w{{0, 2, NoWriter}}, initTxn: -1},
		{name: "valid/own-last-write", txs: []tx{
			{'c', 0, "w x 1, w x 2, r x 2"}},
			writers: []w{{0, 2, 0}}, initTxn: -1},
		{name: "duplicate-write", txs: []tx{
			{'c', 0, "w x 1"}, {'c', 1, "w x 1"}, {'c', 2, "r x 1"}, {'c', 3, "r x 1"}},
			types: []string{model.DuplicateWrite}, writers: []w{{2, 0, NoWriter}, {3, 0, NoWriter}}, initTxn: -1},
		{name: "duplicate-write/nil-written", txs: []tx{
			{'c', 0, "w x nil"}, {'c', 1, "r x nil"}},
			types: []string{model.DuplicateWrite}, initTxn: -1},
		{name: "valid/unknown-outcome-reader-not-reported", txs: []tx{
			{'u', 0, "r x 7"}},
			writers: []w{{0, 0, NoWriter}}, initTxn: -1},
		{name: "valid/aborted-reader-not-reported", txs: []tx{
			{'a', 0, "r x 7"}}, initTxn: -1},
		{name: "init-txn/uniform-zero-writes-every-key", init: "0", txs: []tx{
			{'c', 0, "w x 0, w y 0"}, {'c', 1, "r x 0, w y 1"}, {'c', 2, "r y 0, w x 2"}},
			writers: []w{{1, 0, Initial}, {2, 0, Initial}}, initTxn: 0},
		{name: "init-txn/uniform-zero-no-convention", txs: []tx{
			{'c', 0, "w x 0, w y 0"}, {'c', 1, "r x 0, w y 1"}},
			writers: []w{{1, 0, Initial}}, initTxn: 0},
		{name: "init-txn/rejected-uniform-nonzero", txs: []tx{
			// an ordinary first transaction blind-writing 1 everywhere
			// (per-key counters) is not the initial state
			{'c', 0, "w x 1, w y 1"}, {'c', 1, "w x 2"}, {'c', 1, "r x 1"}},
			writers: []w{{2, 0, 0}}, initTxn: -1},
		{name: "init-txn/rejected-not-the-declared-initial-value", init: "5", txs: []tx{
			{'c', 0, "w x 0, w y 0"}, {'c', 1, "r x 0, w y 1"}},
			writers: []w{{1, 0, 0}}, initTxn: -1},
		{name: "init-txn/rejected-missing-key", txs: []tx{
			{'c', 0, "w x 0, w y 0"}, {'c', 1, "r x 0, w z 1"}},
			writers: []w{{1, 0, 0}}, initTxn: -1},
		{name: "init-txn/rejected-someone-read-state-before", txs: []tx{
			{'c', 0, "w x 0, w y 0"}, {'c', 1, "r x nil, w y 1"}},
			writers: []w{{1, 0, Initial}}, initTxn: -1},
		{name: "init-txn/rejected-mixed-values", txs: []tx{
			{'c', 0, "w x 0, w y 8"}, {'c', 1, "r x 0, w y 1"}},
			writers: []w{{1, 0, 0}}, initTxn: -1},
		{name: "init-txn/rejected-single-key-nonconvention", txs: []tx{
			{'c', 0, "w x 9"}, {'c', 1, "r x 9"}},
			writers: []w{{1, 0, 0}}, initTxn: -1},
		{name: "init-txn/rejected-has-read", init: "0", txs: []tx{
			{'c', 0, "w x 0, r y nil"}, {'c', 1, "r x 0, w y 1"}},
			types: []string{model.DuplicateWrite}, initTxn: -1},
		{name: "init-txn/aborted-read-still-found", init: "0", txs: []tx{
			{'c', 0, "w x 0, w y 0"}, {'a', 1, "w x 3"}, {'c', 2, "r x 3, r y 0"}},
			types: []string{model.AbortedRead}, writers: []w{{2, 0, NoWriter}, {2, 1, Initial}}, initTxn: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := build(t, c.txs)
			a := Analyze(h, Options{InitialValue: c.init})
			var got []string
			for _, x := range a.Anomalies {
				got = append(got, x.Type)
				if x.Explanation == "" || len(x.Txns) == 0 || x.Key == "" || len(x.Ops) == 0 {
					t.Errorf("anomaly not explained: %+v", x)
				}
				for _, tt := range x.Txns {
					if tt < 0 || int(tt) >= len(h.Txns) {
						t.Errorf("anomaly names txn %d", tt)
					}
				}
			}
			if !slices.Equal(got, c.types) {
				t.Errorf("anomalies = %v, want %v\n%v", got, c.types, a.Anomalies)
			}
			for _, ww := range c.writers {
				if g := a.WriterOf(ww.t, int(ww.i)); g != ww.writer {
					t.Errorf("WriterOf(%d,%d) = %d, want %d", ww.t, ww.i, g, ww.writer)
				}
			}
			if a.InitTxn != c.initTxn {
				t.Errorf("InitTxn = %d, want %d", a.InitTxn, c.initTxn)
			}
			for typ, n := range a.Counts {
				if n != countType(a, typ) {
					t.Errorf("Counts[%s] = %d", typ, n)
				}
			}
		})
	}
}

func countType(a *Analysis, typ string) int {
	n := 0
	for _, x := range a.Anomalies {
		if x.Type == typ {
			n++
		}
	}
	return n
}

// TestExplanationNamesEverything checks one explanation in full: which
// transaction, which read, what it should have read, who wrote what.
func TestExplanationNamesEverything(t *testing.T) {
	h := build(t, []tx{{'c', 0, "w x 1, w x 2"}, {'c', 1, "r x 1"}})
	a := Analyze(h, Options{})
	if len(a.Anomalies) != 1 {
		t.Fatalf("%v", a.Anomalies)
	}
	e := a.Anomalies[0].Explanation
	for _, want := range []string{"T1 read key x = 1 (op 0)", "T0 wrote (op 0)", "x = 2 (op 1)", "final write 2", "G1b"} {
		if !strings.Contains(e, want) {
			t.Errorf("explanation %q lacks %q", e, want)
		}
	}
}

func TestWriterOfOutOfRange(t *testing.T) {
	h := build(t, []tx{{'c', 0, "w x 1"}})
	a := Analyze(h, Options{})
	for _, c := range [][2]int{{-1, 0}, {1, 0}, {0, 1}, {0, -1}, {0, 0}} {
		if g := a.WriterOf(int32(c[0]), c[1]); g != NoWriter {
			t.Errorf("WriterOf(%v) = %d", c, g)
		}
	}
	if len(a.Writes(0)) != 1 || a.Writes(5) != nil || a.Writes(-1) != nil {
		t.Errorf("Writes: %v", a.Writes(0))
	}
}

// TestDropInitialTxn: the initial transaction is removed and reads of its
// values become reads of the initial state; a write skew between the two
// remaining transactions is then plain to every checker.
func TestDropInitialTxn(t *testing.T) {
	h := build(t, []tx{
		{'c', 0, "w x 0, w y 0"},
		{'c', 0, "r x 0, r y 0, w x 1"},
		{'c', 1, "r x 0, r y 0, w y 2"},
	})
	if !DropInitialTxn(h, Options{InitialValue: "0"}) {
		t.Fatal("initial transaction not dropped")
	}
	if len(h.Txns) != 2 || h.Txns[0].Index != 0 || h.Txns[0].Seq != 0 || h.Txns[1].Index != 1 {
		t.Fatalf("renumbering: %+v", h.Txns)
	}
	for _, tt := range h.Txns {
		for _, o := range tt.Ops[:2] {
			if o.Value != history.NoValue {
				t.Errorf("read not rewritten: %s", h.TxnString(tt.Index))
			}
		}
	}
	if h.Ignored["explicit initial transaction"] != 1 || len(h.Notes) != 1 {
		t.Errorf("not accounted: %v %v", h.Ignored, h.Notes)
	}
	h2 := build(t, []tx{{'c', 0, "w x 0"}, {'c', 0, "r x nil"}})
	if DropInitialTxn(h2, Options{InitialValue: "0"}) || len(h2.Txns) != 2 {
		t.Errorf("dropped a transaction whose prior state was observed")
	}
}

func TestInitialStateView(t *testing.T) {
	h := build(t, []tx{
		{'c', 0, "w x 0, w y 0"},
		{'c', 1, "r x 0, w y 1"},
		{'c', 2, "r y 1, w x 2"},
	})
	a := Analyze(h, Options{InitialValue: "0"})
	v, n := a.InitialStateView(h)
	if n != 1 || v == h || len(v.Txns) != 3 || len(v.Txns[0].Ops) != 0 || v.Txns[1].Ops[0].Value != history.NoValue || v.Txns[2].Ops[0].Value == history.NoValue {
		t.Errorf("view: n=%d %s / %s / %s", n, v.TxnString(0), v.TxnString(1), v.TxnString(2))
	}
	if h.Txns[1].Ops[0].Value == history.NoValue || len(h.Txns[0].Ops) != 2 {
		t.Errorf("original modified")
	}
	h2 := build(t, []tx{{'c', 0, "w x 1"}, {'c', 1, "r x 1"}})
	if v2, n2 := Analyze(h2, Options{}).InitialStateView(h2); v2 != h2 || n2 != 0 {
		t.Errorf("copied without need")
	}
}

// TestDropInitialTxnOwnSession: the initial transaction's own session goes
// with it, and the remaining sessions keep their names.
func TestDropInitialTxnOwnSession(t *testing.T) {
	h := build(t, []tx{
		{'c', 9, "w x 0, w y 0"},
		{'c', 1, "r x 0, w x 1"},
		{'c', 2, "r y 0, w y 2"},
		{'c', 1, "r y 2"},
	})
	if !DropInitialTxn(h, Options{InitialValue: "0"}) {
		t.Fatal("not dropped")
	}
	if h.Sessions.Len() != 2 {
		t.Errorf("%d sessions, want 2", h.Sessions.Len())
	}
	for i, want := range []string{"1", "2", "1"} {
		if got := h.Sessions.String(h.Txns[i].Session); got != want {
			t.Errorf("T%d in session %s, want %s", i, got, want)
		}
	}
	if h.Txns[2].Seq != 1 {
		t.Errorf("seq %d", h.Txns[2].Seq)
	}
}

// An unknown-outcome transaction whose write a committed one read did
// commit, so its own reads are judged: here it read an intermediate write
// (G1b). Its nil reads stay unjudged (an unknown result, not the initial
// state). Found by polygraph's FuzzCheck (input 4690b124ba6d77cf).
func TestObservedUnknownReaderIsJudged(t *testing.T) {
	h := build(t, []tx{
		{'c', 1, "r k1 1"},
		{'u', 0, "w k1 1,r k0 3,r k2 nil"},
		{'c', 1, "w k1 2,w k0 3,w k0 4,w k2 5"},
	})
	a := Analyze(h, Options{})
	if !a.Judged(1) || countType(a, model.IntermediateRead) != 1 || len(a.Anomalies) != 1 {
		t.Fatalf("judged=%v anomalies %v", a.Judged(1), a.Counts)
	}
	// Unobserved, the same transaction is not judged.
	h = build(t, []tx{
		{'c', 1, "r k1 nil"},
		{'u', 0, "w k1 1,r k0 3"},
		{'c', 1, "w k1 2,w k0 3,w k0 4"},
	})
	if a := Analyze(h, Options{}); a.Judged(1) || len(a.Anomalies) != 0 {
		t.Fatalf("unobserved: judged=%v anomalies %v", a.Judged(1), a.Counts)
	}
}

// TestInitialTxnRuleIgnoresUninternedValues: ids outside the value
// interner are skipped by every pass, and the explicit-initial-transaction
// rule must not index its per-value table with them either (it panicked:
// elle FuzzListAppend input 664dbb2b7e653c25).
func TestInitialTxnRuleIgnoresUninternedValues(t *testing.T) {
	h := build(t, []tx{
		{'c', 0, "w x 0"},
		{'c', 0, "r x 0"},
		{'c', 1, "r x 0"},
	})
	nv := int32(h.Values.Len())
	for _, bad := range []int32{nv, nv + 7} {
		hh := *h
		hh.Txns = append([]history.Txn(nil), h.Txns...)
		hh.Txns[0].Ops = []history.Op{{Kind: history.Write, Key: h.Txns[0].Ops[0].Key, Value: bad}}
		hh.Txns[2].Ops = []history.Op{{Kind: history.Read, Key: h.Txns[0].Ops[0].Key, Value: bad}}
		for _, opt := range []Options{{}, {InitialValue: "0"}} {
			if a := Analyze(&hh, opt); a.InitTxn != -1 {
				t.Errorf("value id %d (not interned): T0 taken as the initial transaction", bad)
			}
		}
	}
}
