package leopard

import (
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// BenchmarkOnlineBlindWRW streams BlindW-RW transactions (8 ops each, 16
// clients, 10,000 keys, or 200 for a contended variant) from the serial executor (gen) through the
// pipeline and every mechanism of the profile. The generator runs with the
// timer stopped, in batches of 4096 transactions. Reported: data operations
// per second of wall time (ops/s) and of process CPU time (ops/cpu-s; the
// machine is shared, so wall time understates throughput), and the live
// heap after GC sampled every 100,000 transactions (peak-heap-MB), which
// stays flat thanks to garbage collection. 10M ops: -benchtime=1250000x.
func BenchmarkOnlineBlindWRW(b *testing.B) {
	for _, c := range []struct {
		prof string
		keys int
	}{{"postgres:serializable", 10000}, {"mysql:repeatable-read", 10000}, {"postgres:serializable", 200}} {
		prof := c.prof
		b.Run(prof+"/keys="+strconv.Itoa(c.keys), func(b *testing.B) {
			p, _ := model.LookupProfile(prof)
			g := newGen(1, 16, c.keys, 8, 0.02)
			on := NewOnline(p, OnlineOptions{})
			var ms runtime.MemStats
			peak := uint64(0)
			batch := make([]*history.Txn, 0, 4096)
			cpu := 0.0
			b.ResetTimer()
			for done := 0; done < b.N; {
				b.StopTimer()
				batch = batch[:0]
				for len(batch) < cap(batch) && done+len(batch) < b.N {
					batch = append(batch, g.next())
				}
				if done/100000 != (done+len(batch))/100000 {
					runtime.GC()
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapAlloc)
					if (done+len(batch))%250000 < len(batch) {
						b.Logf("%s: %d ops: live heap %.1f MB", prof, (done+len(batch))*8, float64(ms.HeapAlloc)/(1<<20))
					}
				}
				done += len(batch)
				c0 := cpuTime()
				b.StartTimer()
				on.Add(batch...)
				b.StopTimer()
				cpu += cpuTime() - c0
			}
			c0 := cpuTime()
			b.StartTimer()
			r := on.Flush()
			b.StopTimer()
			cpu += cpuTime() - c0
			if r.Verdict != check.Valid {
				b.Fatalf("%s: %v", r.Verdict, r.AnomalyTypes)
			}
			runtime.KeepAlive(on)
			ops := float64(b.N) * 8
			b.ReportMetric(ops/b.Elapsed().Seconds(), "ops/s")
			b.ReportMetric(ops/cpu, "ops/cpu-s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(r.Stats["peak_live_txns"].(int64)), "peak-live-txns")
			b.ReportMetric(r.Stats["uncertain_ratio"].(float64), "uncertain")
		})
	}
}

// cpuTime is the process's user+system CPU time in seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
