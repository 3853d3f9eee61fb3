package elle_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/txray/txray/check"
	_ "github.com/txray/txray/check/elle"
	_ "github.com/txray/txray/check/emme"
	_ "github.com/txray/txray/check/polygraph"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sim"
)

// TestDifferentialRecordedOrder: on simulator histories that carry the
// version order the simulated database installed, rw-register (which now
// uses it) agrees with emme (the version certificate checker) and polygraph
// (which uses it as known edges and searches the rest) wherever two of them
// decide, for correct and faulty levels, under every model each judges.
// It also counts how often rw-register is unknown with and without the
// recorded order: the order must not add unknowns.
func TestDifferentialRecordedOrder(t *testing.T) {
	lookup := func(name string) check.Checker {
		c, ok := check.Lookup(name)
		if !ok {
			t.Fatalf("checker %s not registered", name)
		}
		return c
	}
	rw, em, pg := lookup("rw-register"), lookup("emme"), lookup("polygraph")
	type cfgT struct{ level, fault string }
	cfgs := []cfgT{
		{sim.Serializable, ""}, {sim.StrictSerializable, ""}, {sim.SnapshotIsolation, ""}, {sim.SerializableSI, ""},
		{sim.ReadCommitted, ""}, {sim.RepeatableReadMySQL, ""},
		{sim.SnapshotIsolation, sim.FaultLostUpdate}, {sim.SerializableSI, sim.FaultWriteSkew},
		{sim.Serializable, sim.FaultDirtyWrite}, {sim.Serializable, sim.FaultStaleRead},
		{sim.Serializable, sim.FaultLostCommit}, {sim.ReadCommitted, sim.FaultAbortedRead},
		{sim.SnapshotIsolation, sim.FaultIntermediateRead},
	}
	models := []string{model.ReadCommitted, model.RepeatableRead, model.SnapshotIsolation, model.Serializable}
	seeds := uint64(10)
	if testing.Short() {
		seeds = 3
	}
	run := func(c check.Checker, h *history.History, m string, params map[string]string) *check.Result {
		t.Helper()
		r, err := c.Check(context.Background(), h, check.Options{Model: m, Params: params})
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		return r
	}
	decided := func(r *check.Result) bool { return r.Verdict != check.Unknown }
	var compared, unknownWith, unknownWithout, checks, byRecorded, byCompletion, rejected, onlyRecord int
	for _, c := range cfgs {
		for seed := uint64(1); seed <= seeds; seed++ {
			mix := sim.MixNames()[seed%uint64(len(sim.MixNames()))]
			cfg := sim.Config{Workload: sim.RWRegister, Mix: mix, Level: c.level, Txns: 150, Clients: 5, Keys: 4,
				MinOps: 1, MaxOps: 4, Seed: seed, AbortRate: 0.05, InfoRate: 0.03}
			if c.fault != "" {
				cfg.Faults = []sim.Fault{{Name: c.fault, Prob: 0.3}}
			}
			h, _, err := sim.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !h.Evidence.VersionOrder {
				t.Fatalf("%s/%s seed %d: no version order", c.level, c.fault, seed)
			}
			for _, m := range models {
				name := fmt.Sprintf("%s/%s/%s seed %d under %s", c.level, c.fault, mix, seed, m)
				r := run(rw, h, m, nil)
				without := run(rw, h, m, map[string]string{"use-version-order": "false"})
				checks++
				if n, _ := r.Stats["version_order_rejected_keys"].(int); n > 0 {
					// the record contradicts the history (a lost commit):
					// unknown unless invalid, by design
					rejected++
				} else {
					if r.Verdict == check.Unknown {
						unknownWith++
					}
					if without.Verdict == check.Unknown {
						unknownWithout++
					}
				}
				if by, ok := r.Stats["keys_ordered_by"].(map[string]int); ok {
					byRecorded += by["recorded"]
					byCompletion += by["completion"]
				}
				// Anomalies the inference proves stand with the record (its
				// known edges only add to the inferred ones); the record may
				// show anomalies a witness order hid from the inference.
				if without.Verdict == check.Invalid && r.Verdict != check.Invalid {
					t.Errorf("%s: rw-register %v with the recorded order, %v %v without", name, r.Verdict, without.Verdict, without.AnomalyTypes)
				}
				if without.Verdict == check.Valid && r.Verdict == check.Invalid {
					onlyRecord++
				}
				others := []*check.Result{run(em, h, m, nil)}
				if m != model.ReadCommitted {
					others = append(others, run(pg, h, m, nil))
				}
				for _, o := range others {
					if !decided(r) || !decided(o) {
						continue
					}
					compared++
					if r.Verdict != o.Verdict {
						t.Errorf("%s: rw-register %v %v (%s), %s %v %v (%s)", name, r.Verdict, r.AnomalyTypes, r.Reason, o.Checker, o.Verdict, o.AnomalyTypes, o.Reason)
						for _, a := range r.Anomalies {
							t.Logf("rw-register %s: %s", a.Type, a.Explanation)
						}
						for _, a := range o.Anomalies {
							t.Logf("%s %s: %s", o.Checker, a.Type, a.Explanation)
						}
					}
				}
			}
		}
	}
	t.Logf("%d checks: rw-register unknown %d with the recorded order, %d without (%d checks with a contradicting record left out); invalid only with the record %d; %d comparisons with emme/polygraph; keys ordered by the record %d, by completion %d",
		checks, unknownWith, unknownWithout, rejected, onlyRecord, compared, byRecorded, byCompletion)
	if unknownWith > unknownWithout {
		t.Errorf("the recorded order added unknowns: %d with, %d without", unknownWith, unknownWithout)
	}
	if compared == 0 {
		t.Fatal("nothing compared")
	}
}
