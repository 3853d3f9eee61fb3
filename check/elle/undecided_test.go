package elle

import (
	"context"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/model"
)

// TestUndecidedModelsAreNeverValid: Elle's lattice gives read-atomic,
// view-serializable, causal, PRAM and the other models outside Decides few
// or none of the anomalies that characterize them, so finding none of their
// prohibited anomalies proves nothing. Each history below breaks the model
// (the comment says why); the checkers said valid before.
func TestUndecidedModelsAreNeverValid(t *testing.T) {
	// Fractured read (Cerone et al. 2015 RA): T3 reads x from T1 and y from
	// T2, while T1 and T2 both write x and y.
	fractured := func(t *testing.T) *hb {
		return newHB(t).add(
			ok("a", "w x 1", "w y 1"),
			ok("b", "w x 2", "w y 2"),
			ok("c", "r x 1", "r y 2"))
	}
	// Write skew: neither serial order explains the reads, so it is not
	// view-serializable (Papadimitriou 1979) nor one-copy serializable.
	writeSkew := func(t *testing.T) *hb {
		return newHB(t).add(
			ok("a", "r x nil", "r y nil", "w x 1"),
			ok("b", "r x nil", "r y nil", "w y 1"),
			ok("c", "r x 1", "r y 1"))
	}
	// Monotonic writes broken (so not PRAM, causal, sequential,
	// linearizable): session a writes x = 1 then x = 2, session b reads 2
	// then 1.
	mw := func(t *testing.T) *hb {
		return newHB(t).add(
			ok("a", "w x 1"), ok("a", "w x 2"),
			ok("b", "r x 2"), ok("b", "r x 1"))
	}
	// The same three shapes for list-append.
	fracturedList := func(t *testing.T) *hb {
		return newHB(t).add(
			ok("a", "append x 1", "append y 1"),
			ok("b", "append x 2", "append y 2"),
			ok("c", "r x [1]", "r y [1 2]"),
			ok("d", "r x [1 2]"))
	}
	cases := []struct {
		name  string
		h     func(*testing.T) *hb
		c     check.Checker
		model string
	}{
		{"fractured-read/read-atomic", fractured, RWRegister{}, model.ReadAtomic},
		{"fractured-read/causal-cerone", fractured, RWRegister{}, model.CausalCerone},
		{"fractured-read/monotonic-atomic-view", fractured, RWRegister{}, model.MonotonicAtomicView},
		{"fractured-read/list/read-atomic", fracturedList, ListAppend{}, model.ReadAtomic},
		{"write-skew/view-serializable", writeSkew, RWRegister{}, model.ViewSerializable},
		{"write-skew/1SR", writeSkew, RWRegister{}, model.OneCopySerializable},
		{"write-skew/session-serializable", writeSkew, RWRegister{}, model.SessionSerializable},
		{"monotonic-writes/PRAM", mw, RWRegister{}, model.PRAM},
		{"monotonic-writes/causal", mw, RWRegister{}, model.Causal},
		{"monotonic-writes/sequential", mw, RWRegister{}, model.Sequential},
		{"monotonic-writes/linearizable", mw, RWRegister{}, model.Linearizable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.h(t).h
			r, err := c.c.Check(context.Background(), h, check.Options{Model: c.model})
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict == check.Valid {
				t.Errorf("valid under %s: %v", c.model, r.AnomalyTypes)
			}
		})
	}
}

// TestDecidedModelsStillValid: the restriction keeps valid verdicts under
// the models the checkers decide, DBMS profiles included.
func TestDecidedModelsStillValid(t *testing.T) {
	h := newHB(t).add(ok("a", "w x 1"), ok("b", "r x 1", "w x 2"), ok("a", "r x 2")).h
	for _, m := range []string{model.ReadCommitted, model.Serializable, model.StrongSessionSnapshotIsolation, "postgres:repeatable-read"} {
		r, err := RWRegister{}.Check(context.Background(), h, check.Options{Model: m})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != check.Valid {
			t.Errorf("%s: %v (%s), want valid", m, r.Verdict, r.Reason)
		}
	}
}
