package graph

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

var update = flag.Bool("update", false, "rewrite golden files")

var bruteIters = 3000

// te is a test edge.
type te struct {
	from, to int32
	rel      Rel
}

// mkHistory makes a history of n empty committed transactions. sessions
// lists each session's transactions in order; times, if non-nil, gives each
// transaction's [invoke, complete].
func mkHistory(n int, sessions [][]int32, times [][2]int64) *history.History {
	h := history.New()
	for i := 0; i < n; i++ {
		h.Add(history.Txn{Session: -1, ID: fmt.Sprint(i)})
	}
	for s, txns := range sessions {
		sid := h.Sessions.Int(int64(s))
		for q, t := range txns {
			h.Txns[t].Session = sid
			h.Txns[t].Seq = int32(q)
		}
	}
	if times != nil {
		for i := range h.Txns {
			h.Txns[i].HasTime = true
			h.Txns[i].Invoke, h.Txns[i].Complete = times[i][0], times[i][1]
		}
	}
	return h
}

func mkGraph(n int, edges []te, sessions [][]int32, times [][2]int64) (*Graph, *history.History) {
	h := mkHistory(n, sessions, times)
	b := NewBuilder(n)
	for i, e := range edges {
		b.Add(e.from, e.to, e.rel, Why{Key: int32(i), V1: int32(i), V2: int32(i + 1), Op1: 0, Op2: 0})
	}
	if sessions != nil {
		b.AddProcessOrder(h, nil)
	}
	if times != nil {
		b.AddRealtimeOrder(h, nil)
	}
	return b.Build(), h
}

// validCycle checks a reported cycle against the graph.
func validCycle(t *testing.T, g *Graph, c Cycle) {
	t.Helper()
	if len(c.Edges) < 2 {
		t.Fatalf("cycle too short: %+v", c)
	}
	seen := map[int32]bool{}
	for i, e := range c.Edges {
		nx := c.Edges[(i+1)%len(c.Edges)]
		if e.To != nx.From {
			t.Fatalf("broken chain at %d: %+v", i, c)
		}
		if seen[e.From] {
			t.Fatalf("cycle not simple: %+v", c)
		}
		seen[e.From] = true
		got, ok := g.Edge(e.From, e.To, e.Rel)
		if !ok || got != e {
			t.Fatalf("edge %+v not in graph (got %+v %v)", e, got, ok)
		}
	}
	if Classify(c.Edges) != c.Type {
		t.Fatalf("type %s but classifies as %s", c.Type, Classify(c.Edges))
	}
}

