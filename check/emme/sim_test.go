package emme

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/txray/txray/check"
	_ "github.com/txray/txray/check/elle"
	"github.com/txray/txray/history"
	"github.com/txray/txray/sim"
)

var seeds = flag.Int("emme.seeds", 6, "simulator seeds per level")

func simCfg(level string, seed uint64) sim.Config {
	c := sim.DefaultConfig()
	c.Level, c.Workload, c.Seed = level, sim.RWRegister, seed
	c.Txns, c.Clients, c.Keys = 400, 6, 6
	c.AbortRate, c.InfoRate = 0.05, 0.03
	c.LockingReads = 0.1
	c.PredicateReads = 0.4
	return c
}

// emmeModel is the model emme judges a simulated level by.
func emmeModel(li sim.LevelInfo) string {
	if li.Model == "strict-serializable" {
		return "serializable"
	}
	return li.Model
}

// TestSimCorrectLevels: histories of every simulated level without faults,
// with predicate reads (whose version sets the simulator records), are
// valid under the level's model: no false positive from predicate
// dependencies.
func TestSimCorrectLevels(t *testing.T) {
	for _, li := range sim.Levels() {
		m := emmeModel(li)
		if _, st := Canon(m); st < 0 {
			continue
		}
		for seed := uint64(1); seed <= uint64(*seeds); seed++ {
			t.Run(fmt.Sprintf("%s/%d", li.Name, seed), func(t *testing.T) {
				h, _, err := sim.Generate(simCfg(li.Name, seed))
				if err != nil {
					t.Fatal(err)
				}
				r := run(t, h, m)
				if r.Verdict != check.Valid {
					t.Fatalf("%s under %s: %s (%s) %v\n%s", li.Name, m, r.Verdict, r.Reason, r.AnomalyTypes, first(r))
				}
				if r.Stats["predicate_reads"].(int) == 0 {
					t.Fatalf("no predicate reads checked")
				}
			})
		}
	}
}

func first(r *check.Result) string {
	if len(r.Anomalies) == 0 {
		return ""
	}
	return r.Anomalies[0].Explanation
}

// TestSimDifferentialElle: with injected faults, whatever elle's
// rw-register inference proves (it sees item reads only) emme proves too,
// with the exact certificate; and emme catches each fault on some seed.
func TestSimDifferentialElle(t *testing.T) {
	el, ok := check.Lookup("rw-register")
	if !ok {
		t.Skip("rw-register checker not registered")
	}
	levels := map[string]string{ // fault -> level it breaks
		sim.FaultDirtyWrite:       sim.ReadCommitted,
		sim.FaultAbortedRead:      sim.ReadCommitted,
		sim.FaultIntermediateRead: sim.ReadCommitted,
		sim.FaultLostUpdate:       sim.SnapshotIsolation,
		sim.FaultWriteSkew:        sim.SerializableSI,
		sim.FaultStaleRead:        sim.SnapshotIsolation,
		sim.FaultNoOwnWrite:       sim.SnapshotIsolation,
	}
	for fault, level := range levels {
		li := levelInfo(level)
		m := emmeModel(li)
		caught := 0
		for seed := uint64(1); seed <= uint64(*seeds); seed++ {
			cfg := simCfg(level, seed)
			cfg.Faults = []sim.Fault{{Name: fault, Prob: 0.2}}
			h, tr, err := sim.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := run(t, h, m)
			if r.Verdict == check.Invalid {
				caught++
			}
			re, err := el.Check(context.Background(), itemOnly(h), check.Options{Model: m})
			if err != nil {
				t.Fatal(err)
			}
			if re.Verdict == check.Invalid && r.Verdict != check.Invalid {
				t.Errorf("%s/%s/%d: elle finds %v, emme says %s (%s); faults fired %v", fault, level, seed, re.AnomalyTypes, r.Verdict, r.Reason, tr.FaultCounts)
			}
		}
		if caught == 0 {
			t.Errorf("%s at %s: emme caught it on no seed", fault, level)
		}
	}
}

func levelInfo(name string) sim.LevelInfo {
	for _, l := range sim.Levels() {
		if l.Name == name {
			return l
		}
	}
	panic(name)
}

// itemOnly drops predicate reads (elle cannot use them).
func itemOnly(h *history.History) *history.History {
	c := *h
	c.Txns = make([]history.Txn, len(h.Txns))
	for i, t := range h.Txns {
		var ops []history.Op
		for _, o := range t.Ops {
			if o.Kind != history.PredRead {
				ops = append(ops, o)
			}
		}
		t.Ops = ops
		c.Txns[i] = t
	}
	c.Evidence.PredicateRead = false
	return &c
}

// TestSimVersionSetsInferred: on simulator histories (correct and faulty),
// checking with the recorded version sets and with version sets inferred
// from the rows returned gives the same verdict and anomaly types (the
// inference is exact for k IN (...) predicates), and no read is ambiguous.
func TestSimVersionSetsInferred(t *testing.T) {
	for _, level := range []string{sim.SnapshotIsolation, sim.ReadCommitted, sim.SerializableSI} {
		for _, fault := range []string{"", sim.FaultStaleRead, sim.FaultAbortedRead} {
			cfg := simCfg(level, 3)
			if fault != "" {
				cfg.Faults = []sim.Fault{{Name: fault, Prob: 0.2}}
			}
			h, _, err := sim.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !h.Evidence.VersionSets {
				t.Fatal("simulator recorded no version sets")
			}
			inferred := *h
			inferred.Txns = make([]history.Txn, len(h.Txns))
			for i, tx := range h.Txns {
				tx = tx.Clone()
				if tx.Ext != nil {
					for j := range tx.Ext.Preds {
						tx.Ext.Preds[j].VersionSet, tx.Ext.Preds[j].HasVersionSet = nil, false
					}
				}
				inferred.Txns[i] = tx
			}
			for _, m := range []string{"serializable", "snapshot-isolation", "read-committed"} {
				a, b := run(t, h, m), run(t, &inferred, m)
				if a.Verdict != b.Verdict || fmt.Sprint(a.AnomalyTypes) != fmt.Sprint(b.AnomalyTypes) || b.Stats["ambiguous_reads"].(int) != 0 {
					t.Errorf("%s/%s under %s: recorded version sets %s %v, inferred %s %v (%s)", level, fault, m, a.Verdict, a.AnomalyTypes, b.Verdict, b.AnomalyTypes, b.Reason)
				}
			}
		}
	}
}
