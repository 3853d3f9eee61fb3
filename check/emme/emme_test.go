package emme

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// hb builds small histories by hand: keys and values are integers; value
// -1 in a read means nil (the initial state).
// hb builds histories. A predicate read op made by rp carries, until its
// transaction is added, the index of its payload in preds as its Value.
type hb struct {
	h     *history.History
	preds []history.Predicate
}

func newHB() *hb {
	h := history.New()
	h.VersionOrder = map[int32][]int32{}
	h.Evidence.VersionOrder = true
	return &hb{h: h}
}

func (b *hb) val(v int64) int32 {
	if v < 0 {
		return history.NoValue
	}
	return b.h.Values.Int(v)
}

func (b *hb) w(k, v int64) history.Op {
	return history.Op{Kind: history.Write, Key: b.h.Keys.Int(k), Value: b.val(v)}
}

func (b *hb) r(k, v int64) history.Op {
	return history.Op{Kind: history.Read, Key: b.h.Keys.Int(k), Value: b.val(v)}
}

// rp is a predicate read on (k, v) rows returning rows (pairs k, v).
// add adds t, attaching the payloads of its predicate reads (see hb).
func (b *hb) add(t history.Txn) {
	t.Ops = append([]history.Op(nil), t.Ops...)
	for j := range t.Ops {
		if o := &t.Ops[j]; o.Kind == history.PredRead {
			p := b.preds[o.Value]
			o.Value = history.NoValue
			t.SetPred(o, p)
		}
	}
	b.h.Add(t)
}

func (b *hb) rp(where string, rows ...int64) history.Op {
	p := history.Predicate{Table: "kv", Where: where}
	for i := 0; i+1 < len(rows); i += 2 {
		p.Result = append(p.Result, history.Row{Key: b.h.Keys.Int(rows[i]), Value: b.val(rows[i+1])})
	}
	b.h.Evidence.PredicateRead = true
	b.preds = append(b.preds, p)
	return history.Op{Kind: history.PredRead, Key: history.NoValue, Value: int32(len(b.preds) - 1)}
}

// vs attaches a version set (pairs k, v; v -1 = unborn) to a predicate read.
func (b *hb) vs(o history.Op, rows ...int64) history.Op {
	p := &b.preds[o.Value]
	p.HasVersionSet = true
	p.VersionSet = []history.Row{}
	for i := 0; i+1 < len(rows); i += 2 {
		p.VersionSet = append(p.VersionSet, history.Row{Key: b.h.Keys.Int(rows[i]), Value: b.val(rows[i+1])})
	}
	b.h.Evidence.VersionSets = true
	return o
}

func (b *hb) txn(st history.Status, ops ...history.Op) *hb {
	b.add(history.Txn{Session: -1, Status: st, Ops: ops})
	return b
}

func (b *hb) ok(ops ...history.Op) *hb { return b.txn(history.Committed, ops...) }

// order sets key k's version order.
func (b *hb) order(k int64, vals ...int64) *hb {
	var o []int32
	for _, v := range vals {
		o = append(o, b.val(v))
	}
	b.h.VersionOrder[b.h.Keys.Int(k)] = o
	return b
}

