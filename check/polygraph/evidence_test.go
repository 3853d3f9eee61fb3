package polygraph

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sim"
)

// withTS sets database timestamps on mk's transactions: ts[i] = {start,
// commit} (0 = unset).
func withTS(h *history.History, ts ...[2]int64) *history.History {
	for i, x := range ts {
		if x[0] != 0 {
			h.Txns[i].StartTS = history.Timestamp{P: x[0], Set: true}
		}
		if x[1] != 0 {
			h.Txns[i].CommitTS = history.Timestamp{P: x[1], Set: true}
		}
	}
	return h
}

// TestEvidence: which ordering evidence each model may use (evidence.go),
// one history each way.
func TestEvidence(t *testing.T) {
	// T1 and T2 blind-write x; T3 read x = 1 and z = 7 from T2. Reads alone
	// allow x's order 2 < 1 (T2, T1, T3). If x's version order is commit order
	// (T1 before T2), T3 read a version T2 overwrote (rw T3 -> T2) and read T2's
	// z (wr T2 -> T3): a cycle (G-single-item).
	skew := func() *history.History {
		return withTS(mk(t, tt("", "w x 1"), tt("", "w x 2", "w z 7"), tt("", "r x 1", "r z 7")), [2]int64{0, 10}, [2]int64{0, 20}, [2]int64{0, 30})
	}
	// T1 committed x = 1 before T2 started (timestamps), but T2 read the initial
	// state: under SI T1 is in T2's snapshot (Chronos's ext axiom). Reads alone
	// allow T2 before T1.
	stale := func() *history.History {
		return withTS(mk(t, tt("", "w x 1"), tt("", "r x nil", "w y 1")), [2]int64{1, 2}, [2]int64{3, 4})
	}
	cases := []struct {
		name  string
		h     func() *history.History
		ev    history.Evidence
		extra map[string]string
		m     string
		want  check.Verdict
		uses  bool
	}{
		{"SER: commit order alone is not a version order", skew, history.Evidence{CommitOrder: true}, nil, model.Serializable, check.Valid, false},
		{"SER: serial_order=commit gives the version order", skew, history.Evidence{CommitOrder: true, SerialOrder: history.SerialCommit}, nil, model.Serializable, check.Invalid, true},
		{"SER: write locks to commit (profile) give the version order", skew, history.Evidence{CommitOrder: true}, map[string]string{"db": "postgres", "level": "serializable"}, model.Serializable, check.Invalid, true},
		{"SER: a database with no known profile gives nothing", skew, history.Evidence{CommitOrder: true}, map[string]string{"db": "somedb", "level": "serializable"}, model.Serializable, check.Valid, false},
		{"SER: evidence=false", skew, history.Evidence{CommitOrder: true, SerialOrder: history.SerialCommit}, map[string]string{"evidence": "false"}, model.Serializable, check.Valid, false},
		{"SI: commit order is the version order", skew, history.Evidence{CommitOrder: true}, nil, model.SnapshotIsolation, check.Invalid, true},
		{"SI: without evidence", skew, history.Evidence{}, nil, model.SnapshotIsolation, check.Valid, false},
		{"SI: timestamps give snapshot visibility", stale, history.Evidence{Timestamps: true}, nil, model.SnapshotIsolation, check.Invalid, true},
		{"SI: commit order without start timestamps gives no visibility", stale, history.Evidence{CommitOrder: true}, nil, model.SnapshotIsolation, check.Valid, true},
		{"SER: start timestamps are not a serialization order", stale, history.Evidence{Timestamps: true}, nil, model.Serializable, check.Valid, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.h()
			h.Evidence = c.ev
			params := map[string]string{"inference": "false"}
			for k, v := range c.extra {
				switch k {
				case "db":
					h.Header.DB = v
				case "level":
					h.Header.Level = v
				default:
					params[k] = v
				}
			}
			r := run(t, h, c.m, params)
			if r.Verdict != c.want {
				t.Fatalf("got %s %v, want %s\n%s", r.Verdict, r.AnomalyTypes, c.want, dump(r))
			}
			if _, used := r.Stats["evidence"]; used != c.uses {
				t.Fatalf("evidence used = %v, want %v (stats %v)", used, c.uses, r.Stats)
			}
		})
	}
}

