package isodiff

import (
	"slices"
	"time"
)

type feasResult uint8

const (
	feasOK     feasResult = iota
	feasTiming            // the operation graph of the cycle is cyclic (timing check, §4.2)
	feasCorr              // every ordering of the conflicts implied by same-row accesses is cyclic (correlation check, §4.3)
)

// feasChecker decides whether an operation-level cycle can happen.
//
// Each instance t of the cycle contributes nodes begin(t), its statements
// in program order (the operations of one statement happen at one point:
// a statement reads one snapshot), and commit(t). A dependency from instance i (op a) to
// instance j (op b) constrains time:
//
//	read committed:     rw: a before commit(j)   wr, ww: commit(i) before b
//	snapshot isolation: rw: begin(i) before commit(j)   wr, ww: commit(i) before begin(j)
//
// (RC reads see what is committed when the statement runs, and a second
// writer of a row waits for the first to commit; SI reads the snapshot at
// begin, and first-updater-wins forbids concurrent writers of a row.) The
// timing check rejects the cycle when these constraints and program order
// form a cycle. The correlation check then unifies the rows of each
// dependency (both accesses touch the same row), derives every other
// conflict between the instances that then touch one row, and searches for
// an orientation of them (per read/write pair, and one per pair of
// instances and row for writes, whose order is the commit order) that
// keeps the constraints acyclic. Two instances of a class never share a
// unique-ID row. The search is depth-first with pruning, bounded by a time
// budget; the explored fraction of the 2^n orientations is the coverage.
type feasChecker struct {
	m     *model
	adj   [][]int32
	seen  []uint32
	stamp uint32
	stack [][2]int32
	base  []int
	rowB  []int
	par   []int
}

func (f *feasChecker) addEdge(x, y int32) bool {
	if f.reach(y, x) {
		return false
	}
	f.adj[x] = append(f.adj[x], y)
	f.stack = append(f.stack, [2]int32{x, y})
	return true
}

func (f *feasChecker) undoTo(n int) {
	for len(f.stack) > n {
		e := f.stack[len(f.stack)-1]
		f.stack = f.stack[:len(f.stack)-1]
		l := f.adj[e[0]]
		f.adj[e[0]] = l[:len(l)-1]
	}
}

func (f *feasChecker) reach(from, to int32) bool {
	if from == to {
		return true
	}
	f.stamp++
	st := []int32{from}
	f.seen[from] = f.stamp
	for len(st) > 0 {
		x := st[len(st)-1]
		st = st[:len(st)-1]
		for _, y := range f.adj[x] {
			if y == to {
				return true
			}
			if f.seen[y] != f.stamp {
				f.seen[y] = f.stamp
				st = append(st, y)
			}
		}
	}
	return false
}

func (f *feasChecker) find(x int) int {
	for f.par[x] != x {
		f.par[x] = f.par[f.par[x]]
		x = f.par[x]
	}
	return x
}

type corrVar struct {
	// edges to add for direction 0 and 1
	e [2][][2]int32
}

// constraint returns the time edge for a dependency from instance i op a
// to instance j op b of type typ.
func (f *feasChecker) constraint(path []inst, i, a, j, b int, typ uint8) [2]int32 {
	si := f.m.opts.Level == SnapshotIsolation
	begin := func(t int) int32 { return int32(f.base[t]) }
	op := func(t, o int) int32 { return int32(f.base[t] + 1 + f.m.classes[path[t].c].Ops[o].Stmt) }
	commit := func(t int) int32 { return int32(f.base[t] + 1 + len(f.m.classes[path[t].c].Stmts)) }
	if typ == 2 {
		if si {
			return [2]int32{begin(i), commit(j)}
		}
		return [2]int32{op(i, a), commit(j)}
	}
	if si {
		return [2]int32{commit(i), begin(j)}
	}
	return [2]int32{commit(i), op(j, b)}
}

