package proptest

import (
	"flag"
	"fmt"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sim"
)

// TestDifferentialListAppendChronos compares Elle list-append inference with
// Chronos on the same sim histories, with and without faults. List-append
// judges the reads alone; Chronos judges the reads against the recorded
// timestamps. Anything list-append proves (a prohibited anomaly in the
// reads) violates the model under every choice of timestamps, so Chronos,
// given the real ones, must find a violation too:
//
//	list-append invalid under M  ⇒  chronos invalid under M
//
// for M = snapshot-isolation at the levels whose start_ts is the snapshot,
// and M = serializable where commit order serializes. The converse does not
// hold (Chronos also sees blind concurrent writes and stale reads that
// leave no cycle in the reads); where the reads show the fault
// (observable cycle, Visible), TestDetection requires both to report it.
// Faults that falsify the timestamps themselves (ts-disorder) or outcomes
// (unknown, info-rate) are excluded: then the evidence differs.
func TestDifferentialListAppendChronos(t *testing.T) {
	type pair struct{ level, m string }
	pairs := []pair{
		{sim.SnapshotIsolation, model.SnapshotIsolation},
		{sim.SnapshotIsolationFCW, model.SnapshotIsolation},
		{sim.SerializableSI, model.SnapshotIsolation},
		{sim.StrictSerializable, model.Serializable},
		{sim.Strict2PL, model.Serializable},
	}
	fs := []string{"", sim.FaultLostUpdate, sim.FaultStaleRead, sim.FaultAbortedRead, sim.FaultWriteSkew,
		sim.FaultDirtyWrite, sim.FaultIntermediateRead, sim.FaultLostCommit, sim.FaultNoOwnWrite}
	agree, both := 0, 0
	for _, p := range pairs {
		if *flagLevel != "" && *flagLevel != p.level {
			continue
		}
		for _, f := range fs {
			if *flagFault != "" && *flagFault != f {
				continue
			}
			for _, seed := range seedRange(500, diffN()) {
				c := tune(Case{Level: p.level, Workload: sim.ListAppend, Seed: seed})
				if f != "" {
					c.Fault, c.Prob = f, 0.3
				}
				h, _ := gen(t, c)
				la, err := Run(h, Target{"list-append", p.m})
				if err != nil {
					t.Errorf("%s: %v\n  reproduce: %s", c, err, c.Repro("TestDifferential", "list-append", p.m))
					continue
				}
				ch, err := Run(h, Target{"chronos", p.m})
				if err != nil {
					msg := fmt.Sprintf("%s: %v\n  reproduce: %s", c, err, c.Repro("TestDifferential", "chronos", p.m))
					if k := known(Target{"chronos", p.m}, c); k != "" {
						t.Logf("%s\n  %s", msg, k)
					} else {
						t.Error(msg)
					}
					continue
				}
				if la.Verdict == check.Invalid {
					both++
					if ch.Verdict == check.Invalid {
						agree++
						continue
					}
					t.Errorf("%s: list-append finds %v under %s but chronos says %s\n  list-append: %s\n  reproduce: %s",
						c, Prohibited(la), p.m, ch.Verdict, Explain(la, 2), c.Repro("TestDifferential", "chronos", p.m))
				}
			}
		}
	}
	t.Logf("list-append invalid on %d histories; chronos agreed on %d", both, agree)
	if both == 0 && *flagSeed < 0 {
		t.Fatal("no list-append-invalid history: the differential test compared nothing")
	}
}

// TestDifferentialRegisterListAppend compares Elle's two inference
// checkers on equivalent evidence: rw-register on AsRegisters(h) sees a
// strict subset of what list-append sees on h (the last element of each
// read instead of the whole list), so
//
//	rw-register invalid on AsRegisters(h) under M  ⇒  list-append invalid on h under M
//
// for every sim level and fault, M the level's declared model.
func TestDifferentialRegisterListAppend(t *testing.T) {
	compared, agreed := 0, 0
	for _, level := range levels() {
		m := LevelModels(level)[0]
		for _, f := range append([]string{""}, faults()...) {
			for _, seed := range seedRange(700, diffN()) {
				c := tune(Case{Level: level, Workload: sim.ListAppend, Seed: seed})
				if f != "" {
					c.Fault, c.Prob = f, 0.3
				}
				h, _ := gen(t, c)
				rr, err := Run(AsRegisters(h), Target{"rw-register", m})
				if err != nil {
					t.Errorf("%s: %v\n  reproduce: %s", c, err, c.Repro("TestDifferentialRegister", "list-append", m))
					continue
				}
				if rr.Verdict != check.Invalid {
					continue
				}
				compared++
				la, err := Run(h, Target{"list-append", m})
				if err != nil {
					t.Errorf("%s: %v\n  reproduce: %s", c, err, c.Repro("TestDifferentialRegister", "list-append", m))
					continue
				}
				if la.Verdict == check.Invalid {
					agreed++
					continue
				}
				t.Errorf("%s: rw-register on the register view finds %v under %s, list-append on the lists says %s\n  rw-register: %s\n  reproduce: %s",
					c, Prohibited(rr), m, la.Verdict, Explain(rr, 2), c.Repro("TestDifferentialRegister", "list-append", m))
			}
		}
	}
	t.Logf("rw-register invalid on %d register views; list-append agreed on %d", compared, agreed)
	if compared == 0 && *flagSeed < 0 {
		t.Fatal("no register view was invalid: the differential test compared nothing")
	}
}

var diffSeeds = flag.Int("diff.seeds", 0, "seeds per (level, fault) in the differential tests (0 = CI default 3)")

func diffN() int {
	if *diffSeeds > 0 {
		return *diffSeeds
	}
	return 3
}
