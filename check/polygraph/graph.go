package polygraph

// pgraph is a physical graph in CSR form: out-edges of node v are
// to[off[v]:off[v+1]], each with the logical edge it came from.
type pgraph struct {
	n   int32
	off []int32
	to  []int32
	eid []int32
}

// physGraph builds the physical graph of the logical edges sel accepts.
func (p *problem) physGraph(sel func(ei int32) bool) *pgraph {
	n := p.numPhys()
	g := &pgraph{n: n, off: make([]int32, n+2)}
	for i := range p.edges {
		if sel(int32(i)) {
			p.physEdges(&p.edges[i], func(f, _ int32) { g.off[f+2]++ })
		}
	}
	for v := int32(2); v < n+2; v++ {
		g.off[v] += g.off[v-1]
	}
	m := g.off[n+1]
	g.to = make([]int32, m)
	g.eid = make([]int32, m)
	for i := range p.edges {
		if sel(int32(i)) {
			ei := int32(i)
			p.physEdges(&p.edges[i], func(f, t int32) {
				k := g.off[f+1]
				g.to[k], g.eid[k] = t, ei
				g.off[f+1]++
			})
		}
	}
	g.off = g.off[:n+1]
	return g
}

// with returns g plus the extra edges (physical from/to, logical id).
func (g *pgraph) with(extra [][2]int32, eid []int32) *pgraph {
	n := g.n
	out := &pgraph{n: n, off: make([]int32, n+1)}
	cnt := make([]int32, n+1)
	for _, e := range extra {
		cnt[e[0]+1]++
	}
	for v := int32(0); v < n; v++ {
		out.off[v+1] = out.off[v] + (g.off[v+1] - g.off[v]) + cnt[v+1]
	}
	m := out.off[n]
	out.to = make([]int32, m)
	out.eid = make([]int32, m)
	pos := make([]int32, n)
	for v := int32(0); v < n; v++ {
		k := copy(out.to[out.off[v]:], g.to[g.off[v]:g.off[v+1]])
		copy(out.eid[out.off[v]:], g.eid[g.off[v]:g.off[v+1]])
		pos[v] = out.off[v] + int32(k)
	}
	for i, e := range extra {
		out.to[pos[e[0]]], out.eid[pos[e[0]]] = e[1], eid[i]
		pos[e[0]]++
	}
	return out
}

// topo returns a topological order (Kahn), or ok=false if g is cyclic.
func (g *pgraph) topo() (order []int32, ok bool) {
	indeg := make([]int32, g.n)
	for _, t := range g.to {
		indeg[t]++
	}
	order = make([]int32, 0, g.n)
	for v := int32(0); v < g.n; v++ {
		if indeg[v] == 0 {
			order = append(order, v)
		}
	}
	for i := 0; i < len(order); i++ {
		v := order[i]
		for k := g.off[v]; k < g.off[v+1]; k++ {
			t := g.to[k]
			if indeg[t]--; indeg[t] == 0 {
				order = append(order, t)
			}
		}
	}
	return order, len(order) == int(g.n)
}

// topoBy is a topological order of the acyclic g that, among the nodes
// ready at each step, takes the one with the smallest key first (Kahn's
// algorithm with a binary heap).
func (g *pgraph) topoBy(key func(v int32) int64) []int32 {
	indeg := make([]int32, g.n)
	for _, t := range g.to {
		indeg[t]++
	}
	var hp []int32
	less := func(i, j int) bool { return key(hp[i]) < key(hp[j]) }
	push := func(v int32) {
		hp = append(hp, v)
		for i := len(hp) - 1; i > 0; {
			par := (i - 1) / 2
			if !less(i, par) {
				break
			}
			hp[i], hp[par] = hp[par], hp[i]
			i = par
		}
	}
	pop := func() int32 {
		v := hp[0]
		last := len(hp) - 1
		hp[0] = hp[last]
		hp = hp[:last]
		for i := 0; ; {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(hp) && less(l, m) {
				m = l
			}
			if r < len(hp) && less(r, m) {
				m = r
			}
			if m == i {
				break
			}
			hp[i], hp[m] = hp[m], hp[i]
			i = m
		}
		return v
	}
	for v := int32(0); v < g.n; v++ {
		if indeg[v] == 0 {
			push(v)
		}
	}
	order := make([]int32, 0, g.n)
	for len(hp) > 0 {
		v := pop()
		order = append(order, v)
		for k := g.off[v]; k < g.off[v+1]; k++ {
			t := g.to[k]
			if indeg[t]--; indeg[t] == 0 {
				push(t)
			}
		}
	}
	return order
}

