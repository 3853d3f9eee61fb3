package isodiff

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Levels.
const (
	ReadCommitted     = "read-committed"
	SnapshotIsolation = "snapshot-isolation"
)

// Options configure Analyze.
type Options struct {
	Level string
	// K closing paths per dangerous path (k shortest paths), L
	// operation-level samples per transaction-level cycle (ℓ); the paper
	// uses k=10, ℓ=6.
	K, L int
	// CycleBudget bounds the correlation check of one operation-level
	// cycle (the enumeration of directions of the conflicts the cycle's
	// same-row accesses imply); when it runs out the cycle is kept and
	// its coverage reported.
	CycleBudget time.Duration
	Hints       *Hints
	Workers     int
	// FullRounds makes every set-cover round search all dangerous paths
	// again instead of only those whose Δ cycle the chosen column broke.
	FullRounds bool
	// MaxRounds bounds the set-cover iterations (0: no bound).
	MaxRounds int
	// MaxReport bounds the Δ cycles listed in the report (0: 1000); all
	// of them count in the statistics and the set cover.
	MaxReport int
}

// Dependency types.
const (
	WW = "ww"
	WR = "wr"
	RW = "rw"
)

type opPair struct {
	a, b int32 // op indices in the from and to class
	typ  uint8 // 0 ww, 1 wr, 2 rw
	vul  bool  // rw and vulnerable under SI (no first-updater-wins between the two)
}

var typName = [3]string{WW, WR, RW}

// model is the prepared dependency graph.
type model struct {
	app     *App
	opts    Options
	classes []*Class
	R       []int    // replicas per class
	group   []int    // replica group per class: classes of one label share a replicas hint
	groupR  []int    // replicas per group
	prot    [][]bool // protected (locked by a TargetColumn) reads, per class and op
	// tab and col number each op's table and table.column (col -1 for
	// "*"); byTab lists a class's ops per table, ascending.
	tab, col [][]int32
	byTab    []map[int32][]int32
	pairs    [][]opPair // [from*n+to]
	// dangerPairs: the rw pairs a dangerous path may use (SI: vulnerable)
	dangerPairs [][]opPair
	adj         [][]uint64 // class-level adjacency bitsets (any edge), [from][to/64]
	radj        [][]int    // reverse adjacency lists
	rwOut       [][]int    // classes reachable by a rw edge (SI: vulnerable)
	nOpEdge     int
}

func (m *model) n() int { return len(m.classes) }

func (m *model) effLocked(c, i int) bool {
	o := m.classes[c].Ops[i]
	return o.Locked || m.prot[c][i]
}

// conflict types the pair (op a of class A, op b of class B), -1 if none.
func (m *model) conflict(A, a, B, b int) int {
	if m.tab[A][a] != m.tab[B][b] {
		return -1
	}
	if ca, cb := m.col[A][a], m.col[B][b]; ca != cb && ca >= 0 && cb >= 0 {
		return -1
	}
	oa, ob := m.classes[A].Ops[a], m.classes[B].Ops[b]
	aw, bw := oa.Write, ob.Write
	al, bl := !aw && m.effLocked(A, a), !bw && m.effLocked(B, b)
	switch {
	case (aw || al) && (bw || bl):
		return 0
	case aw && !bl:
		return 1
	case bw && !al:
		return 2
	}
	return -1
}

func hintClass(h *Hints, c *Class, name string) bool { return name == c.ID || name == c.Label }

func (m *model) edgeRemoved(A, B int, col string) bool {
	if m.opts.Hints == nil {
		return false
	}
	for _, e := range m.opts.Hints.RemoveEdges {
		if hintClass(nil, m.classes[A], e.From) && hintClass(nil, m.classes[B], e.To) && (e.Column == "" || e.Column == col) {
			return true
		}
	}
	return false
}

func writesColumn(c *Class, table, col string) bool {
	for _, o := range c.Ops {
		if o.Write && o.Table == table && o.Column == col {
			return true
		}
	}
	return false
}

