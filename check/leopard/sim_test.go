package leopard

import (
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sim"
)

// simProfiles maps each simulator level to the DBMS profile whose
// mechanisms it implements.
var simProfiles = map[string]string{
	sim.StrictSerializable:   "sqlite:serializable",
	sim.Strict2PL:            "mysql:serializable",
	sim.SnapshotIsolation:    "mariadb:snapshot-isolation",
	sim.SnapshotIsolationFCW: "postgres:repeatable-read",
	sim.SerializableSI:       "postgres:serializable",
	sim.RepeatableReadMySQL:  "mysql:repeatable-read",
	sim.ReadCommitted:        "postgres:read-committed",
	sim.ReadUncommitted:      "mysql:read-uncommitted",
}

// TestSimCorrectLevels: the reference simulator's correct executions
// satisfy the mechanisms of the matching profile (no false positives), for
// both workloads, with aborts and unknown outcomes.
func TestSimCorrectLevels(t *testing.T) {
	for level, prof := range simProfiles {
		for _, wl := range []string{sim.RWRegister, sim.ListAppend} {
			for seed := uint64(1); seed <= 4; seed++ {
				h, _, err := sim.Generate(sim.Config{Level: level, Workload: wl, Txns: 400, Seed: seed, MaxOps: 6,
					AbortRate: 0.05, InfoRate: 0.02, Keys: 6, LockingReads: float64(seed%2) * 0.3})
				if err != nil {
					t.Fatal(err)
				}
				r := run(t, h, prof)
				if r.Verdict != check.Valid {
					for _, a := range r.Anomalies[:min(2, len(r.Anomalies))] {
						t.Logf("%s: %s", a.Type, a.Explanation)
					}
					t.Fatalf("%s %s seed %d (%s): %s %v", level, wl, seed, prof, r.Verdict, r.AnomalyTypes)
				}
			}
		}
	}
}

// TestSimFaults: injected faults that break a mechanism are caught as that
// mechanism's violation.
func TestSimFaults(t *testing.T) {
	cases := []struct {
		level, fault, profile, want string
	}{
		{sim.SnapshotIsolation, sim.FaultStaleRead, "mariadb:snapshot-isolation", model.CR},
		{sim.ReadCommitted, sim.FaultStaleRead, "postgres:read-committed", model.CR},
		{sim.SnapshotIsolation, sim.FaultLostUpdate, "postgres:repeatable-read", model.FUW},
		{sim.ReadCommitted, sim.FaultDirtyWrite, "postgres:read-committed", model.ME},
		{sim.SerializableSI, sim.FaultWriteSkew, "postgres:serializable", model.SC},
		{sim.SnapshotIsolation, sim.FaultNoOwnWrite, "mariadb:snapshot-isolation", model.CR},
		{sim.ReadCommitted, sim.FaultAbortedRead, "postgres:read-committed", model.CR},
	}
	for _, c := range cases {
		t.Run(c.level+"/"+c.fault, func(t *testing.T) {
			found, fired := 0, 0
			for seed := uint64(1); seed <= 6; seed++ {
				h, truth, err := sim.Generate(sim.Config{Level: c.level, Workload: sim.RWRegister, Txns: 400, Seed: seed, MaxOps: 6,
					Keys: 4, Faults: []sim.Fault{{Name: c.fault, Prob: 0.3}}})
				if err != nil {
					t.Fatal(err)
				}
				if truth.FaultCounts[c.fault] == 0 {
					continue
				}
				fired++
				r := run(t, h, c.profile)
				if r.Verdict == check.Invalid && has(r, c.want) {
					found++
				}
			}
			if fired == 0 {
				t.Skip("fault never fired")
			}
			t.Logf("%s detected in %d of %d histories where it fired", c.want, found, fired)
			if found == 0 {
				t.Fatalf("%s never detected", c.want)
			}
		})
	}
}
