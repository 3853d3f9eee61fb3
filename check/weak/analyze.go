package weak

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/regread"
	txgraph "github.com/txray/txray/graph"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// ccTableLimit bounds the key-major table of saturateCCTable (entries;
// 128 MiB); tests lower it to exercise the per-pair sweep.
var ccTableLimit int64 = 1 << 25

// maxVCEntries bounds the vector-clock table (n·k int32 entries, 1 GiB);
// beyond it the verdict is Unknown rather than an out-of-memory crash.
const maxVCEntries = 1 << 28

// coEdge is a commit-order edge from -> to forced by the level's axiom
// because reader reads key from `to` (op readOp) and `from` writes key.
type coEdge struct {
	from, to, reader, key, readOp int32
	// via is the op of reader that reads from `from` (RC and RA wr
	// premises), or -1.
	via int32
	// rank is the weakest level whose axiom forces the edge.
	rank level
	// version: a list read showed from's element right before to's (the
	// order of a list is the commit order of its appends).
	version bool
	// sameKey: via reads the same key (the two reads of a non-repeatable
	// read).
	sameKey bool
}

// Result is the outcome of Analyze.
type Result struct {
	Level     string
	Anomalies []check.Anomaly
	// Counts is the number of anomalies found per type (all of them;
	// Anomalies lists at most the cap per type given to fill).
	Counts map[string]int
	// Unknown, if set, is why no verdict could be reached.
	Unknown string
	Stats   map[string]any
}

type analysis struct {
	ctx context.Context
	h   *history.History
	lv  level
	rd  *regread.Analysis
	n   int
	cap int

	incl      []bool
	sess, pos []int32
	sessions  [][]int32
	sessName  []string
	k         int

	rdStart           []int32
	rdOp, rdKey, rdW  []int32
	lists             *listIndex // nil for register-only histories
	wkStart           []int32
	wk                []int32
	predStart         []int32
	pred, predLab     []int32
	vc                []int32
	edges             []coEdge
	res               *Result
	edgesConsidered   int64
	contradictionsHB  int
	contradictionInit int
}

// Analyze decides h at level lv (see the package documentation).
func Analyze(ctx context.Context, h *history.History, lv level, opts check.Options) *Result {
	a := &analysis{ctx: ctx, h: h, lv: lv, n: len(h.Txns), cap: opts.MaxPerType(),
		res: &Result{Level: lv.String(), Counts: map[string]int{}, Stats: map[string]any{}}}
	a.rd = regread.Analyze(h, regread.Options{InitialValue: opts.Param("initial-value", "")})
	for _, an := range a.rd.Anomalies {
		a.res.Counts[an.Type]++
		if a.res.Counts[an.Type] <= a.cap {
			a.res.Anomalies = append(a.res.Anomalies, an)
		}
	}
	progress(opts, "reads", 1, 5)
	a.lists = newListIndex(h)
	a.include()
	if a.k > 0 && int64(a.n)*int64(a.k) > maxVCEntries {
		a.res.Unknown = fmt.Sprintf("%d transactions × %d sessions exceed the vector-clock budget (%d entries); transactions without a session each count as one", a.n, a.k, maxVCEntries)
		return a.res
	}
	a.index()
	progress(opts, "graph", 2, 5)
	order, cyclic := a.topo()
	if cyclic {
		a.cyclicCO()
		a.stats()
		return a.res
	}
	if ctx.Err() != nil {
		return a.res
	}
	a.clocks(order)
	if a.lists != nil {
		a.versionEdges()
	}
	progress(opts, "saturate", 3, 5)
	switch lv {
	case levelRC:
		a.saturateRC()
	case levelRA:
		a.saturateRA()
	default:
		a.saturateCC()
	}
	if ctx.Err() != nil {
		return a.res
	}
	progress(opts, "cycles", 4, 5)
	a.cycles()
	a.stats()
	progress(opts, "done", 5, 5)
	return a.res
}

func progress(opts check.Options, phase string, done, total int64) {
	if opts.Progress != nil {
		opts.Progress(phase, done, total)
	}
}

func (a *analysis) stats() {
	s := a.res.Stats
	s["sessions"] = a.k
	s["session_order"] = a.h.Evidence.Sessions
	inc := 0
	for _, b := range a.incl {
		if b {
			inc++
		}
	}
	s["transactions_checked"] = inc
	s["co_edges_kept"] = len(a.edges)
	s["co_edges_considered"] = a.edgesConsidered
	s["reads_checked"] = a.rd.Reads
	s["initial_transaction"] = a.rd.InitTxn
}

