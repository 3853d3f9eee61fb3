package enne

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/chronos"
	"github.com/txray/txray/history"
	"github.com/txray/txray/sim"
)

// hb builds histories. A predicate read op made by rp carries, until its
// transaction is added, the index of its payload in preds as its Value.
type hb struct {
	h     *history.History
	preds []history.Predicate
}

func newHB() *hb {
	h := history.New()
	h.Evidence.SerialOrder = history.SerialCommit
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

// at adds a transaction committed at cts (0: no commit timestamp).
func (b *hb) at(cts int64, st history.Status, ops ...history.Op) *hb {
	t := history.Txn{Session: -1, Status: st, Ops: ops}
	if cts > 0 {
		t.CommitTS = history.Timestamp{P: cts, Set: true}
	}
	b.add(t)
	return b
}

func (b *hb) ok(cts int64, ops ...history.Op) *hb { return b.at(cts, history.Committed, ops...) }

func run(t *testing.T, h *history.History) *check.Result {
	t.Helper()
	r, err := Checker{}.Check(context.Background(), h, check.Options{Model: "serializable"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReplay: one history per outcome of a commit-order replay.
func TestReplay(t *testing.T) {
	runReplayCases(t, []replayCase{
		{
			name: "valid-serial-with-predicates",
			build: func(b *hb) {
				b.ok(1, b.w(1, 10), b.w(20, 5)).
					ok(2, b.rp("k BETWEEN 0 AND 9", 1, 10), b.w(2, 11)).
					ok(3, b.rp("k < 10 AND v > 10", 2, 11), b.r(1, 10), b.w(1, 12)).
					ok(4, b.rp("v >= 10", 1, 12, 2, 11)).
					ok(0, b.r(1, 10), b.r(2, 11)) // read-only, no position: fits after T1
			},
			verdict: check.Valid,
		},
		{
			// T1 reads the initial x though T0 committed x=1 before it.
			name: "ext-stale-item-read",
			build: func(b *hb) {
				b.ok(1, b.w(1, 1)).ok(2, b.r(1, -1))
			},
			verdict: check.Invalid, types: []string{"ext"},
			expl: []string{"T1 read 1 = nil", "the state there is 1 = 1 (written by T0 at position 0)"},
		},
		{
			// Phantom: T1's range read misses T0's insert though T0
			// committed first (2PL must have blocked T1 or shown the row).
			name: "ext-phantom",
			build: func(b *hb) {
				b.ok(1, b.w(5, 50)).ok(2, b.rp("k BETWEEN 0 AND 9"))
			},
			verdict: check.Invalid, types: []string{"ext"},
			expl: []string{`"k BETWEEN 0 AND 9"`, "returned no rows; the state there gives (5, 50)"},
		},
		{
			name: "G1a-aborted-read",
			build: func(b *hb) {
				b.at(0, history.Aborted, b.w(1, 1)).ok(1, b.r(1, 1))
			},
			verdict: check.Invalid, types: []string{"G1a"},
		},
		{
			name: "internal",
			build: func(b *hb) {
				b.ok(1, b.w(1, 1), b.r(1, -1))
			},
			verdict: check.Invalid, types: []string{"internal"},
		},
		{
			// Read-only T2 has no commit position; it sees T0's x but not
			// T0's y: no point of the order explains both.
			name: "ext-floating-fractured-read",
			build: func(b *hb) {
				b.ok(1, b.w(1, 1), b.w(2, 2)).ok(0, b.r(1, 1), b.r(2, -1))
			},
			verdict: check.Invalid, types: []string{"ext"},
			expl: []string{"no point of the expected serialization order"},
		},
		{
			// Floating read-only transaction with a predicate read that
			// fits only after T1 (item read allows positions 1..2).
			name: "valid-floating-predicate",
			build: func(b *hb) {
				b.ok(1, b.w(1, 1)).ok(2, b.w(5, 5)).ok(0, b.r(1, 1), b.rp("k > 3", 5, 5))
			},
			verdict: check.Valid,
		},
		{
			name: "ext-floating-predicate",
			build: func(b *hb) {
				b.ok(1, b.w(1, 1)).ok(2, b.w(5, 5), b.w(1, 2)).ok(0, b.r(1, 1), b.rp("k > 3", 5, 5))
			},
			verdict: check.Invalid, types: []string{"ext"},
		},
		{
			name: "unknown-writer-without-position",
			build: func(b *hb) {
				b.ok(1, b.w(1, 1)).ok(0, b.w(2, 2))
			},
			verdict: check.Unknown,
		},
		{
			name: "unknown-unparsable-predicate",
			build: func(b *hb) {
				b.ok(1, b.rp("k ===", 1, 1))
			},
			verdict: check.Unknown,
		},
	})
}

// replayCase is one hand-built history and the verdict its replay in
// commit order must give.
type replayCase struct {
	name    string
	build   func(b *hb)
	verdict check.Verdict
	types   []string
	expl    []string // substrings of the first anomaly's explanation
}

// runReplayCases checks each case's verdict, anomaly types and first
// explanation, and that an expected-order failure (ext) does not rule out
// snapshot isolation.
func runReplayCases(t *testing.T, cases []replayCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newHB()
			c.build(b)
			r := run(t, b.h)
			if r.Verdict != c.verdict {
				t.Fatalf("verdict %s (%s) %v, want %s\n%+v", r.Verdict, r.Reason, r.AnomalyTypes, c.verdict, r.Anomalies)
			}
			for _, ty := range c.types {
				if !slices.Contains(r.AnomalyTypes, ty) {
					t.Errorf("types %v lack %s", r.AnomalyTypes, ty)
				}
			}
			for _, s := range c.expl {
				if !strings.Contains(r.Anomalies[0].Explanation, s) {
					t.Errorf("explanation lacks %q:\n%s", s, r.Anomalies[0].Explanation)
				}
			}
			if slices.Contains(r.AnomalyTypes, "ext") && slices.Contains(append(r.Not, r.AlsoNot...), "snapshot-isolation") {
				t.Errorf("an expected-order failure must not rule out snapshot isolation: not %v also-not %v", r.Not, r.AlsoNot)
			}
		})
	}
}

// TestApplies: enne needs an expected serialization order.
func TestApplies(t *testing.T) {
	b := newHB()
	b.ok(1, b.w(1, 1))
	if rank, why := (Checker{}).Applies(b.h, "serializable"); rank != 93 {
		t.Errorf("rank %d (%s)", rank, why)
	}
	if rank, _ := (Checker{}).Applies(b.h, "snapshot-isolation"); rank != 0 {
		t.Errorf("SI rank %d", rank)
	}
	b.h.Evidence.SerialOrder = ""
	if rank, _ := (Checker{}).Applies(b.h, "serializable"); rank != 0 {
		t.Errorf("no order: rank %d", rank)
	}
	if r := run(t, b.h); r.Verdict != check.Unknown {
		t.Errorf("no order: verdict %s", r.Verdict)
	}
}

// TestSimDifferentialChronos: on simulator histories of levels that
// serialize in commit order, with and without faults, enne's replay and
// chronos's commit-order replay agree on the verdict; correct runs are
// valid.
func TestSimDifferentialChronos(t *testing.T) {
	faults := []string{"", sim.FaultAbortedRead, sim.FaultStaleRead, sim.FaultLostUpdate, sim.FaultWriteSkew, sim.FaultNoOwnWrite, sim.FaultIntermediateRead}
	for _, level := range []string{sim.StrictSerializable, sim.Strict2PL} {
		for _, f := range faults {
			for seed := uint64(1); seed <= 4; seed++ {
				cfg := sim.DefaultConfig()
				cfg.Level, cfg.Workload, cfg.Seed = level, sim.RWRegister, seed
				cfg.Txns, cfg.Clients, cfg.Keys, cfg.AbortRate = 300, 5, 5, 0.05
				if f != "" {
					cfg.Faults = []sim.Fault{{Name: f, Prob: 0.2}}
				}
				h, _, err := sim.Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%s/%s/%d", level, f, seed)
				opts := check.Options{Model: "serializable", Params: map[string]string{"commit-order-serializes": "true"}}
				re, err := Checker{}.Check(context.Background(), h, opts)
				if err != nil {
					t.Fatal(err)
				}
				rc, err := chronos.Checker{}.Check(context.Background(), h, opts)
				if err != nil {
					t.Fatal(err)
				}
				if f == "" && re.Verdict != check.Valid {
					t.Errorf("%s: correct run judged %s (%s) %v", name, re.Verdict, re.Reason, re.AnomalyTypes)
				}
				if (re.Verdict == check.Invalid) != (rc.Verdict == check.Invalid) {
					t.Errorf("%s: enne %s %v (%s), chronos %s %v (%s)", name, re.Verdict, re.AnomalyTypes, re.Reason, rc.Verdict, rc.AnomalyTypes, rc.Reason)
				}
			}
		}
	}
}
