package weak

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	_ "github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sim"
)

// benchHistory is the bar workload: 20 sessions, 15 ops per
// transaction, zipfian keys, rw-register, from the simulator at
// strict-serializable (valid at every weak level, so nothing stops the
// check early). WEAK_BENCH_FILE names a pre-generated history instead
// (e.g. from `txray bench --keep DIR --txns 1000000 --clients 20 --ops 15
// --dist zipfian --workload rw-register`), WEAK_BENCH_TXNS the size to
// generate (default 100000).
func benchHistory(b *testing.B) *history.History {
	b.Helper()
	if f := os.Getenv("WEAK_BENCH_FILE"); f != "" {
		h, err := history.DecodeFile(f, "auto", history.DecodeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	n := 100000
	if s := os.Getenv("WEAK_BENCH_TXNS"); s != "" {
		var err error
		if n, err = strconvAtoi(s); err != nil {
			b.Fatal(err)
		}
	}
	cfg := sim.DefaultConfig()
	cfg.Workload, cfg.Txns, cfg.Clients, cfg.MinOps, cfg.MaxOps, cfg.Dist, cfg.Keys = sim.RWRegister, n, 20, 15, 15, sim.Zipfian, 10000
	h, _, err := sim.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

func strconvAtoi(s string) (int, error) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, os.ErrInvalid
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLevels decides the bar workload at RC, RA and CC; it reports
// CPU seconds per check (wall time is meaningless on a loaded machine).
func BenchmarkLevels(b *testing.B) {
	h := benchHistory(b)
	for _, m := range levelModels {
		b.Run(m, func(b *testing.B) {
			c0 := cpuTime()
			for range b.N {
				r, err := Checker{}.Check(context.Background(), h, check.Options{Model: m})
				if err != nil {
					b.Fatal(err)
				}
				if r.Verdict != check.Valid {
					b.Fatalf("%s: %v %v", m, r.Verdict, r.AnomalyTypes)
				}
				if m == model.CausalCerone {
					b.ReportMetric(float64(r.Stats["co_edges_kept"].(int)), "co-edges")
				}
			}
			b.ReportMetric((cpuTime()-c0).Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(len(h.Txns)), "txns")
		})
	}
}