// reach answers reachability queries in a DAG.
type reach interface {
	reaches(u, v int32) bool
}

// bitReach is the transitive closure as one bitset per node (n²/8 bytes).
type bitReach struct {
	words int
	bits  []uint64
}

func (r *bitReach) reaches(u, v int32) bool {
	return r.bits[int(u)*r.words+int(v>>6)]&(1<<(v&63)) != 0
}

func newBitReach(g *pgraph, order []int32) *bitReach {
	w := (int(g.n) + 63) / 64
	r := &bitReach{words: w, bits: make([]uint64, w*int(g.n))}
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		row := r.bits[int(v)*w : int(v+1)*w]
		row[v>>6] |= 1 << (v & 63)
		for k := g.off[v]; k < g.off[v+1]; k++ {
			t := g.to[k]
			src := r.bits[int(t)*w : int(t+1)*w]
			for j, x := range src {
				row[j] |= x
			}
		}
	}
	return r
}

// chainReach is a chain-decomposition index (Jagadish, "A compression
// technique to materialize transitive closure", TODS 1990): nodes are
// covered by paths of the DAG; per node and chain, the first position of
// that chain the node reaches. n·k int32s for k chains; exact.
type chainReach struct {
	k     int
	chain []int32
	pos   []int32
	first []int32 // n*k
}

func (r *chainReach) reaches(u, v int32) bool {
	return r.first[int(u)*r.k+int(r.chain[v])] <= r.pos[v]
}

// chains greedily decomposes the DAG into paths in topological order;
// it returns the chain of each node, its position, and the chain count.
func chains(g *pgraph, order []int32, prefer func(eid int32) bool) (chain, pos []int32, k int) {
	chain = make([]int32, g.n)
	pos = make([]int32, g.n)
	for i := range chain {
		chain[i] = -1
	}
	var tailLen []int32
	isTail := make([]bool, g.n)
	for _, v := range order {
		if chain[v] < 0 {
			chain[v] = int32(len(tailLen))
			pos[v] = 0
			tailLen = append(tailLen, 1)
			isTail[v] = true
		}
		if !isTail[v] {
			continue
		}
		// extend v's chain to one successor that has no chain yet, preferably
		// along a preferred edge (session order keeps sessions as chains)
		pick := int32(-1)
		for j := g.off[v]; j < g.off[v+1]; j++ {
			t := g.to[j]
			if chain[t] < 0 {
				if prefer != nil && prefer(g.eid[j]) {
					pick = t
					break
				}
				if pick < 0 {
					pick = t
				}
			}
		}
		if pick >= 0 {
			c := chain[v]
			chain[pick], pos[pick] = c, tailLen[c]
			tailLen[c]++
			isTail[v], isTail[pick] = false, true
		}
	}
	return chain, pos, len(tailLen)
}

const inf32 = int32(1<<31 - 1)

func newChainReach(g *pgraph, order []int32, chain, pos []int32, k int) *chainReach {
	r := &chainReach{k: k, chain: chain, pos: pos, first: make([]int32, int(g.n)*k)}
	for i := range r.first {
		r.first[i] = inf32
	}
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		row := r.first[int(v)*k : int(v+1)*k]
		for j := g.off[v]; j < g.off[v+1]; j++ {
			t := g.to[j]
			src := r.first[int(t)*k : int(t+1)*k]
			for c, x := range src {
				if x < row[c] {
					row[c] = x
				}
			}
		}
		if pos[v] < row[chain[v]] {
			row[chain[v]] = pos[v]
		}
	}
	return r
}

// maxReachBytes bounds the reachability index; beyond it pruning by
// reachability is skipped (the solver still decides, just with more work).
const maxReachBytes = 1 << 30

