package graph

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Cycle is one dependency cycle: Edges[i].To == Edges[i+1].From and the
// last edge returns to Edges[0].From. Type is its anomaly name (Classify).
type Cycle struct {
	Type  string
	Edges []Edge
}

// Txns returns the transactions of the cycle in order.
func (c Cycle) Txns() []int32 {
	t := make([]int32, len(c.Edges))
	for i, e := range c.Edges {
		t[i] = e.From
	}
	return t
}

// SearchOptions bound FindCycles.
type SearchOptions struct {
	// Types are the anomaly names to look for (CycleTypes vocabulary, plus
	// Elle's G-single / G-nonadjacent / G2 spellings; other names are
	// ignored); empty means all cycle types. A -process or -realtime type
	// is searched only as such (a cycle that needs such an edge): callers
	// pass every type their model prohibits, which includes the plain
	// forms. A reported cycle may carry a stronger type than the one
	// searched when a pair's stronger relation strengthens it.
	Types []string
	// MaxPerType caps the cycles reported per type (0 = 8).
	MaxPerType int
	// Budget caps search steps (edge visits, roughly 5-20 ns each); 0 =
	// DefaultBudget or, for large graphs, 20 steps per node and edge.
	Budget int64
}

// traceSearch, if set (tests), is told each type search's cost.
var traceSearch func(typ string, sccTxns, sccEdges int, steps int64, found int)

// DefaultBudget is the default search step bound: a few seconds of work.
const DefaultBudget int64 = 100_000_000

// spec describes how to search one cycle type. Every cycle is searched as a
// start edge u -> v of relation start followed by a shortest path v ~> u
// whose relations lie in path, tracked by a small automaton (cf. Elle's
// BFSPath state machine).
type spec struct {
	base, variant int
	start         Rel // relation of the start edge
	path          Rel // relations allowed on the rest of the cycle
	need          Rel // at least one path edge must have one of these (0 = none)
	// automaton features
	nonadj bool // G-nonadjacent: rw edges never adjacent, >= 2 rw
	adj    bool // G2-item: >= 2 rw, two adjacent
	// state bit positions (or -1)
	bLast, bSeen, bAdj, bNeed int
	nstates                   int
}

func newSpec(b, v int) *spec {
	s := &spec{base: b, variant: v, bLast: -1, bSeen: -1, bAdj: -1, bNeed: -1}
	var vrel Rel
	switch v {
	case varProcess:
		vrel = Process
	case varRealtime:
		vrel = Realtime
	}
	extra := Rel(0)
	if v == varProcess {
		extra = Process
	} else if v == varRealtime {
		extra = Process | Realtime
	}
	switch b {
	case baseG0, baseG1c:
		data := WW
		if b == baseG1c {
			data = WW | WR
		}
		key := WW
		if b == baseG1c {
			key = WR
		}
		if v == varPlain {
			s.start, s.path = key, data
		} else {
			s.start, s.path, s.need = vrel, data|extra, key
		}
	case baseGSingle:
		s.start, s.path, s.need = RW, WW|WR|extra, vrel
	case baseGNonadj:
		s.start, s.path, s.need, s.nonadj = RW, Item|extra, vrel, true
	case baseG2:
		s.start, s.path, s.need, s.adj = RW, Item|extra, vrel, true
	}
	bit := 0
	if s.nonadj || s.adj {
		s.bLast = bit
		bit++
	}
	if s.nonadj {
		s.bSeen = bit
		bit++
	}
	if s.adj {
		s.bAdj = bit
		bit++
	}
	if s.need != 0 {
		s.bNeed = bit
		bit++
	}
	s.nstates = 1 << bit
	return s
}

func (s *spec) name() string { return typeName(s.base, s.variant) }

// allowed is every relation a cycle of this type may use.
func (s *spec) allowed() Rel { return s.start | s.path }

func has(st uint8, bit int) bool { return bit >= 0 && st&(1<<bit) != 0 }
func set(st uint8, bit int) uint8 {
	if bit < 0 {
		return st
	}
	return st | 1<<bit
}

// initState is the state after taking the start edge.
func (s *spec) initState() uint8 {
	var st uint8
	if s.start == RW {
		st = set(st, s.bLast)
	}
	return st
}