func (f *feasChecker) check(path []inst, pick []opPair, budget time.Duration) (feasResult, float64) {
	m := f.m
	n := len(path)
	f.base = f.base[:0]
	f.rowB = f.rowB[:0]
	total, rows := 0, 0
	for _, p := range path {
		c := m.classes[p.c]
		f.base = append(f.base, total)
		f.rowB = append(f.rowB, rows)
		total += len(c.Stmts) + 2
		rows += len(c.Rows)
	}
	if cap(f.adj) < total {
		f.adj = make([][]int32, total)
		f.seen = make([]uint32, total)
	}
	f.adj = f.adj[:total]
	f.seen = f.seen[:total]
	for i := range f.adj {
		f.adj[i] = f.adj[i][:0]
	}
	f.stack = f.stack[:0]
	for t := 0; t < n; t++ {
		k := len(m.classes[path[t].c].Stmts)
		for x := 0; x <= k; x++ {
			f.adj[f.base[t]+x] = append(f.adj[f.base[t]+x], int32(f.base[t]+x+1))
		}
	}
	for t := 0; t < n; t++ {
		u := (t + 1) % n
		e := f.constraint(path, t, int(pick[t].a), u, int(pick[t].b), pick[t].typ)
		if !f.addEdge(e[0], e[1]) {
			return feasTiming, 1
		}
	}
	f.stack = f.stack[:0]
	// Existence: a reader that later updates or deletes the row it read
	// (same row variable) saw the row, so it cannot have read before the
	// row's creator inserted it.
	for t := 0; t < n; t++ {
		u := (t + 1) % n
		if pick[t].typ == 2 && m.classes[path[u].c].Ops[pick[t].b].Insert && m.modifiesLater(int(path[t].c), int(pick[t].a)) {
			return feasCorr, 1
		}
	}
	// Correlation: unify the rows of each dependency.
	if cap(f.par) < rows {
		f.par = make([]int, rows)
	}
	f.par = f.par[:rows]
	for i := range f.par {
		f.par[i] = i
	}
	for t := 0; t < n; t++ {
		u := (t + 1) % n
		ca, cb := m.classes[path[t].c], m.classes[path[u].c]
		ra, rb := ca.Ops[pick[t].a].Row, cb.Ops[pick[t].b].Row
		if ca.Rows[ra].Pinned && cb.Rows[rb].Pinned {
			x, y := f.find(f.rowB[t]+ra), f.find(f.rowB[u]+rb)
			f.par[x] = y
		}
	}
	// Unique-ID rows of two instances of one class never coincide.
	for t := 0; t < n; t++ {
		for s := t + 1; s < n; s++ {
			if path[t].c != path[s].c {
				continue
			}
			c := m.classes[path[t].c]
			for r, rv := range c.Rows {
				if rv.Unique && f.find(f.rowB[t]+r) == f.find(f.rowB[s]+r) {
					return feasCorr, 1
				}
			}
		}
	}
	// Learned IDs: a unique-ID row exists only once its creator commits,
	// and another transaction can name it by its ID columns only after
	// reading them from the database: the last statement before the
	// access that returns rows (or, with none, the transaction's start)
	// follows the creator's commit. (§4.3's unique IDs: values an instance
	// generates — from a counter, a sequence — are not known to the others
	// before it commits.)
	for j := 0; j < n; j++ {
		cj := m.classes[path[j].c]
		for rb, rvb := range cj.Rows {
			if !rvb.Unique || len(rvb.IDCols) == 0 {
				continue
			}
			root := f.find(f.rowB[j] + rb)
			for i := 0; i < n; i++ {
				if i == j {
					continue
				}
				ci := m.classes[path[i].c]
				for ra, rva := range ci.Rows {
					if !rva.Pinned || f.find(f.rowB[i]+ra) != root || !coversAll(rva.Cols, rvb.IDCols) {
						continue
					}
					first, creates := -1, false
					for _, o := range ci.Ops {
						if o.Row == ra && (first < 0 || o.Stmt < first) {
							first = o.Stmt
						}
						creates = creates || o.Row == ra && o.Insert
					}
					if first < 0 || creates {
						continue // an INSERT names the row without learning it
					}
					commit := int32(f.base[j] + 1 + len(cj.Stmts))
					learn := int32(f.base[i])
					if m.opts.Level != SnapshotIsolation {
						if k := m.lastReturning(int(path[i].c), first); k >= 0 {
							learn = int32(f.base[i] + 1 + k)
						}
					}
					if !f.addEdge(commit, learn) {
						return feasCorr, 1
					}
				}
			}
		}
	}
	// Implied conflicts.
	isPick := func(i, a, j, b int) bool {
		for t := 0; t < n; t++ {
			u := (t + 1) % n
			if t == i && u == j && int(pick[t].a) == a && int(pick[t].b) == b || t == j && u == i && int(pick[t].a) == b && int(pick[t].b) == a {
				return true
			}
		}
		return false
	}
	var vars []corrVar
	groups := map[[3]int]int{} // (i, j, row set) -> var index, for writes
	fixed := map[[3]int]int{}  // write groups whose order a cycle edge fixes: 0 = i first
	for t := 0; t < n; t++ {
		u := (t + 1) % n
		if pick[t].typ != 0 {
			continue
		}
		ra := m.classes[path[t].c].Ops[pick[t].a].Row
		set := f.find(f.rowB[t] + ra)
		if t < u {
			fixed[[3]int{t, u, set}] = 0
		} else {
			fixed[[3]int{u, t, set}] = 1
		}
	}
	for i := 0; i < n; i++ {
		ci := int(path[i].c)
		ki := m.classes[ci]
		for j := i + 1; j < n; j++ {
			cj := int(path[j].c)
			kj := m.classes[cj]
			for a, oa := range ki.Ops {
				if !ki.Rows[oa.Row].Pinned {
					continue
				}
				sa := f.find(f.rowB[i] + oa.Row)
				for _, b32 := range m.byTab[cj][m.tab[ci][a]] {
					b := int(b32)
					ob := kj.Ops[b]
					if !kj.Rows[ob.Row].Pinned || f.find(f.rowB[j]+ob.Row) != sa {
						continue
					}
					typ := m.conflict(ci, a, cj, b)
					if typ < 0 && (oa.Write || m.effLocked(ci, a)) && (ob.Write || m.effLocked(cj, b)) {
						typ = 0 // row locks: two writers of one row are ordered whatever columns they set
					}
					if typ < 0 || !m.pairAllowed(ci, a, cj, b) || isPick(i, a, j, b) {
						continue
					}
					if typ == 0 {
						key := [3]int{i, j, sa}
						if d, ok := fixed[key]; ok {
							e := f.constraint(path, i, a, j, b, 0)
							if d == 1 {
								e = f.constraint(path, j, b, i, a, 0)
							}
							if !f.addEdge(e[0], e[1]) {
								return feasCorr, 1
							}
							continue
						}
						vi, ok := groups[key]
						if !ok {
							vi = len(vars)
							vars = append(vars, corrVar{})
							groups[key] = vi
						}
						vars[vi].e[0] = append(vars[vi].e[0], f.constraint(path, i, a, j, b, 0))
						vars[vi].e[1] = append(vars[vi].e[1], f.constraint(path, j, b, i, a, 0))
						continue
					}
					// typ 1: a writes, b reads (i -> j is wr); typ 2: a reads, b writes.
					var v corrVar
					if typ == 2 && ob.Insert && m.modifiesLater(ci, a) || typ == 1 && oa.Insert && m.modifiesLater(cj, b) {
						// Existence (above): only "the reader saw the row" remains.
						e := f.constraint(path, i, a, j, b, 1)
						if typ == 2 {
							e = f.constraint(path, j, b, i, a, 1)
						}
						if !f.addEdge(e[0], e[1]) {
							return feasCorr, 1
						}
						continue
					}
					if typ == 2 {
						v.e[0] = [][2]int32{f.constraint(path, i, a, j, b, 2)} // i's read before j's write: rw
						v.e[1] = [][2]int32{f.constraint(path, j, b, i, a, 1)} // j's write seen by i: wr
					} else {
						v.e[0] = [][2]int32{f.constraint(path, i, a, j, b, 1)} // wr i -> j
						v.e[1] = [][2]int32{f.constraint(path, j, b, i, a, 2)} // rw j -> i
					}
					vars = append(vars, v)
				}
			}
		}
	}
	if len(vars) == 0 {
		return feasOK, 1
	}
	deadline := time.Time{}
	if budget > 0 {
		deadline = time.Now().Add(budget)
	}
	nodes := 0
	explored := 0.0
	timedOut := false
	var rec func(k int) bool
	rec = func(k int) bool {
		if k == len(vars) {
			return true
		}
		nodes++
		if !deadline.IsZero() && nodes&255 == 0 && time.Now().After(deadline) {
			timedOut = true
			return false
		}
		for d := 0; d < 2; d++ {
			mark := len(f.stack)
			ok := true
			for _, e := range vars[k].e[d] {
				if !f.addEdge(e[0], e[1]) {
					ok = false
					break
				}
			}
			if ok && rec(k+1) {
				return true
			}
			f.undoTo(mark)
			if timedOut {
				return false
			}
			if !ok {
				explored += pow2(len(vars) - k - 1)
			}
		}
		return false
	}
	if rec(0) {
		return feasOK, 1
	}
	if timedOut {
		return feasOK, explored / pow2(len(vars))
	}
	return feasCorr, 1
}

// modifiesLater: op a of class c is a read of a pinned row that the class
// later updates or deletes.
func (m *model) modifiesLater(c, a int) bool {
	k := m.classes[c]
	o := k.Ops[a]
	if o.Write || !k.Rows[o.Row].Pinned {
		return false
	}
	for _, x := range k.Ops[a+1:] {
		if x.Row == o.Row && x.Write && !x.Insert {
			return true
		}
	}
	return false
}

func pow2(k int) float64 {
	x := 1.0
	for ; k > 0; k-- {
		x *= 2
	}
	return x
}

func coversAll(have, need []string) bool {
	for _, c := range need {
		if !slices.Contains(have, c) {
			return false
		}
	}
	return true
}

// lastReturning is the last statement of class c before statement s that
// returns rows (a statement that reads and writes nothing, or one with a
// RETURNING clause), -1 if none.
func (m *model) lastReturning(c, s int) int {
	k := m.classes[c]
	for st := s - 1; st >= 0; st-- {
		if k.returning(st) {
			return st
		}
	}
	return -1
}
