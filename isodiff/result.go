package isodiff

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Report is the outcome of an analysis.
type Report struct {
	Level    string      `json:"level"`
	K        int         `json:"k"`
	L        int         `json:"l"`
	Trace    TraceStats  `json:"trace"`
	Classes  []ClassInfo `json:"classes"`
	Stats    Stats       `json:"search"`
	Cycles   []CycleInfo `json:"delta_cycles"`
	Targets  []Target    `json:"target_columns"`
	Rounds   []Stats     `json:"set_cover_rounds"`
	Residual []int       `json:"unrepairable_cycles,omitempty"` // cycles no reparable column breaks
	// Observed summarises the recorded histories given (nil when none).
	Observed *ObserveSummary `json:"observed,omitempty"`
	// Incomplete is set when the set cover stopped at MaxRounds.
	Incomplete bool    `json:"incomplete,omitempty"`
	Seconds    float64 `json:"seconds"`
}

// ClassInfo describes a class.
type ClassInfo struct {
	ID        string      `json:"id"`
	Label     string      `json:"label,omitempty"`
	Instances int         `json:"instances"`
	Replicas  int         `json:"replicas"`
	Removed   bool        `json:"removed_by_hint,omitempty"`
	Stmts     []ClassStmt `json:"statements"`
}

// CycleInfo is a Δ cycle as reported.
type CycleInfo struct {
	Index     int        `json:"index"`
	Edges     []EdgeInfo `json:"edges"`
	RWColumns []string   `json:"rw_columns"`
	Coverage  float64    `json:"correlation_coverage"`
	BrokenBy  string     `json:"broken_by,omitempty"`
	// Round is 0 for the cycles of the application as it is, and r > 0
	// for a cycle that appeared only after the first r TargetColumns were
	// protected (another operation-level witness of a transaction cycle).
	Round int `json:"round"`
	// Observed lists (at most 5, an exact one first kept) anomalies of
	// recorded histories with this cycle's shape (see Observe);
	// ObservedCount counts them all.
	Observed      []Observation `json:"observed,omitempty"`
	ObservedCount int           `json:"observed_count,omitempty"`
}

// EdgeInfo is one dependency of a Δ cycle: From's statement and To's
// statement conflict on Column.
type EdgeInfo struct {
	From    string `json:"from"` // class name #replica
	To      string `json:"to"`
	Type    string `json:"type"`
	Column  string `json:"column"`
	FromOp  string `json:"from_op"`
	ToOp    string `json:"to_op"`
	FromSQL string `json:"from_sql"`
	ToSQL   string `json:"to_sql"`
	FromID  string `json:"from_class"`
	ToID    string `json:"to_class"`
}

// Target is a column to protect and the Δ cycles protecting it breaks.
type Target struct {
	Column string `json:"column"`
	// Breaks lists the reported cycles it breaks; BreaksCount counts all
	// (the report lists at most Options.MaxReport cycles).
	Breaks      []int  `json:"breaks"`
	BreaksCount int    `json:"breaks_count"`
	Fix         string `json:"fix"`
}

