package emme

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/txray/txray/check"
	txgraph "github.com/txray/txray/graph"
	"github.com/txray/txray/model"
)

// stage is one cycle search: which edges it uses and whether anti-
// dependencies may be adjacent.
type stage struct {
	name string
	// use reports whether an edge kind takes part.
	use func(k uint8) bool
	// split: search in the graph where a transaction reached by an
	// anti-dependency may only leave by a non-anti-dependency (cycles with
	// no two adjacent anti-dependencies: Cerone & Gotsman, "Analysing
	// snapshot isolation", JACM 2018, Thm. 10).
	split bool
}

// stages, from the strongest anomaly to the weakest. Each model's verdict
// is decided by one of them: read-uncommitted by ww; read-committed by
// ww+wr; snapshot isolation by "no two adjacent anti-dependencies";
// repeatable read by item anti-dependencies (predicate-wr allowed, Adya's
// G2-item); serializable by every edge.
var stages = []stage{
	{name: "ww", use: func(k uint8) bool { return k == kWW }},
	{name: "ww+wr", use: func(k uint8) bool { return k == kWW || k == kWR || k == kPWR }},
	{name: "si", use: func(uint8) bool { return true }, split: true},
	{name: "item", use: func(k uint8) bool { return k != kPRW }},
	{name: "all", use: func(uint8) bool { return true }},
}

// csr is a compact adjacency over nodes 0..n-1; eid maps each arc to its
// edge index.
type csr struct {
	n   int
	off []int32
	to  []int32
	eid []int32
}

func (d *deps) graph(st stage, nTxn int) *csr {
	n := nTxn
	if st.split {
		n = 2 * nTxn // node t: reached by a non-anti edge; t+nTxn: by an anti edge
	}
	g := &csr{n: n, off: make([]int32, n+1)}
	type arc struct{ from, to, e int32 }
	arcs := make([]arc, 0, len(d.edges)+len(d.edges)/2)
	for i := range d.edges {
		e := &d.edges[i]
		if !st.use(e.kind) {
			continue
		}
		if !st.split {
			arcs = append(arcs, arc{e.from, e.to, int32(i)})
			continue
		}
		nt := int32(nTxn)
		if isAnti(e.kind) {
			arcs = append(arcs, arc{e.from, e.to + nt, int32(i)})
		} else {
			arcs = append(arcs, arc{e.from, e.to, int32(i)}, arc{e.from + nt, e.to, int32(i)})
		}
	}
	for _, a := range arcs {
		g.off[a.from+1]++
	}
	for i := 1; i <= n; i++ {
		g.off[i] += g.off[i-1]
	}
	g.to = make([]int32, len(arcs))
	g.eid = make([]int32, len(arcs))
	fill := make([]int32, n)
	copy(fill, g.off[:n])
	for _, a := range arcs {
		g.to[fill[a.from]] = a.to
		g.eid[fill[a.from]] = a.e
		fill[a.from]++
	}
	return g
}

// sccs returns the component id of each node (iterative Tarjan) and the
// number of components; comps with one node are never cycles (no self
// edges are stored).
func (g *csr) sccs() (comp []int32, size []int32) {
	comp, ncomp := txgraph.CSRComponents(g.off, g.to, nil)
	size = make([]int32, ncomp)
	for _, c := range comp {
		size[c]++
	}
	return comp, size
}

// shortestCycle returns the edge indices of a shortest cycle through r
// inside r's component (BFS).
func (g *csr) shortestCycle(r int32, comp []int32, seen []int32, parent []int32, stamp int32) []int32 {
	return g.bfs(r, r, comp, seen, parent, stamp)
}

// bfs returns the edge indices of a shortest non-empty path from s to t
// inside s's component (a cycle when t == s), nil if none. seen and parent
// are per-node scratch arrays; stamp marks this search's visits.
func (g *csr) bfs(s, t int32, comp []int32, seen []int32, parent []int32, stamp int32) []int32 {
	c := comp[s]
	queue := []int32{s}
	seen[s] = stamp
	for h := 0; h < len(queue); h++ {
		v := queue[h]
		for a := g.off[v]; a < g.off[v+1]; a++ {
			w := g.to[a]
			if comp[w] != c {
				continue
			}
			if w == t {
				// unwind: s -> ... -> v -> t
				p := []int32{g.eid[a]}
				for x := v; x != s; {
					pa := parent[x]
					p = append(p, g.eid[pa])
					x = g.from(pa)
				}
				slices.Reverse(p)
				return p
			}
			if seen[w] != stamp {
				seen[w] = stamp
				parent[w] = a
				queue = append(queue, w)
			}
		}
	}
	return nil
}

