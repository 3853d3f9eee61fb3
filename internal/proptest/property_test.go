package proptest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

type historyT = history.History

// TestProperty: for every sim level, workload and applicable checker, a
// history generated at that level without faults satisfies every model the
// level implies (sim package doc: "A correct level's history satisfies
// LevelInfo.Model"; model lattice from package model). A checker reporting
// a prohibited anomaly on such a history is a false positive (a bug in the
// checker, or in the simulator): the failure prints the seed and a one-line
// reproduction. Unknown verdicts are allowed (a checker may lack evidence)
// but logged, and list-append and chronos must not be unknown.
func TestProperty(t *testing.T) {
	n := *flagSeeds
	if n == 0 {
		n = 3
	}
	for _, level := range levels() {
		for _, wl := range workloads() {
			for _, seed := range seedRange(1, n) {
				for _, info := range []float64{0, 0.05} {
					c := tune(Case{Level: level, Workload: wl, Seed: seed, Info: info})
					t.Run(c.String(), func(t *testing.T) {
						t.Parallel()
						h, _ := gen(t, c)
						ts, _ := Targets(h, append(LevelModels(level), LevelProfiles(level)...))
						if len(ts) == 0 {
							t.Fatalf("no checker applies to %s", c)
						}
						for _, tg := range ts {
							r, err := Run(h, tg)
							if err != nil {
								t.Errorf("%s: error %v\n  reproduce: %s", tg, err, c.Repro("TestProperty", tg.Checker, tg.Model))
								continue
							}
							switch {
							case r.Verdict == check.Invalid && known(tg, c) != "":
								t.Logf("%s: %s (seed %d)", tg, known(tg, c), c.Seed)
							case r.Verdict == check.Invalid:
								t.Errorf("%s: false positive on a correct %s history: %s\n  reproduce: %s",
									tg, level, Explain(r, 2), c.Repro("TestProperty", tg.Checker, tg.Model))
							case r.Verdict == check.Unknown && mustDecide(tg.Checker) && c.Info == 0:
								t.Errorf("%s: unknown on a correct history: %s\n  reproduce: %s", tg, r.Reason, c.Repro("TestProperty", tg.Checker, tg.Model))
							case r.Verdict == check.Unknown:
								t.Logf("%s: unknown: %s", tg, strings.TrimSpace(r.Reason))
							}
						}
					})
				}
			}
		}
	}
}

// mustDecide: checkers whose evidence is complete on sim histories, so an
// Unknown verdict on a correct history is itself a failure.
func mustDecide(checker string) bool { return checker == "list-append" || checker == "chronos" }

var _ = fmt.Sprint