// include picks the transactions of the history: committed ones, and
// unknown-status ones some included transaction reads from (transitively).
// It assigns sessions and positions.
func (a *analysis) include() {
	h := a.h
	a.incl = make([]bool, a.n)
	var work []int32
	for i := range h.Txns {
		if h.Txns[i].Status == history.Committed && int32(i) != a.rd.InitTxn {
			a.incl[i] = true
			work = append(work, int32(i))
		}
	}
	for len(work) > 0 {
		t := work[len(work)-1]
		work = work[:len(work)-1]
		for j := range h.Txns[t].Ops {
			if w := a.rd.WriterOf(t, j); w >= 0 && !a.incl[w] && h.Txns[w].Status == history.Unknown {
				a.incl[w] = true
				work = append(work, w)
			}
			if o := &h.Txns[t].Ops[j]; a.lists != nil && o.Kind == history.Read && o.IsList {
				for _, v := range h.Txns[t].ListOf(o) {
					if w := a.lists.writer(o.Key, v); w >= 0 && !a.incl[w] && h.Txns[w].Status == history.Unknown {
						a.incl[w] = true
						work = append(work, w)
					}
				}
			}
		}
	}
	a.sess = make([]int32, a.n)
	a.pos = make([]int32, a.n)
	bySess := map[int32]int32{}
	for i := range h.Txns {
		a.sess[i] = -1
		if !a.incl[i] {
			continue
		}
		s := h.Txns[i].Session
		if !h.Evidence.Sessions {
			s = -1 // session ids not meaningful: no session order
		}
		var idx int32
		if s < 0 {
			idx = int32(len(a.sessions))
			a.sessions = append(a.sessions, nil)
			a.sessName = append(a.sessName, "(none: "+h.TxnName(int32(i))+")")
		} else if x, ok := bySess[s]; ok {
			idx = x
		} else {
			idx = int32(len(a.sessions))
			bySess[s] = idx
			a.sessions = append(a.sessions, nil)
			a.sessName = append(a.sessName, h.Sessions.String(s))
		}
		a.sess[i] = idx
		a.sessions[idx] = append(a.sessions[idx], int32(i))
	}
	for _, l := range a.sessions {
		sort.SliceStable(l, func(x, y int) bool { return h.Txns[l[x]].Seq < h.Txns[l[y]].Seq })
		for p, t := range l {
			a.pos[t] = int32(p + 1)
		}
	}
	a.k = len(a.sessions)
}

// index builds the external reads, the written keys and the so ∪ wr
// predecessor lists of every included transaction.
func (a *analysis) index() {
	h := a.h
	a.rdStart = make([]int32, a.n+1)
	a.wkStart = make([]int32, a.n+1)
	a.predStart = make([]int32, a.n+1)
	nk := h.Keys.Len()
	stamp := make([]int32, nk)
	for i := range stamp {
		stamp[i] = -1
	}
	nops := 0
	for i := range h.Txns {
		nops += len(h.Txns[i].Ops)
	}
	a.rdOp = make([]int32, 0, nops/2+16)
	a.rdKey = make([]int32, 0, nops/2+16)
	a.rdW = make([]int32, 0, nops/2+16)
	a.wk = make([]int32, 0, nops/2+16)
	a.pred = make([]int32, 0, a.n+nops/2+16)
	a.predLab = make([]int32, 0, a.n+nops/2+16)
	seenW := make([]int32, a.n) // seenW[w] == t+1: t already has a wr edge from w
	for ti := range h.Txns {
		a.rdStart[ti] = int32(len(a.rdOp))
		a.wkStart[ti] = int32(len(a.wk))
		a.predStart[ti] = int32(len(a.pred))
		if !a.incl[ti] {
			continue
		}
		t := &h.Txns[ti]
		if p := a.pos[ti]; p > 1 {
			a.pred = append(a.pred, a.sessions[a.sess[ti]][p-2])
			a.predLab = append(a.predLab, -1)
		}
		for j := range t.Ops {
			o := &t.Ops[j]
			switch o.Kind {
			case history.Write, history.Append:
				if stamp[o.Key] != int32(ti) {
					stamp[o.Key] = int32(ti)
					a.wk = append(a.wk, o.Key)
				}
			case history.Read:
				if o.IsList {
					if a.lists != nil {
						a.indexList(int32(ti), j, o, seenW)
					}
					continue
				}
				w := a.rd.WriterOf(int32(ti), j)
				if w == regread.NoWriter || w == int32(ti) || (w >= 0 && !a.incl[w]) {
					continue
				}
				a.rdOp = append(a.rdOp, int32(j))
				a.rdKey = append(a.rdKey, o.Key)
				a.rdW = append(a.rdW, w)
				if w >= 0 && seenW[w] != int32(ti)+1 {
					seenW[w] = int32(ti) + 1
					a.pred = append(a.pred, w)
					a.predLab = append(a.predLab, int32(j))
				}
			}
		}
	}
	a.rdStart[a.n] = int32(len(a.rdOp))
	if a.lists != nil {
		a.lists.list = append(a.lists.list, make([]bool, len(a.rdOp)-len(a.lists.list))...)
	}
	a.wkStart[a.n] = int32(len(a.wk))
	a.predStart[a.n] = int32(len(a.pred))
}