// prepare applies the hints and builds the class-level conflict pairs.
func prepare(app *App, opts Options, protected map[string]bool) *model {
	m := &model{app: app, opts: opts}
	h := opts.Hints
	for _, c := range app.Classes {
		if h != nil && (h.RemoveClass[c.ID] || h.RemoveClass[c.Label]) {
			continue
		}
		cc := *c
		if h != nil && len(h.Ignore) > 0 {
			cc.Ops = nil
			for _, o := range c.Ops {
				if !anyColMatch(h.Ignore, o.Table, o.Column) {
					cc.Ops = append(cc.Ops, o)
				}
			}
		}
		if h != nil && len(h.Unique) > 0 {
			cc.Rows = append([]RowVar(nil), c.Rows...)
			declared := map[int]bool{}
			for _, o := range cc.Ops {
				if o.Write && anyColMatch(h.Unique, o.Table, o.Column) && cc.Rows[o.Row].Pinned {
					// A declared unique ID: its own columns identify it
					// (an inferred one keeps its inferred IDCols).
					rv := &cc.Rows[o.Row]
					if !rv.Unique {
						rv.Unique, rv.IDCols = true, nil
						declared[o.Row] = true
					}
					if declared[o.Row] && slices.Contains(rv.Cols, o.Column) && !slices.Contains(rv.IDCols, o.Column) {
						rv.IDCols = append(slices.Clone(rv.IDCols), o.Column)
					}
				}
			}
		}
		r := 2
		if opts.Level == SnapshotIsolation {
			r = 3
		}
		if h != nil {
			if v, ok := h.Replicas[c.ID]; ok {
				r = min(r, v)
			}
			if v, ok := h.Replicas[c.Label]; ok {
				r = min(r, v)
			}
		}
		cc.Replicas = r
		m.classes = append(m.classes, &cc)
		m.R = append(m.R, r)
		g := len(m.groupR)
		if h != nil && c.Label != "" {
			if _, ok := h.Replicas[c.Label]; ok {
				for i, k := range m.classes[:len(m.classes)-1] {
					if k.Label == c.Label {
						g = m.group[i]
						break
					}
				}
			}
		}
		if g == len(m.groupR) {
			m.groupR = append(m.groupR, r)
		}
		m.group = append(m.group, g)
		// Protecting a column turns the statements that read it into
		// SELECT ... FOR UPDATE: the lock covers the row the statement
		// reads, so every column it reads of that row becomes a locking
		// read.
		pr := make([]bool, len(cc.Ops))
		type stmtRow struct{ stmt, row int }
		locked := map[stmtRow]bool{}
		for _, o := range cc.Ops {
			if !o.Write && protected[o.ColumnName()] {
				locked[stmtRow{o.Stmt, o.Row}] = true
			}
		}
		for i, o := range cc.Ops {
			if !o.Write && locked[stmtRow{o.Stmt, o.Row}] {
				pr[i] = true
			}
		}
		m.prot = append(m.prot, pr)
	}
	n := m.n()
	m.pairs = make([][]opPair, n*n)
	m.dangerPairs = make([][]opPair, n*n)
	m.adj = make([][]uint64, n)
	m.radj = make([][]int, n)
	m.rwOut = make([][]int, n)
	words := (n + 63) / 64
	for A := 0; A < n; A++ {
		m.adj[A] = make([]uint64, words)
	}
	// Only operations on one table can conflict: number tables and
	// columns, and index each class's operations by table (ascending, so
	// the pairs keep their (a, b) order).
	tabs, cols := map[string]int32{}, map[string]int32{}
	m.tab, m.col, m.byTab = make([][]int32, n), make([][]int32, n), make([]map[int32][]int32, n)
	for A, c := range m.classes {
		m.tab[A], m.col[A] = make([]int32, len(c.Ops)), make([]int32, len(c.Ops))
		m.byTab[A] = map[int32][]int32{}
		for i, o := range c.Ops {
			t, ok := tabs[o.Table]
			if !ok {
				t = int32(len(tabs))
				tabs[o.Table] = t
			}
			m.tab[A][i] = t
			m.col[A][i] = -1
			if o.Column != "*" {
				k, ok := cols[o.Table+"."+o.Column]
				if !ok {
					k = int32(len(cols))
					cols[o.Table+"."+o.Column] = k
				}
				m.col[A][i] = k
			}
			m.byTab[A][t] = append(m.byTab[A][t], int32(i))
		}
	}
	for A := 0; A < n; A++ {
		ca := m.classes[A]
		for B := 0; B < n; B++ {
			if A == B && m.R[A] < 2 {
				continue
			}
			var ps []opPair
			for a := range ca.Ops {
				for _, b32 := range m.byTab[B][m.tab[A][a]] {
					b := int(b32)
					t := m.conflict(A, a, B, b)
					if t < 0 {
						continue
					}
					if !m.pairAllowed(A, a, B, b) {
						continue
					}
					p := opPair{a: int32(a), b: int32(b), typ: uint8(t)}
					if t == 2 {
						p.vul = m.vulnerable(A, a, B, b)
					}
					ps = append(ps, p)
				}
			}
			if len(ps) == 0 {
				continue
			}
			m.pairs[A*n+B] = ps
			for _, p := range ps {
				if p.typ == 2 && (opts.Level != SnapshotIsolation || p.vul) {
					m.dangerPairs[A*n+B] = append(m.dangerPairs[A*n+B], p)
				}
			}
			m.nOpEdge += len(ps)
			m.adj[A][B/64] |= 1 << (B % 64)
			m.radj[B] = append(m.radj[B], A)
			for _, p := range ps {
				if p.typ == 2 && (opts.Level != SnapshotIsolation || p.vul) {
					m.rwOut[A] = append(m.rwOut[A], B)
					break
				}
			}
		}
	}
	return m
}

