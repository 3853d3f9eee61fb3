package proptest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/txray/txray/history"
)

// tb builds tiny hand-written histories: txn(status, sts, cts, ops...) with
// ops "a k v" (append), "w k v", "r k v" (register read, 0 = nil),
// "l k v1 v2 ..." (list read).
type tb struct{ h *history.History }

func newTB() *tb {
	h := history.New()
	h.Evidence = history.Evidence{Sessions: true, Timestamps: true, ClientTime: true}
	return &tb{h}
}

func (b *tb) txn(st history.Status, sts, cts int64, ops ...[]int64) {
	h := b.h
	i := int32(len(h.Txns))
	t := history.Txn{Index: i, Session: h.Sessions.Str(fmt.Sprint("s", i)), Status: st, HasTime: true,
		Invoke: sts * 10, Complete: cts*10 + 5, ID: fmt.Sprint("t", i)}
	if sts > 0 {
		t.StartTS = history.Timestamp{P: sts, Set: true}
	}
	if st == history.Committed {
		t.CommitTS = history.Timestamp{P: cts, Set: true}
	}
	for _, o := range ops {
		op := history.Op{Key: h.Keys.Int(o[1]), Value: history.NoValue}
		switch o[0] {
		case 'a':
			op.Kind, op.Value = history.Append, h.Values.Int(o[2])
		case 'w':
			op.Kind, op.Value = history.Write, h.Values.Int(o[2])
		case 'r':
			op.Kind = history.Read
			if o[2] != 0 {
				op.Value = h.Values.Int(o[2])
			}
		case 'l':
			op.Kind = history.Read
			t.SetList(&op, nil)
			for _, v := range o[2:] {
				t.ExtendList(&op, h.Values.Int(v))
			}
		}
		t.Ops = append(t.Ops, op)
	}
	h.Add(t)
}

func op(kind byte, k int64, vs ...int64) []int64 { return append([]int64{int64(kind), k}, vs...) }

const C, A = history.Committed, history.Aborted

