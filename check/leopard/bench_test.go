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

// BenchmarkOnlineBlindWRW streams BlindW-RW transactions (8 ops each, half
// reads, half blind writes, uniform keys) of 16 concurrent clients from the
// concurrent executor (cgen: interleaved transactions, overlapping
// intervals, conflict and client aborts) through the online verifier:
// per-client buffers, the global min-heap and watermark, batch dispatch,
// every mechanism of the profile (postgres:serializable: consistent read
// with transaction snapshots, first-updater-wins, the SSI and cycle
// certifier, dependency deduction; mysql:repeatable-read: consistent read
// with InnoDB read views and current reads, mutual exclusion) and garbage
// collection (Definition 4). b.N is the number of transactions; 10M ops:
// -benchtime=1250000x.
//
// The executor runs with the timer stopped, in batches of 4096
// transactions. Reported: data operations fed per second of wall time
// (ops/s; aborted transactions have fewer than 8) and of process CPU time
// (ops/cpu-s; the machine is shared, so wall time understates
// throughput), operation traces per second (traces/s: ops plus each
// transaction's begin and end trace), the live heap after a forced GC
// once 1M operations went through (heap-MB@1M) and at the end
// (heap-MB@end) and its peak over samples every 100,000 transactions
// (peak-heap-MB): flat memory means heap-MB@end close to heap-MB@1M. Also
// the peak number of live transactions, the abort ratio and the
// uncertain-dependency ratio.
func BenchmarkOnlineBlindWRW(b *testing.B) {
	for _, c := range []struct {
		prof string
		mode int
		keys int
	}{{"postgres:serializable", cgenSSI, 10000}, {"mysql:repeatable-read", cgenInnoDB, 10000}, {"postgres:serializable", cgenSSI, 1000}} {
		prof := c.prof
		b.Run(prof+"/keys="+strconv.Itoa(c.keys), func(b *testing.B) {
			p, _ := model.LookupProfile(prof)
			g := newCGen(1, c.mode, 16, c.keys, 8, 0.02)
			on := NewOnline(p, OnlineOptions{})
			var ms runtime.MemStats
			heap := func() float64 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				return float64(ms.HeapAlloc) / (1 << 20)
			}
			peak, at1M := 0.0, -1.0
			batch := make([]*history.Txn, 0, 4096)
			cpu := 0.0
			ops := int64(0)
			aborted := 0
			b.ResetTimer()
			for done := 0; done < b.N; {
				b.StopTimer()
				batch = batch[:0]
				for len(batch) < cap(batch) && done+len(batch) < b.N {
					t := g.next()
					ops += int64(len(t.Ops))
					if t.Status == history.Aborted {
						aborted++
					}
					batch = append(batch, t)
				}
				if done/100000 != (done+len(batch))/100000 {
					peak = max(peak, heap())
				}
				if at1M < 0 && ops >= 1000000 {
					at1M = heap()
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
			end := heap()
			peak = max(peak, end)
			if r.Verdict != check.Valid {
				b.Fatalf("%s: %v", r.Verdict, r.AnomalyTypes)
			}
			runtime.KeepAlive(on)
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(ops)/sec, "ops/s")
			b.ReportMetric(float64(ops)/cpu, "ops/cpu-s")
			b.ReportMetric(float64(r.Stats["traces"].(int64))/sec, "traces/s")
			if at1M >= 0 {
				b.ReportMetric(at1M, "heap-MB@1M")
			}
			b.ReportMetric(end, "heap-MB@end")
			b.ReportMetric(peak, "peak-heap-MB")
			b.ReportMetric(float64(r.Stats["peak_live_txns"].(int64)), "peak-live-txns")
			b.ReportMetric(float64(aborted)/float64(b.N), "abort-ratio")
			b.ReportMetric(r.Stats["uncertain_ratio"].(float64), "uncertain")
			b.Logf("%d txns, %d ops, %d traces; checked reads %v, gc versions %v, gc txns %v",
				b.N, ops, r.Stats["traces"], r.Stats["reads_checked"], r.Stats["gc_versions"], r.Stats["gc_txns"])
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
