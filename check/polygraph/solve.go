package polygraph

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"
	"github.com/txray/txray/graph"
)

// cycleRec is a cycle of logical edges, in order (edge i ends where edge
// i+1 starts; the last returns to the first).
type cycleRec []int32

// outcome of pruning and solving.
type outcome struct {
	sat    bool
	unsat  bool
	reason string     // why neither (budget, deadline)
	core   []cycleRec // unsat: cycles that every choice of core constraints closes one of
	known  bool       // the core is a cycle of the known graph (no choice involved)
}

var errBudget = errors.New("budget")

// fixedSel accepts known edges and edges of options fixed before round r.
func (p *problem) fixedSel(r int32) func(ei int32) bool {
	return func(ei int32) bool {
		e := &p.edges[ei]
		if e.lit == 0 {
			return true
		}
		c := &p.cons[abs32(e.lit)-1]
		return c.fixed != 0 && c.round < r && (e.lit > 0) == (c.fixed > 0)
	}
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

// closes reports the first physical edge of logical edge e that closes a
// cycle with reachability r (its target reaches its source), as (from, to).
func (p *problem) closes(r reach, ei int32) (f, t int32, ok bool) {
	p.physEdges(&p.edges[ei], func(a, b int32) {
		if !ok && r.reaches(b, a) {
			f, t, ok = a, b, true
		}
	})
	return
}

// impossible returns the first edge of option o of constraint c that
// closes a cycle with the known graph, or -1.
func (p *problem) impossible(r reach, c *constraint, o int) int32 {
	for ei := c.opt[o][0]; ei < c.opt[o][1]; ei++ {
		if _, _, ok := p.closes(r, ei); ok {
			return ei
		}
	}
	return -1
}

// prune runs Cobra's reachability pruning (Tan et al., "Cobra: Making
// Transactional Key-Value Stores Verifiably Serializable", OSDI 2020, §4.3)
// to a fixpoint: in each round, with the closure of the known graph (known
// edges plus options fixed in earlier rounds), an option with an edge whose
// target already reaches its source would close a cycle, so the other
// option is fixed. Both options impossible, or the known graph cyclic,
// proves the history invalid (out.unsat with the cycles). The first round's
// known graph holds only edges the history itself gives; a cycle there is
// reported as a plain dependency cycle (out.known).
func (p *problem) prune(ctx context.Context) (out outcome, rounds int32, err error) {
	for r := int32(0); ; r++ {
		if err := ctx.Err(); err != nil {
			return out, r, err
		}
		g := p.physGraph(p.fixedSel(r))
		order, acyclic := g.topo()
		if !acyclic {
			out.unsat, out.known = true, r == 0
			out.core = p.someCycles(g, 8)
			return out, r, nil
		}
		rch, kind := newReach(g, order, func(ei int32) bool { return p.edges[ei].rel&(graph.Process|graph.Realtime) != 0 })
		if rch == nil {
			p.warnings = append(p.warnings, "reachability pruning skipped: the index would exceed memory bounds")
		} else {
			p.stats["reach_index"] = kind
		}
		if r == 0 {
			pairs, conflict := p.genConstraints(rch)
			p.stats["constraints"] = pairs
			if conflict >= 0 {
				c := &p.cons[conflict]
				out.unsat = true
				out.core = []cycleRec{p.closingOf(g, c, 0), p.closingOf(g, c, 1)}
				return out, r, nil
			}
			continue
		}
		if rch == nil {
			return out, r, nil
		}
		changed := 0
		for ci := range p.cons {
			c := &p.cons[ci]
			if c.fixed != 0 {
				continue
			}
			ea := p.impossible(rch, c, 0)
			eb := p.impossible(rch, c, 1)
			switch {
			case ea >= 0 && eb >= 0:
				out.unsat = true
				out.core = []cycleRec{p.closingCycle(g, ea, r), p.closingCycle(g, eb, r)}
				return out, r, nil
			case ea >= 0:
				c.fixed, c.round, c.reason = -1, r, ea
				changed++
			case eb >= 0:
				c.fixed, c.round, c.reason = 1, r, eb
				changed++
			}
		}
		if changed == 0 {
			return out, r + 1, nil
		}
	}
}

// closingOf returns the cycle the first closing edge of option o closes in g.
func (p *problem) closingOf(g *pgraph, c *constraint, o int) cycleRec {
	for ei := c.opt[o][0]; ei < c.opt[o][1]; ei++ {
		if cyc := p.closingCycle(g, ei, 0); cyc != nil {
			return cyc
		}
	}
	return nil
}

// closingCycle returns the cycle logical edge ei closes in g (the known
// graph of round r): ei followed by a shortest path back.
func (p *problem) closingCycle(g *pgraph, ei int32, r int32) cycleRec {
	f, t, ok := p.closesIn(g, ei)
	if !ok {
		return nil
	}
	var work int64
	path := g.bfs(newBFS(g.n), t, f, nil, nil, &work)
	return append(cycleRec{ei}, path...)
}

// closesIn finds the physical edge of ei whose target reaches its source
// in g (by search, for explanations).
func (p *problem) closesIn(g *pgraph, ei int32) (f, t int32, ok bool) {
	sc := newBFS(g.n)
	var work int64
	p.physEdges(&p.edges[ei], func(a, b int32) {
		if !ok && (a == b || g.bfs(sc, b, a, nil, nil, &work) != nil) {
			f, t, ok = a, b, true
		}
	})
	return
}

// someCycles extracts up to max cycles of a cyclic graph, one per
// nontrivial strongly connected component.
func (p *problem) someCycles(g *pgraph, max int) []cycleRec {
	comp, size := g.sccs()
	sc := newBFS(g.n)
	var out []cycleRec
	done := map[int32]bool{}
	var work int64
	for v := int32(0); v < g.n && len(out) < max; v++ {
		c := comp[v]
		if size[c] < 2 || done[c] {
			continue
		}
		for k := g.off[v]; k < g.off[v+1]; k++ {
			t := g.to[k]
			if comp[t] != c {
				continue
			}
			path := g.bfs(sc, t, v, func(w int32) bool { return comp[w] == c }, nil, &work)
			if path != nil || t == v {
				done[c] = true
				out = append(out, append(cycleRec{g.eid[k]}, path...))
				break
			}
		}
	}
	return out
}

// solve decides the constraints left after pruning with a CDCL SAT solver
// (gini) and lazy acyclicity: each model of the clauses so far is turned
// into a graph (known + fixed + chosen edges); if it is acyclic the history
// satisfies the model; otherwise a short cycle through each chosen edge in
// a cyclic component becomes a learned clause (not all of these choices
// together), and the solver runs again. Unsatisfiable clauses prove that
// every order closes a cycle; the proof's cycles are then reduced to a
// small core (assumption-based, then deletion).
func (p *problem) solve(ctx context.Context, budget int64) (out outcome, err error) {
	var vars []int32 // variable -> constraint
	for ci := range p.cons {
		if p.cons[ci].fixed == 0 {
			vars = append(vars, int32(ci))
			p.cons[ci].variable = int32(len(vars))
		}
	}
	p.stats["sat_vars"] = len(vars)
	if len(vars) == 0 {
		out.sat = true
		return out, nil
	}
	s := gini.NewV(len(vars) + 1)
	// Literal of logical edge e in the SAT problem: 0 if known or fixed.
	litOf := func(ei int32) z.Lit {
		e := &p.edges[ei]
		if e.lit == 0 {
			return z.LitNull
		}
		c := &p.cons[abs32(e.lit)-1]
		if c.variable == 0 {
			return z.LitNull
		}
		l := z.Var(c.variable).Pos()
		if e.lit < 0 {
			l = l.Not()
		}
		return l
	}
	chosen := make([]bool, len(vars)+1)
	base := p.physGraph(p.fixedSel(1 << 30))
	var clauses [][]z.Lit
	var cycles []cycleRec
	seen := map[string]bool{}
	iters := 0
	t0 := time.Now()
	var solveTime time.Duration
	defer func() {
		p.stats["sat_iterations"] = iters
		p.stats["learned_cycles"] = len(cycles)
		p.stats["sat_solver_ms"] = solveTime.Milliseconds()
		p.stats["cycle_check_ms"] = (time.Since(t0) - solveTime).Milliseconds()
	}()
	// Preferred phases: orient every pair along a topological order of the known graph that
	// breaks ties by the history's completion order (a proxy for the commit order). They are
	// passed as assumptions; assumptions the solver reports as failed are dropped for good.
	// This steers the search only: verdicts come from the clauses alone.
	order := base.topoBy(p.nodeKey)
	pos := make([]int32, base.n)
	for i, v := range order {
		pos[v] = int32(i)
	}
	var active []z.Lit
	for v := 1; v <= len(vars); v++ {
		e := &p.edges[p.cons[vars[v-1]].opt[0][0]]
		l := z.Var(v).Pos()
		if pos[e.from] > pos[e.to] {
			l = l.Not()
		}
		active = append(active, l)
	}
	dropped := 0
	defer func() { p.stats["sat_assumptions_dropped"] = dropped }()
	for {
		iters++
		ts := time.Now()
		s.Assume(active...)
		res := solveCtx(ctx, s)
		solveTime += time.Since(ts)
		if res == 0 {
			return out, ctx.Err()
		}
		if res < 0 && len(active) > 0 {
			failed := map[z.Lit]bool{}
			for _, l := range s.Why(nil) {
				failed[l] = true
			}
			if len(failed) == 0 {
				dropped += len(active)
				active = nil
				continue
			}
			keep := active[:0]
			for _, l := range active {
				if !failed[l] {
					keep = append(keep, l)
				}
			}
			dropped += len(active) - len(keep)
			active = keep
			continue
		}
		if res < 0 {
			out.unsat = true
			out.core = p.core(ctx, clauses, cycles)
			return out, nil
		}
		for v := 1; v <= len(vars); v++ {
			chosen[v] = s.Value(z.Var(v).Pos())
		}
		var extra [][2]int32 // (physical from, to) and logical edge
		var extraE []int32
		for v := 1; v <= len(vars); v++ {
			c := &p.cons[vars[v-1]]
			o := 0
			if !chosen[v] {
				o = 1
			}
			for ei := c.opt[o][0]; ei < c.opt[o][1]; ei++ {
				p.physEdges(&p.edges[ei], func(a, b int32) {
					extra = append(extra, [2]int32{a, b})
					extraE = append(extraE, ei)
				})
			}
		}
		g := base.with(extra, extraE)
		if _, ok := g.topo(); ok {
			out.sat = true
			return out, nil
		}
		comp, size := g.sccs()
		sc := newBFS(g.n)
		var work int64
		added := 0
		for v := int32(0); v < g.n && added < 512 && work < 5_000_000; v++ {
			cv := comp[v]
			if size[cv] < 2 {
				continue
			}
			for k := g.off[v]; k < g.off[v+1] && added < 512; k++ {
				t := g.to[k]
				if comp[t] != cv || litOf(g.eid[k]) == z.LitNull {
					continue
				}
				path := g.bfs(sc, t, v, func(w int32) bool { return comp[w] == cv }, nil, &work)
				if path == nil {
					continue
				}
				cyc := append(cycleRec{g.eid[k]}, path...)
				var cl []z.Lit
				for _, ei := range cyc {
					if l := litOf(ei); l != z.LitNull {
						cl = append(cl, l.Not())
					}
				}
				sort.Slice(cl, func(i, j int) bool { return cl[i] < cl[j] })
				cl = dedupLits(cl)
				key := fmt.Sprint(cl)
				if seen[key] {
					continue
				}
				seen[key] = true
				for _, l := range cl {
					s.Add(l)
				}
				s.Add(z.LitNull)
				clauses = append(clauses, cl)
				cycles = append(cycles, cyc)
				added++
			}
		}
		if added == 0 {
			return out, fmt.Errorf("internal: cyclic candidate without a learnable cycle")
		}
		if budget > 0 && int64(len(cycles)) > budget {
			out.reason = fmt.Sprintf("search budget exhausted: %d cycle clauses learned over %d solver rounds without a decision (raise --budget)", len(cycles), iters)
			return out, nil
		}
	}
}

func dedupLits(l []z.Lit) []z.Lit {
	out := l[:0]
	for i, x := range l {
		if i == 0 || x != l[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// solveCtx runs the solver, stopping it if ctx is done (result 0).
func solveCtx(ctx context.Context, s *gini.Gini) int {
	if ctx.Done() == nil {
		return s.Solve()
	}
	if ctx.Err() != nil {
		return 0
	}
	h := s.GoSolve()
	wait := 20 * time.Microsecond
	for {
		if r, ok := h.Test(); ok {
			return r
		}
		select {
		case <-ctx.Done():
			return h.Stop()
		case <-time.After(wait):
		}
		if wait < 5*time.Millisecond {
			wait *= 2
		}
	}
}

// core reduces an unsatisfiable set of cycle clauses to a small subset
// that is still unsatisfiable: each clause gets a selector assumed true;
// the solver's failed assumptions (gini Why) give a first core, which a
// deletion pass then minimises (bounded in size and by ctx).
func (p *problem) core(ctx context.Context, clauses [][]z.Lit, cycles []cycleRec) []cycleRec {
	n := int(p.stats["sat_vars"].(int))
	sel := func(i int) z.Lit { return z.Var(n + 1 + i).Pos() }
	unsatWith := func(idx []int) (bool, []int) {
		s := gini.NewV(n + len(clauses) + 1)
		for _, i := range idx {
			for _, l := range clauses[i] {
				s.Add(l)
			}
			s.Add(sel(i).Not())
			s.Add(z.LitNull)
		}
		as := make([]z.Lit, len(idx))
		for j, i := range idx {
			as[j] = sel(i)
		}
		s.Assume(as...)
		if solveCtx(ctx, s) != -1 {
			return false, nil
		}
		why := s.Why(nil)
		var out []int
		for _, l := range why {
			out = append(out, int(l.Var())-n-1)
		}
		sort.Ints(out)
		return true, out
	}
	all := make([]int, len(clauses))
	for i := range all {
		all[i] = i
	}
	ok, cur := unsatWith(all)
	if !ok || len(cur) == 0 {
		return cycles
	}
	if len(cur) <= 64 {
		for i := 0; i < len(cur) && ctx.Err() == nil; {
			try := append(append([]int(nil), cur[:i]...), cur[i+1:]...)
			if ok, _ := unsatWith(try); ok && len(try) > 0 {
				cur = try
				continue
			}
			i++
		}
	}
	out := make([]cycleRec, len(cur))
	for j, i := range cur {
		out[j] = cycles[i]
	}
	return out
}
