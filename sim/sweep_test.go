package sim

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/txray/txray/history/jsonl"
)

var sweepN = flag.Int("sim.sweep", 40, "random configurations in TestRandomConfigs")

// TestRandomConfigs draws random configurations (levels, workloads, client
// counts, key counts and distributions, lengths, read ratios, locking reads,
// aborts, key rotation) and checks each level's guarantees as
// TestCorrectLevels does; with random faults it checks that Stream works and
// that at the serial levels every transaction disagreeing with the serial
// replay is attributed to a fault (dirty-write and lost-commit aside, whose
// effects reach readers that are not marked).
func TestRandomConfigs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 2**sweepN; it++ {
		withFaults := it%2 == 1
		cfg := DefaultConfig()
		lv := LevelNames()
		cfg.Level = lv[r.IntN(len(lv))]
		cfg.Workload = []string{ListAppend, RWRegister}[r.IntN(2)]
		cfg.Seed = r.Uint64()
		cfg.Txns = 300 + r.IntN(700)
		cfg.Clients = 1 + r.IntN(20)
		cfg.Keys = 1 + r.IntN(10)
		cfg.MinOps = 1 + r.IntN(3)
		cfg.MaxOps = cfg.MinOps + r.IntN(6)
		cfg.ReadRatio = r.Float64()
		cfg.LockingReads = r.Float64() * 0.5
		cfg.AbortRate = r.Float64() * 0.2
		cfg.Dist = []string{Uniform, Zipfian, Hotspot}[r.IntN(3)]
		cfg.MaxWritesPerKey = []int{0, 3, -1}[r.IntN(3)]
		if withFaults {
			cfg.InfoRate = r.Float64() * 0.1
			fs := FaultNames()
			for k := 0; k < 1+r.IntN(3); k++ {
				cfg.Faults = append(cfg.Faults, Fault{fs[r.IntN(len(fs))], r.Float64()})
			}
		}
		name := fmt.Sprintf("%d-%s-%s-c%d-k%d-%v", it, cfg.Level, cfg.Workload, cfg.Clients, cfg.Keys, cfg.Faults)
		h, tr, a := gen(t, cfg)
		fail := func(f string, args ...any) { t.Errorf("%s: %s", name, fmt.Sprintf(f, args...)) }
		if withFaults {
			if _, err := Stream(cfg, jsonl.NewWriter(io.Discard)); err != nil {
				t.Fatal(err)
			}
			if cfg.Level != StrictSerializable && cfg.Level != Serializable {
				continue
			}
			unmarked := false
			for _, f := range cfg.Faults {
				unmarked = unmarked || f.Name == FaultDirtyWrite || f.Name == FaultLostCommit
			}
			for _, i := range a.replay() {
				if len(tr.Faults[i]) == 0 && !unmarked {
					fail("unattributed replay failure %s", h.TxnString(i))
				}
			}
			continue
		}
		if cycle(a.wwEdges) {
			fail("G0")
		}
		if n := a.commitOrderMismatch(); n > 0 {
			fail("commit order mismatch %d", n)
		}
		ph, g1a, g1b, _ := a.readIssues()
		if ph > 0 {
			fail("phantom")
		}
		if cfg.Level != ReadUncommitted && g1a+g1b > 0 {
			fail("g1 %d %d", g1a, g1b)
		}
		switch cfg.Level {
		case StrictSerializable, Serializable, Strict2PL, SerializableSI:
			if cycle(a.edges) {
				fail("cycle")
			}
		}
		switch cfg.Level {
		case StrictSerializable, Serializable, Strict2PL:
			if bad := a.replay(); len(bad) > 0 {
				fail("replay %s", h.TxnString(bad[0]))
			}
		}
		switch cfg.Level {
		case StrictSerializable, Strict2PL:
			if a.realtimeViolations() > 0 {
				fail("rt")
			}
		case SnapshotIsolation, SnapshotIsolationFCW, SerializableSI:
			if bad := a.snapshotViolations(); len(bad) > 0 {
				fail("snap %s", h.TxnString(bad[0]))
			}
			if a.lostUpdates() > 0 {
				fail("lost update")
			}
		}
	}
}