// step returns the state after an edge of relation r (0 = zero-length
// realtime hop), ok=false if the edge is not allowed.
func (s *spec) step(st uint8, r Rel) (uint8, bool) {
	if r == 0 {
		return st, s.path&Realtime != 0
	}
	if r&s.path == 0 {
		return 0, false
	}
	if r == RW {
		last := has(st, s.bLast)
		if s.nonadj && last {
			return 0, false
		}
		if s.adj && last {
			st = set(st, s.bAdj)
		}
		st = set(st, s.bLast)
		st = set(st, s.bSeen)
	} else if s.bLast >= 0 {
		st &^= 1 << s.bLast
	}
	if r&s.need != 0 {
		st = set(st, s.bNeed)
	}
	return st, true
}

// accept reports whether a path ending in state st closes a valid cycle
// (the start edge follows it).
func (s *spec) accept(st uint8) bool {
	if s.bNeed >= 0 && !has(st, s.bNeed) {
		return false
	}
	wrapAdj := s.start == RW && has(st, s.bLast)
	if s.nonadj && (!has(st, s.bSeen) || wrapAdj) {
		return false
	}
	if s.adj && !has(st, s.bAdj) && !wrapAdj {
		return false
	}
	return true
}

// local is one SCC's subgraph in local numbering.
type local struct {
	nodes []int32 // local -> extended global id
	off   []int32
	from  []int32
	to    []int32
	rel   []Rel
	ei    []int32 // index in Out(from), -1 for realtime links
}

type searcher struct {
	g      *Graph
	ctx    context.Context
	max    int
	budget int64
	steps  int64
	stop   string // reason the search stopped early
	found  map[string]int
	seen   map[string]bool
	out    []Cycle
	loc    []int32 // extended global -> local, -1
	specs  []*spec
	mask   Rel
	// BFS scratch
	stamp  []int32
	dist   []int32
	pedge  []int32
	pstate []uint8
	gen    int32
	target []int32
	tgen   int32
	dq     deque
	// per-type share of the budget: a type that exhausts it is abandoned
	// (the search is then incomplete) and the next type is searched.
	limit    int64
	typeStop bool
	dup      bool // the last record call saw an already reported cycle
	sccCache map[Rel][]int32
	partial  []string
}

// halted reports whether the current type search must stop.
func (s *searcher) halted() bool { return s.stop != "" || s.typeStop }

// FindCycles searches the graph for dependency cycles of the requested
// types, the way Elle does (Kingsbury & Alvaro 2020, §4.2 and elle.txn):
// the graph is cut into strongly connected components of the relations the
// requested types may use, and each component is searched for each type in
// severity order: all plain types (G0, G1c, G-single-item,
// G-nonadjacent-item, G2-item), then the -process variants, then the
// -realtime ones. A type implied by one already found in the same
// component is not searched again (G0 => G1c, G-single => G-nonadjacent =>
// G2-item, plain => -process => -realtime), so a cycle is only called
// -realtime when the component has no cycle of that shape without realtime
// edges. Each search takes a start edge (ww for G0, wr for G1c, rw for the
// anti-dependency types, the process/realtime edge for G0/G1c variants) and
// a shortest path back (0-1 BFS over the node x automaton-state product),
// so reported cycles are short. Where one pair has several relations the
// strongest one that keeps the classification is reported.
//
// Candidates are pruned exactly before any path search: start edges must
// lie in one SCC of the type's relations; for G-single-item the path back
// must be possible in the ww/wr condensation (GRAIL interval labels); for
// the multi-state types (G-nonadjacent, G2-item, the variants) the start
// edge must close a cycle of the product graph. The Realtime order is
// walked in its O(n) form (see AddRealtimeOrder), its point hops costing
// nothing, and reported as single Realtime edges.
//
// At most MaxPerType cycles are reported per type, sorted by type (search
// order) then first transaction; a component with more than 65536 edges
// yields at most one cycle per type (as Elle's search does per SCC).
// complete is false, with a reason, when the step budget or ctx ended the
// search before every requested type was either found or ruled out in
// every component (each type gets a share of the remaining budget, so one
// expensive type does not starve the others); cycles found so far are
// still returned. The search never recurses and is bounded by the budget.
// Safe for concurrent use.
func (g *Graph) FindCycles(ctx context.Context, opts SearchOptions) (cycles []Cycle, complete bool, reason string) {
	if ctx == nil {
		ctx = context.Background()
	}
	s := &searcher{g: g, ctx: ctx, max: opts.MaxPerType, budget: opts.Budget, found: map[string]int{}, seen: map[string]bool{}}
	if s.max <= 0 {
		s.max = 8
	}
	if s.budget <= 0 {
		s.budget = max(DefaultBudget, 20*int64(g.n+g.m))
	}
	want := map[[2]int]bool{}
	if len(opts.Types) == 0 {
		for v := 0; v < numVariants; v++ {
			for b := 0; b < numBases; b++ {
				want[[2]int{b, v}] = true
			}
		}
	}
	for _, t := range opts.Types {
		if b, v, ok := parseType(t); ok {
			want[[2]int{b, v}] = true
		}
	}
	for v := 0; v < numVariants; v++ {
		for b := 0; b < numBases; b++ {
			if want[[2]int{b, v}] {
				sp := newSpec(b, v)
				s.specs = append(s.specs, sp)
				s.mask |= sp.allowed()
			}
		}
	}
	if len(s.specs) == 0 {
		return nil, true, ""
	}
	if err := ctx.Err(); err != nil {
		return nil, false, "cycle search cancelled: " + err.Error()
	}
	N := g.numExt(s.mask)
	s.loc = make([]int32, N)
	for i := range s.loc {
		s.loc[i] = -1
	}
	g.tarjan(s.mask, &s.steps, func(comp []int32) bool {
		real := 0
		for _, v := range comp {
			if int(v) < g.n {
				real++
			}
		}
		if real < 2 {
			return true
		}
		s.searchSCC(comp)
		if s.stop != "" {
			return false
		}
		return !s.allFull()
	})
	if s.stop == "" && s.steps > s.budget {
		s.stop = fmt.Sprintf("cycle search budget of %d steps exhausted", s.budget)
	}
	order := map[string]int{}
	for i, t := range CycleTypes() {
		order[t] = i
	}
	slices.SortStableFunc(s.out, func(a, b Cycle) int {
		if x, y := order[a.Type], order[b.Type]; x != y {
			return x - y
		}
		return int(a.Edges[0].From) - int(b.Edges[0].From)
	})
	if len(s.partial) > 0 {
		msg := fmt.Sprintf("cycle search budget share exhausted for %s", strings.Join(s.partial, ", "))
		if s.stop == "" {
			s.stop = msg
		} else {
			s.stop += "; " + msg
		}
	}
	if s.stop != "" {
		return s.out, false, s.stop
	}
	return s.out, true, ""
}

