package edn

import (
	"bytes"
	"os"
	"syscall"
	"testing"

	"github.com/txray/txray/history"
)

// benchInput is the first 64 MB (whole lines) of the file named by
// TXRAY_EDN_BENCH (e.g. the 1M-transaction list-append history of
// docs/benchmarks.md), or a generated history when it is unset.
func benchInput(b *testing.B) []byte {
	if f := os.Getenv("TXRAY_EDN_BENCH"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if len(data) > 64<<20 {
			data = data[:bytes.LastIndexByte(data[:64<<20], '\n')+1]
		}
		return data
	}
	h := genHistory(100000, 10000, true, 1)
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkScanLines: the line scanner alone (the parallel workers' part of
// a decode), one CPU.
func BenchmarkScanLines(b *testing.B) {
	data := benchInput(b)
	b.SetBytes(int64(len(data)))
	var c echunk
	defer cpuMetric(b)()
	for b.Loop() {
		for off := 0; off < len(data); {
			end := min(len(data), off+chunkSize)
			if end < len(data) {
				end = off + bytes.LastIndexByte(data[off:end], '\n') + 1
			}
			c.buf = data[off:end]
			c.scan()
			off = end
		}
	}
}

// BenchmarkDecodeFile: a whole decode as txray check runs it (parallel
// scanning when GOMAXPROCS >= 2).
func BenchmarkDecodeFile(b *testing.B) {
	data := benchInput(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	defer cpuMetric(b)()
	for b.Loop() {
		if _, err := Decode(bytes.NewReader(data), history.DecodeOptions{SizeHint: int64(len(data))}); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuMetric reports the process's CPU time (user + system, all threads)
// per op when the returned func is called: steadier than wall time on a
// shared machine.
func cpuMetric(b *testing.B) func() {
	t0 := cpuNow()
	return func() { b.ReportMetric(float64(cpuNow()-t0)/float64(b.N), "cpu-ns/op") }
}

func cpuNow() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