// pairAllowed applies unique IDs and the hints that drop conflicts.
func (m *model) pairAllowed(A, a, B, b int) bool {
	ca, cb := m.classes[A], m.classes[B]
	oa, ob := ca.Ops[a], cb.Ops[b]
	if A == B && oa.Row == ob.Row && ca.Rows[oa.Row].Unique {
		return false // two instances never share a unique-ID row
	}
	h := m.opts.Hints
	if h == nil {
		return true
	}
	if len(h.Commutative) > 0 && anyColMatch(h.Commutative, oa.Table, oa.Column) && anyColMatch(h.Commutative, ob.Table, ob.Column) &&
		writesColumn(ca, oa.Table, oa.Column) && writesColumn(cb, ob.Table, ob.Column) {
		return false
	}
	col := oa.ColumnName()
	if oa.Column == "*" {
		col = ob.ColumnName()
	}
	return !m.edgeRemoved(A, B, col)
}

// vulnerable: an rw edge (read a of A, write b of B) is vulnerable under
// SI unless first-updater-wins keeps A and B from running concurrently:
// both pinned to the same row, and A writes (or lock-reads) that row too.
func (m *model) vulnerable(A, a, B, b int) bool {
	ca, cb := m.classes[A], m.classes[B]
	ra, rb := ca.Ops[a].Row, cb.Ops[b].Row
	if !ca.Rows[ra].Pinned || !cb.Rows[rb].Pinned {
		return true
	}
	for i, o := range ca.Ops {
		if o.Row == ra && (o.Write || m.effLocked(A, i)) {
			return false
		}
	}
	return true
}

func (m *model) hasEdge(A, B int) bool { return m.adj[A][B/64]&(1<<(B%64)) != 0 }

// node is a class replica.
type inst struct{ c, r int32 }

// Cycle is a Δ cycle: instances of classes and, per edge, the operation
// pair that makes the dependency.
type Cycle struct {
	Nodes []inst
	Edges []opPair // Edges[i] from Nodes[i] to Nodes[(i+1)%len]
	// Coverage of the correlation check (1 when it was exhaustive).
	Coverage float64
	key      string
	cols     []string // rwColumns cache
}

// Stats counts the work of one search round.
type Stats struct {
	Classes        int     `json:"classes"`
	OpEdges        int     `json:"operation_edges"`
	TxnEdges       int     `json:"transaction_edges"`
	DangerousPaths int     `json:"dangerous_paths"`
	TxnCycles      int     `json:"transaction_cycles_examined"`
	OpSamples      int     `json:"operation_cycles_sampled"`
	TimingPruned   int     `json:"timing_check_pruned"`
	CorrPruned     int     `json:"correlation_check_pruned"`
	HintPruned     int     `json:"hint_pruned"`
	CorrIncomplete int     `json:"correlation_check_incomplete"`
	MinCoverage    float64 `json:"correlation_min_coverage"`
	DeltaCycles    int     `json:"delta_cycles"`
	// Searched counts the dangerous paths searched this round (a
	// set-cover round searches only the paths whose cycle the new
	// TargetColumn broke).
	Searched      int     `json:"dangerous_paths_searched"`
	SearchSeconds float64 `json:"search_seconds"`
}

