package leopard_test

import (
	"context"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/elle"
	"github.com/txray/txray/check/leopard"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// TestTiDBStaleReadNoCycle: the paper's TiDB stale read (§VI-F) has no
// dependency cycle, so a cycle-based checker for serializability (Elle's
// rw-register inference, which does not use real time) accepts the
// history, while leopard's consistent-read mechanism rejects it under
// tidb:snapshot-isolation. T1 wrote x and committed before T2 began; T2
// still read the initial x (its only dependency is T2 -rw-> T1).
func TestTiDBStaleReadNoCycle(t *testing.T) {
	h := history.New()
	h.Evidence.OpTime, h.Evidence.ClientTime, h.Evidence.Sessions = true, true, true
	x, y := h.Keys.Str("x"), h.Keys.Str("y")
	op := func(k history.Kind, key, v int32) history.Op {
		return history.Op{Kind: k, Key: key, Value: v, HasTime: true}
	}
	h.Add(history.Txn{Session: h.Sessions.Int(1), Status: history.Committed, HasTime: true, Invoke: 0, Complete: 10, ID: "T1",
		Ops: []history.Op{op(history.Read, x, history.NoValue), op(history.Write, x, h.Values.Int(1))},
		Ext: &history.TxnExt{OpTimes: []history.OpTime{{Invoke: 1, Complete: 2}, {Invoke: 3, Complete: 4}}}})
	h.Add(history.Txn{Session: h.Sessions.Int(2), Status: history.Committed, HasTime: true, Invoke: 20, Complete: 30, ID: "T2",
		Ops: []history.Op{op(history.Read, x, history.NoValue), op(history.Write, y, h.Values.Int(2))},
		Ext: &history.TxnExt{OpTimes: []history.OpTime{{Invoke: 21, Complete: 22}, {Invoke: 23, Complete: 24}}}})
	ctx := context.Background()
	r, err := elle.RWRegister{}.Check(ctx, h, check.Options{Model: "serializable"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != check.Valid {
		t.Fatalf("elle rw-register under serializable: want valid (no cycle), got %s %v", r.Verdict, r.AnomalyTypes)
	}
	l, err := leopard.Checker{}.Check(ctx, h, check.Options{Model: "tidb:snapshot-isolation"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Verdict != check.Invalid || len(l.AnomalyTypes) != 1 || l.AnomalyTypes[0] != model.CR {
		t.Fatalf("leopard under tidb:snapshot-isolation: want cr only, got %s %v", l.Verdict, l.AnomalyTypes)
	}
	t.Log(l.Anomalies[0].Explanation)
}
