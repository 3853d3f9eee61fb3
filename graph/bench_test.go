package graph

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/txray/txray/history"
)

// synth is a synthetic list-append-like workload: n transactions of 4
// micro-ops over keys keys, run by sessions clients back to back, each
// serialized at a random point inside its interval (so the history is
// strict serializable), with ww/wr/rw edges derived from that serial
// order. bad extra rw edges point backwards in the serial order
// (anomalies).
type synthEdge struct {
	from, to int32
	rel      Rel
	key      int32
}

func synth(n, sessions, keys, bad int, seed uint64) (*history.History, []synthEdge) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	h := history.New()
	h.Txns = make([]history.Txn, n)
	free := make([]int64, sessions)
	seq := make([]int32, sessions)
	commit := make([]int64, n)
	for i := 0; i < n; i++ {
		s := i % sessions
		inv := free[s] + r.Int64N(10)
		dur := 50 + r.Int64N(100)
		t := &h.Txns[i]
		*t = history.Txn{Index: int32(i), Session: int32(s), Seq: seq[s], HasTime: true, Invoke: inv, Complete: inv + dur}
		seq[s]++
		free[s] = inv + dur
		commit[i] = inv + r.Int64N(dur)
	}
	for s := 0; s < sessions; s++ {
		h.Sessions.Int(int64(s))
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if commit[a] != commit[b] {
			if commit[a] < commit[b] {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	lastW := make([]int32, keys)
	for i := range lastW {
		lastW[i] = -1
	}
	readers := make([][]int32, keys)
	var es []synthEdge
	for _, i := range order {
		for k := 0; k < 4; k++ {
			key := int32(r.IntN(keys))
			if r.IntN(2) == 0 { // append
				if w := lastW[key]; w >= 0 {
					es = append(es, synthEdge{w, i, WW, key})
				}
				for _, rd := range readers[key] {
					es = append(es, synthEdge{rd, i, RW, key})
				}
				readers[key] = readers[key][:0]
				lastW[key] = i
			} else {
				if w := lastW[key]; w >= 0 {
					es = append(es, synthEdge{w, i, WR, key})
				}
				readers[key] = append(readers[key], i)
			}
		}
	}
	pos := make([]int32, n)
	for p, i := range order {
		pos[i] = int32(p)
	}
	for k := 0; k < bad; k++ {
		// a stale read: a later transaction anti-depends on an earlier one
		p := r.IntN(n-1000) + 1000
		q := p - 1 - r.IntN(500)
		es = append(es, synthEdge{order[p], order[q], RW, int32(r.IntN(keys))})
	}
	return h, es
}

func buildSynth(h *history.History, es []synthEdge, rt bool) *Graph {
	b := NewBuilder(len(h.Txns))
	for _, e := range es {
		b.Add(e.from, e.to, e.rel, Why{Key: e.key, V1: -1, V2: -1, Op1: -1, Op2: -1})
	}
	b.AddProcessOrder(h, nil)
	if rt {
		b.AddRealtimeOrder(h, nil)
	}
	return b.Build()
}

const benchN = 1_000_000

func BenchmarkBuild(b *testing.B) {
	h, es := synth(benchN, 100, 10_000, 0, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g := buildSynth(h, es, true)
		b.ReportMetric(float64(g.NumEdges()), "edges")
	}
}

func BenchmarkSCC(b *testing.B) {
	h, es := synth(benchN, 100, 10_000, 0, 1)
	g := buildSynth(h, es, true)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s := g.SCCs(All); len(s) != 0 {
			b.Fatalf("valid history has %d SCCs", len(s))
		}
	}
}

// BenchmarkFindCycles searches a 1M-transaction graph with 20 injected
// stale reads (backward rw edges), every cycle type, realtime included.
func BenchmarkFindCycles(b *testing.B) {
	h, es := synth(benchN, 100, 10_000, 20, 1)
	g := buildSynth(h, es, true)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cs, complete, reason := g.FindCycles(context.Background(), SearchOptions{})
		if !complete {
			b.Logf("incomplete: %s", reason)
		}
		b.ReportMetric(float64(len(cs)), "cycles")
	}
}

// BenchmarkFindCyclesValid: the common case, no cycle at all.
func BenchmarkFindCyclesValid(b *testing.B) {
	h, es := synth(benchN, 100, 10_000, 0, 1)
	g := buildSynth(h, es, true)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cs, complete, _ := g.FindCycles(context.Background(), SearchOptions{})
		if len(cs) != 0 || !complete {
			b.Fatalf("valid: %d cycles, complete=%v", len(cs), complete)
		}
	}
}

func TestSynthValid(t *testing.T) {
	h, es := synth(20_000, 20, 500, 0, 3)
	g := buildSynth(h, es, true)
	if s := g.SCCs(All); len(s) != 0 {
		t.Fatalf("synthetic valid history has SCCs: %d", len(s))
	}
	h, es = synth(20_000, 20, 500, 5, 3)
	g = buildSynth(h, es, true)
	cs, complete, reason := g.FindCycles(context.Background(), SearchOptions{})
	if !complete {
		t.Fatalf("incomplete: %s", reason)
	}
	if len(cs) == 0 {
		t.Fatal("no cycles found with injected anomalies")
	}
	for _, c := range cs {
		validCycle(t, g, c)
	}
}

// BenchmarkFindCyclesLargeSCC: 50k stale reads knit much of the history
// into large SCCs (a badly broken database); the search must stay bounded.
func BenchmarkFindCyclesLargeSCC(b *testing.B) {
	h, es := synth(benchN, 100, 10_000, 50_000, 1)
	g := buildSynth(h, es, true)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cs, complete, reason := g.FindCycles(context.Background(), SearchOptions{})
		if !complete {
			b.Logf("incomplete: %s", reason)
		}
		b.Logf("types %v", typesOf(cs))
		b.ReportMetric(float64(len(cs)), "cycles")
	}
}

// TestTraceLargeSCC (opt-in: GRAPH_TRACE=1) logs the cost of every type
// search on the large-SCC benchmark graph and checks the cycles found.
func TestTraceLargeSCC(t *testing.T) {
	if os.Getenv("GRAPH_TRACE") == "" {
		t.Skip("set GRAPH_TRACE=1")
	}
	h, es := synth(benchN, 100, 10_000, 50_000, 1)
	g := buildSynth(h, es, true)
	traceSearch = func(typ string, n, m int, steps int64, found int) {
		t.Logf("%-28s scc %7d txns %8d edges: %10d steps, %d found", typ, n, m, steps, found)
	}
	defer func() { traceSearch = nil }()
	cs, complete, reason := g.FindCycles(context.Background(), SearchOptions{})
	t.Logf("complete=%v %s; %v", complete, reason, typesOf(cs))
	if len(cs) == 0 {
		t.Fatal("no cycles found")
	}
	for _, c := range cs {
		validCycle(t, g, c)
	}
}
