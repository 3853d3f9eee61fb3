package polygraph

import (
	"context"
	"slices"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sim"
)

// TestDifferentialRWRegisterNeverFalseValid: on simulator histories with
// their version order and timestamps hidden (so rw-register's inference
// leaves versions unordered), the rw-register inference checker never says
// valid where the polygraph, which decides serializability and snapshot
// isolation exactly, says invalid (issue 12). Repeatable-read is compared
// with serializable: on histories without predicate reads Adya's PL-2.99
// (G1 and G2-item prohibited) equals PL-3, since every cycle with an
// anti-dependency is then a G2-item.
func TestDifferentialRWRegisterNeverFalseValid(t *testing.T) {
	rw, ok := check.Lookup("rw-register")
	if !ok {
		t.Fatal("rw-register checker not registered")
	}
	type cfgT struct {
		level string
		fault string
	}
	cfgs := []cfgT{
		{sim.Serializable, ""}, {sim.SnapshotIsolation, ""}, {sim.ReadCommitted, ""},
		{sim.SnapshotIsolation, sim.FaultLostUpdate}, {sim.SerializableSI, sim.FaultWriteSkew},
	}
	seeds := uint64(10)
	if testing.Short() {
		seeds = 3
	}
	pairs := []struct{ rwModel, pgModel string }{
		{model.Serializable, model.Serializable},
		{model.RepeatableRead, model.Serializable},
		{model.SnapshotIsolation, model.SnapshotIsolation},
	}
	tally := map[string]int{}
	for _, c := range cfgs {
		for seed := uint64(1); seed <= seeds; seed++ {
			cfg := sim.Config{Workload: sim.RWRegister, Level: c.level, Txns: 120, Clients: 6, Keys: 4,
				MinOps: 1, MaxOps: 4, ReadRatio: 0.5, Seed: seed}
			if c.fault != "" {
				cfg.Faults = []sim.Fault{{Name: c.fault, Prob: 0.3}}
			}
			h, _, err := sim.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			hide(h)
			for _, p := range pairs {
				pg, err := Checker{}.Check(context.Background(), h, check.Options{Model: p.pgModel})
				if err != nil {
					t.Fatal(err)
				}
				r, err := rw.Check(context.Background(), h, check.Options{Model: p.rwModel})
				if err != nil {
					t.Fatal(err)
				}
				tally[p.rwModel+"/rw-register "+r.Verdict.String()+", polygraph "+pg.Verdict.String()]++
				if pg.Verdict == check.Invalid && r.Verdict == check.Valid {
					t.Errorf("%s seed %d fault %q: rw-register valid under %s, polygraph invalid under %s (%v)",
						c.level, seed, c.fault, p.rwModel, p.pgModel, pg.AnomalyTypes)
				}
				if pg.Verdict == check.Valid && r.Verdict == check.Invalid {
					t.Errorf("%s seed %d fault %q: rw-register invalid under %s (%v), polygraph valid under %s",
						c.level, seed, c.fault, p.rwModel, r.AnomalyTypes, p.pgModel)
				}
			}
		}
	}
	t.Logf("verdicts: %v", tally)
}

// TestRepeatableReadAsSerializable: repeatable-read (Adya PL-2.99) is
// decided as serializable on item-only histories, with the anomalies named
// under repeatable-read: a write skew through versions no inference orders
// is G2-item (rw-register: unknown), and a serial history is valid. Before
// issue 12 the polygraph did not apply to repeatable-read.
func TestRepeatableReadAsSerializable(t *testing.T) {
	skew := mk(t, tt("0", "w x 1", "w y 1"), tt("1", "r x 1", "r y 1", "w x 2"), tt("2", "r x 1", "r y 1", "w y 2"))
	if rank, why := (Checker{}).Applies(skew, model.RepeatableRead); rank == 0 {
		t.Fatalf("does not apply to repeatable-read: %s", why)
	}
	r := run(t, skew, model.RepeatableRead, nil)
	if r.Verdict != check.Invalid || r.Model != model.RepeatableRead || !slices.Contains(r.AnomalyTypes, model.G2Item) {
		t.Errorf("write skew under repeatable-read: %v %v model %s (%s)", r.Verdict, r.AnomalyTypes, r.Model, r.Reason)
	}
	for _, a := range r.Anomalies {
		if a.Allowed {
			t.Errorf("%s reported as allowed under repeatable-read", a.Type)
		}
	}
	// Snapshot isolation allows it (and the polygraph says so).
	if r := run(t, skew, model.SnapshotIsolation, nil); r.Verdict != check.Valid {
		t.Errorf("write skew under snapshot-isolation: %v %v", r.Verdict, r.AnomalyTypes)
	}
	serial := mk(t, tt("0", "w x 1", "w y 7"), tt("1", "r y 7", "w x 2"), tt("2", "r x 2"))
	if r := run(t, serial, model.RepeatableRead, nil); r.Verdict != check.Valid {
		t.Errorf("serial history under repeatable-read: %v %v %s", r.Verdict, r.AnomalyTypes, r.Reason)
	}
}
