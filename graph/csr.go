package graph

// CSRComponents computes the strongly connected components of a graph in
// compressed sparse row form (node v's successors are to[off[v]:off[v+1]],
// len(off) = n+1) with an iterative Tarjan (Tarjan 1972), so deep graphs
// never grow the goroutine stack. Searches start only from nodes for which
// root reports true (nil: every node); nodes never reached keep comp -1.
// Components are numbered in the order Tarjan completes them (a reverse
// topological order of the condensation).
func CSRComponents(off, to []int32, root func(v int32) bool) (comp []int32, ncomp int) {
	n := len(off) - 1
	if n < 0 {
		return nil, 0
	}
	index := make([]int32, n)
	low := make([]int32, n)
	comp = make([]int32, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
		comp[i] = -1
	}
	var stack []int32
	type frame struct{ v, edge int32 }
	var call []frame
	next := int32(0)
	for s := 0; s < n; s++ {
		if index[s] >= 0 || root != nil && !root(int32(s)) {
			continue
		}
		call = append(call, frame{int32(s), off[s]})
		index[s], low[s] = next, next
		next++
		stack = append(stack, int32(s))
		onStack[s] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.edge < off[v+1] {
				w := to[f.edge]
				f.edge++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, off[w]})
				} else if onStack[w] && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = int32(ncomp)
					if w == v {
						break
					}
				}
				ncomp++
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				if low[v] < low[u] {
					low[u] = low[v]
				}
			}
		}
	}
	return comp, ncomp
}
