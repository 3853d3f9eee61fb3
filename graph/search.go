package graph

import "slices"

// This file holds the per-type search inside one SCC. For a type with
// automaton states S, the product graph has a node (x, st) per local node
// and state; its edges are the automaton's transitions plus "closing"
// transitions that take a start edge u -> v from an accepting state of u to
// the initial state at v. A valid cycle through start edge u -> v is a
// path (v, init) ~> (u, accepting) closed by that edge, so the closing
// transition lies on a cycle of the product graph: candidates whose closing
// transition is not inside a product SCC are discarded without search, and
// each BFS stays inside one product SCC. For the G-single family, whose
// start (rw) relation is excluded from the path, reachability in the path
// graph is further pruned with GRAIL-style interval labels (Yildirim et al.,
// "GRAIL: Scalable Reachability Index for Large Graphs", VLDB 2010) on its
// condensation.

// productSCC labels product states (node*S + state) with SCC ids, -1 for
// states in trivial components. Iterative Tarjan.
func (s *searcher) productSCC(L *local, sp *spec) []int32 {
	S := int32(sp.nstates)
	n := int32(len(L.nodes)) * S
	comp := make([]int32, n)
	index := make([]int32, n)
	low := make([]int32, n)
	cur := make([]int32, n) // 2*edge offset + {0 normal, 1 closing}
	onStack := make([]bool, n)
	var stack, call []int32
	next := int32(1)
	ncomp := int32(0)
	init := int32(sp.initState())
	var steps int64
	// nextSucc advances x's cursor to its next successor, or -1.
	nextSucc := func(x int32) int32 {
		node, st := x/S, uint8(x%S)
		base, end := L.off[node], L.off[node+1]
		for {
			c := cur[x]
			e := base + c/2
			if e >= end {
				return -1
			}
			cur[x]++
			steps++
			r := L.rel[e]
			if c%2 == 0 {
				if nst, ok := sp.step(st, r); ok {
					return L.to[e]*S + int32(nst)
				}
			} else if r == sp.start && sp.accept(st) {
				return L.to[e]*S + init
			}
		}
	}
	for root := int32(0); root < n; root++ {
		if index[root] != 0 {
			continue
		}
		call = append(call, root)
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			v := call[len(call)-1]
			if w := nextSucc(v); w >= 0 {
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
				if len(stack)-i > 1 {
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
		if steps > 1<<16 {
			if s.tick(steps) {
				return nil
			}
			steps = 0
		}
	}
	s.tick(steps)
	return comp
}

// grail holds interval labels of the condensation of a local subgraph:
// X reaches Y only if, for each labelling k, [lo_k(Y), post_k(Y)] is inside
// [lo_k(X), post_k(X)].
type grail struct {
	comp     []int32 // local node -> condensation node
	lo, post [2][]int32
}

func (gr *grail) mayReach(x, y int32) bool {
	cx, cy := gr.comp[x], gr.comp[y]
	if cx == cy {
		return true
	}
	for k := 0; k < 2; k++ {
		if gr.lo[k][cy] < gr.lo[k][cx] || gr.post[k][cy] > gr.post[k][cx] {
			return false
		}
	}
	return true
}

// newGrail labels the subgraph of L with relations rels.
func (s *searcher) newGrail(L *local, rels Rel) *grail {
	comp, nc := s.localSCC(L, rels, true)
	if comp == nil {
		return nil
	}
	// Condensation adjacency (CSR, duplicates allowed).
	off := make([]int32, nc+1)
	ok := func(r Rel) bool {
		if r == 0 {
			return rels&Realtime != 0
		}
		return r&rels != 0
	}
	for e := range L.to {
		if ok(L.rel[e]) && comp[L.from[e]] != comp[L.to[e]] {
			off[comp[L.from[e]]+1]++
		}
	}
	for i := 1; i <= int(nc); i++ {
		off[i] += off[i-1]
	}
	adj := make([]int32, off[nc])
	pos := slices.Clone(off[:nc])
	for e := range L.to {
		if ok(L.rel[e]) && comp[L.from[e]] != comp[L.to[e]] {
			c := comp[L.from[e]]
			adj[pos[c]] = comp[L.to[e]]
			pos[c]++
		}
	}
	s.tick(int64(2 * len(L.to)))
	gr := &grail{comp: comp}
	for k := 0; k < 2; k++ {
		lo := make([]int32, nc)
		post := make([]int32, nc)
		seen := make([]bool, nc)
		cur := make([]int32, nc)
		var call []int32
		rank := int32(0)
		for i := int32(0); i < nc; i++ {
			root := i
			if k == 1 {
				root = nc - 1 - i
			}
			if seen[root] {
				continue
			}
			seen[root] = true
			lo[root] = 1 << 30
			call = append(call, root)
			for len(call) > 0 {
				c := call[len(call)-1]
				deg := off[c+1] - off[c]
				if cur[c] < deg {
					j := cur[c]
					cur[c]++
					if k == 1 {
						j = deg - 1 - j
					}
					w := adj[off[c]+j]
					if !seen[w] {
						seen[w] = true
						lo[w] = 1 << 30
						call = append(call, w)
					} else if lo[w] < lo[c] {
						lo[c] = lo[w]
					}
					continue
				}
				call = call[:len(call)-1]
				post[c] = rank
				rank++
				if post[c] < lo[c] {
					lo[c] = post[c]
				}
				if len(call) > 0 {
					if p := call[len(call)-1]; lo[c] < lo[p] {
						lo[p] = lo[c]
					}
				}
			}
		}
		gr.lo[k], gr.post[k] = lo, post
	}
	s.tick(int64(2 * len(adj)))
	return gr
}

// sccOf returns the (cached) SCC labelling of L's subgraph of rels, -1 for
// trivial components.
func (s *searcher) sccOf(L *local, rels Rel) []int32 {
	if c, ok := s.sccCache[rels]; ok {
		return c
	}
	var c []int32
	if rels&s.mask == s.mask {
		c = make([]int32, len(L.nodes)) // L is one SCC of these relations
	} else {
		c, _ = s.localSCC(L, rels, false)
	}
	s.sccCache[rels] = c
	return c
}

// searchType finds up to the remaining quota of cycles of type sp in L.
//
// Single-state automata (G0, G1c, G-single-item) use the SCCs of the
// allowed relations directly (the product graph is the graph itself). For
// multi-state automata an optimistic pass first tries a few candidates
// inside the allowed-relation SCCs (anomalies are usually plentiful in a
// large SCC), and only then computes the product SCCs to prune the rest.
func (s *searcher) searchType(L *local, sp *spec) []Cycle {
	S := int32(sp.nstates)
	init := int32(sp.initState())
	// Linear-time preprocessing (SCC labellings) is charged to the global
	// budget only; each type then gets at least one more linear pass of
	// search beyond its share.
	typeLimit := s.limit
	pre := func(f func()) {
		s.limit = 0
		f()
		s.limit = max(typeLimit, s.steps+int64(len(L.to)))
	}
	var allowedComp []int32
	pre(func() { allowedComp = s.sccOf(L, sp.allowed()) })
	if s.halted() {
		return nil
	}
	// Candidate start edges inside one SCC of the allowed relations.
	var cand []int32
	for e := range L.to {
		if L.rel[e] != sp.start {
			continue
		}
		u, v := L.from[e], L.to[e]
		if c := allowedComp[u]; c >= 0 && c == allowedComp[v] {
			cand = append(cand, int32(e))
		}
	}
	if len(cand) == 0 {
		return nil
	}
	// G-single family: the rw start edge is not on the path, so check
	// path reachability v ~> u first, cheapest (same path SCC) first.
	var gr *grail
	single := sp.path&sp.start == 0
	if single {
		pre(func() { gr = s.newGrail(L, sp.path) })
		if gr == nil || s.halted() {
			return nil
		}
		kept := cand[:0]
		for _, e := range cand {
			if gr.mayReach(L.to[e], L.from[e]) {
				kept = append(kept, e)
			}
		}
		cand = kept
		slices.SortStableFunc(cand, func(a, b int32) int {
			sa := gr.comp[L.to[a]] == gr.comp[L.from[a]]
			sb := gr.comp[L.to[b]] == gr.comp[L.from[b]]
			switch {
			case sa && !sb:
				return -1
			case sb && !sa:
				return 1
			}
			return 0
		})
	} else {
		slices.SortStableFunc(cand, func(a, b int32) int { return int(L.to[a]) - int(L.to[b]) })
	}
	s.ensureScratch(len(L.nodes), sp.nstates)
	if len(s.target) < len(L.nodes) {
		s.target = make([]int32, len(L.nodes))
		s.tgen = 0
	}
	var got []Cycle
	name := sp.name()
	// Like Elle, a large component yields one cycle per type (the search
	// for more examples there would dominate the running time); smaller
	// ones up to the per-type cap.
	here := s.max
	if len(L.to) > 1<<16 {
		here = 1
	}
	used := map[int32]bool{} // start edges on a reported cycle, or tried
	// run searches candidate groups in cand; with qc, only those whose
	// closing transition lies in a product SCC, restricted to it; stops
	// after maxGroups groups or allowance steps (0 = no bound).
	run := func(qc []int32, maxGroups int, allowance int64) bool {
		t0 := s.steps
		groups := 0
		for i := 0; i < len(cand); {
			j := i + 1
			if used[cand[i]] {
				i = j
				continue
			}
			v := L.to[cand[i]]
			if !single {
				for j < len(cand) && L.to[cand[j]] == v {
					j++
				}
			}
			s.tgen++
			any := false
			for _, e := range cand[i:j] {
				if used[e] {
					continue
				}
				u := L.from[e]
				if qc != nil {
					cv := qc[v*S+init]
					ok := false
					for st := int32(0); cv >= 0 && st < S; st++ {
						if qc[u*S+st] == cv && sp.accept(uint8(st)) {
							ok = true
							break
						}
					}
					if !ok {
						continue
					}
				}
				s.target[u] = s.tgen
				any = true
				if qc == nil {
					used[e] = true
				}
			}
			if !any {
				i = j
				continue
			}
			tgt := int32(-1)
			if single {
				tgt = L.from[cand[i]]
			}
			walk := s.bfs(L, sp, v, qc, allowedComp, gr, tgt)
			groups++
			if walk != nil {
				s.dup = false
				c, ok := s.finish(L, sp, walk)
				if ok || s.dup {
					for _, e := range walk {
						if L.rel[e] == sp.start {
							used[e] = true
						}
					}
				}
				if ok {
					got = append(got, c)
					if s.found[name] >= s.max || len(got) >= here {
						return true
					}
				}
			}
			if s.halted() {
				return true
			}
			if (maxGroups > 0 && groups >= maxGroups) || (allowance > 0 && s.steps-t0 > allowance) {
				return false
			}
			i = j
		}
		return true
	}
	if S == 1 {
		run(nil, 0, 0)
		return got
	}
	// Optimistic pass, then (if it found nothing) the pruned exhaustive one.
	run(nil, 16, int64(len(L.to)))
	if s.halted() || len(got) > 0 {
		return got
	}
	var qc []int32
	pre(func() { qc = s.productSCC(L, sp) })
	if qc == nil || s.halted() {
		return got
	}
	run(qc, 0, 0)
	return got
}

func (s *searcher) ensureScratch(n, states int) {
	need := n * states
	if len(s.stamp) < need {
		s.stamp = make([]int32, need)
		s.dist = make([]int32, need)
		s.pedge = make([]int32, need)
		s.pstate = make([]uint8, need)
		s.gen = 0
	}
}

// bfs runs a 0-1 BFS over product states from (v, init), inside v's
// product SCC (qc) or, without qc, v's SCC in nodeComp, to a target node in an accepting state. With gr and tgt,
// nodes that cannot reach tgt in the path graph are not expanded. It
// returns the local edges of the path, or nil.
func (s *searcher) bfs(L *local, sp *spec, v int32, qc, nodeComp []int32, gr *grail, tgt int32) []int32 {
	s.gen++
	if s.gen == 1<<30 {
		clear(s.stamp)
		s.gen = 1
	}
	S := int32(sp.nstates)
	startIdx := v*S + int32(sp.initState())
	var cid int32
	if qc != nil {
		cid = qc[startIdx]
	} else {
		cid = nodeComp[v]
	}
	s.stamp[startIdx] = s.gen
	s.dist[startIdx] = 0
	s.pedge[startIdx] = -1
	dq := &s.dq
	dq.reset()
	dq.pushBack(startIdx)
	var steps int64
	for dq.len() > 0 {
		x := dq.popFront()
		node, st := x/S, uint8(x%S)
		d := s.dist[x]
		if s.target[node] == s.tgen && sp.accept(st) {
			var path []int32
			for y := x; s.pedge[y] >= 0; {
				e := s.pedge[y]
				path = append(path, e)
				y = L.from[e]*S + int32(s.pstate[y])
			}
			slices.Reverse(path)
			s.tick(steps)
			return path
		}
		for e := L.off[node]; e < L.off[node+1]; e++ {
			steps++
			r := L.rel[e]
			nst, ok := sp.step(st, r)
			if !ok {
				continue
			}
			w := L.to[e]
			y := w*S + int32(nst)
			if qc != nil {
				if qc[y] != cid {
					continue
				}
			} else if nodeComp[w] != cid {
				continue
			}
			if gr != nil && !gr.mayReach(w, tgt) {
				continue
			}
			wt := int32(1)
			if r == 0 {
				wt = 0
			}
			nd := d + wt
			if s.stamp[y] == s.gen && s.dist[y] <= nd {
				continue
			}
			s.stamp[y] = s.gen
			s.dist[y] = nd
			s.pedge[y] = e
			s.pstate[y] = st
			if wt == 0 {
				dq.pushFront(y)
			} else {
				dq.pushBack(y)
			}
		}
		if steps >= 1<<14 {
			if s.tick(steps) {
				return nil
			}
			steps = 0
		}
	}
	s.tick(steps)
	return nil
}