// newReach builds the exact index that is cheaper to compute for the DAG
// g (chains: O(m·k) for k chains; bitsets: O(m·n/64)) among those within
// maxReachBytes, or nil if neither fits.
func newReach(g *pgraph, order []int32, prefer func(eid int32) bool) (reach, string) {
	n := int64(g.n)
	m := int64(len(g.to)) + n
	words := (n + 63) / 64
	bitBytes := n * words * 8
	chain, pos, k := chains(g, order, prefer)
	chainBytes := n * int64(k) * 4
	chainOK, bitOK := chainBytes <= maxReachBytes, bitBytes <= maxReachBytes
	switch {
	case chainOK && (!bitOK || m*int64(k) <= m*words):
		return newChainReach(g, order, chain, pos, k), "chains"
	case bitOK:
		return newBitReach(g, order), "bitsets"
	}
	return nil, ""
}

// sccs computes strongly connected components (iterative Tarjan); comp[v]
// is v's component, size[c] its node count.
func (g *pgraph) sccs() (comp []int32, size []int32) {
	n := g.n
	index := make([]int32, n)
	low := make([]int32, n)
	comp = make([]int32, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
		comp[i] = -1
	}
	var stack, cstack []int32
	var it []int32 // per call frame: next edge position
	next := int32(0)
	for s := int32(0); s < n; s++ {
		if index[s] >= 0 {
			continue
		}
		cstack = append(cstack[:0], s)
		it = append(it[:0], g.off[s])
		index[s], low[s] = next, next
		next++
		stack = append(stack, s)
		onStack[s] = true
		for len(cstack) > 0 {
			v := cstack[len(cstack)-1]
			k := it[len(it)-1]
			if k < g.off[v+1] {
				it[len(it)-1]++
				t := g.to[k]
				if index[t] < 0 {
					index[t], low[t] = next, next
					next++
					stack = append(stack, t)
					onStack[t] = true
					cstack = append(cstack, t)
					it = append(it, g.off[t])
				} else if onStack[t] && index[t] < low[v] {
					low[v] = index[t]
				}
				continue
			}
			cstack = cstack[:len(cstack)-1]
			it = it[:len(it)-1]
			if len(cstack) > 0 {
				u := cstack[len(cstack)-1]
				if low[v] < low[u] {
					low[u] = low[v]
				}
			}
			if low[v] == index[v] {
				c := int32(len(size))
				sz := int32(0)
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = c
					sz++
					if w == v {
						break
					}
				}
				size = append(size, sz)
			}
		}
	}
	return comp, size
}

// bfs finds a shortest path from s to t using edges ok accepts, visiting
// only nodes allowed accepts (nil: all). It returns the logical edge ids of
// the path, or nil. seen and prev are scratch of length g.n (seen is
// restored to false on return).
type bfsScratch struct {
	seen  []bool
	prevE []int32
	prevV []int32
	queue []int32
}

func newBFS(n int32) *bfsScratch {
	return &bfsScratch{seen: make([]bool, n), prevE: make([]int32, n), prevV: make([]int32, n)}
}

func (g *pgraph) bfs(sc *bfsScratch, s, t int32, allowed func(v int32) bool, ok func(k int32) bool, work *int64) []int32 {
	q := append(sc.queue[:0], s)
	sc.seen[s] = true
	found := s == t
	for i := 0; i < len(q) && !found; i++ {
		v := q[i]
		for k := g.off[v]; k < g.off[v+1]; k++ {
			*work++
			w := g.to[k]
			if sc.seen[w] || (allowed != nil && !allowed(w)) || (ok != nil && !ok(k)) {
				continue
			}
			sc.seen[w] = true
			sc.prevE[w], sc.prevV[w] = g.eid[k], v
			q = append(q, w)
			if w == t {
				found = true
				break
			}
		}
	}
	var path []int32
	if found && s != t {
		for v := t; v != s; v = sc.prevV[v] {
			path = append(path, sc.prevE[v])
		}
		for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
			path[i], path[j] = path[j], path[i]
		}
	}
	for _, v := range q {
		sc.seen[v] = false
	}
	sc.queue = q
	return path
}
