package elle

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

var benchHist = map[string]*history.History{}

func benchHistory(name string, c genCfg) *history.History {
	if h, ok := benchHist[name]; ok {
		return h
	}
	h := genHistory(c)
	benchHist[name] = h
	return h
}

func benchCheck(b *testing.B, c check.Checker, h *history.History, opts check.Options) {
	runtime.GC()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	var r *check.Result
	for i := 0; i < b.N; i++ {
		var err error
		r, err = c.Check(context.Background(), h, opts)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) / time.Duration(b.N)
	b.ReportMetric(cpu.Seconds(), "cpu-s/op")
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(ms1.HeapInuse)/(1<<20), "MiB-heap-after")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N)/(1<<20), "MiB-alloc/op")
	if testing.Verbose() {
		fmt.Println(r.String(), r.Stats["phase_ms"], "edges", r.Stats["edges"])
	}
	if r.Verdict != check.Valid {
		b.Fatalf("generated history judged %v: %s %v", r.Verdict, r.Reason, r.AnomalyTypes)
	}
}

// BenchmarkListAppend1M: the performance bar (1,000,000 txns x 4 micro-ops,
// 100 clients, 10k keys, uniform, strict-serializable).
func BenchmarkListAppend1M(b *testing.B) {
	h := benchHistory("la1m", genCfg{txns: 1_000_000, ops: 4, clients: 100, keys: 10_000, readFrac: 0.5, seed: 7})
	benchCheck(b, ListAppend{}, h, check.Options{Model: "strict-serializable"})
}

func BenchmarkListAppend100k(b *testing.B) {
	h := benchHistory("la100k", genCfg{txns: 100_000, ops: 4, clients: 100, keys: 1_000, readFrac: 0.5, seed: 7})
	benchCheck(b, ListAppend{}, h, check.Options{Model: "strict-serializable"})
}

func BenchmarkRWRegister1M(b *testing.B) {
	h := benchHistory("rw1m", genCfg{txns: 1_000_000, ops: 4, clients: 100, keys: 10_000, readFrac: 0.5, register: true, seed: 7})
	benchCheck(b, RWRegister{}, h, check.Options{Model: "strict-serializable"})
}

func BenchmarkRWRegister100kInferred(b *testing.B) {
	h := benchHistory("rw100k", genCfg{txns: 100_000, ops: 4, clients: 100, keys: 1_000, readFrac: 0.5, register: true, seed: 7})
	benchCheck(b, RWRegister{}, h, check.Options{Model: "strict-serializable",
		Params: map[string]string{"sequential-keys": "true", "linearizable-keys": "true", "wfr-keys": "true"}})
}