// Analyze runs IsoDiff on an application model: Δ cycle search, then
// greedy set cover: the column that the most remaining Δ cycles have an rw
// dependency on is protected (its reads become locking reads, SELECT ...
// FOR UPDATE), and the search runs again, until no Δ cycle remains or
// only cycles whose rw columns are all irreparable are left.
func Analyze(app *App, opts Options) *Report {
	start := time.Now()
	if opts.K <= 0 {
		opts.K = 10
	}
	if opts.L <= 0 {
		opts.L = 6
	}
	if opts.CycleBudget == 0 {
		opts.CycleBudget = 50 * time.Millisecond
	}
	rep := &Report{Level: opts.Level, K: opts.K, L: opts.L, Trace: app.Stats}
	protected := map[string]bool{}
	m0 := prepare(app, opts, protected)
	kept := map[string]bool{}
	for _, c := range m0.classes {
		kept[c.ID] = true
	}
	for _, c := range app.Classes {
		r := 0
		for _, k := range m0.classes {
			if k.ID == c.ID {
				r = k.Replicas
			}
		}
		rep.Classes = append(rep.Classes, ClassInfo{ID: c.ID, Label: c.Label, Instances: c.Instances, Replicas: r, Removed: !kept[c.ID], Stmts: c.Stmts})
	}
	if opts.MaxReport <= 0 {
		opts.MaxReport = 1000
	}
	irreparable := func(col string) bool {
		if opts.Hints == nil {
			return false
		}
		t, c, _ := strings.Cut(col, ".")
		return anyColMatch(opts.Hints.Irreparable, t, c)
	}
	// The current Δ cycles are the distinct representatives of the
	// dangerous paths (several paths may find one cycle): ref counts the
	// paths per cycle key, count the distinct cycles per rw column.
	m := m0
	var (
		dps   []dpath
		reps  []*Cycle
		ref   = map[string]int{}
		byKey = map[string]*Cycle{}
		count = map[string]int{}
		index = map[string]int{} // cycle key -> index in rep.Cycles
		all   []*Cycle           // the reported cycles, by index
	)
	add := func(c *Cycle) {
		if c == nil {
			return
		}
		ref[c.key]++
		if ref[c.key] == 1 {
			byKey[c.key] = c
			for _, col := range m.rwColumns(c) {
				count[col]++
			}
		}
	}
	remove := func(c *Cycle) {
		if c == nil {
			return
		}
		ref[c.key]--
		if ref[c.key] == 0 {
			delete(ref, c.key)
			delete(byKey, c.key)
			for _, col := range m.rwColumns(c) {
				count[col]--
			}
		}
	}
	// report lists the cycles not listed yet (in length and key order).
	report := func(cs []*Cycle) {
		cs = distinctCycles(cs)
		for _, c := range cs {
			if len(rep.Cycles) >= opts.MaxReport {
				break
			}
			if _, ok := index[c.key]; ok || ref[c.key] == 0 {
				continue
			}
			index[c.key] = len(rep.Cycles)
			ci := m.info(len(rep.Cycles), c)
			ci.Round = len(rep.Targets)
			rep.Cycles = append(rep.Cycles, ci)
			all = append(all, c)
		}
	}
	// round searches the dangerous paths of the current model: all of them
	// (full), or those whose cycle is no longer valid (incremental).
	round := func(full bool) {
		var st Stats
		var added []*Cycle
		dps, reps, st, added = m.research(dps, reps, full, remove, add)
		st.DeltaCycles = len(byKey)
		rep.Rounds = append(rep.Rounds, st)
		report(added)
	}
	round(true)
	rep.Stats = rep.Rounds[0]
	verified := opts.FullRounds
	for {
		if len(byKey) == 0 {
			if verified || len(rep.Targets) == 0 {
				break
			}
			// Incremental rounds leave paths that had no Δ cycle alone;
			// once none is left, one full search confirms that the
			// TargetColumns break every Δ cycle (a protection can make a
			// new witness feasible), and the cover goes on if not.
			verified = true
			round(true)
			if len(byKey) == 0 {
				break
			}
		}
		if opts.MaxRounds > 0 && len(rep.Rounds) > opts.MaxRounds {
			rep.Incomplete = true
			break
		}
		best, bn := "", 0
		for col, n := range count {
			if n > 0 && !irreparable(col) && !protected[col] && (n > bn || n == bn && col < best) {
				best, bn = col, n
			}
		}
		if best == "" {
			for k := range byKey {
				if i, ok := index[k]; ok {
					rep.Residual = append(rep.Residual, i)
				}
			}
			break
		}
		t := Target{Column: best, BreaksCount: bn}
		for i, c := range all {
			if ref[c.key] == 0 || !slices.Contains(m.rwColumns(c), best) {
				continue
			}
			t.Breaks = append(t.Breaks, i)
			if rep.Cycles[i].BrokenBy == "" {
				rep.Cycles[i].BrokenBy = best
			}
		}
		t.Fix = m0.fix(best, all, t.Breaks)
		rep.Targets = append(rep.Targets, t)
		protected[best] = true
		m = prepare(app, opts, protected)
		round(opts.FullRounds)
	}
	sort.Ints(rep.Residual)
	rep.Seconds = time.Since(start).Seconds()
	return rep
}

