package graph

import "slices"

// SCCs returns the nontrivial strongly connected components (at least two
// transactions) of the subgraph whose edges have rel&mask != 0, each sorted
// ascending, ordered by smallest member. If mask includes Realtime, the
// recorded realtime order is followed too. Iterative Tarjan (Tarjan 1972):
// O(N + E) time, no recursion.
func (g *Graph) SCCs(mask Rel) [][]int32 {
	var out [][]int32
	g.tarjan(mask, nil, func(comp []int32) bool {
		real := 0
		for _, v := range comp {
			if int(v) < g.n {
				real++
			}
		}
		if real < 2 {
			return true
		}
		c := make([]int32, 0, real)
		for _, v := range comp {
			if int(v) < g.n {
				c = append(c, v)
			}
		}
		slices.Sort(c)
		out = append(out, c)
		return true
	})
	slices.SortFunc(out, func(a, b []int32) int { return int(a[0]) - int(b[0]) })
	return out
}

// tarjan enumerates the SCCs of the extended graph under mask (including
// realtime points), calling emit with each component (the slice is reused).
// steps, if non-nil, is incremented per edge slot examined. emit returning
// false stops the enumeration.
func (g *Graph) tarjan(mask Rel, steps *int64, emit func(comp []int32) bool) {
	N := g.numExt(mask)
	n := g.n
	rt := g.rt
	rtOn := N > n
	index := fresh[int32](N) // 0 = unvisited; else dfs index + 1
	low := fresh[int32](N)
	cur := fresh[int32](N)
	onStack := fresh[bool](N)
	var stack, call []int32
	next := int32(1)
	var nsteps int64
	for root := 0; root < N; root++ {
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
			// Next successor of v (inlined g.succ for speed).
			w := int32(-1)
			if int(v) < n {
				out := g.adj[v]
				hi := len(out)
				c := int(cur[v])
				for c < hi && out[c].Rel&mask == 0 {
					c++
				}
				if c < hi {
					w = out[c].To
					nsteps += int64(c - int(cur[v]) + 1)
					cur[v] = int32(c + 1)
				} else if c == hi && rtOn {
					cur[v] = int32(c + 1)
					if k := rt.of[v]; k >= 0 {
						w = int32(n) + k
					}
				} else {
					cur[v] = int32(c + 1)
				}
			} else {
				k := int(v) - n
				c := int(cur[v])
				if c == 0 && k+1 < rt.m {
					cur[v] = 1
					w = v + 1
				} else {
					if c == 0 {
						c = 1
					}
					if i := int(rt.off[k]) + c - 1; i < int(rt.off[k+1]) {
						cur[v] = int32(c + 1)
						w = rt.succ[i]
					}
				}
			}
			ok := w >= 0
			if ok {
				nsteps++
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
				comp := stack[i:]
				for _, x := range comp {
					onStack[x] = false
				}
				stack = stack[:i]
				if len(comp) > 1 && !emit(comp) {
					if steps != nil {
						*steps += nsteps
					}
					return
				}
			}
		}
	}
	if steps != nil {
		*steps += nsteps
	}
}
