package proptest

import (
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/sim"
)

// TestPropertyPredicateReads: fault-free rw-register histories with
// predicate reads (sim.Config.PredicateReads) stay valid for every checker
// that judges them — leopard checks each returned row as a read under the
// statement's snapshot, under the DBMS profile the level implements; the
// other checkers must at least not report a false anomaly (they answer
// unknown or skip the predicate reads). With stale-read at
// snapshot-isolation and only predicate reads, leopard must find the stale
// rows somewhere in the seeds (the predicate reads are checked, not
// skipped).
func TestPropertyPredicateReads(t *testing.T) {
	for _, level := range levels() {
		ms := append(LevelModels(level), LevelProfiles(level)...)
		for _, seed := range seedRange(1, 3) {
			c := tune(Case{Level: level, Workload: sim.RWRegister, Seed: seed, Info: 0.05})
			cfg := c.Config()
			cfg.PredicateReads = 0.5
			h, _, err := sim.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ts, _ := Targets(h, ms)
			for _, tg := range ts {
				r, err := Run(h, tg)
				if err != nil {
					t.Fatalf("%s %s: %v", c, tg, err)
				}
				if r.Verdict == check.Invalid {
					t.Errorf("%s with predicate reads 0.5: %s false positive: %s\n  reproduce: %s --predicate-reads 0.5 | txray check --checker %s --model %s -",
						c, tg, Explain(r, 2), c.GenCommand(), tg.Checker, tg.Model)
				}
			}
		}
	}
	found := 0
	for _, seed := range seedRange(1, 5) {
		c := tune(Case{Level: sim.SnapshotIsolation, Workload: sim.RWRegister, Seed: seed, Fault: sim.FaultStaleRead, Prob: 0.3})
		cfg := c.Config()
		cfg.PredicateReads, cfg.ReadRatio = 1, 0.6
		h, tr, err := sim.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if tr.FaultCounts[sim.FaultStaleRead] == 0 {
			continue
		}
		r, err := Run(h, Target{"leopard", "postgres:repeatable-read"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict == check.Invalid {
			found++
		}
	}
	t.Logf("leopard found stale predicate-read rows in %d of 5 seeds", found)
	if found == 0 {
		t.Error("leopard found no stale predicate-read row in 5 seeds of snapshot-isolation + stale-read:0.3 with only predicate reads")
	}
}