func run(t *testing.T, h *history.History, m string) *check.Result {
	t.Helper()
	r, err := Checker{}.Check(context.Background(), h, check.Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type want struct {
	model   string
	verdict check.Verdict
	types   []string // anomaly types that must be present (prohibited or not)
}

// TestAnomalies: one hand-built history per anomaly, judged under several
// models. Names follow Adya 1999 §4 and the seed paper's anomaly list.
func TestAnomalies(t *testing.T) {
	runAnomalyCases(t, []anomalyCase{
		{
			// Phantom write skew (the seed paper's Fig. 1 situation: each
			// transaction's range read misses the row the other inserts).
			// T0 reads k in [0,9] (nothing), inserts k=15; T1 reads k in
			// [10,19] (nothing), inserts k=5. T0 -prw-> T1 (T1 inserts into
			// T0's range) and T1 -prw-> T0: a cycle of two adjacent
			// predicate anti-dependencies, G2 but not G2-item. Item-only
			// checkers see no dependency at all.
			name: "G2-phantom-write-skew",
			build: func(b *hb) {
				b.ok(b.rp("k BETWEEN 0 AND 9"), b.w(15, 1)).
					ok(b.rp("k >= 10 AND k <= 19"), b.w(5, 2)).
					order(15, 1).order(5, 2)
			},
			wants: []want{
				{"serializable", check.Invalid, []string{"G2"}},
				{"snapshot-isolation", check.Valid, nil},
				{"postgres:repeatable-read", check.Valid, nil},
				{"repeatable-read", check.Valid, nil},
				{"read-committed", check.Valid, nil},
			},
		},
		{
			// A phantom seen half-way: T0's range read misses T1's insert
			// of k=5 but its later item read of k=5 sees it. T0 -prw-> T1
			// -wr-> T0: G-single with a predicate anti-dependency, which
			// SI forbids but repeatable read (PL-2.99) allows.
			name: "G-single-predicate",
			build: func(b *hb) {
				b.ok(b.rp("k BETWEEN 0 AND 9"), b.r(5, 7)).
					ok(b.w(5, 7)).
					order(5, 7)
			},
			wants: []want{
				{"serializable", check.Invalid, []string{"G-single"}},
				{"snapshot-isolation", check.Invalid, []string{"G-single"}},
				{"repeatable-read", check.Valid, nil},
			},
		},
		{
			// Predicate read dependency: T1's read of v > 5 returns T0's
			// row 1 (T0 -predicate-wr-> T1: row 1 went from unborn to a
			// match) but T1's item read of key 3 misses T0's write of it
			// (T1 -rw-> T0). The anti-dependency is an item one, so the
			// cycle is G-single-item (predicate-read dependencies may take
			// part in G2-item cycles, Adya §4.4.2): repeatable read
			// forbids it too.
			name: "G-single-item-with-predicate-wr",
			build: func(b *hb) {
				b.ok(b.w(1, 10), b.w(3, 3)).
					ok(b.rp("v > 5", 1, 10), b.r(3, -1)).
					order(1, 10).order(3, 3)
			},
			wants: []want{
				{"serializable", check.Invalid, []string{"G-single-item"}},
				{"repeatable-read", check.Invalid, []string{"G-single-item"}},
				{"read-committed", check.Valid, nil},
			},
		},
		{
			// T1 does not return T0's row 2 = 20, which matches v > 5 and
			// was inserted by the transaction whose row 1 it returned: a
			// fractured predicate read. T1 -predicate-rw-> T0 -predicate-wr->
			// T1: G-single (not -item).
			name: "G-single-fractured-predicate-read",
			build: func(b *hb) {
				b.ok(b.w(1, 10), b.w(2, 20)).
					ok(b.rp("v > 5", 1, 10)).
					order(1, 10).order(2, 20)
			},
			wants: []want{
				{"snapshot-isolation", check.Invalid, []string{"G-single"}},
				{"repeatable-read", check.Valid, nil},
			},
		},
		{
			// Predicate updates (UPDATE ... WHERE k BETWEEN 0 AND 9) are
			// recorded as a predicate read of the rows they matched, at
			// the versions they replaced, then a write of each (Adya §3.1,
			// predicate-based modifications). Two of them both replaced
			// version 5 = 1: T2's read of 5 = 1 -rw-> T1, T1 -ww-> T2: a
			// lost update (G-single-item) through predicate writes.
			name: "G-single-item-lost-update-by-predicate-updates",
			build: func(b *hb) {
				b.ok(b.w(5, 1)).
					ok(b.rp("k BETWEEN 0 AND 9", 5, 1), b.w(5, 10)).
					ok(b.rp("k BETWEEN 0 AND 9", 5, 1), b.w(5, 20)).
					order(5, 1, 10, 20)
			},
			wants: []want{
				{"snapshot-isolation", check.Invalid, []string{"G-single-item"}},
				{"repeatable-read", check.Invalid, []string{"G-single-item"}},
				{"read-committed", check.Valid, nil},
			},
		},
		{
			// A predicate update misses a concurrent insert into its range
			// (a phantom): T1 updates the rows of k in [0,9], matching only
			// 1 = 1, while T2 inserts 2 = 20 and reads 1 = 1 (before T1's
			// update). T1 -predicate-rw-> T2 (the insert changes the
			// matches of T1's WHERE) and T2 -rw-> T1: two adjacent
			// anti-dependencies, one of them predicate: G2, which snapshot
			// isolation and repeatable read allow.
			name: "G2-predicate-update-misses-insert",
			build: func(b *hb) {
				b.ok(b.w(1, 1)).
					ok(b.rp("k >= 0 AND k <= 9", 1, 1), b.w(1, 10)).
					ok(b.r(1, 1), b.w(2, 20)).
					order(1, 1, 10).order(2, 20)
			},
			wants: []want{
				{"serializable", check.Invalid, []string{"G2"}},
				{"snapshot-isolation", check.Valid, nil},
				{"repeatable-read", check.Valid, nil},
			},
		},
		{
			name: "G-single-item-lost-update",
			build: func(b *hb) {
				b.ok(b.r(1, -1), b.w(1, 10)).
					ok(b.r(1, -1), b.w(1, 11)).
					order(1, 10, 11)
			},
			wants: []want{
				{"snapshot-isolation", check.Invalid, []string{"G-single-item"}},
				{"repeatable-read", check.Invalid, []string{"G-single-item"}},
				{"read-committed", check.Valid, nil},
			},
		},
		{
			name: "G2-item-write-skew",
			build: func(b *hb) {
				b.ok(b.r(1, -1), b.r(2, -1), b.w(1, 10)).
					ok(b.r(1, -1), b.r(2, -1), b.w(2, 20)).
					order(1, 10).order(2, 20)
			},
			wants: []want{
				{"serializable", check.Invalid, []string{"G2-item"}},
				{"repeatable-read", check.Invalid, []string{"G2-item"}},
				{"snapshot-isolation", check.Valid, nil},
			},
		},
		{
			name: "G0-write-cycle",
			build: func(b *hb) {
				b.ok(b.w(1, 10), b.w(2, 21)).
					ok(b.w(1, 11), b.w(2, 20)).
					order(1, 10, 11).order(2, 20, 21)
			},
			wants: []want{{"read-uncommitted", check.Invalid, []string{"G0"}}},
		},
		{
			// Circular information flow through a predicate read: T1's
			// range read returns T0's row, T0 read T1's write.
			name: "G1c-predicate-wr",
			build: func(b *hb) {
				b.ok(b.w(1, 10), b.r(2, 20)).
					ok(b.rp("k < 5", 1, 10), b.w(2, 20)).
					order(1, 10).order(2, 20)
			},
			wants: []want{{"read-committed", check.Invalid, []string{"G1c"}}},
		},
		{
			name: "G1a-predicate-read-of-aborted-row",
			build: func(b *hb) {
				b.txn(history.Aborted, b.w(1, 10)).
					ok(b.rp("k < 5", 1, 10))
			},
			wants: []want{{"read-committed", check.Invalid, []string{"G1a"}}},
		},
		{
			name: "G1b-intermediate-read",
			build: func(b *hb) {
				b.ok(b.w(1, 10), b.w(1, 11)).
					ok(b.r(1, 10)).
					order(1, 11)
			},
			wants: []want{{"read-committed", check.Invalid, []string{"G1b"}}},
		},
		{
			name: "garbage-versions",
			build: func(b *hb) {
				b.ok(b.w(1, 10)).ok(b.r(1, 99)).order(1, 10)
			},
			wants: []want{{"read-committed", check.Invalid, []string{"garbage-versions"}}},
		},
		{
			name: "internal",
			build: func(b *hb) {
				b.ok(b.w(1, 10)).ok(b.w(1, 11), b.r(1, 10)).order(1, 10, 11)
			},
			wants: []want{{"serializable", check.Invalid, []string{"internal"}}},
		},
		{
			// The version set says row 1 = 10 (which matches v > 5) was
			// evaluated, yet the result is empty.
			name: "result-set-mismatch-missing-row",
			build: func(b *hb) {
				b.ok(b.w(1, 10)).
					ok(b.vs(b.rp("v > 5"), 1, 10)).
					order(1, 10)
			},
			wants: []want{{"read-committed", check.Invalid, []string{"result-set-mismatch"}}},
		},
		{
			name: "result-set-mismatch-row-does-not-satisfy",
			build: func(b *hb) {
				b.ok(b.w(1, 3)).ok(b.rp("v > 5", 1, 3)).order(1, 3)
			},
			wants: []want{{"read-committed", check.Invalid, []string{"result-set-mismatch"}}},
		},
		{
			// Explicit version set placing the read before T1's insert:
			// the same phantom skew as above, decided by the certificate.
			name: "G2-phantom-with-version-sets",
			build: func(b *hb) {
				b.ok(b.vs(b.rp("k BETWEEN 0 AND 9"), 5, -1), b.w(15, 1)).
					ok(b.vs(b.rp("k BETWEEN 10 AND 19"), 15, -1), b.w(5, 2)).
					order(15, 1).order(5, 2)
			},
			wants: []want{
				{"serializable", check.Invalid, []string{"G2"}},
				{"snapshot-isolation", check.Valid, nil},
			},
		},
		{
			// Updates move row 1 out of v > 5 (10 -> 3) and back in
			// (3 -> 8) between serial predicate reads; the read that
			// returns nothing carries its version set (row 1 = 3), since
			// the unborn row and 3 lie on both sides of a change.
			name: "valid-serial-predicate-updates",
			build: func(b *hb) {
				b.ok(b.w(1, 10)).
					ok(b.rp("v > 5", 1, 10)).
					ok(b.w(1, 3)).
					ok(b.vs(b.rp("v > 5"), 1, 3)).
					ok(b.w(1, 8)).
					ok(b.rp("v > 5 AND k = 1", 1, 8)).
					order(1, 10, 3, 8)
			},
			wants: []want{{"serializable", check.Valid, nil}},
		},
		{
			// Row 1's versions 3 (no match), 10 (match), 4 (no match): a
			// read of v > 5 that did not return row 1 and has no version
			// set saw 3 or 4 (or the unborn row), on both sides of a
			// change: the read is ambiguous, the verdict unknown.
			name: "ambiguous-inferred-version-set",
			build: func(b *hb) {
				b.ok(b.w(1, 3)).ok(b.w(1, 10)).ok(b.w(1, 4)).
					ok(b.rp("v > 5")).
					order(1, 3, 10, 4)
			},
			wants: []want{{"serializable", check.Unknown, nil}},
		},
		{
			name: "duplicate-write-is-unknown",
			build: func(b *hb) {
				b.ok(b.w(1, 10)).ok(b.w(1, 10)).ok(b.r(1, 10)).order(1, 10)
			},
			wants: []want{{"serializable", check.Unknown, nil}},
		},
		{
			name: "certificate-missing-a-committed-write-is-unknown",
			build: func(b *hb) {
				b.ok(b.w(1, 10)).ok(b.w(2, 20)).order(1, 10)
			},
			wants: []want{{"serializable", check.Unknown, nil}},
		},
		{
			name: "unparsable-predicate-is-unknown",
			build: func(b *hb) {
				b.ok(b.w(1, 10)).ok(b.rp("x LIKE", 1, 10)).order(1, 10)
			},
			wants: []want{{"serializable", check.Unknown, nil}},
		},
	})
}

// anomalyCase is one hand-built history and the verdicts it must get.
type anomalyCase struct {
	name  string
	build func(b *hb)
	wants []want
}

// runAnomalyCases checks each case under each of its models: the verdict,
// the anomaly types that must be present, and that every anomaly is
// explained and names its transactions.
func runAnomalyCases(t *testing.T, cases []anomalyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newHB()
			c.build(b)
			for _, w := range c.wants {
				r := run(t, b.h, w.model)
				if r.Verdict != w.verdict {
					t.Errorf("%s: verdict %s, want %s (reason %q, anomalies %v)", w.model, r.Verdict, w.verdict, r.Reason, r.AnomalyTypes)
				}
				for _, ty := range w.types {
					if !slices.Contains(r.AnomalyTypes, ty) {
						t.Errorf("%s: anomaly types %v lack %s", w.model, r.AnomalyTypes, ty)
					}
				}
				for _, a := range r.Anomalies {
					if a.Explanation == "" || len(a.Txns) == 0 {
						t.Errorf("%s: anomaly without explanation or transactions: %+v", w.model, a)
					}
				}
			}
		})
	}
}

