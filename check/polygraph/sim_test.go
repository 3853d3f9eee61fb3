package polygraph

import (
	"context"
	"testing"

	"github.com/txray/txray/check"
	_ "github.com/txray/txray/check/chronos"
	_ "github.com/txray/txray/check/elle"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sim"
)

// hide removes every ordering evidence but reads-from and sessions/client
// times: database timestamps and the version order.
func hide(h *history.History) {
	for i := range h.Txns {
		h.Txns[i].StartTS, h.Txns[i].CommitTS = history.Timestamp{}, history.Timestamp{}
	}
	h.VersionOrder = nil
	h.Evidence.Timestamps, h.Evidence.CommitOrder, h.Evidence.VersionOrder = false, false, false
}

// TestDifferentialChronos: on simulator histories, the timestamp checker's
// verdict on the full history is the truth; the polygraph must reach it
// with timestamps and version orders hidden (valid and faulty levels, every
// mix, many seeds).
func TestDifferentialChronos(t *testing.T) {
	chronos, ok := check.Lookup("chronos")
	if !ok {
		t.Fatal("chronos checker not registered")
	}
	type cfgT struct {
		level string
		fault string
	}
	cfgs := []cfgT{
		{sim.Serializable, ""}, {sim.SnapshotIsolation, ""}, {sim.SerializableSI, ""}, {sim.ReadCommitted, ""},
		{sim.SnapshotIsolation, sim.FaultLostUpdate}, {sim.SerializableSI, sim.FaultWriteSkew},
		{sim.StrictSerializable, sim.FaultStaleRead}, {sim.RepeatableReadMySQL, ""},
	}
	seeds := uint64(12)
	if testing.Short() {
		seeds = 4
	}
	agree, invalid, hidden := map[string]int{}, map[string]int{}, map[string]int{}
	for _, c := range cfgs {
		for seed := uint64(0); seed < seeds; seed++ {
			mix := sim.MixNames()[seed%uint64(len(sim.MixNames()))]
			cfg := sim.Config{Workload: sim.RWRegister, Mix: mix, Level: c.level, Txns: 150, Clients: 6, Keys: 4,
				MinOps: 1, MaxOps: 4, Seed: seed + 1}
			if c.fault != "" {
				cfg.Faults = []sim.Fault{{Name: c.fault, Prob: 0.3}}
			}
			h, _, err := sim.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []string{model.SnapshotIsolation, model.Serializable} {
				if rank, _ := chronos.Applies(h, m); rank < 90 {
					continue
				}
				truth, err := chronos.Check(context.Background(), h, check.Options{Model: m})
				if err != nil {
					t.Fatal(err)
				}
				if truth.Verdict == check.Unknown {
					continue
				}
				hh := *h
				hh.Txns = append([]history.Txn(nil), h.Txns...)
				hide(&hh)
				got := run(t, &hh, m, nil)
				if got.Verdict == check.Valid && truth.Verdict == check.Invalid && timestampOnly(truth.AnomalyTypes) {
					// Chronos saw, from the hidden timestamps, that two blind writers of a key were
					// concurrent (noconflict) or that a read missed a version committed before its
					// snapshot (ext); with reads alone some other snapshot explains the history, so
					// no black-box checker (PolySI, Cobra) can reject it.
					hidden[m]++
					continue
				}
				if got.Verdict != truth.Verdict {
					t.Errorf("%s/%s mix %s seed %d, %s: polygraph says %s %v, chronos (full history) says %s %v\n%s",
						c.level, c.fault, mix, seed+1, m, got.Verdict, got.AnomalyTypes, truth.Verdict, truth.AnomalyTypes, dump(got))
					continue
				}
				agree[m]++
				if truth.Verdict == check.Invalid {
					invalid[m]++
				}
			}
		}
	}
	t.Logf("agreed: %v (of which invalid: %v); invalid only by timestamp evidence: %v", agree, invalid, hidden)
	for _, m := range []string{model.SnapshotIsolation, model.Serializable} {
		if invalid[m] == 0 || invalid[m] == agree[m] {
			t.Errorf("%s: the comparison needs both valid and invalid histories (agreed %d, invalid %d)", m, agree[m], invalid[m])
		}
	}
}

// timestampOnly: every anomaly is one only timestamps can show (Chronos's
// noconflict and ext axioms are relative to the recorded start/commit).
func timestampOnly(types []string) bool {
	for _, t := range types {
		if t != model.NoConflict && t != model.Ext {
			return false
		}
	}
	return len(types) > 0
}