// TestVisibilityPredicates shows each predicate on the smallest history
// exhibiting it (Adya 1999 §4 for G1a/G1b/G-single, Elle §5.1 for internal
// and incompatible-order, Chronos §III for the timestamp axioms), and that
// each stays silent on a history without the anomaly.
func TestVisibilityPredicates(t *testing.T) {
	for _, c := range []struct {
		name, checker, model string
		build                func(b *tb)
		want                 []string
	}{
		{"G1a aborted read", "list-append", "read-committed", func(b *tb) {
			b.txn(A, 1, 2, op('a', 1, 10))
			b.txn(C, 3, 4, op('l', 1, 10))
		}, []string{ClassG1a}},
		{"G1a not prohibited at read-uncommitted", "list-append", "read-uncommitted", func(b *tb) {
			b.txn(A, 1, 2, op('a', 1, 10))
			b.txn(C, 3, 4, op('l', 1, 10))
		}, nil},
		{"G1b intermediate read", "rw-register", "read-committed", func(b *tb) {
			b.txn(C, 1, 2, op('w', 1, 10), op('w', 1, 11))
			b.txn(C, 3, 4, op('r', 1, 10))
		}, []string{ClassG1b}},
		{"internal: own write not read", "rw-register", "snapshot-isolation", func(b *tb) {
			b.txn(C, 1, 2, op('w', 1, 10), op('r', 1, 0))
		}, []string{ClassInternal}},
		{"internal: non-repeatable list read", "list-append", "snapshot-isolation", func(b *tb) {
			b.txn(C, 1, 2, op('a', 1, 9))
			b.txn(C, 3, 6, op('l', 1), op('l', 1, 9))
		}, []string{ClassInternal, ClassCycle}},
		{"own write read back is fine", "list-append", "serializable", func(b *tb) {
			b.txn(C, 1, 2, op('l', 1), op('a', 1, 10), op('l', 1, 10))
		}, nil},
		{"lost update pair", "rw-register", "snapshot-isolation", func(b *tb) {
			b.txn(C, 1, 3, op('r', 1, 0), op('w', 1, 10))
			b.txn(C, 2, 4, op('r', 1, 0), op('w', 1, 11))
		}, []string{ClassLostUpd}},
		{"incompatible order", "list-append", "read-committed", func(b *tb) {
			b.txn(C, 1, 2, op('a', 1, 10))
			b.txn(C, 1, 2, op('a', 1, 11))
			b.txn(C, 3, 4, op('l', 1, 10, 11))
			b.txn(C, 5, 6, op('l', 1, 11, 10))
		}, []string{ClassIncompat}},
		{"G-single: read skew", "list-append", "snapshot-isolation", func(b *tb) {
			// T1 reads x before T2's append and y after it: T1 -rw-> T2 -wr-> T1.
			b.txn(C, 1, 2, op('a', 1, 1), op('a', 2, 2))
			b.txn(C, 3, 4, op('a', 1, 10), op('a', 2, 20))
			b.txn(C, 5, 6, op('l', 1, 1), op('l', 2, 2, 20))
			b.txn(C, 7, 8, op('l', 1, 1, 10))
		}, []string{ClassCycle}},
		{"write skew is SI", "list-append", "snapshot-isolation", func(b *tb) {
			b.txn(C, 1, 4, op('l', 1), op('a', 2, 20))
			b.txn(C, 2, 3, op('l', 2), op('a', 1, 10))
			b.txn(C, 5, 6, op('l', 1, 10), op('l', 2, 20))
		}, nil},
		{"write skew is not serializable", "list-append", "serializable", func(b *tb) {
			b.txn(C, 1, 4, op('l', 1), op('a', 2, 20))
			b.txn(C, 2, 3, op('l', 2), op('a', 1, 10))
			b.txn(C, 5, 6, op('l', 1, 10), op('l', 2, 20))
		}, []string{ClassCycle}},
		{"chronos noconflict", "chronos", "snapshot-isolation", func(b *tb) {
			b.txn(C, 1, 4, op('w', 1, 10))
			b.txn(C, 2, 3, op('w', 1, 11))
		}, []string{ClassTimestamp}},
		{"chronos session is not plain SI", "chronos", "snapshot-isolation", func(b *tb) {
			b.txn(C, 1, 2, op('w', 1, 10))
			b.h.Txns[0].Session = 0
			b.txn(C, 1, 3, op('r', 2, 0))
			b.h.Txns[1].Session, b.h.Txns[1].Seq = 0, 1
		}, nil},
		{"chronos session under strong-session SI", "chronos", "strong-session-snapshot-isolation", func(b *tb) {
			b.txn(C, 1, 2, op('w', 1, 10))
			b.h.Txns[0].Session = 0
			b.txn(C, 1, 3, op('r', 2, 0))
			b.h.Txns[1].Session, b.h.Txns[1].Seq = 0, 1
		}, []string{ClassTimestamp}},
		{"chronos stale read", "chronos", "snapshot-isolation", func(b *tb) {
			b.txn(C, 1, 2, op('w', 1, 10))
			b.txn(C, 3, 4, op('r', 1, 0))
		}, []string{ClassTimestamp}},
		{"chronos snapshot read is fine", "chronos", "snapshot-isolation", func(b *tb) {
			b.txn(C, 1, 2, op('a', 1, 10))
			b.txn(C, 3, 5, op('l', 1, 10), op('a', 1, 11))
			b.txn(C, 4, 6, op('l', 1, 10))
		}, nil},
		{"chronos commit-order replay", "chronos", "serializable", func(b *tb) {
			b.txn(C, 1, 2, op('a', 1, 10))
			b.txn(C, 3, 5, op('l', 1, 10), op('a', 1, 11))
			b.txn(C, 4, 6, op('l', 1, 10))
		}, []string{ClassTimestamp}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newTB()
			c.build(b)
			v := Visible(b.h, c.checker, c.model)
			if !slices.Equal(v.Classes, c.want) {
				t.Fatalf("Visible = %v (%s), want %v", v.Classes, v.Why, c.want)
			}
		})
	}
}

// TestVisibilitySilentOnCorrectHistories: on fault-free sim histories the
// predicates never fire, for any level, workload, target (so "visible"
// always means an injected fault left a trace).
func TestVisibilitySilentOnCorrectHistories(t *testing.T) {
	for _, level := range levels() {
		for _, wl := range workloads() {
			for _, seed := range seedRange(1, 3) {
				c := tune(Case{Level: level, Workload: wl, Seed: seed})
				h, _ := gen(t, c)
				ts, _ := Targets(h, LevelModels(level))
				for _, tg := range ts {
					if v := Visible(h, tg.Checker, tg.Model); len(v.Classes) > 0 {
						t.Errorf("%s %s: predicates %v fire on a correct history: %s", c, tg, v.Classes, v.Why)
					}
				}
			}
		}
	}
}
