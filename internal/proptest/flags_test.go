package proptest

import (
	"flag"
	"testing"

	"github.com/txray/txray/sim"
)

// Flags that narrow every test to one case (printed in failure messages).
var (
	flagSeed     = flag.Int64("seed", -1, "run only this seed (default: the test's own seed range)")
	flagLevel    = flag.String("level", "", "run only this sim level")
	flagWorkload = flag.String("workload", "", "run only this workload")
	flagFault    = flag.String("fault", "", "run only this fault")
	flagProb     = flag.Float64("prob", -1, "fault probability (default: the test's)")
	flagTxns     = flag.Int("txns", 0, "transactions per history (default 150)")
	flagInfo     = flag.Float64("info", -1, "info (unknown outcome) rate (default: the test's)")
	flagSeeds    = flag.Int("prop.seeds", 0, "seeds per (level, workload) in TestProperty (0 = CI default)")
)

func levels() []string {
	if *flagLevel != "" {
		return []string{*flagLevel}
	}
	return sim.LevelNames()
}

func workloads() []string {
	if *flagWorkload != "" {
		return []string{*flagWorkload}
	}
	return []string{sim.ListAppend, sim.RWRegister}
}

func faults() []string {
	if *flagFault != "" {
		return []string{*flagFault}
	}
	return sim.FaultNames()
}

// seedRange returns the seeds to run: -seed if given, else first..first+n-1.
func seedRange(first uint64, n int) []uint64 {
	if *flagSeed >= 0 {
		return []uint64{uint64(*flagSeed)}
	}
	var s []uint64
	for i := 0; i < n; i++ {
		s = append(s, first+uint64(i))
	}
	return s
}

// tune applies -txns/-info/-prob overrides.
func tune(c Case) Case {
	if *flagTxns > 0 {
		c.Txns = *flagTxns
	}
	if *flagInfo >= 0 {
		c.Info = *flagInfo
	}
	if *flagProb >= 0 && c.Fault != "" {
		c.Prob = *flagProb
	}
	return c
}

func gen(t *testing.T, c Case) (*historyT, *sim.Truth) {
	t.Helper()
	h, tr, err := c.Generate()
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	return h, tr
}