// succ builds the successor lists of so ∪ wr plus extra edges (labels: -1
// so, -2-op wr read by op of the successor... see label helpers).
type graph struct {
	start []int32
	to    []int32
	lab   []int32 // -1: so; >= 0 wr, the reading op index; <= -2: co edge index -2-lab
}

func (a *analysis) graph(withCo bool) *graph { return a.graphUpTo(withCo, levelCC) }

// graphUpTo is graph with only the co edges of rank <= maxRank.
func (a *analysis) graphUpTo(withCo bool, maxRank level) *graph {
	g := &graph{start: make([]int32, a.n+1)}
	deg := g.start
	for t := 0; t < a.n; t++ {
		for i := a.predStart[t]; i < a.predStart[t+1]; i++ {
			deg[a.pred[i]+1]++
		}
	}
	if withCo {
		for _, e := range a.edges {
			if e.rank <= maxRank {
				deg[e.from+1]++
			}
		}
	}
	for i := 1; i <= a.n; i++ {
		deg[i] += deg[i-1]
	}
	m := g.start[a.n]
	g.to = make([]int32, m)
	g.lab = make([]int32, m)
	fill := make([]int32, a.n)
	copy(fill, g.start[:a.n])
	for t := 0; t < a.n; t++ {
		for i := a.predStart[t]; i < a.predStart[t+1]; i++ {
			p := a.pred[i]
			g.to[fill[p]] = int32(t)
			g.lab[fill[p]] = a.predLab[i]
			fill[p]++
		}
	}
	if withCo {
		for i, e := range a.edges {
			if e.rank > maxRank {
				continue
			}
			g.to[fill[e.from]] = e.to
			g.lab[fill[e.from]] = -2 - int32(i)
			fill[e.from]++
		}
	}
	return g
}

// topo returns a topological order of so ∪ wr over included transactions,
// or cyclic = true.
func (a *analysis) topo() (order []int32, cyclic bool) {
	g := a.graph(false)
	indeg := make([]int32, a.n)
	total := 0
	for t := 0; t < a.n; t++ {
		if a.incl[t] {
			total++
			indeg[t] = a.predStart[t+1] - a.predStart[t]
		}
	}
	order = make([]int32, 0, total)
	for t := 0; t < a.n; t++ {
		if a.incl[t] && indeg[t] == 0 {
			order = append(order, int32(t))
		}
	}
	for i := 0; i < len(order); i++ {
		u := order[i]
		for j := g.start[u]; j < g.start[u+1]; j++ {
			v := g.to[j]
			indeg[v]--
			if indeg[v] == 0 {
				order = append(order, v)
			}
		}
	}
	return order, len(order) != total
}

// clocks computes vc[t*k+s]: the position of the last transaction of session
// s that precedes or is t in (so ∪ wr)*.
func (a *analysis) clocks(order []int32) {
	k := a.k
	a.vc = make([]int32, a.n*k)
	for _, t := range order {
		row := a.vc[int(t)*k : int(t)*k+k]
		for i := a.predStart[t]; i < a.predStart[t+1]; i++ {
			p := a.pred[i]
			prow := a.vc[int(p)*k : int(p)*k+k]
			for s, v := range prow {
				if v > row[s] {
					row[s] = v
				}
			}
		}
		row[a.sess[t]] = a.pos[t]
	}
}

// hbEq reports x (so ∪ wr)* y.
func (a *analysis) hbEq(x, y int32) bool {
	return a.vc[int(y)*a.k+int(a.sess[x])] >= a.pos[x]
}

// consider handles the edge t1 -> t2 forced by read r (index into rd*) of
// t3: dropped if implied by causal order, reported if contradicted by it or
// if t2 is the initial state, kept otherwise.
func (a *analysis) consider(t1, t3 int32, r int32, via int32, rank level, sameKey bool) {
	t2 := a.rdW[r]
	if t1 == t2 {
		return
	}
	if a.lists != nil && a.lists.list[r] {
		if !a.inList(t1, r) {
			a.missingAppend(coEdge{from: t1, to: t2, reader: t3, key: a.rdKey[r], readOp: a.rdOp[r], via: via, rank: rank, sameKey: sameKey})
		}
		return
	}
	a.edgesConsidered++
	e := coEdge{from: t1, to: t2, reader: t3, key: a.rdKey[r], readOp: a.rdOp[r], via: via, rank: rank, sameKey: sameKey}
	switch {
	case t2 == regread.Initial:
		a.contradictionInit++
		a.report(e, nil, true)
	case a.hbEq(t1, t2):
	case a.hbEq(t2, t1):
		a.contradictionsHB++
		a.report(e, nil, false)
	default:
		if n := len(a.edges); n > 0 {
			if l := a.edges[n-1]; l.from == t1 && l.to == t2 {
				return
			}
		}
		a.edges = append(a.edges, e)
	}
}