// TestEvidenceExplained: a cycle through evidence edges names the evidence.
func TestEvidenceExplained(t *testing.T) {
	h := withTS(mk(t, tt("", "w x 1"), tt("", "r x nil", "w y 1")), [2]int64{1, 2}, [2]int64{3, 4})
	h.Evidence = history.Evidence{Timestamps: true}
	r := run(t, h, model.SnapshotIsolation, nil)
	if r.Verdict != check.Invalid || len(r.Anomalies) == 0 {
		t.Fatalf("got %s", r.Verdict)
	}
	if !contains(r.Anomalies[0].Explanation, "start_ts 3") {
		t.Fatalf("explanation does not cite the timestamps:\n%s", dump(r))
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestDifferentialChronosEvidence: simulator histories with the version
// order hidden but database timestamps (and the exact commit order) kept.
// Chronos's verdict on the full history is the truth. With evidence the
// polygraph never rejects what Chronos accepts, agrees with it everywhere
// except on Chronos's noconflict (two concurrent blind writers of a key,
// which no order of the dependency graph shows), and sees the ext
// violations that reads alone hide.
func TestDifferentialChronosEvidence(t *testing.T) {
	chronos, ok := check.Lookup("chronos")
	if !ok {
		t.Fatal("chronos checker not registered")
	}
	cfgs := []struct{ level, fault string }{
		{sim.Serializable, ""}, {sim.StrictSerializable, ""}, {sim.SnapshotIsolation, ""}, {sim.SnapshotIsolationFCW, ""},
		{sim.SerializableSI, ""}, {sim.ReadCommitted, ""}, {sim.RepeatableReadMySQL, ""},
		{sim.SnapshotIsolation, sim.FaultLostUpdate}, {sim.SerializableSI, sim.FaultWriteSkew},
		{sim.StrictSerializable, sim.FaultStaleRead}, {sim.SnapshotIsolation, sim.FaultStaleRead},
	}
	seeds, txns := uint64(10), 150
	if testing.Short() {
		seeds = 3
	}
	if *probe { // a longer hunt: go test -run DifferentialChronosEvidence -probe
		seeds, txns = 40, 400
	}
	agree, invalid, noconflict, blind := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	for _, c := range cfgs {
		for seed := uint64(1); seed <= seeds; seed++ {
			for _, wl := range []string{sim.RWRegister, sim.ListAppend} {
				cfg := sim.Config{Workload: wl, Level: c.level, Txns: txns, Clients: 6, Keys: 3 + int(seed%4), MinOps: 1, MaxOps: 4,
					ReadRatio: 0.5, Seed: seed, InfoRate: 0.02, AbortRate: 0.05}
				if wl == sim.RWRegister {
					cfg.Mix = sim.MixNames()[seed%uint64(len(sim.MixNames()))]
				}
				if c.fault != "" {
					cfg.Faults = []sim.Fault{{Name: c.fault, Prob: 0.3}}
				}
				h, _, err := sim.Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range []string{model.SnapshotIsolation, model.Serializable} {
					truth, err := chronos.Check(context.Background(), h, check.Options{Model: m})
					if err != nil {
						t.Fatal(err)
					}
					if truth.Verdict == check.Unknown {
						continue
					}
					hh := *h
					hh.VersionOrder, hh.Evidence.VersionOrder = nil, false
					with := run(t, &hh, m, map[string]string{"inference": "false"})
					without := run(t, &hh, m, map[string]string{"inference": "false", "evidence": "false"})
					name := c.level + "/" + c.fault + "/" + wl + "/" + m
					if with.Verdict == check.Invalid && truth.Verdict == check.Valid {
						t.Errorf("%s seed %d: false reject with evidence %v\n%s", name, seed, with.Stats["evidence"], dump(with))
						continue
					}
					if without.Verdict == check.Invalid && with.Verdict != check.Invalid {
						t.Errorf("%s seed %d: evidence turned invalid into %s", name, seed, with.Verdict)
					}
					if with.Verdict == check.Valid && truth.Verdict == check.Invalid {
						if only(truth.AnomalyTypes, model.NoConflict) {
							noconflict[m]++
							continue
						}
						t.Errorf("%s seed %d: polygraph with evidence %v says valid, chronos says %v\n%s", name, seed, with.Stats["evidence"], truth.AnomalyTypes, dump(truth))
						continue
					}
					if with.Verdict != truth.Verdict {
						t.Errorf("%s seed %d: polygraph %s, chronos %s", name, seed, with.Verdict, truth.Verdict)
						continue
					}
					agree[m]++
					if truth.Verdict == check.Invalid {
						invalid[m]++
						if without.Verdict == check.Valid {
							blind[m]++
						}
					}
				}
			}
		}
	}
	t.Logf("agreed: %v (invalid: %v; of which reads alone accept: %v); invalid only by noconflict: %v", agree, invalid, blind, noconflict)
	if blind[model.SnapshotIsolation] == 0 {
		t.Errorf("evidence never decided a history reads alone accept: the differential test lost its point")
	}
}

func only(types []string, t string) bool {
	for _, x := range types {
		if x != t {
			return false
		}
	}
	return len(types) > 0
}

// TestEvidenceSoundTiny: on tiny random register histories with random
// database timestamps, whatever the polygraph rejects using the evidence,
// Chronos (the exact timestamp definition: SI by replaying snapshots, SER
// by replaying commit order when the history declares it serializes in
// commit order) rejects too: the evidence rules never derive an order the
// timestamps do not imply.
func TestEvidenceSoundTiny(t *testing.T) {
	chronos, ok := check.Lookup("chronos")
	if !ok {
		t.Fatal("chronos checker not registered")
	}
	seeds := 3000
	if testing.Short() {
		seeds = 800
	}
	used := map[string]int{}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 77))
		h := randHistory(r, 2+r.IntN(4))
		n := len(h.Txns)
		ts := r.Perm(2 * n)
		for i := range h.Txns {
			a, b := int64(ts[2*i])+1, int64(ts[2*i+1])+1
			if a > b {
				a, b = b, a
			}
			h.Txns[i].StartTS = history.Timestamp{P: a, Set: true}
			h.Txns[i].CommitTS = history.Timestamp{P: b, Set: true}
		}
		h.Evidence.Timestamps = true
		h.Header.Extra = map[string]string{"commit-order-serializes": "true"}
		for _, m := range []string{model.SnapshotIsolation, model.Serializable} {
			got := run(t, h, m, map[string]string{"inference": "false"})
			if got.Verdict != check.Invalid {
				continue
			}
			if without := run(t, h, m, map[string]string{"inference": "false", "evidence": "false"}); without.Verdict == check.Valid {
				used[m]++
			}
			truth, err := chronos.Check(context.Background(), h, check.Options{Model: m})
			if err != nil {
				t.Fatal(err)
			}
			if truth.Verdict == check.Valid {
				var txns []string
				for i := range h.Txns {
					x := &h.Txns[i]
					txns = append(txns, x.Status.String()+" "+x.StartTS.String()+".."+x.CommitTS.String()+" "+h.TxnString(int32(i)))
				}
				t.Fatalf("seed %d %s: polygraph with evidence rejects, chronos accepts\n%q\n%s", seed, m, txns, dump(got))
			}
		}
	}
	t.Logf("rejections that needed the evidence: %v", used)
	if used[model.SnapshotIsolation] == 0 || used[model.Serializable] == 0 {
		t.Errorf("the evidence never decided a rejection: the test lost its point")
	}
}