// dpath is a dangerous path: A -rw-> B (read committed; c = -1) or
// A -rw-> B -rw-> C with both rw edges vulnerable (snapshot isolation).
type dpath struct{ a, b, c int32 }

// dangerousPaths lists the dangerous paths of the model.
func (m *model) dangerousPaths() []dpath {
	n := m.n()
	var dps []dpath
	for A := 0; A < n; A++ {
		for _, B := range m.rwOut[A] {
			if m.opts.Level != SnapshotIsolation {
				dps = append(dps, dpath{int32(A), int32(B), -1})
				continue
			}
			for _, C := range m.rwOut[B] {
				dps = append(dps, dpath{int32(A), int32(B), int32(C)})
			}
		}
	}
	return dps
}

// baseStats counts the graph.
func (m *model) baseStats() Stats {
	n := m.n()
	st := Stats{Classes: n, OpEdges: m.nOpEdge, MinCoverage: 1}
	for A := 0; A < n; A++ {
		for B := 0; B < n; B++ {
			if m.hasEdge(A, B) {
				st.TxnEdges++
			}
		}
	}
	return st
}

// searchPaths searches the given dangerous paths in parallel (Workers
// goroutines take chunks of paths) and returns each one's representative
// Δ cycle (nil when none), adding the work to st.
func (m *model) searchPaths(dps []dpath, st *Stats) []*Cycle {
	reps := make([]*Cycle, len(dps))
	if len(dps) == 0 {
		return reps
	}
	dist := m.distances()
	workers := m.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newSearcher(m, dist)
			for {
				mu.Lock()
				i := next
				next += 64
				mu.Unlock()
				if i >= len(dps) {
					break
				}
				for j := i; j < min(i+64, len(dps)); j++ {
					d := dps[j]
					s.hit = nil
					s.dangerous(int(d.a), int(d.b), int(d.c))
					reps[j] = s.hit
				}
			}
			mu.Lock()
			st.TxnCycles += s.st.TxnCycles
			st.OpSamples += s.st.OpSamples
			st.TimingPruned += s.st.TimingPruned
			st.CorrPruned += s.st.CorrPruned
			st.HintPruned += s.st.HintPruned
			st.CorrIncomplete += s.st.CorrIncomplete
			st.MinCoverage = math.Min(st.MinCoverage, s.st.MinCoverage)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return reps
}

// distinctCycles merges the representative cycles of the dangerous paths
// (several paths may find the same cycle), sorted by length and key.
func distinctCycles(reps []*Cycle) []*Cycle {
	found := map[string]*Cycle{}
	for _, c := range reps {
		if c == nil {
			continue
		}
		if old, ok := found[c.key]; !ok || old.Coverage < c.Coverage {
			found[c.key] = c
		}
	}
	out := make([]*Cycle, 0, len(found))
	for _, c := range found {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].Nodes) != len(out[j].Nodes) {
			return len(out[i].Nodes) < len(out[j].Nodes)
		}
		return out[i].key < out[j].key
	})
	return out
}

// search finds the Δ cycles of one round: every dangerous path is
// searched.
func (m *model) search() ([]*Cycle, Stats) {
	start := time.Now()
	st := m.baseStats()
	dps := m.dangerousPaths()
	st.DangerousPaths = len(dps)
	out := distinctCycles(m.searchPaths(dps, &st))
	st.DeltaCycles = len(out)
	st.SearchSeconds = time.Since(start).Seconds()
	return out, st
}

// distances[t][c] is the class-level BFS distance from c to t (a lower
// bound on replica paths), -1 if unreachable.
func (m *model) distances() [][]int16 {
	n := m.n()
	d := make([][]int16, n)
	q := make([]int, 0, n)
	for t := 0; t < n; t++ {
		row := make([]int16, n)
		for i := range row {
			row[i] = -1
		}
		row[t] = 0
		q = append(q[:0], t)
		for len(q) > 0 {
			x := q[0]
			q = q[1:]
			for _, y := range m.radj[x] {
				if row[y] < 0 {
					row[y] = row[x] + 1
					q = append(q, y)
				}
			}
		}
		d[t] = row
	}
	return d
}