// refine sets the weakest level forcing e (and the premise read) for edges
// found by the RA and CC generators.
func (a *analysis) refine(t1, t3, r int32) (via int32, rank level, sameKey bool) {
	rank, via = levelCC, -1
	if a.sess[t1] == a.sess[t3] && a.pos[t1] < a.pos[t3] {
		rank = levelRA
	}
	for i := a.rdStart[t3]; i < a.rdStart[t3+1]; i++ {
		if a.rdW[i] != t1 && (a.lists == nil || !a.lists.list[i] || !a.observed(t3, i, t1)) {
			continue
		}
		same := a.rdKey[i] == a.rdKey[r]
		if a.rdOp[i] < a.rdOp[r] {
			return a.rdOp[i], levelRC, same
		}
		if rank > levelRA || via < 0 {
			rank, via, sameKey = levelRA, a.rdOp[i], same
		}
	}
	return via, rank, sameKey
}

// saturateRC: for each read of t3, every transaction an earlier read of t3
// read from and that writes the key (Biswas & Enea, Read Committed).
func (a *analysis) saturateRC() {
	nk := a.h.Keys.Len()
	head := make([]int32, nk) // per key: list of sources (pool indices), valid when stamp matches
	stamp := make([]int32, nk)
	for i := range stamp {
		stamp[i] = -1
	}
	seen := make([]int32, a.n)
	for i := range seen {
		seen[i] = -1
	}
	type node struct{ src, via, next int32 }
	var pool []node
	for t3 := int32(0); int(t3) < a.n; t3++ {
		if !a.incl[t3] || t3&0xfff == 0 && a.ctx.Err() != nil {
			continue
		}
		pool = pool[:0]
		for r := a.rdStart[t3]; r < a.rdStart[t3+1]; r++ {
			x := a.rdKey[r]
			if stamp[x] == t3 {
				for p := head[x]; p >= 0; p = pool[p].next {
					n := pool[p]
					a.consider(n.src, t3, r, n.via, levelRC, a.rdKey[a.readIndex(t3, n.via)] == x)
				}
			}
			a.eachSource(t3, r, func(t2 int32) {
				if seen[t2] == t3 {
					return
				}
				seen[t2] = t3
				for i := a.wkStart[t2]; i < a.wkStart[t2+1]; i++ {
					y := a.wk[i]
					if stamp[y] != t3 {
						stamp[y] = t3
						head[y] = -1
					}
					pool = append(pool, node{t2, a.rdOp[r], head[y]})
					head[y] = int32(len(pool) - 1)
				}
			})
		}
	}
}

// eachSource calls f with the transaction read r observed (its writer; for
// a list read every element's writer other than the reader).
func (a *analysis) eachSource(t3, r int32, f func(int32)) {
	if a.lists == nil || !a.lists.list[r] {
		if t2 := a.rdW[r]; t2 >= 0 {
			f(t2)
		}
		return
	}
	o := &a.h.Txns[t3].Ops[a.rdOp[r]]
	for _, v := range a.h.Txns[t3].ListOf(o) {
		if w := a.lists.writer(o.Key, v); w >= 0 && w != t3 {
			f(w)
		}
	}
}

// readIndex finds the rd* index of op `op` of t3.
func (a *analysis) readIndex(t3, op int32) int32 {
	for i := a.rdStart[t3]; i < a.rdStart[t3+1]; i++ {
		if a.rdOp[i] == op {
			return i
		}
	}
	return a.rdStart[t3]
}

// saturateRA: for each read of t3, every transaction t3 reads from that
// writes the key, and the latest session predecessor writing it (Biswas &
// Enea, Read Atomic).
func (a *analysis) saturateRA() {
	nk := a.h.Keys.Len()
	head := make([]int32, nk)
	stamp := make([]int32, nk)
	lastSo := make([]int32, nk)
	soCnt := make([]int32, nk) // appenders/writers of the key earlier in the session
	soStamp := make([]int32, nk)
	for i := range stamp {
		stamp[i], soStamp[i] = -1, -1
	}
	seen := make([]int32, a.n)
	for i := range seen {
		seen[i] = -1
	}
	type node struct{ src, next int32 }
	var pool []node
	for s, l := range a.sessions {
		for _, t3 := range l {
			if t3&0xfff == 0 && a.ctx.Err() != nil {
				return
			}
			pool = pool[:0]
			for r := a.rdStart[t3]; r < a.rdStart[t3+1]; r++ {
				a.eachSource(t3, r, func(t2 int32) {
					if seen[t2] == t3 {
						return
					}
					seen[t2] = t3
					for i := a.wkStart[t2]; i < a.wkStart[t2+1]; i++ {
						y := a.wk[i]
						if stamp[y] != t3 {
							stamp[y] = t3
							head[y] = -1
						}
						pool = append(pool, node{t2, head[y]})
						head[y] = int32(len(pool) - 1)
					}
				})
			}
			for r := a.rdStart[t3]; r < a.rdStart[t3+1]; r++ {
				x := a.rdKey[r]
				done := int32(-1)
				if stamp[x] == t3 {
					for p := head[x]; p >= 0; p = pool[p].next {
						t1 := pool[p].src
						if t1 == a.rdW[r] {
							continue
						}
						via, rank, same := a.refine(t1, t3, r)
						a.consider(t1, t3, r, via, rank, same)
						if a.sess[t1] == int32(s) {
							done = t1
						}
					}
				}
				if a.lists != nil && a.lists.list[r] {
					if soStamp[x] == int32(s) && soCnt[x] > a.soInList(t3, r) {
						a.missingSo(t3, r)
					}
					continue
				}
				if soStamp[x] == int32(s) && lastSo[x] != done && lastSo[x] != a.rdW[r] {
					t1 := lastSo[x]
					via, rank, same := a.refine(t1, t3, r)
					a.consider(t1, t3, r, via, rank, same)
				}
			}
			for i := a.wkStart[t3]; i < a.wkStart[t3+1]; i++ {
				x := a.wk[i]
				if soStamp[x] != int32(s) {
					soCnt[x] = 0
				}
				soCnt[x]++
				lastSo[x] = t3
				soStamp[x] = int32(s)
			}
		}
	}
}