// research is one search round of the set cover on the current model.
// Protection only removes rw dependencies (a protected read conflicts like
// a write), so the dangerous paths are a subsequence of the previous
// round's (both are listed in the same order). With full, every path is
// searched; otherwise a path keeps its representative Δ cycle when every
// dependency of the cycle is unchanged, the paths whose cycle the
// protection broke are searched again (in parallel), and paths that had no
// Δ cycle are not (IsoDiff §5's iteration restricted to the paths the
// chosen column affects). remove and add are called for every
// representative that goes and comes; the cycles found are returned.
func (m *model) research(old []dpath, reps []*Cycle, full bool, remove, add func(*Cycle)) ([]dpath, []*Cycle, Stats, []*Cycle) {
	start := time.Now()
	st := m.baseStats()
	dps := m.dangerousPaths()
	st.DangerousPaths = len(dps)
	next := make([]*Cycle, len(dps))
	var redo []dpath
	var at []int
	j := 0
	for i, d := range dps {
		for j < len(old) && old[j] != d {
			remove(reps[j]) // a path that is no longer dangerous
			j++
		}
		var c *Cycle
		if j < len(old) {
			c = reps[j]
			j++
		}
		if !full && (c == nil || !m.broken(c)) {
			next[i] = c
			continue
		}
		remove(c)
		redo = append(redo, d)
		at = append(at, i)
	}
	for ; j < len(old); j++ {
		remove(reps[j])
	}
	st.Searched = len(redo)
	found := m.searchPaths(redo, &st)
	var added []*Cycle
	for k, c := range found {
		next[at[k]] = c
		add(c)
		if c != nil {
			added = append(added, c)
		}
	}
	st.SearchSeconds = time.Since(start).Seconds()
	return dps, next, st, added
}

// broken: some dependency of the cycle is not what it was (a protected
// read turned an rw dependency into a ww one, or removed it).
func (m *model) broken(c *Cycle) bool {
	n := len(c.Nodes)
	// Only a protected read changes a dependency.
	locked := false
	for i, e := range c.Edges {
		locked = locked || m.prot[c.Nodes[i].c][e.a] || m.prot[c.Nodes[(i+1)%n].c][e.b]
	}
	if !locked {
		return false
	}
	for i, e := range c.Edges {
		if m.conflict(int(c.Nodes[i].c), int(e.a), int(c.Nodes[(i+1)%n].c), int(e.b)) != int(e.typ) {
			return true
		}
	}
	return false
}

// rwColumns are the columns of a cycle's rw dependencies (cached on the
// cycle: the classes and their operations are the same in every round).
func (m *model) rwColumns(c *Cycle) []string {
	if c.cols != nil {
		return c.cols
	}
	c.cols = m.rwColumnsOf(c)
	return c.cols
}

func (m *model) rwColumnsOf(c *Cycle) []string {
	out := []string{}
	seen := map[string]bool{}
	for i, e := range c.Edges {
		if e.typ != 2 {
			continue
		}
		a := m.classes[c.Nodes[i].c].Ops[e.a]
		b := m.classes[c.Nodes[(i+1)%len(c.Nodes)].c].Ops[e.b]
		col := a.ColumnName()
		if a.Column == "*" {
			col = b.ColumnName()
		}
		if !seen[col] {
			seen[col] = true
			out = append(out, col)
		}
	}
	sort.Strings(out)
	return out
}