// TestPhantomCycleExplained: the phantom write-skew cycle is reported with
// both predicate anti-dependencies explained (the WHERE clause, the row,
// the version evaluated, the insert).
func TestPhantomCycleExplained(t *testing.T) {
	b := newHB()
	b.ok(b.rp("k BETWEEN 0 AND 9"), b.w(15, 1)).
		ok(b.rp("k >= 10 AND k <= 19"), b.w(5, 2)).
		order(15, 1).order(5, 2)
	r := run(t, b.h, "serializable")
	if len(r.Anomalies) != 1 {
		t.Fatalf("anomalies %+v", r.Anomalies)
	}
	a := r.Anomalies[0]
	if a.Type != "G2" || len(a.Cycle) != 2 || a.Cycle[0].Rel != "predicate-rw" || a.Cycle[1].Rel != "predicate-rw" {
		t.Fatalf("cycle %+v", a)
	}
	for _, s := range []string{`"k BETWEEN 0 AND 9"`, "row 5 at version nil", "T1 installed a later version 5 = 2", "T0 < T1 < T0"} {
		if !strings.Contains(a.Explanation, s) {
			t.Errorf("explanation lacks %q:\n%s", s, a.Explanation)
		}
	}
}

// TestApplies: emme needs a version order; predicate reads rank it first.
func TestApplies(t *testing.T) {
	b := newHB()
	b.ok(b.rp("k < 3"), b.w(1, 1)).order(1, 1)
	if rank, why := (Checker{}).Applies(b.h, "serializable"); rank != 95 {
		t.Errorf("rank %d (%s)", rank, why)
	}
	if rank, _ := (Checker{}).Applies(b.h, "strict-serializable"); rank != 0 {
		t.Errorf("strict-serializable rank %d, want 0", rank)
	}
	b.h.Evidence.VersionOrder = false
	if rank, _ := (Checker{}).Applies(b.h, "serializable"); rank != 0 {
		t.Errorf("no version order: rank %d", rank)
	}
	if r := run(t, b.h, "serializable"); r.Verdict != check.Unknown {
		t.Errorf("no version order: verdict %s", r.Verdict)
	}
}