// saturateCC: for each read of x by t3 and each session s, the latest
// transaction of s that writes x and precedes t3 in (so ∪ wr)+ (Biswas &
// Enea, Causal). Along a reader session the vector clocks only grow, so per
// reader session one sweep of every writer session finds them all:
// O(k·(n+m)) time. With few enough keys the latest writers are kept in a
// key-major table (position per key and session), so one read compares a
// contiguous row against its writer's vector clock; otherwise one sweep per
// (reader, writer) session pair uses per-key scratch.
func (a *analysis) saturateCC() {
	nk := a.h.Keys.Len()
	if int64(nk)*int64(a.k) <= ccTableLimit {
		a.saturateCCTable()
		return
	}
	last := make([]int32, nk)
	gen := make([]int32, nk)
	for i := range gen {
		gen[i] = -1
	}
	g := int32(0)
	k := a.k
	var cnt, acc []int32 // lists: appenders of a key in the causal past, per list read
	if a.lists != nil {
		cnt = make([]int32, nk)
		acc = make([]int32, len(a.rdOp))
		defer a.listCausalCheck(acc)
	}
	for r, rl := range a.sessions {
		if a.ctx.Err() != nil {
			return
		}
		for s, sl := range a.sessions {
			ptr := int32(0)
			for _, t3 := range rl {
				if a.rdStart[t3] == a.rdStart[t3+1] {
					continue
				}
				p := a.vc[int(t3)*k+s]
				if s == r {
					p = a.pos[t3] - 1
				}
				for ptr < p {
					w := sl[ptr]
					for i := a.wkStart[w]; i < a.wkStart[w+1]; i++ {
						x := a.wk[i]
						if cnt != nil {
							if gen[x] != g {
								cnt[x] = 0
							}
							cnt[x]++
						}
						last[x] = w
						gen[x] = g
					}
					ptr++
				}
				if ptr == 0 {
					continue
				}
				for rr := a.rdStart[t3]; rr < a.rdStart[t3+1]; rr++ {
					x := a.rdKey[rr]
					if gen[x] != g {
						continue
					}
					if acc != nil && a.lists.list[rr] {
						acc[rr] += cnt[x]
						continue
					}
					t1 := last[x]
					if t1 == a.rdW[rr] {
						continue
					}
					a.considerCC(t1, t3, rr)
				}
			}
			g++
		}
	}
}

// considerCC is consider for a causal-axiom candidate, refining the premise
// only for edges that are not implied by causal order.
func (a *analysis) considerCC(t1, t3, rr int32) {
	if t2 := a.rdW[rr]; t2 >= 0 && a.hbEq(t1, t2) && (a.lists == nil || !a.lists.list[rr]) {
		a.edgesConsidered++
		return
	}
	via, rank, same := a.refine(t1, t3, rr)
	a.consider(t1, t3, rr, via, rank, same)
}

// saturateCCTable is saturateCC with a key-major table last[x*k+s] holding
// the position (1-based, 0 = none) of the latest writer of x in session s
// seen by the current reader session's sweep.
func (a *analysis) saturateCCTable() {
	nk, k := a.h.Keys.Len(), a.k
	last := make([]int32, nk*k)
	var cnt, acc []int32
	if a.lists != nil {
		cnt = make([]int32, nk*k)
		acc = make([]int32, len(a.rdOp))
		defer a.listCausalCheck(acc)
	}
	ptr := make([]int32, k)
	for r, rl := range a.sessions {
		if a.ctx.Err() != nil {
			return
		}
		clear(last)
		clear(cnt)
		clear(ptr)
		for _, t3 := range rl {
			if a.rdStart[t3] == a.rdStart[t3+1] {
				continue
			}
			row := a.vc[int(t3)*k : int(t3)*k+k]
			for s, sl := range a.sessions {
				p := row[s]
				if s == r {
					p = a.pos[t3] - 1
				}
				for q := ptr[s]; q < p; q++ {
					w := sl[q]
					for i := a.wkStart[w]; i < a.wkStart[w+1]; i++ {
						x := int(a.wk[i])*k + s
						last[x] = q + 1
						if cnt != nil {
							cnt[x]++
						}
					}
				}
				if p > ptr[s] {
					ptr[s] = p
				}
			}
			for rr := a.rdStart[t3]; rr < a.rdStart[t3+1]; rr++ {
				base := int(a.rdKey[rr]) * k
				lrow := last[base : base+k]
				if acc != nil && a.lists.list[rr] {
					for s := range lrow {
						acc[rr] += cnt[base+s]
					}
					continue
				}
				t2 := a.rdW[rr]
				var w2 []int32
				if t2 >= 0 {
					w2 = a.vc[int(t2)*k : int(t2)*k+k]
				}
				for s, lp := range lrow {
					if lp == 0 || (w2 != nil && w2[s] >= lp) {
						continue // no writer, or it precedes t2 causally
					}
					t1 := a.sessions[s][lp-1]
					if t1 == t2 {
						continue
					}
					via, rank, same := a.refine(t1, t3, rr)
					a.consider(t1, t3, rr, via, rank, same)
				}
			}
		}
	}
}

