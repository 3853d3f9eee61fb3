package graph

import (
	"bufio"

	"github.com/txray/txray/history"
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestBuildMemory (opt-in: GRAPH_MEM=1) builds a 1M-node graph with 10M
// edges plus process and realtime order and checks the peak RSS stays
// under 1 GiB.
func TestBuildMemory(t *testing.T) {
	if os.Getenv("GRAPH_MEM") == "" {
		t.Skip("set GRAPH_MEM=1")
	}
	const n, m = 1_000_000, 10_000_000
	h := history.New()
	h.Txns = make([]history.Txn, n)
	for i := range h.Txns {
		s := int64(i % 100)
		h.Txns[i] = history.Txn{Index: int32(i), Session: int32(s), Seq: int32(i / 100),
			HasTime: true, Invoke: int64(i)*10 - s*7, Complete: int64(i)*10 - s*7 + 500}
	}
	runtime.GC()
	base := vmHWM(t)
	b := NewBuilder(n)
	x := uint64(88172645463325252)
	for i := 0; i < m; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		from := int32(x % n)
		to := int32((x >> 32) % n)
		b.Add(from, to, Rel(1<<(x>>60%3)), Why{Key: int32(i), V1: 1, V2: 2, Op1: 0, Op2: 1})
	}
	b.AddProcessOrder(h, nil)
	b.AddRealtimeOrder(h, nil)
	g := b.Build()
	runtime.GC()
	hwm := vmHWM(t)
	t.Logf("edges %d, peak RSS %d MiB (%d MiB before building)", g.NumEdges(), hwm>>10, base>>10)
	if hwm>>10 > 1024 {
		t.Fatalf("peak RSS %d MiB > 1 GiB", hwm>>10)
	}
}

func vmHWM(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb int64
			for _, c := range strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")) {
				kb = kb*10 + int64(c-'0')
			}
			return kb
		}
	}
	t.Skip("no VmHWM")
	return 0
}