func typesOf(cs []Cycle) []string {
	m := map[string]bool{}
	for _, c := range cs {
		m[c.Type] = true
	}
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// TestFindCyclesByAnomaly: one case per anomaly, citing its definition:
// Adya 1999 §4.4.1 (G0: a DSG cycle of ww edges), §4.4.3 (G1c: ww/wr
// cycle), §4.4.4 / Elle §4.2 (G-single: exactly one rw; G-nonadjacent: rw
// edges, none adjacent; G2-item: any item cycle with rw), and Elle's
// -process / -realtime variants (the cycle needs session or real-time order
// to close).
func TestFindCyclesByAnomaly(t *testing.T) {
	rtBefore := func(n int, pairs ...[2]int) [][2]int64 {
		// each pair (a, b): a completes before b is invoked; all others
		// overlap everything.
		tm := make([][2]int64, n)
		for i := range tm {
			tm[i] = [2]int64{0, 1000}
		}
		for _, p := range pairs {
			tm[p[0]] = [2]int64{10, 20}
			tm[p[1]] = [2]int64{30, 40}
		}
		return tm
	}
	cases := []struct {
		name     string
		n        int
		edges    []te
		sessions [][]int32
		times    [][2]int64
		types    []string
		want     []string
	}{
		{name: "acyclic", n: 4, edges: []te{{0, 1, WW}, {1, 2, WR}, {2, 3, RW}, {0, 3, WW}}, want: nil},
		{name: "acyclic with process and realtime", n: 3, edges: []te{{0, 1, WW}, {1, 2, RW}},
			sessions: [][]int32{{0, 2}}, times: [][2]int64{{0, 1}, {2, 3}, {4, 5}}, want: nil},
		{name: "G0", n: 2, edges: []te{{0, 1, WW}, {1, 0, WW}}, want: []string{"G0"}},
		{name: "G1c", n: 3, edges: []te{{0, 1, WW}, {1, 2, WR}, {2, 0, WR}}, want: []string{"G1c"}},
		{name: "G-single-item", n: 3, edges: []te{{0, 1, RW}, {1, 2, WR}, {2, 0, WW}}, want: []string{"G-single-item"}},
		{name: "G-nonadjacent-item", n: 4, edges: []te{{0, 1, RW}, {1, 2, WR}, {2, 3, RW}, {3, 0, WW}}, want: []string{"G-nonadjacent-item"}},
		{name: "G2-item", n: 2, edges: []te{{0, 1, RW}, {1, 0, RW}}, want: []string{"G2-item"}},
		{name: "G2-item three rw", n: 3, edges: []te{{0, 1, RW}, {1, 2, RW}, {2, 0, RW}}, want: []string{"G2-item"}},

		{name: "G0-process", n: 2, edges: []te{{0, 1, WW}}, sessions: [][]int32{{1, 0}}, want: []string{"G0-process"}},
		{name: "G1c-process", n: 2, edges: []te{{0, 1, WR}}, sessions: [][]int32{{1, 0}}, want: []string{"G1c-process"}},
		{name: "G-single-item-process", n: 2, edges: []te{{0, 1, RW}}, sessions: [][]int32{{1, 0}}, want: []string{"G-single-item-process"}},
		{name: "G-nonadjacent-item-process", n: 4, edges: []te{{0, 1, RW}, {2, 3, RW}, {3, 0, WW}}, sessions: [][]int32{{1, 2}},
			want: []string{"G-nonadjacent-item-process"}},
		{name: "G2-item-process", n: 3, edges: []te{{0, 1, RW}, {1, 2, RW}}, sessions: [][]int32{{2, 0}}, want: []string{"G2-item-process"}},

		{name: "G0-realtime", n: 2, edges: []te{{0, 1, WW}}, times: rtBefore(2, [2]int{1, 0}), want: []string{"G0-realtime"}},
		{name: "G1c-realtime", n: 2, edges: []te{{0, 1, WR}}, times: rtBefore(2, [2]int{1, 0}), want: []string{"G1c-realtime"}},
		{name: "G-single-item-realtime", n: 2, edges: []te{{0, 1, RW}}, times: rtBefore(2, [2]int{1, 0}), want: []string{"G-single-item-realtime"}},
		{name: "G-nonadjacent-item-realtime", n: 4, edges: []te{{0, 1, RW}, {2, 3, RW}, {3, 0, WW}}, times: rtBefore(4, [2]int{1, 2}),
			want: []string{"G-nonadjacent-item-realtime"}},
		{name: "G2-item-realtime", n: 3, edges: []te{{0, 1, RW}, {1, 2, RW}}, times: rtBefore(3, [2]int{2, 0}), want: []string{"G2-item-realtime"}},

		// A pair with both ww and rw edges: the ww/wr cycle is G1c, the
		// rw/wr one G-single; G1c does not imply G-single (Elle), so both.
		{name: "pair ww and rw: G1c and G-single-item", n: 2, edges: []te{{0, 1, WW}, {0, 1, RW}, {1, 0, WR}},
			want: []string{"G1c", "G-single-item"}},
		// rw+rw would be G2-item, but rw+ww is G-single, which implies it.
		{name: "pair ww and rw: G-single-item over G2-item", n: 2, edges: []te{{0, 1, RW}, {1, 0, RW}, {1, 0, WW}},
			want: []string{"G-single-item"}},
		// Two ww edges make G0; the rw on the same pair is not G-single here
		// because G0 does not imply it, so it is reported too.
		{name: "pair ww and rw: G0 and G-single-item", n: 2, edges: []te{{0, 1, WW}, {0, 1, RW}, {1, 0, WW}},
			want: []string{"G0", "G-single-item"}},
		// The cycle closes without the realtime edge: plain, not -realtime.
		{name: "realtime not needed: G-single-item", n: 2, edges: []te{{0, 1, RW}, {1, 0, WR}}, times: rtBefore(2, [2]int{1, 0}),
			want: []string{"G-single-item"}},
		{name: "process not needed: G0", n: 2, edges: []te{{0, 1, WW}, {1, 0, WW}}, sessions: [][]int32{{1, 0}},
			want: []string{"G0"}},
		// Process edge preferred to realtime where both hold.
		{name: "process preferred to realtime: G1c-process", n: 2, edges: []te{{0, 1, WR}}, sessions: [][]int32{{1, 0}},
			times: rtBefore(2, [2]int{1, 0}), want: []string{"G1c-process"}},
		// Only some types requested.
		// Asked for G2-item only, the rw/rw cycle is found, but the pair 1->0
		// also has ww, which makes it the stronger G-single-item (implies
		// G2-item): the strongest classification is reported.
		{name: "requested G2-item only, reported as G-single-item", n: 2, edges: []te{{0, 1, RW}, {1, 0, RW}, {1, 0, WW}},
			types: []string{"G2-item"}, want: []string{"G-single-item"}},
		{name: "requested G2-item only", n: 3, edges: []te{{0, 1, RW}, {1, 2, RW}, {2, 0, WR}},
			types: []string{"G2-item"}, want: []string{"G2-item"}},
		{name: "requested G0 only, G1c present", n: 2, edges: []te{{0, 1, WR}, {1, 0, WW}}, types: []string{"G0"}, want: nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, _ := mkGraph(c.n, c.edges, c.sessions, c.times)
			cs, complete, reason := g.FindCycles(context.Background(), SearchOptions{Types: c.types})
			if !complete {
				t.Fatalf("incomplete: %s", reason)
			}
			for _, cy := range cs {
				validCycle(t, g, cy)
			}
			got := typesOf(cs)
			want := slices.Clone(c.want)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Fatalf("types %v, want %v; cycles %+v", got, want, cs)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	e := func(rels ...Rel) []Edge {
		var es []Edge
		for i, r := range rels {
			es = append(es, Edge{From: int32(i), To: int32((i + 1) % len(rels)), Rel: r})
		}
		return es
	}
	cases := []struct {
		want  string
		edges []Edge
	}{
		{"G0", e(WW, WW)},
		{"G1c", e(WW, WR)},
		{"G-single-item", e(RW, WW, WR)},
		{"G-nonadjacent-item", e(RW, WW, RW, WR)},
		{"G2-item", e(RW, RW, WW)},
		{"G2-item", e(RW, WW, RW)}, // last and first rw are adjacent
		{"G0-process", e(WW, Process)},
		{"G1c-realtime", e(WR, Process, Realtime)},
		{"G-single-item-realtime", e(RW, Realtime)},
		{"", e(Process, Realtime)},
	}
	for _, c := range cases {
		if got := Classify(c.edges); got != c.want {
			t.Errorf("Classify(%v) = %q, want %q", c.edges, got, c.want)
		}
	}
	for _, n := range CycleTypes() {
		if !IsCycleType(n) {
			t.Errorf("IsCycleType(%q) = false", n)
		}
	}
	if IsCycleType("G1a") || IsCycleType("G0-foo") {
		t.Error("IsCycleType accepts non-cycle names")
	}
}

func TestBudgetExhausted(t *testing.T) {
	// A long ww/wr ring: one big SCC; a tiny budget cannot finish.
	n := 2000
	var es []te
	for i := 0; i < n; i++ {
		es = append(es, te{int32(i), int32((i + 1) % n), WR})
		es = append(es, te{int32(i), int32((i + 7) % n), RW})
	}
	g, _ := mkGraph(n, es, nil, nil)
	cs, complete, reason := g.FindCycles(context.Background(), SearchOptions{Budget: 1000})
	if complete || !strings.Contains(reason, "budget") {
		t.Fatalf("complete=%v reason=%q cycles=%d", complete, reason, len(cs))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, complete, reason = g.FindCycles(ctx, SearchOptions{})
	if complete || !strings.Contains(reason, "cancel") {
		t.Fatalf("cancelled: complete=%v reason=%q", complete, reason)
	}
	// With the default budget it completes and finds G1c.
	cs, complete, reason = g.FindCycles(context.Background(), SearchOptions{})
	if !complete {
		t.Fatalf("incomplete: %s", reason)
	}
	if got := typesOf(cs); !slices.Contains(got, "G1c") {
		t.Fatalf("types %v", got)
	}
}

func TestMaxPerType(t *testing.T) {
	// 20 disjoint G0 two-cycles.
	var es []te
	for i := int32(0); i < 40; i += 2 {
		es = append(es, te{i, i + 1, WW}, te{i + 1, i, WW})
	}
	g, _ := mkGraph(40, es, nil, nil)
	cs, complete, _ := g.FindCycles(context.Background(), SearchOptions{MaxPerType: 3})
	if !complete || len(cs) != 3 {
		t.Fatalf("complete=%v cycles=%d", complete, len(cs))
	}
	cs, _, _ = g.FindCycles(context.Background(), SearchOptions{})
	if len(cs) != 8 {
		t.Fatalf("default cap: %d cycles", len(cs))
	}
}

func TestBuilderDedupAndOut(t *testing.T) {
	b := NewBuilder(3)
	b.Add(0, 1, WW, Why{Key: 1})
	b.Add(0, 1, WW, Why{Key: 2}) // duplicate: first Why kept
	b.Add(0, 1, RW, Why{Key: 3})
	b.Add(0, 0, WW, Why{}) // self-loop ignored
	b.Add(0, 5, WW, Why{}) // out of range
	b.Add(2, 0, WR|RW, Why{Key: 4})
	g := b.Build()
	if b.Dropped() != 1 {
		t.Fatalf("dropped %d", b.Dropped())
	}
	out := g.Out(0)
	if len(out) != 2 || out[0].Rel != WW || out[0].Why.Key != 1 || out[1].Rel != RW {
		t.Fatalf("Out(0) = %+v", out)
	}
	if r := g.Rels(2, 0); r != WR|RW {
		t.Fatalf("Rels(2,0) = %v", r)
	}
	if g.Out(-1) != nil || g.Out(3) != nil {
		t.Fatal("out of range Out")
	}
}

func TestProcessOrder(t *testing.T) {
	h := mkHistory(5, [][]int32{{3, 1, 4}, {0}}, nil)
	h.Txns[1].Status = history.Unknown // never a predecessor
	b := NewBuilder(5)
	b.AddProcessOrder(h, func(t *history.Txn) bool { return t.Index != 2 })
	g := b.Build()
	want := map[[2]int32]bool{{3, 1}: true, {3, 4}: true}
	got := map[[2]int32]bool{}
	for v := int32(0); v < 5; v++ {
		for _, e := range g.Out(v) {
			if e.Rel != Process {
				t.Fatalf("rel %v", e.Rel)
			}
			got[[2]int32{e.From, e.To}] = true
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("process edges %v, want %v", got, want)
	}
}

// TestRealtimeOrderExact compares the implicit realtime order with its
// definition (T1.Complete < T2.Invoke, T1's outcome known) and SCCs with a
// brute-force graph with every realtime pair as an explicit edge; times
// are spread over spans that take the radix sort 1 to 4 passes, with
// negative and positive offsets.
func TestRealtimeOrderExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		n := 2 + r.IntN(12)
		tm := make([][2]int64, n)
		scale := []int64{1, 1 << 17, 1 << 33, 1 << 47}[iter%4]
		off := int64(0)
		if iter%8 >= 4 {
			off = r.Int64N(1<<62) - 1<<61
		}
		for i := range tm {
			a := r.Int64N(30)
			tm[i] = [2]int64{a*scale + off, (a+r.Int64N(8))*scale + off}
		}
		var es []te
		for k := 0; k < r.IntN(2*n); k++ {
			a, b := int32(r.IntN(n)), int32(r.IntN(n))
			es = append(es, te{a, b, []Rel{WW, WR, RW}[r.IntN(3)]})
		}
		g, h := mkGraph(n, es, nil, tm)
		for i := range h.Txns {
			if r.IntN(5) == 0 {
				h.Txns[i].Status = history.Unknown
			}
		}
		b := NewBuilder(n)
		b.AddRealtimeOrder(h, nil)
		g2 := b.Build()
		_ = g
		bb := NewBuilder(n)
		for i, e := range es {
			bb.Add(e.from, e.to, e.rel, Why{Key: int32(i)})
		}
		b2 := NewBuilder(n)
		for i, e := range es {
			b2.Add(e.from, e.to, e.rel, Why{Key: int32(i)})
		}
		b2.AddRealtimeOrder(h, nil)
		gi := b2.Build()
		for a := int32(0); a < int32(n); a++ {
			for c := int32(0); c < int32(n); c++ {
				want := a != c && h.Txns[a].Status != history.Unknown && tm[a][1] < tm[c][0]
				if got := g2.RealtimeBefore(a, c); got != want {
					t.Fatalf("iter %d: RealtimeBefore(%d,%d)=%v want %v; times %v", iter, a, c, got, want, tm)
				}
				if want {
					bb.Add(a, c, Realtime, Why{Key: NoKey})
				}
			}
		}
		ge := bb.Build()
		if x, y := fmt.Sprint(gi.SCCs(All)), fmt.Sprint(ge.SCCs(All)); x != y {
			t.Fatalf("iter %d: SCCs implicit %v explicit %v", iter, x, y)
		}
		if x, y := fmt.Sprint(gi.SCCs(Item)), fmt.Sprint(ge.SCCs(Item)); x != y {
			t.Fatalf("iter %d: item SCCs implicit %v explicit %v", iter, x, y)
		}
	}
}

// bruteTypes enumerates every simple cycle and every relation choice per
// pair, returning the set of (base, variant) that exist.
func bruteTypes(g *Graph) map[[2]int]bool { return bruteTypesIn(g, nil) }

// bruteTypesIn is bruteTypes restricted to cycles over nodes in (nil = all).
func bruteTypesIn(g *Graph, in map[int32]bool) map[[2]int]bool {
	n := int32(g.N())
	found := map[[2]int]bool{}
	var path []int32
	onPath := make([]bool, n)
	// rels classifies every choice of one edge per consecutive pair of the
	// path. Enumerating the choices is exponential in the path length (5^6
	// per cycle on a dense 6-node graph made a fuzz worker time out), so
	// partial choices are merged when they agree on everything classify
	// reads: the first and last relation, which relations occur, the rw
	// count (capped at 2) and whether two rw edges were adjacent. One
	// representative edge list per summary is classified by classify itself.
	type summary struct {
		first, last      Rel
		ww, wr, proc, rt bool
		rw               int8
		adj              bool
	}
	step := func(s summary, e Edge, first bool) summary {
		r := lowRel(e.Rel)
		if first {
			s.first = r
		} else if r == RW && s.last == RW {
			s.adj = true
		}
		s.last = r
		switch r {
		case WW:
			s.ww = true
		case WR:
			s.wr = true
		case RW:
			if s.rw < 2 {
				s.rw++
			}
		case Process:
			s.proc = true
		case Realtime:
			s.rt = true
		}
		return s
	}
	rels := func() {
		frontier := map[summary][]Edge{{}: nil}
		for i := range path {
			a, c := path[i], path[(i+1)%len(path)]
			next := map[summary][]Edge{}
			for s, es := range frontier {
				for _, r := range []Rel{WW, WR, RW, Process, Realtime} {
					if e, ok := g.Edge(a, c, r); ok {
						s2 := step(s, e, i == 0)
						if _, seen := next[s2]; !seen {
							next[s2] = append(append([]Edge(nil), es...), e)
						}
					}
				}
			}
			frontier = next
		}
		for _, es := range frontier {
			if b, v, ok := classify(es); ok {
				found[[2]int{b, v}] = true
			}
		}
	}
	var dfs func(start, v int32)
	dfs = func(start, v int32) {
		for w := start; w < n; w++ {
			if g.Rels(v, w) == 0 {
				continue
			}
			if w == start && len(path) >= 2 {
				rels()
				continue
			}
			if w <= start || onPath[w] || (in != nil && !in[w]) {
				continue
			}
			onPath[w] = true
			path = append(path, w)
			dfs(start, w)
			path = path[:len(path)-1]
			onPath[w] = false
		}
	}
	for s := int32(0); s < n; s++ {
		if in != nil && !in[s] {
			continue
		}
		path = []int32{s}
		onPath[s] = true
		dfs(s, s)
		onPath[s] = false
	}
	return found
}

// TestFindCyclesMatchesBruteForce: on random small graphs, every cycle type
// that exists is reported or implied by a reported one (Elle's
// implied-anomalies), and every reported cycle is a real cycle of its type.
func TestFindCyclesMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	if s := os.Getenv("GRAPH_BRUTE_ITERS"); s != "" {
		fmt.Sscan(s, &bruteIters)
	}
	misses := 0
	for iter := 0; iter < bruteIters; iter++ {
		n := 2 + r.IntN(5)
		var es []te
		for k := 0; k < r.IntN(3*n); k++ {
			a, b := int32(r.IntN(n)), int32(r.IntN(n))
			es = append(es, te{a, b, []Rel{WW, WR, RW}[r.IntN(3)]})
		}
		var sessions [][]int32
		if r.IntN(2) == 0 {
			perm := r.Perm(n)
			k := r.IntN(n + 1)
			s := make([]int32, 0, k)
			for _, x := range perm[:k] {
				s = append(s, int32(x))
			}
			sessions = [][]int32{s}
		}
		var tm [][2]int64
		if r.IntN(2) == 0 {
			tm = make([][2]int64, n)
			for i := range tm {
				a := r.Int64N(20)
				tm[i] = [2]int64{a, a + r.Int64N(10)}
			}
		}
		g, _ := mkGraph(n, es, sessions, tm)
		cs, complete, reason := g.FindCycles(context.Background(), SearchOptions{MaxPerType: 100})
		if !complete {
			t.Fatalf("incomplete: %s", reason)
		}
		for _, c := range cs {
			validCycle(t, g, c)
		}
		exist := bruteTypes(g)
		for bv := range exist {
			ok := false
			for _, c := range cs {
				b, v, _ := parseType(c.Type)
				if implies(b, v, bv[0], bv[1]) {
					ok = true
				}
			}
			if !ok {
				misses++
				t.Errorf("iter %d: %s exists but not reported (found %v); edges %v sessions %v times %v",
					iter, typeName(bv[0], bv[1]), typesOf(cs), es, sessions, tm)
			}
		}
		// A cycle is called -process/-realtime only if its component has
		// no cycle of an implying type with a weaker variant (Elle's
		// severity order: plain, then -process, then -realtime).
		sccs := g.SCCs(All)
		for _, c := range cs {
			b, v, _ := parseType(c.Type)
			if v == varPlain {
				continue
			}
			in := map[int32]bool{}
			for _, scc := range sccs {
				if slices.Contains(scc, c.Edges[0].From) {
					for _, x := range scc {
						in[x] = true
					}
				}
			}
			for bv := range bruteTypesIn(g, in) {
				if bv[1] < v && baseImplies(bv[0], b) {
					t.Errorf("iter %d: reported %s but its component has %s; edges %v sessions %v times %v",
						iter, c.Type, typeName(bv[0], bv[1]), es, sessions, tm)
					misses++
				}
			}
		}
		if misses > 5 {
			t.FailNow()
		}
	}
}

type testExplainer struct{ h *history.History }

func (x testExplainer) Explain(from, to int32, rel Rel, why Why) string {
	a, b := x.h.TxnName(from), x.h.TxnName(to)
	switch rel {
	case WW:
		return fmt.Sprintf("%s appended %s to key %s and %s appended %s after it, so %s < %s",
			a, x.h.ValueName(why.V1), x.h.KeyName(why.Key), b, x.h.ValueName(why.V2), a, b)
	case WR:
		return fmt.Sprintf("%s read key %s including %s's append of %s, so %s < %s",
			b, x.h.KeyName(why.Key), a, x.h.ValueName(why.V1), a, b)
	case RW:
		return fmt.Sprintf("%s read key %s without %s, which %s appended next, so %s < %s",
			a, x.h.KeyName(why.Key), x.h.ValueName(why.V2), b, a, b)
	}
	return "" // process / realtime: Explain falls back to OrderSentence
}

// TestExplainGolden checks the rendered explanation of a G-single-item
// cycle and a G1c-realtime cycle against testdata golden files.
func TestExplainGolden(t *testing.T) {
	h := history.New()
	x, y := h.Keys.Str("x"), h.Keys.Str("y")
	v1, v2, v3 := h.Values.Int(1), h.Values.Int(2), h.Values.Int(3)
	s0, s1 := h.Sessions.Str("c0"), h.Sessions.Str("c1")
	// add adds t after making op j a list read of l (j < 0: none).
	add := func(t history.Txn, j int, l ...int32) {
		if j >= 0 {
			t.SetList(&t.Ops[j], l)
		}
		h.Add(t)
	}
	add(history.Txn{Session: s0, Seq: 0, ID: "a", HasTime: true, Invoke: 10, Complete: 20,
		Ops: []history.Op{{Kind: history.Append, Key: x, Value: v1}, {Kind: history.Read, Key: y}}}, 1)
	add(history.Txn{Session: s1, Seq: 0, ID: "b", HasTime: true, Invoke: 15, Complete: 30,
		Ops: []history.Op{{Kind: history.Append, Key: y, Value: v2}, {Kind: history.Read, Key: x}}}, 1, v1)
	add(history.Txn{Session: s0, Seq: 1, ID: "c", HasTime: true, Invoke: 40, Complete: 50,
		Ops: []history.Op{{Kind: history.Read, Key: x}, {Kind: history.Append, Key: x, Value: v3}}}, 0)
	// A second component: T4 (e) completed before T3 (d) began, yet T3's
	// write is visible to T4: G1c-realtime.
	z, v4 := h.Keys.Str("z"), h.Values.Int(4)
	h.Add(history.Txn{Session: s1, Seq: 1, ID: "d", HasTime: true, Invoke: 80, Complete: 90,
		Ops: []history.Op{{Kind: history.Append, Key: z, Value: v4}}})
	add(history.Txn{Session: -1, ID: "e", HasTime: true, Invoke: 60, Complete: 70,
		Ops: []history.Op{{Kind: history.Read, Key: z}}}, 0, v4)
	b := NewBuilder(5)
	b.Add(3, 4, WR, Why{Key: z, V1: v4, V2: -1, Op1: 0, Op2: 0})
	b.Add(0, 1, RW, Why{Key: y, V1: -1, V2: v2, Op1: 1, Op2: 0})
	b.Add(1, 0, WR, Why{Key: x, V1: v1, V2: -1, Op1: 0, Op2: 1})
	b.Add(2, 0, RW, Why{Key: x, V1: -1, V2: v1, Op1: 0, Op2: 0})
	b.AddProcessOrder(h, nil)
	b.AddRealtimeOrder(h, nil)
	g := b.Build()
	cs, complete, reason := g.FindCycles(context.Background(), SearchOptions{})
	if !complete {
		t.Fatal(reason)
	}
	var out strings.Builder
	for _, c := range cs {
		validCycle(t, g, c)
		steps, text := g.Explain(c, h, testExplainer{h})
		fmt.Fprintf(&out, "== %s\n%s\n", c.Type, text)
		for _, s := range steps {
			fmt.Fprintf(&out, "step %d->%d %s key=%q: %s\n", s.From, s.To, s.Rel, s.Key, s.Why)
		}
	}
	golden := filepath.Join("testdata", "explain.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if out.String() != string(want) {
		t.Fatalf("explanation differs from %s:\n%s", golden, out.String())
	}
}

// TestBuildInPlaceMatchesScatter: both Build strategies give the same
// adjacency (sorted by (To, Rel), first Why kept for duplicates).
func TestBuildInPlaceMatchesScatter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 7, 300, 5000} {
		type add struct {
			a, b int32
			rel  Rel
			why  Why
		}
		var adds []add
		for i := 0; i < 20*n+chunkSize+17; i++ {
			a, b := int32(r.IntN(n)), int32(r.IntN(n))
			if r.IntN(10) == 0 && a > 0 {
				b = a - 1 // many duplicates on a few pairs
			}
			adds = append(adds, add{a, b, []Rel{WW, WR, RW, Process}[r.IntN(4)], Why{Key: int32(i)}})
		}
		build := func(inPlace bool) *Graph {
			old := inPlaceAbove
			if inPlace {
				inPlaceAbove = -1
			} else {
				inPlaceAbove = 1 << 40
			}
			defer func() { inPlaceAbove = old }()
			bl := NewBuilder(n)
			for _, x := range adds {
				bl.Add(x.a, x.b, x.rel, x.why)
			}
			return bl.Build()
		}
		g1, g2 := build(false), build(true)
		if g1.NumEdges() != g2.NumEdges() {
			t.Fatalf("n=%d: %d vs %d edges", n, g1.NumEdges(), g2.NumEdges())
		}
		// Reference: first Why per (from, to, rel).
		first := map[[3]int32]int32{}
		for _, x := range adds {
			k := [3]int32{x.a, x.b, int32(x.rel)}
			if _, ok := first[k]; !ok && x.a != x.b {
				first[k] = x.why.Key
			}
		}
		if len(first) != g1.NumEdges() {
			t.Fatalf("n=%d: %d distinct edges, graph has %d", n, len(first), g1.NumEdges())
		}
		for v := int32(0); v < int32(n); v++ {
			o1, o2 := g1.Out(v), g2.Out(v)
			if !slices.Equal(o1, o2) {
				t.Fatalf("n=%d v=%d: scatter %v in-place %v", n, v, o1, o2)
			}
			if !slices.IsSortedFunc(o1, cmpToRel) {
				t.Fatalf("n=%d v=%d: not sorted", n, v)
			}
			for _, e := range o1 {
				if first[[3]int32{e.From, e.To, int32(e.Rel)}] != e.Why.Key {
					t.Fatalf("n=%d: edge %+v does not keep the first Why", n, e)
				}
			}
		}
	}
}

func TestEmptyGraph(t *testing.T) {
	h := history.New()
	b := NewBuilder(0)
	b.Add(0, 1, WW, Why{})
	b.AddProcessOrder(h, nil)
	b.AddRealtimeOrder(h, nil)
	g := b.Build()
	if g.N() != 0 || g.NumEdges() != 0 || len(g.SCCs(All)) != 0 || g.RealtimeBefore(0, 1) {
		t.Fatal("empty graph not empty")
	}
	cs, complete, _ := g.FindCycles(context.Background(), SearchOptions{})
	if len(cs) != 0 || !complete {
		t.Fatalf("empty graph: %v %v", cs, complete)
	}
	// A history whose Index fields disagree with n must not panic.
	h = mkHistory(3, [][]int32{{0, 1, 2}}, [][2]int64{{0, 1}, {2, 3}, {4, 5}})
	h.Txns[2].Index = 7
	b = NewBuilder(2)
	b.AddProcessOrder(h, nil)
	b.AddRealtimeOrder(h, nil)
	if g := b.Build(); !g.RealtimeBefore(0, 1) || g.Rels(0, 1) != Process|Realtime {
		t.Fatalf("rels %v", g.Rels(0, 1))
	}
}