// anomalyType names a contradiction by the weakest level of its co edges
// (Plume's patterns: "CO" when one co edge closes against causal order,
// "CM" when several co edges are involved).
func anomalyType(es []coEdge, direct bool) string {
	var worst level
	allSame, allVersion := true, true
	for _, e := range es {
		if e.version {
			continue
		}
		allVersion = false
		if e.rank > worst {
			worst = e.rank
		}
		if e.rank == levelRA && !e.sameKey {
			allSame = false
		}
	}
	if allVersion {
		return model.CyclicCO
	}
	switch worst {
	case levelRC:
		return model.NonMonotonicRead
	case levelRA:
		if allSame {
			return model.NonRepeatableRead
		}
		return model.FracturedRead
	}
	if direct {
		return model.CommitOrderConflict
	}
	return model.Conflict
}

// report records a contradiction closed by the single co edge e: against the
// initial state (init) or against causal order (t2 ⇝ t1).
func (a *analysis) report(e coEdge, _ []int32, init bool) {
	typ := anomalyType([]coEdge{e}, true)
	a.res.Counts[typ]++
	if a.res.Counts[typ] > a.cap {
		return
	}
	h := a.h
	steps := []check.Step{a.coStep(e)}
	var tail string
	if init {
		steps[0].To = -1
		tail = fmt.Sprintf("but %s read the initial state of %s, which precedes every transaction: no commit order puts %s before it.",
			h.TxnName(e.reader), h.KeyName(e.key), h.TxnName(e.from))
	} else {
		path := a.hbPath(e.to, e.from)
		steps = append(steps, path...)
		tail = fmt.Sprintf("but %s precedes %s in causal order (so ∪ wr): %s. No commit order can contain both.",
			h.TxnName(e.to), h.TxnName(e.from), renderPath(h, path))
	}
	a.add(typ, steps, []coEdge{e}, a.premise(e)+tail)
}

func (a *analysis) add(typ string, steps []check.Step, es []coEdge, expl string) {
	h := a.h
	txns := map[int32]bool{}
	for _, s := range steps {
		if s.From >= 0 {
			txns[s.From] = true
		}
		if s.To >= 0 {
			txns[s.To] = true
		}
	}
	for _, e := range es {
		txns[e.reader] = true
	}
	an := check.Anomaly{Type: typ, Cycle: steps, Ops: map[int32]string{}, Explanation: expl}
	for t := range txns {
		an.Txns = append(an.Txns, t)
		an.Ops[t] = h.TxnString(t)
	}
	sort.Slice(an.Txns, func(i, j int) bool { return an.Txns[i] < an.Txns[j] })
	if len(es) == 1 {
		an.Key = h.KeyName(es[0].key)
	}
	a.res.Anomalies = append(a.res.Anomalies, an)
}

// premise explains why the axiom forces e.
func (a *analysis) premise(e coEdge) string {
	h := a.h
	t3 := h.Txns[e.reader]
	rd := &t3.Ops[e.readOp]
	s := fmt.Sprintf("%s read %s = %s (op %d) from %s, and %s also writes %s; ", h.TxnName(e.reader), h.KeyName(e.key),
		h.ValueName(rd.Value), e.readOp, a.writerName(e.to), h.TxnName(e.from), h.KeyName(e.key))
	switch {
	case e.via >= 0:
		v := &t3.Ops[e.via]
		when := "earlier"
		if e.via > e.readOp {
			when = "later"
		}
		s += fmt.Sprintf("%s %s read %s = %s (op %d) from %s", h.TxnName(e.reader), when, h.KeyName(v.Key), h.ValueName(v.Value), e.via, h.TxnName(e.from))
	case a.sess[e.from] == a.sess[e.reader] && a.pos[e.from] < a.pos[e.reader]:
		s += fmt.Sprintf("%s precedes %s in session %s", h.TxnName(e.from), h.TxnName(e.reader), a.sessName[a.sess[e.reader]])
	default:
		s += fmt.Sprintf("%s is in the causal past of %s (%s)", h.TxnName(e.from), h.TxnName(e.reader), renderPath(h, a.hbPath(e.from, e.reader)))
	}
	return s + fmt.Sprintf(", so %s forces %s before %s in commit order (Biswas & Enea 2019); ", e.rank, h.TxnName(e.from), a.writerName(e.to))
}