type searcher struct {
	m     *model
	dist  [][]int16
	st    Stats
	path  []inst
	used  map[inst]bool
	count []int // replicas in use per class
	pcg   *rand.PCG
	rng   *rand.Rand
	// scratch of closeAndCheck
	choices [][]opPair
	pick    []opPair
	tried   []uint64
	fc      *feasChecker
	// hit is the Δ cycle the current dangerous path found (nil if none).
	hit *Cycle
}

func newSearcher(m *model, dist [][]int16) *searcher {
	sr := &searcher{m: m, dist: dist, st: Stats{MinCoverage: 1}, used: map[inst]bool{}, count: make([]int, 2*m.n()), fc: &feasChecker{m: m}}
	sr.pcg = rand.NewPCG(1, 2)
	sr.rng = rand.New(sr.pcg)
	return sr
}

func (s *searcher) take(c int) (inst, bool) {
	g := s.m.group[c]
	if s.count[g] >= s.m.groupR[g] || s.count[len(s.m.group)+c] >= s.m.R[c] {
		return inst{}, false
	}
	nd := inst{int32(c), int32(s.count[len(s.m.group)+c])}
	s.count[g]++
	s.count[len(s.m.group)+c]++
	return nd, true
}

func (s *searcher) release(c int) { s.count[s.m.group[c]]--; s.count[len(s.m.group)+c]-- }

// dangerous examines one dangerous path A -rw-> B [-rw-> C] and closes it
// with up to K shortest paths back to A.
func (s *searcher) dangerous(A, B, C int) {
	for i := range s.count {
		s.count[i] = 0
	}
	u, _ := s.take(A)
	v, ok := s.take(B)
	if !ok {
		s.release(A)
		return
	}
	start := []inst{u, v}
	last := B
	if C >= 0 {
		if C == A {
			// The two rw edges close the cycle themselves (write skew).
			if s.closeAndCheck([]inst{u, v}, 2) {
				for i := range s.count {
					s.count[i] = 0
				}
				return
			}
		}
		w, ok := s.take(C)
		if !ok {
			s.release(B)
			s.release(A)
			return
		}
		start = append(start, w)
		last = C
	} else if B == A {
		// v is a second replica of A; the rw edge alone closes nothing yet.
	}
	s.kShortest(start, last, A)
	for i := range s.count {
		s.count[i] = 0
	}
}

// kShortest enumerates up to K simple paths from the end of start back to
// its first node, in order of length, each closing one transaction-level
// cycle.
func (s *searcher) kShortest(start []inst, last, A int) {
	k := s.m.opts.K
	if k <= 0 {
		k = 10
	}
	danger := len(start) - 1
	lb := int(s.dist[A][last])
	if lb < 0 {
		return
	}
	found := 0
	maxLen := s.m.n()*3 + 1
	for L := max(1, lb); L <= maxLen && found < k; L++ {
		s.path = append(s.path[:0], start...)
		s.dfs(last, A, L, &found, k, danger)
		if L > lb+4 {
			break // longer closing paths add cycles the shorter ones already show
		}
	}
}

func (s *searcher) dfs(x, A, L int, found *int, k, danger int) {
	if *found >= k {
		return
	}
	if L == 1 {
		if s.m.hasEdge(x, A) {
			*found++
			if s.closeAndCheck(s.path, danger) {
				// One representative Δ cycle per dangerous path.
				*found = k
			}
		}
		return
	}
	row := s.m.adj[x]
	for wi, word := range row {
		for word != 0 {
			b := wi*64 + bitsTrailing(word)
			word &= word - 1
			d := int(s.dist[A][b])
			if d < 0 || d > L-1 {
				continue
			}
			nd, ok := s.take(b)
			if !ok {
				continue
			}
			s.path = append(s.path, nd)
			s.dfs(b, A, L-1, found, k, danger)
			s.path = s.path[:len(s.path)-1]
			s.release(b)
			if *found >= k {
				return
			}
		}
	}
}