func (s *searcher) allFull() bool {
	for _, sp := range s.specs {
		if s.found[sp.name()] < s.max {
			return false
		}
	}
	return true
}

// tick charges n steps and reports whether the search must stop.
func (s *searcher) tick(n int64) bool {
	before := s.steps
	s.steps += n
	if s.steps > s.budget {
		if s.stop == "" {
			s.stop = fmt.Sprintf("cycle search budget of %d steps exhausted", s.budget)
		}
		return true
	}
	if s.limit > 0 && s.steps > s.limit {
		s.typeStop = true
		return true
	}
	if before>>16 != s.steps>>16 {
		if err := s.ctx.Err(); err != nil {
			if s.stop == "" {
				s.stop = "cycle search cancelled: " + err.Error()
			}
			return true
		}
	}
	return false
}

// build extracts the SCC comp (extended ids) as a local graph.
func (s *searcher) build(comp []int32) *local {
	g := s.g
	L := &local{nodes: slices.Clone(comp)}
	for i, v := range L.nodes {
		s.loc[v] = int32(i)
	}
	L.off = make([]int32, len(comp)+1)
	for i, v := range L.nodes {
		for c := 0; ; c++ {
			w, r, ei, ok := g.succ(v, c, s.mask)
			if !ok {
				break
			}
			if w < 0 || s.loc[w] < 0 {
				continue
			}
			L.from = append(L.from, int32(i))
			L.to = append(L.to, s.loc[w])
			L.rel = append(L.rel, r)
			L.ei = append(L.ei, int32(ei))
		}
		L.off[i+1] = int32(len(L.to))
	}
	s.tick(int64(len(L.to)))
	return L
}

func (s *searcher) release(L *local) {
	for _, v := range L.nodes {
		s.loc[v] = -1
	}
}