// from finds the source node of arc a (binary search in off).
func (g *csr) from(a int32) int32 {
	lo, hi := 0, g.n-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if g.off[mid] <= a {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return int32(lo)
}

// classify names a cycle (Adya 1999 §4.4 / Elle §4.2): no anti-dependency
// => G0 (ww only) or G1c; one => G-single; several, none adjacent
// (cyclically) => G-nonadjacent; else G2. The -item forms are used when
// the cycle has no predicate anti-dependency (Adya's G2-item allows
// predicate-read dependencies but no predicate anti-dependency).
func (d *deps) classify(cyc []int32) string {
	anti, reads, prw := 0, 0, false
	adj := false
	for i, e := range cyc {
		k := d.edges[e].kind
		switch {
		case isAnti(k):
			anti++
			if k == kPRW {
				prw = true
			}
			if len(cyc) > 1 && isAnti(d.edges[cyc[(i+len(cyc)-1)%len(cyc)]].kind) {
				adj = true
			}
		case k == kWR || k == kPWR:
			reads++
		}
	}
	item := ""
	if !prw {
		item = "-item"
	}
	switch {
	case anti == 0 && reads == 0:
		return model.G0
	case anti == 0:
		return model.G1c
	case anti == 1:
		return "G-single" + item
	case !adj:
		return "G-nonadjacent" + item
	}
	return "G2" + item
}

// explain renders one edge as a sentence a person can check.
func (d *deps) explain(e *edge) string {
	h := d.h
	a, b := h.TxnName(e.from), h.TxnName(e.to)
	k := h.KeyName(e.key)
	vn := func(v int32) string { return d.versionName(e.key, v) }
	switch e.kind {
	case kWW:
		return fmt.Sprintf("%s installed %s = %s and %s installed the next version %s = %s (version order), so %s < %s",
			a, k, vn(e.v1), b, k, vn(e.v2), a, b)
	case kWR:
		return fmt.Sprintf("%s read %s = %s %s, which %s wrote, so %s < %s", b, k, vn(e.v1), opRef(int(e.op)), a, a, b)
	case kRW:
		return fmt.Sprintf("%s read %s = %s %s and %s installed the next version %s = %s, so %s < %s",
			a, k, vn(e.v1), opRef(int(e.op)), b, k, vn(e.v2), a, b)
	case kPWR:
		return fmt.Sprintf("%s's predicate read %s %q evaluated row %s at version %s; %s's version %s = %s (after %s) changed whether row %s matches, so %s < %s (predicate-wr)",
			b, opRef(int(e.op)), d.where(e.to, e.op), k, vn(e.vs), a, k, vn(e.v2), vn(e.v1), k, a, b)
	}
	return fmt.Sprintf("%s's predicate read %s %q evaluated row %s at version %s; %s installed a later version %s = %s (after %s) that changes whether row %s matches, so %s < %s (predicate-rw)",
		a, opRef(int(e.op)), d.where(e.from, e.op), k, vn(e.vs), b, k, vn(e.v2), vn(e.v1), k, a, b)
}

func (d *deps) where(t, op int32) string {
	tx := &d.h.Txns[t]
	p := tx.PredOf(&tx.Ops[op])
	if p == nil {
		return ""
	}
	return p.Where
}

// cycles runs the stages and records one cycle per nontrivial component
// per stage (deduplicated), capped per type.
func (d *deps) cycles(ctx context.Context, r *check.Result, stop int) error {
	nTxn := len(d.h.Txns)
	seenCycle := map[string]bool{}
	perType := map[string]int{}
	for si, st := range stages {
		if si > stop {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		g := d.graph(st, nTxn)
		comp, size := g.sccs()
		done := make([]bool, len(size))
		seen := make([]int32, g.n)
		parent := make([]int32, g.n)
		for i := range seen {
			seen[i] = -1
		}
		var stamp int32
		for v := 0; v < g.n; v++ {
			c := comp[v]
			if size[c] < 2 || done[c] {
				continue
			}
			done[c] = true
			stamp++
			cyc := g.shortestCycle(int32(v), comp, seen, parent, stamp)
			if cyc == nil {
				continue
			}
			d.listCycle(cyc, seenCycle, perType, r)
		}
		if st.name == "all" {
			d.predicateCycles(g, comp, size, seenCycle, perType, r)
		}
	}
	return nil
}

// predicateCycles reports, per component of the full graph, one cycle
// through a predicate anti-dependency when there is one (the shortest
// cycle of a component may be an item cycle and hide it): the
// predicate-rw edge u -> v followed by a shortest path v ~> u.
func (d *deps) predicateCycles(g *csr, comp, size []int32, seenCycle map[string]bool, perType map[string]int, r *check.Result) {
	done := make([]bool, len(size))
	seen := make([]int32, g.n)
	parent := make([]int32, g.n)
	for i := range seen {
		seen[i] = -1
	}
	var stamp int32
	for ei := range d.edges {
		e := &d.edges[ei]
		if e.kind != kPRW || comp[e.from] != comp[e.to] || done[comp[e.from]] {
			continue
		}
		done[comp[e.from]] = true
		stamp++
		path := g.path(e.to, e.from, comp, seen, parent, stamp)
		if path == nil {
			continue
		}
		d.listCycle(append([]int32{int32(ei)}, path...), seenCycle, perType, r)
	}
}

// listCycle lists the cycle cyc (edge indices) in r as an anomaly of its
// type, once per distinct cycle (seen, by cycleKey); past MaxPerType
// cycles of a type it only counts it (r.Truncated).
func (d *deps) listCycle(cyc []int32, seen map[string]bool, perType map[string]int, r *check.Result) {
	key := cycleKey(d, cyc)
	if seen[key] {
		return
	}
	seen[key] = true
	typ := d.classify(cyc)
	if perType[typ] >= d.opts.MaxPerType() {
		if r.Truncated == nil {
			r.Truncated = map[string]int{}
		}
		r.Truncated[typ]++
		return
	}
	perType[typ]++
	r.Anomalies = append(r.Anomalies, d.cycleAnomaly(typ, cyc))
}

// path returns the edge indices of a shortest path from s to t inside
// their component (BFS), nil if none; empty when s == t.
func (g *csr) path(s, t int32, comp []int32, seen []int32, parent []int32, stamp int32) []int32 {
	if s == t {
		return []int32{}
	}
	return g.bfs(s, t, comp, seen, parent, stamp)
}

func cycleKey(d *deps, cyc []int32) string {
	// rotate to the smallest transaction
	m := 0
	for i, e := range cyc {
		if d.edges[e].from < d.edges[cyc[m]].from {
			m = i
		}
	}
	var b strings.Builder
	for i := range cyc {
		e := &d.edges[cyc[(m+i)%len(cyc)]]
		fmt.Fprintf(&b, "%d>%d:%d,", e.from, e.to, e.kind)
	}
	return b.String()
}

func (d *deps) cycleAnomaly(typ string, cyc []int32) check.Anomaly {
	h := d.h
	a := check.Anomaly{Type: typ, Ops: map[int32]string{}}
	var b strings.Builder
	names := make([]string, 0, len(cyc)+1)
	for _, ei := range cyc {
		e := &d.edges[ei]
		a.Txns = append(a.Txns, e.from)
		a.Ops[e.from] = h.TxnString(e.from)
		why := d.explain(e)
		a.Cycle = append(a.Cycle, check.Step{From: e.from, To: e.to, Rel: kindNames[e.kind], Key: h.KeyName(e.key), Why: why})
		b.WriteString(why)
		b.WriteString(".\n")
		names = append(names, h.TxnName(e.from))
	}
	names = append(names, h.TxnName(d.edges[cyc[0]].from))
	fmt.Fprintf(&b, "Together: %s: a cycle (%s), so no serial order explains the history.", strings.Join(names, " < "), describe(typ))
	a.Explanation = b.String()
	return a
}

func describe(typ string) string {
	switch typ {
	case model.G0:
		return "G0: write dependencies only"
	case model.G1c:
		return "G1c: write and read dependencies, no anti-dependency"
	}
	s := typ + ": "
	switch {
	case strings.HasPrefix(typ, "G-single"):
		s += "exactly one anti-dependency"
	case strings.HasPrefix(typ, "G-nonadjacent"):
		s += "several anti-dependencies, no two adjacent"
	default:
		s += "several anti-dependencies, two of them adjacent"
	}
	if strings.HasSuffix(typ, "-item") {
		return s + ", all on items"
	}
	return s + ", at least one of them a predicate anti-dependency"
}