func (m *model) info(i int, c *Cycle) CycleInfo {
	ci := CycleInfo{Index: i, RWColumns: m.rwColumns(c), Coverage: c.Coverage}
	n := len(c.Nodes)
	for t, e := range c.Edges {
		A, B := m.classes[c.Nodes[t].c], m.classes[c.Nodes[(t+1)%n].c]
		oa, ob := A.Ops[e.a], B.Ops[e.b]
		col := oa.ColumnName()
		if oa.Column == "*" {
			col = ob.ColumnName()
		}
		ci.Edges = append(ci.Edges, EdgeInfo{
			From: fmt.Sprintf("%s#%d", A.Name(), c.Nodes[t].r+1), To: fmt.Sprintf("%s#%d", B.Name(), c.Nodes[(t+1)%n].r+1),
			FromID: A.ID, ToID: B.ID,
			Type: typName[e.typ], Column: col,
			FromOp: m.letter(c.Nodes[t].c, e.a) + "(" + oa.ColumnName() + ")", ToOp: m.letter(c.Nodes[(t+1)%n].c, e.b) + "(" + ob.ColumnName() + ")",
			FromSQL: A.Stmts[oa.Stmt].SQL, ToSQL: B.Stmts[ob.Stmt].SQL,
		})
	}
	return ci
}

// letter is w, l (a locking or protected read) or r.
func (m *model) letter(c int32, i int32) string {
	o := m.classes[c].Ops[i]
	if !o.Write && m.effLocked(int(c), int(i)) {
		return "l"
	}
	return o.letter()
}

// fix renders the concrete repair for protecting col: the reads of col in
// the broken cycles become SELECT ... FOR UPDATE; a read that does not pin
// its row (a predicate read) cannot be locked row by row, so it needs an
// application lock or a unique key; a read-then-write of the column in one
// class can also become a single atomic UPDATE.
func (m *model) fix(col string, cycles []*Cycle, breaks []int) string {
	type site struct{ class, sql string }
	var pinned, pred []site
	seen := map[string]bool{}
	rmw := map[string]bool{}
	for _, i := range breaks {
		c := cycles[i]
		for t, e := range c.Edges {
			if e.typ != 2 {
				continue
			}
			A := m.classes[c.Nodes[t].c]
			oa := A.Ops[e.a]
			if oa.ColumnName() != col && !(oa.Column == "*" && strings.HasPrefix(col, oa.Table+".")) {
				continue
			}
			k := A.ID + "/" + itoa(oa.Stmt)
			if seen[k] {
				continue
			}
			seen[k] = true
			s := site{A.Name(), A.Stmts[oa.Stmt].SQL}
			if A.Rows[oa.Row].Pinned && !A.Rows[oa.Row].Predicate {
				pinned = append(pinned, s)
			} else {
				pred = append(pred, s)
			}
			for _, o := range A.Ops {
				if o.Write && o.Row == oa.Row && o.ColumnName() == col && o.Stmt > oa.Stmt {
					rmw[A.Name()] = true
				}
			}
		}
	}
	var b strings.Builder
	if len(pinned) > 0 {
		b.WriteString("read " + col + " with SELECT ... FOR UPDATE in: ")
		for i, s := range pinned {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %s", s.class, s.sql)
		}
	}
	if len(pred) > 0 {
		if b.Len() > 0 {
			b.WriteString(". ")
		}
		b.WriteString("these reads select rows by a condition, so a row lock does not cover rows inserted later: take an application lock (pg_advisory_xact_lock / GET_LOCK) on " + col + " around them, or add a unique key that makes the conflicting insert fail: ")
		for i, s := range pred {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %s", s.class, s.sql)
		}
	}
	if len(rmw) > 0 {
		var cl []string
		for c := range rmw {
			cl = append(cl, c)
		}
		sort.Strings(cl)
		b.WriteString(". Alternatively, in " + strings.Join(cl, ", ") + " make the read-modify-write one atomic statement (UPDATE ... SET " + col[strings.IndexByte(col, '.')+1:] + " = " + col[strings.IndexByte(col, '.')+1:] + " + ... RETURNING / WHERE)")
	}
	return b.String()
}