func (s *searcher) searchSCC(comp []int32) {
	L := s.build(comp)
	defer s.release(L)
	s.sccCache = map[Rel][]int32{}
	if s.stop != "" {
		return
	}
	type bv struct{ b, v int }
	var foundHere []bv
	for i, sp := range s.specs {
		if s.found[sp.name()] >= s.max {
			continue
		}
		red := false
		for _, f := range foundHere {
			if implies(f.b, f.v, sp.base, sp.variant) {
				red = true
				break
			}
		}
		if red {
			continue
		}
		// This type may use its share of what is left: half of the
		// remaining budget split over the types still to search here.
		rem := s.budget - s.steps
		s.limit = s.steps + max(rem/int64(2*(len(s.specs)-i)), 1)
		s.typeStop = false
		t0 := s.steps
		got := s.searchType(L, sp)
		s.limit = 0
		if traceSearch != nil {
			traceSearch(sp.name(), s.realCount(comp), len(L.to), s.steps-t0, len(got))
		}
		if s.stop != "" {
			s.stop += fmt.Sprintf(" while searching for %s in a strongly connected component of %d transactions", sp.name(), s.realCount(comp))
			return
		}
		if s.typeStop {
			s.typeStop = false
			s.partial = append(s.partial, fmt.Sprintf("%s (component of %d transactions)", sp.name(), s.realCount(comp)))
		}
		for _, c := range got {
			b, v, _ := parseType(c.Type)
			foundHere = append(foundHere, bv{b, v})
		}
	}
}

func (s *searcher) realCount(comp []int32) int {
	n := 0
	for _, v := range comp {
		if int(v) < s.g.n {
			n++
		}
	}
	return n
}

// localSCC labels local nodes with the SCC ids of the subgraph of allowed
// relations (-1 for nodes in trivial components unless all) and returns the
// number of ids. Iterative Tarjan; ids are in reverse topological order.
func (s *searcher) localSCC(L *local, allowed Rel, all bool) ([]int32, int32) {
	n := len(L.nodes)
	comp := make([]int32, n)
	index := make([]int32, n)
	low := make([]int32, n)
	cur := make([]int32, n)
	onStack := make([]bool, n)
	var stack, call []int32
	next := int32(1)
	ncomp := int32(0)
	okRel := func(r Rel) bool {
		if r == 0 {
			return allowed&Realtime != 0
		}
		return r&allowed != 0
	}
	for root := 0; root < n; root++ {
		if index[root] != 0 {
			continue
		}
		call = append(call, int32(root))
		index[root], low[root] = next, next
		next++
		stack = append(stack, int32(root))
		onStack[root] = true
		for len(call) > 0 {
			v := call[len(call)-1]
			if e := L.off[v] + cur[v]; e < L.off[v+1] {
				cur[v]++
				if !okRel(L.rel[e]) {
					continue
				}
				w := L.to[e]
				if index[w] == 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, w)
				} else if onStack[w] && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				if u := call[len(call)-1]; low[v] < low[u] {
					low[u] = low[v]
				}
			}
			if low[v] == index[v] {
				i := len(stack) - 1
				for stack[i] != v {
					i--
				}
				id := int32(-1)
				if all || len(stack)-i > 1 {
					id = ncomp
					ncomp++
				}
				for _, x := range stack[i:] {
					onStack[x] = false
					comp[x] = id
				}
				stack = stack[:i]
			}
		}
	}
	s.tick(int64(len(L.to) + n))
	return comp, ncomp
}

// finish turns a local walk (start edge target ... back to start edge
// source) into a reported cycle: prepends the start edge, collapses
// realtime point hops into single Realtime edges, splits non-simple walks,
// upgrades relations and classifies.
func (s *searcher) finish(L *local, sp *spec, path []int32) (Cycle, bool) {
	g := s.g
	if len(path) == 0 {
		return Cycle{}, false
	}
	// The start edge is the candidate u -> v: find it (the first candidate
	// edge from the path's last node into the path's first node).
	last := L.to[path[len(path)-1]]
	first := L.from[path[0]]
	start := int32(-1)
	for e := L.off[last]; e < L.off[last+1]; e++ {
		if L.to[e] == first && L.rel[e] == sp.start {
			start = e
			break
		}
	}
	if start < 0 {
		return Cycle{}, false
	}
	walk := append([]int32{start}, path...)
	// The walk starts at u, a real node (every start edge leaves a real
	// node), so realtime hop chains never wrap around. Collapse them.
	var edges []Edge
	for i := 0; i < len(walk); i++ {
		e := walk[i]
		if L.rel[e] == Realtime && L.ei[e] < 0 {
			a := L.nodes[L.from[e]]
			j := i + 1
			for j < len(walk) && L.rel[walk[j]] == 0 {
				j++
			}
			b := L.nodes[L.to[walk[j-1]]]
			if j == i+1 || int(b) >= g.n {
				return Cycle{}, false // cannot happen: walks close at a real node
			}
			// An explicit Realtime edge a -> b (added with Add before
			// AddRealtimeOrder) keeps its Why, as Edge reports it
			// (duplicate edges keep the first Why).
			rt, ok := g.Edge(a, b, Realtime)
			if !ok {
				rt = realtimeEdge(a, b)
			}
			edges = append(edges, rt)
			i = j - 1
			continue
		}
		edges = append(edges, g.adj[L.nodes[L.from[e]]][L.ei[e]])
	}
	return s.record(sp, edges)
}

