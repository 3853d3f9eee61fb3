package enne

import (
	"context"
	"syscall"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/sim"
)

func benchHistory(b *testing.B, n int, pred float64) *history.History {
	c := sim.DefaultConfig()
	c.Level, c.Workload, c.Seed = sim.StrictSerializable, sim.RWRegister, 7
	c.Txns, c.Clients, c.Keys = n, 20, 1000
	c.MinOps, c.MaxOps, c.ReadRatio = 2, 6, 0.5
	c.PredicateReads = pred
	h, _, err := sim.Generate(c)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkEnne: the bar is 100,000 item-only transactions in at
// most 0.2 s and 100,000 with 20% predicate operations in at most 1 s.
func BenchmarkEnne(b *testing.B) {
	for _, c := range []struct {
		name string
		pred float64
	}{{"100000-item", 0}, {"100000-pred", 0.45}} {
		b.Run(c.name, func(b *testing.B) {
			h := benchHistory(b, 100000, c.pred)
			ops, preds := 0, 0
			for i := range h.Txns {
				for _, o := range h.Txns[i].Ops {
					ops++
					if o.Kind == history.PredRead {
						preds++
					}
				}
			}
			b.ResetTimer()
			c0 := cpuTime()
			for range b.N {
				r, err := Checker{}.Check(context.Background(), h, check.Options{Model: "serializable"})
				if err != nil || r.Verdict != check.Valid {
					b.Fatalf("%v %v %s %v", err, r.Verdict, r.Reason, r.AnomalyTypes)
				}
			}
			b.ReportMetric((cpuTime()-c0)/float64(b.N), "cpu-s/op")
			b.ReportMetric(100*float64(preds)/float64(ops), "pct-pred-ops") // after the loop: ResetTimer drops metrics
		})
	}
}

// cpuTime is the process's user+system CPU time: under the shared
// machine's load, wall time per op overstates the work, so the benchmarks
// also report CPU seconds per op (cpu-s/op).
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