func (a *analysis) writerName(t int32) string {
	if t < 0 {
		return "the initial state"
	}
	return a.h.TxnName(t)
}

func (a *analysis) coStep(e coEdge) check.Step {
	return check.Step{From: e.from, To: e.to, Rel: "co", Key: a.h.KeyName(e.key),
		Why: fmt.Sprintf("%s reads %s from %s and %s writes %s: %s forces %s first", a.h.TxnName(e.reader), a.h.KeyName(e.key),
			a.writerName(e.to), a.h.TxnName(e.from), a.h.KeyName(e.key), e.rank, a.h.TxnName(e.from))}
}

// hbPath returns so/wr steps from x to y, given x (so ∪ wr)* y.
func (a *analysis) hbPath(x, y int32) []check.Step {
	var rev []check.Step
	for u := y; u != x; {
		next := int32(-1)
		var st check.Step
		for i := a.predStart[u]; i < a.predStart[u+1]; i++ {
			p := a.pred[i]
			if p == x || a.hbEq(x, p) {
				next = p
				st = a.baseStep(p, u, a.predLab[i])
				if a.predLab[i] < 0 { // prefer session edges: shorter to read
					break
				}
			}
		}
		if next < 0 {
			break // unreachable: x hb y means some predecessor is reachable
		}
		rev = append(rev, st)
		u = next
	}
	out := make([]check.Step, len(rev))
	for i := range rev {
		out[i] = rev[len(rev)-1-i]
	}
	return out
}

// baseStep renders an so (lab -1) or wr (lab = reading op of to) edge.
func (a *analysis) baseStep(from, to, lab int32) check.Step {
	h := a.h
	if lab < 0 {
		return check.Step{From: from, To: to, Rel: "so",
			Why: fmt.Sprintf("%s precedes %s in session %s", h.TxnName(from), h.TxnName(to), a.sessName[a.sess[to]])}
	}
	o := &h.Txns[to].Ops[lab]
	return check.Step{From: from, To: to, Rel: "wr", Key: h.KeyName(o.Key),
		Why: fmt.Sprintf("%s reads %s = %s (op %d) written by %s", h.TxnName(to), h.KeyName(o.Key), h.ValueName(o.Value), lab, h.TxnName(from))}
}

func renderPath(h *history.History, steps []check.Step) string {
	if len(steps) == 0 {
		return "(same transaction)"
	}
	var b strings.Builder
	b.WriteString(h.TxnName(steps[0].From))
	for i, s := range steps {
		if len(steps) > 24 && i == 10 {
			fmt.Fprintf(&b, " ... (%d more steps, listed in the anomaly's cycle) ...", len(steps)-20)
		}
		if len(steps) > 24 && i >= 10 && i < len(steps)-10 {
			continue
		}
		b.WriteString(" -" + s.Rel)
		if s.Key != "" {
			b.WriteString("(" + s.Key + ")")
		}
		b.WriteString("-> " + h.TxnName(s.To))
	}
	return b.String()
}

// cyclicCO reports one so ∪ wr cycle per non-trivial strongly connected
// component.
func (a *analysis) cyclicCO() {
	g := a.graph(false)
	comp, ncomp := a.scc(g)
	a.eachCycle(g, comp, ncomp, func(steps []check.Step, _ []int32) {
		typ := model.CyclicCO
		a.res.Counts[typ]++
		if a.res.Counts[typ] > a.cap {
			return
		}
		a.add(typ, steps, nil, fmt.Sprintf("Session order and write-read form a cycle: %s. Every level here requires a commit order containing both, so none exists (Biswas & Enea 2019 §2.2; Plume CyclicCO).",
			renderPath(a.h, steps)))
	}, nil)
}