// record splits a closed walk into simple cycles, picks the best piece,
// upgrades relations and records it.
func (s *searcher) record(sp *spec, edges []Edge) (Cycle, bool) {
	pieces := splitSimple(edges)
	best := -1
	bestRank := 1 << 30
	for i, p := range pieces {
		b, v, ok := classify(p)
		if !ok {
			continue
		}
		rank := 3
		switch {
		case b == sp.base && v == sp.variant:
			rank = 0
		case implies(b, v, sp.base, sp.variant):
			rank = 1
		}
		if rank > 1 {
			continue
		}
		if rank < bestRank || (rank == bestRank && len(p) < len(pieces[best])) {
			best, bestRank = i, rank
		}
	}
	if best < 0 {
		return Cycle{}, false
	}
	cyc := s.g.upgrade(pieces[best], sp)
	cyc = canonical(cyc)
	c := Cycle{Type: Classify(cyc), Edges: cyc}
	key := cycleKey(cyc)
	if s.seen[key] {
		s.dup = true
		return Cycle{}, false
	}
	s.seen[key] = true
	if s.found[c.Type] >= s.max {
		s.dup = true
		return Cycle{}, false
	}
	s.found[c.Type]++
	s.out = append(s.out, c)
	return c, true
}

// splitSimple decomposes a closed walk into simple cycles.
func splitSimple(edges []Edge) [][]Edge {
	pos := map[int32]int{}
	var stack []Edge
	var out [][]Edge
	for _, e := range edges {
		if _, ok := pos[e.From]; !ok {
			pos[e.From] = len(stack)
		}
		stack = append(stack, e)
		if p, ok := pos[e.To]; ok {
			cyc := slices.Clone(stack[p:])
			out = append(out, cyc)
			for _, x := range stack[p:] {
				delete(pos, x.From)
			}
			stack = stack[:p]
		}
	}
	return out
}

// upgrade replaces, pair by pair, an edge by a stronger relation between
// the same transactions when that keeps (or strengthens) the cycle's
// classification (e.g. prefers ww over realtime for a pair having both).
func (g *Graph) upgrade(edges []Edge, sp *spec) []Edge {
	out := slices.Clone(edges)
	b0, v0, _ := classify(out)
	allowed := sp.allowed() | Item
	for i := range out {
		cur := out[i]
		for _, r := range [...]Rel{WW, WR, RW, Process, Realtime} {
			if r >= cur.Rel || r&allowed == 0 {
				continue
			}
			e, ok := g.Edge(cur.From, cur.To, r)
			if !ok {
				continue
			}
			out[i] = e
			b, v, ok := classify(out)
			if ok && implies(b, v, b0, v0) {
				b0, v0 = b, v
				break
			}
			out[i] = cur
		}
	}
	return out
}

// canonical rotates a cycle to start at its smallest transaction.
func canonical(edges []Edge) []Edge {
	k := 0
	for i, e := range edges {
		if e.From < edges[k].From {
			k = i
		}
	}
	return append(slices.Clone(edges[k:]), edges[:k]...)
}

func cycleKey(edges []Edge) string {
	var b strings.Builder
	for _, e := range edges {
		fmt.Fprintf(&b, "%d-%d:%d,", e.From, e.To, e.Rel)
	}
	return b.String()
}

// deque is a growable ring buffer of int32.
type deque struct {
	buf        []int32
	head, size int
}

func (d *deque) reset() {
	if d.buf == nil {
		d.buf = make([]int32, 64)
	}
	d.head, d.size = 0, 0
}

func (d *deque) len() int { return d.size }

func (d *deque) grow() {
	nb := make([]int32, 2*len(d.buf))
	for i := 0; i < d.size; i++ {
		nb[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = nb, 0
}

func (d *deque) pushBack(x int32) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.size)%len(d.buf)] = x
	d.size++
}

func (d *deque) pushFront(x int32) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = x
	d.size++
}

func (d *deque) popFront() int32 {
	x := d.buf[d.head]
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	return x
}