func bitsTrailing(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

// closeAndCheck samples up to L operation-level realisations of the
// transaction cycle path (closed back to path[0]); the first that passes
// the timing and correlation checks makes it a Δ cycle. The first danger
// edges must be rw (SI: vulnerable).
func (s *searcher) closeAndCheck(path []inst, danger int) bool {
	s.st.TxnCycles++
	m := s.m
	n := m.n()
	nn := len(path)
	if cap(s.choices) < nn {
		s.choices = make([][]opPair, nn)
		s.pick = make([]opPair, nn)
	}
	choices := s.choices[:nn]
	total := 1.0
	for i := 0; i < nn; i++ {
		a, b := path[i], path[(i+1)%nn]
		ps := m.pairs[int(a.c)*n+int(b.c)]
		if i < danger {
			ps = m.dangerPairs[int(a.c)*n+int(b.c)]
		}
		if len(ps) == 0 {
			return false
		}
		choices[i] = ps
		total *= float64(len(ps))
	}
	l := m.opts.L
	if l <= 0 {
		l = 6
	}
	h := uint64(14695981039346656037)
	for _, p := range path {
		h ^= uint64(p.c) + 1
		h *= 1099511628211
	}
	s.pcg.Seed(h, 7)
	pick := s.pick[:nn]
	s.tried = s.tried[:0]
	for sample := 0; sample < l && float64(sample) < total; sample++ {
		var combo uint64
		for i := range choices {
			var j int
			if total <= float64(l) {
				// Enumerate all combinations in mixed radix.
				x := sample
				for t := 0; t < i; t++ {
					x /= len(choices[t])
				}
				j = x % len(choices[i])
			} else {
				j = s.rng.IntN(len(choices[i]))
			}
			pick[i] = choices[i][j]
			combo = combo*1000003 + uint64(j)
		}
		dup := false
		for _, t := range s.tried {
			if t == combo {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		s.tried = append(s.tried, combo)
		s.st.OpSamples++
		if m.opts.Level == ReadCommitted && !hasRW(pick) {
			continue
		}
		if !m.hintsAllow(path, pick) {
			s.st.HintPruned++
			continue
		}
		res, cov := s.fc.check(path, pick, m.opts.CycleBudget)
		switch res {
		case feasTiming:
			s.st.TimingPruned++
			continue
		case feasCorr:
			s.st.CorrPruned++
			continue
		}
		if cov < 1 {
			s.st.CorrIncomplete++
			s.st.MinCoverage = math.Min(s.st.MinCoverage, cov)
		}
		c := &Cycle{Nodes: append([]inst(nil), path...), Edges: append([]opPair(nil), pick...), Coverage: cov}
		c.key = canonKey(c)
		s.hit = c
		return true
	}
	return false
}

func hasRW(ps []opPair) bool {
	for _, p := range ps {
		if p.typ == 2 {
			return true
		}
	}
	return false
}

// canonKey is the rotation-minimal rendering of a cycle's classes and
// operation pairs, ignoring replica numbers.
func canonKey(c *Cycle) string {
	n := len(c.Nodes)
	parts := make([][]byte, n)
	for i := range c.Nodes {
		e := c.Edges[i]
		b := strconv.AppendInt(nil, int64(c.Nodes[i].c), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(e.a), 10)
		b = append(b, '-')
		b = strconv.AppendInt(b, int64(e.b), 10)
		b = append(b, '/', '0'+e.typ, ' ')
		parts[i] = b
	}
	best := ""
	var buf []byte
	for r := 0; r < n; r++ {
		buf = buf[:0]
		for i := 0; i < n; i++ {
			buf = append(buf, parts[(r+i)%n]...)
		}
		if best == "" || string(buf) < best {
			best = string(buf)
		}
	}
	return best
}

// hintsAllow applies the exclusive/correlated edge hints.
func (m *model) hintsAllow(path []inst, pick []opPair) bool {
	h := m.opts.Hints
	if h == nil || len(h.Exclusive)+len(h.Correlated) == 0 {
		return true
	}
	has := func(e EdgeHint) bool {
		for i := range path {
			A, B := int(path[i].c), int(path[(i+1)%len(path)].c)
			if !hintClass(h, m.classes[A], e.From) || !hintClass(h, m.classes[B], e.To) {
				continue
			}
			oa, ob := m.classes[A].Ops[pick[i].a], m.classes[B].Ops[pick[i].b]
			if e.Column == "" || e.Column == oa.ColumnName() || e.Column == ob.ColumnName() {
				return true
			}
		}
		return false
	}
	for _, p := range h.Exclusive {
		if has(p[0]) && has(p[1]) {
			return false
		}
	}
	for _, p := range h.Correlated {
		if has(p[0]) != has(p[1]) {
			return false
		}
	}
	return true
}