// cycles finds the cycles of so ∪ wr ∪ kept co edges, weakest level first:
// a component already cyclic with the edges read committed forces is
// reported as such, not again with read atomic or causal edges.
func (a *analysis) cycles() {
	if len(a.edges) == 0 {
		return
	}
	var done []bool // per txn: in a component reported at a weaker rank
	for rank := levelRC; rank <= a.lv; rank++ {
		has := false
		for _, e := range a.edges {
			if e.rank == rank {
				has = true
				break
			}
		}
		if !has {
			continue
		}
		g := a.graphUpTo(true, rank)
		comp, ncomp := a.scc(g)
		starts := make([]int32, ncomp)
		skip := make([]bool, ncomp)
		for i := range starts {
			starts[i] = -1
		}
		if done != nil {
			for t, d := range done {
				if d && comp[t] >= 0 {
					skip[comp[t]] = true
				}
			}
		}
		for i, e := range a.edges {
			if e.rank > rank {
				continue
			}
			if c := comp[e.from]; c >= 0 && c == comp[e.to] && starts[c] < 0 {
				starts[c] = int32(i)
			}
		}
		for c := range starts {
			if skip[c] {
				starts[c] = -1
			}
		}
		a.eachCycle(g, comp, ncomp, func(steps []check.Step, cos []int32) {
			var es []coEdge
			for _, c := range cos {
				if c >= 0 {
					es = append(es, a.edges[c])
				}
			}
			typ := anomalyType(es, false)
			a.res.Counts[typ]++
			if a.res.Counts[typ] > a.cap {
				return
			}
			var why []string
			for _, e := range es {
				why = append(why, a.premise(e))
			}
			a.add(typ, steps, es, strings.Join(why, "")+"with session order and write-read these commit-order edges form the cycle "+
				renderPath(a.h, steps)+": no commit order exists.")
		}, starts)
		if done == nil {
			done = make([]bool, a.n)
		}
		for t := range done {
			if c := comp[t]; c >= 0 && starts[c] >= 0 {
				done[t] = true
			}
		}
	}
}

// eachCycle calls f with one cycle per non-trivial component; starts, if
// given, names a co edge inside each component to route the cycle through.
func (a *analysis) eachCycle(g *graph, comp []int32, ncomp int, f func(steps []check.Step, co []int32), starts []int32) {
	size := make([]int32, ncomp)
	first := make([]int32, ncomp)
	for i := range first {
		first[i] = -1
	}
	for t := 0; t < a.n; t++ {
		if c := comp[t]; c >= 0 {
			size[c]++
			if first[c] < 0 {
				first[c] = int32(t)
			}
		}
	}
	parent := make([]int32, a.n) // edge index into g
	mark := make([]int32, a.n)
	for i := range mark {
		mark[i] = -1
	}
	for c := 0; c < ncomp; c++ {
		if size[c] < 2 || (starts != nil && starts[c] < 0) {
			continue
		}
		// Route through a co edge from -> to when there is one: BFS to -> from.
		var src, dst, closingCo int32
		var closing check.Step
		if starts != nil && starts[c] >= 0 {
			e := a.edges[starts[c]]
			src, dst, closingCo = e.to, e.from, starts[c]
			closing = a.coStep(e)
		} else {
			// any edge inside the component
			u := first[c]
			for j := g.start[u]; j < g.start[u+1]; j++ {
				if comp[g.to[j]] == int32(c) {
					src, dst = g.to[j], u
					closing, closingCo = a.stepOf(g, u, j)
					break
				}
			}
		}
		queue := []int32{src}
		mark[src] = int32(c)
		for i := 0; i < len(queue) && mark[dst] != int32(c); i++ {
			u := queue[i]
			for j := g.start[u]; j < g.start[u+1]; j++ {
				v := g.to[j]
				if comp[v] != int32(c) || mark[v] == int32(c) {
					continue
				}
				mark[v] = int32(c)
				parent[v] = j
				queue = append(queue, v)
			}
		}
		var rev []check.Step
		var revCo []int32
		for v := dst; v != src; {
			j := parent[v]
			u := a.ownerOf(g, j)
			st, co := a.stepOf(g, u, j)
			rev = append(rev, st)
			revCo = append(revCo, co)
			v = u
		}
		steps := []check.Step{closing}
		cos := []int32{closingCo}
		for i := len(rev) - 1; i >= 0; i-- {
			steps = append(steps, rev[i])
			cos = append(cos, revCo[i])
		}
		f(steps, cos)
	}
}

// ownerOf finds the source node of edge index j (binary search on start).
func (a *analysis) ownerOf(g *graph, j int32) int32 {
	return int32(sort.Search(a.n, func(i int) bool { return g.start[i+1] > j }))
}

// stepOf renders edge j (from u) and returns its co edge index, or -1.
func (a *analysis) stepOf(g *graph, u int32, j int32) (check.Step, int32) {
	l := g.lab[j]
	if l <= -2 {
		return a.coStep(a.edges[-2-l]), -2 - l
	}
	return a.baseStep(u, g.to[j], l), -1
}

// scc computes strongly connected components of the included transactions
// (iterative Tarjan); comp is -1 for excluded ones.
func (a *analysis) scc(g *graph) ([]int32, int) {
	return txgraph.CSRComponents(g.start, g.to, func(v int32) bool { return a.incl[v] })
}

// fill copies the analysis into a check.Result.
func (res *Result) fill(r *check.Result, cap int) {
	r.Anomalies = res.Anomalies
	for typ, n := range res.Counts {
		if n > cap {
			if r.Truncated == nil {
				r.Truncated = map[string]int{}
			}
			r.Truncated[typ] = n - cap
		}
	}
	r.Stats = res.Stats
	if res.Unknown != "" {
		r.Verdict = check.Unknown
		r.Reason = res.Unknown
	}
}
