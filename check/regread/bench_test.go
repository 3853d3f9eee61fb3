package regread

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/txray/txray/history"
)

// benchHistory builds n committed transactions of 4 ops each over 1000
// keys: read-modify-write and blind writes with unique values, reads of
// the latest value of a key (so every read has a writer).
func benchHistory(n int) *history.History {
	h := history.New()
	rng := rand.New(rand.NewPCG(1, 2))
	const nk = 1000
	for k := 0; k < nk; k++ {
		h.Keys.Int(int64(k))
	}
	for s := 0; s < 20; s++ {
		h.Sessions.Int(int64(s))
	}
	latest := make([]int32, nk)
	for k := range latest {
		latest[k] = history.NoValue
	}
	next := int64(1)
	h.Txns = make([]history.Txn, 0, n)
	ops := make([]history.Op, 4*n)
	for i := 0; i < n; i++ {
		t := history.Txn{Session: int32(i % 20), Seq: int32(i / 20)}
		t.Ops = ops[4*i : 4*i : 4*i+4]
		for j := 0; j < 2; j++ {
			k := int32(rng.IntN(nk))
			t.Ops = append(t.Ops, history.Op{Kind: history.Read, Key: k, Value: latest[k]})
			v := h.Values.Int(next)
			next++
			t.Ops = append(t.Ops, history.Op{Kind: history.Write, Key: k, Value: v})
			latest[k] = v
		}
		h.Add(t)
	}
	return h
}

// BenchmarkAnalyze1M: linear time on a 1M-transaction, 4M-op history.
func BenchmarkAnalyze1M(b *testing.B) {
	h := benchHistory(1_000_000)
	b.ResetTimer()
	for range b.N {
		a := Analyze(h, Options{})
		if len(a.Anomalies) != 0 {
			b.Fatalf("%d anomalies: %v", len(a.Anomalies), a.Anomalies[0])
		}
	}
}

// BenchmarkAnalyzeScaling reports per-transaction cost at two sizes, for
// checking linearity in one run.
func BenchmarkAnalyzeScaling(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		h := benchHistory(n)
		b.Run(itoa(n), func(b *testing.B) {
			c0 := cpu()
			for range b.N {
				Analyze(h, Options{})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/txn")
			b.ReportMetric(float64((cpu()-c0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/txn")
		})
	}
}

func itoa(n int) string {
	if n >= 1_000_000 {
		return string(rune('0'+n/1_000_000)) + "M"
	}
	return string(rune('0'+n/100_000)) + "00K"
}

// cpu is the process's user+system CPU time (less sensitive than wall time
// to other load on the machine).
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
