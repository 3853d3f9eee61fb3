package leopard

import (
	"reflect"
	"slices"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/model"
)

// skewedLockHistory: session 1's second transaction T2 writes x in an
// operation that completed at 237, but the session clamp moves its begin
// to 377, when T1 began committing. T3 (session 2, aborted) held x's lock
// over [310, 320], inside T2's certain hold [237, 377]: an ME violation.
// T3's hold is released before T2's (clamped) begin, so a collection
// watermark taken from begins alone drops it before T2 ends.
func skewedLockHistory(t *testing.T) []spec {
	t.Helper()
	return []spec{
		tx(1, 0, 377, "w y 1 370 377"),
		tx(1, 200, 400, "w x 2 200 237"),
		aborted(tx(2, 310, 320, "w x 3 310 320")),
	}
}

// TestOnlineCollectKeepsLockHoldForClampedBegin: collecting after every
// trace keeps a lock hold until every transaction whose write was
// acquired before its clamped begin has ended (engine.activeLow), so the
// online verifier reports the ME violation the offline one does (the
// fuzz input 93e0f304df8d14e4 in miniature), with and without cold keys.
func TestOnlineCollectKeepsLockHoldForClampedBegin(t *testing.T) {
	const m = "mysql:repeatable-read"
	h := build(t, skewedLockHistory(t)...)
	off := run(t, h, m)
	if off.Verdict != check.Invalid || !has(off, model.ME) {
		t.Fatalf("offline: want me, got %s %v", off.Verdict, off.AnomalyTypes)
	}
	var prev *check.Result
	for _, noCool := range []bool{false, true} {
		on, err := NewOnlineModel(m, OnlineOptions{Sessions: sessionsOf(h)})
		if err != nil {
			t.Fatal(err)
		}
		on.e.gcEvery, on.e.noCool = 1, noCool
		for i := range h.Txns {
			on.Add(&h.Txns[i])
		}
		o := on.Flush()
		if o.Verdict != off.Verdict || !slices.Equal(o.AnomalyTypes, off.AnomalyTypes) {
			t.Fatalf("collect every trace (no cold keys %v): online %s %v, offline %s %v", noCool, o.Verdict, o.AnomalyTypes, off.Verdict, off.AnomalyTypes)
		}
		if prev != nil && !reflect.DeepEqual(prev.Anomalies, o.Anomalies) {
			t.Fatalf("cold keys change the anomalies: %v vs %v", prev.Anomalies, o.Anomalies)
		}
		prev = o
	}
}

// TestOnlineSkewedLockAfterCollectionIsUnknown: T2 (session 1) arrives
// after the watermark passed T3's release and T3's lock hold was
// collected; the session clamp moves T2's begin to 400, on the frontier
// (not late by its begin), but its write of x was acquired at 237, before
// T3's release: the ME check it needed was missed, so the verdict is
// unknown (late_txns), never valid.
func TestOnlineSkewedLockAfterCollectionIsUnknown(t *testing.T) {
	h := build(t,
		tx(1, 0, 400, "w y 1 395 400"),
		aborted(tx(2, 310, 320, "w x 3 310 320")),
		tx(2, 420, 430, "w z 8 420 430"),
		tx(1, 200, 450, "w x 2 200 237"),
	)
	on, err := NewOnlineModel("mysql:repeatable-read", OnlineOptions{Sessions: sessionsOf(h)})
	if err != nil {
		t.Fatal(err)
	}
	on.e.gcEvery = 1
	for i := range h.Txns {
		on.Add(&h.Txns[i])
	}
	o := on.Flush()
	if o.Verdict != check.Unknown || o.Stats["late_txns"] == nil {
		t.Fatalf("want unknown with late_txns, got %s %v (stats %v)", o.Verdict, o.AnomalyTypes, o.Stats)
	}
	if off := run(t, h, "mysql:repeatable-read"); off.Verdict != check.Invalid || !has(off, model.ME) {
		t.Fatalf("offline: want me, got %s %v", off.Verdict, off.AnomalyTypes)
	}
}
