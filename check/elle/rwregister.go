package elle

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/regread"
	"github.com/txray/txray/graph"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// Read-write register inference (Elle §5.2; jepsen-io/elle rw_register).
//
// Writes are assumed unique per key, so a read of value v names the
// transaction that wrote it (wr). A transaction's external read of k is its
// first read of k before any write of k; its external write is its last
// write of k. The version order of each key is only partially known; it is
// inferred from these sources, in Elle's order:
//
//   - initial-state: nil (the initial state) precedes every value of k;
//   - wfr-keys (Params "wfr-keys"="true"): a committed transaction that
//     externally read v and externally wrote v' of k puts v before v'
//     (writes follow reads);
//   - sequential-keys ("sequential-keys"="true"): each key is sequentially
//     consistent, so the last value a session's transaction used is before
//     the first value the session's next transaction using k used;
//   - linearizable-keys ("linearizable-keys"="true"): the same along
//     real-time order (T1 completed before T2 was invoked).
//
// A source that would make a key's version graph cyclic is dropped for that
// key and reported as cyclic-versions (Elle drops it for every key; the
// sources' assumptions are per key, so txray keeps it for the others). From
// each version edge v1 -> v2: ww from v1's writer to v2's writer, rw from
// every external reader of v1 to v2's writer.
//
// A version order the history records (History.VersionOrder) is the source
// "recorded version order", tried right after initial-state, for the keys
// it covers and where it is consistent with the history (recorded.go).

// Version-order sources (graph.Why.Note of ww/rw edges).
const (
	srcInitial uint8 = iota
	srcWFR
	srcSequential
	srcLinearizable
)

var srcNames = [...]string{"initial-state", "wfr-keys", "sequential-keys", "linearizable-keys", "recorded version order"}

// touch is one transaction's external access to one key.
type touch struct {
	t, k     int32
	rOp, wOp int32 // external read / external write op index, -1 if none
	luOp     int32 // first read of k, when a later write of k follows (committed txns), else -1
}

type rwIndex struct {
	h      *history.History
	nk, nv int
	opBase []int32
	interm bitset // write ops that are not their txn's last write of the key
	// CSR by key: touches (committed and unknown txns), writes (every
	// txn), reads (committed txns).
	touchStart, writeStart, readStart []int32
	touches                           []touch
	writes, reads                     []opRef
	unsupported                       []int32
	unsupportedN                      int
	internal                          int
}

func (x *rwIndex) op(r opRef) *history.Op { return &x.h.Txns[r.t].Ops[r.o] }

func (x *rwIndex) readVal(tc *touch) int32 {
	return x.h.Txns[tc.t].Ops[tc.rOp].Value
}

func (x *rwIndex) writeVal(tc *touch) int32 {
	return x.h.Txns[tc.t].Ops[tc.wOp].Value
}

// buildRW indexes h and finds internal anomalies (committed transactions
// whose reads disagree with their own earlier reads and writes).
func buildRW(h *history.History, col *collector) (*rwIndex, error) {
	x := &rwIndex{h: h, nk: h.Keys.Len(), nv: h.Values.Len()}
	n := len(h.Txns)
	x.opBase = make([]int32, n+1)
	total := 0
	for i := range h.Txns {
		x.opBase[i] = int32(total)
		total += len(h.Txns[i].Ops)
	}
	x.opBase[n] = int32(total)
	if total > 1<<31-2 {
		return nil, fmt.Errorf("history too large: %d micro-ops", total)
	}
	x.interm = newBitset(total)
	x.touches = make([]touch, 0, total)
	nk := x.nk
	tStamp := make([]int32, nk) // key touched by this txn; tIdx its touch
	tIdx := make([]int32, nk)
	wStamp := make([]int32, nk) // backward pass: later write seen
	sStamp := make([]int32, nk) // internal: state known
	sVal := make([]int32, nk)
	sOp := make([]int32, nk)
	rStamp := make([]int32, nk) // first read of the key in this txn: rFirst
	rFirst := make([]int32, nk)
	writeCnt := make([]int32, nk+1)
	readCnt := make([]int32, nk+1)
	touchCnt := make([]int32, nk+1)
	for ti := range h.Txns {
		t := &h.Txns[ti]
		bad, err := validateTxn(h, ti, nk, x.nv, false)
		if err != nil {
			return nil, err
		}
		for j := range t.Ops {
			if t.Ops[j].Kind == history.Append {
				bad = true
			}
		}
		if bad {
			x.unsupportedN++
			if len(x.unsupported) < 8 {
				x.unsupported = append(x.unsupported, int32(ti))
			}
			continue
		}
		stamp := int32(ti + 1)
		base := x.opBase[ti]
		for j := len(t.Ops) - 1; j >= 0; j-- {
			o := &t.Ops[j]
			if o.Kind != history.Write {
				continue
			}
			if wStamp[o.Key] == stamp {
				x.interm.set(base + int32(j))
			}
			wStamp[o.Key] = stamp
		}
		committed := t.Status == history.Committed
		internalDone := false
		for j := range t.Ops {
			o := &t.Ops[j]
			k := o.Key
			switch o.Kind {
			case history.Write:
				writeCnt[k]++
			case history.Read:
				if committed {
					readCnt[k]++
				}
			}
			if committed && !internalDone {
				if sStamp[k] == stamp && o.Kind == history.Read && sVal[k] != o.Value {
					internalDone = true
					ti32, j32, exp, src := int32(ti), int32(j), sVal[k], sOp[k]
					col.add(aInternal, func() check.Anomaly { return rwInternalAnomaly(h, ti32, j32, src, exp) })
				}
				sStamp[k], sVal[k], sOp[k] = stamp, o.Value, int32(j)
			}
			if t.Status == history.Aborted {
				continue
			}
			if o.Kind == history.Read && committed && rStamp[k] != stamp {
				rStamp[k], rFirst[k] = stamp, int32(j)
			}
			if tStamp[k] != stamp {
				tStamp[k] = stamp
				tIdx[k] = int32(len(x.touches))
				tc := touch{t: int32(ti), k: k, rOp: -1, wOp: -1, luOp: -1}
				if o.Kind == history.Write {
					tc.wOp = int32(j)
				} else if committed {
					tc.rOp = int32(j)
				}
				x.touches = append(x.touches, tc)
				touchCnt[k]++
				continue
			}
			if o.Kind == history.Write {
				tc := &x.touches[tIdx[k]]
				// Only the txn's first write of k counts, and only after a
				// read of k (Elle's lost-update-cases).
				if committed && rStamp[k] == stamp && tc.wOp < 0 {
					tc.luOp = rFirst[k]
				}
				tc.wOp = int32(j)
			}
		}
	}
	if x.unsupportedN > 0 {
		return x, nil
	}
	x.touchStart, x.writeStart, x.readStart = make([]int32, nk+1), make([]int32, nk+1), make([]int32, nk+1)
	var ts, ws, rs int32
	for k := 0; k < nk; k++ {
		x.touchStart[k], x.writeStart[k], x.readStart[k] = ts, ws, rs
		ts += touchCnt[k]
		ws += writeCnt[k]
		rs += readCnt[k]
	}
	x.touchStart[nk], x.writeStart[nk], x.readStart[nk] = ts, ws, rs
	// Counting-sort touches by key (stable: history order within a key).
	sorted := make([]touch, len(x.touches))
	tf := touchCnt[:nk]
	copy(tf, x.touchStart[:nk])
	for _, tc := range x.touches {
		sorted[tf[tc.k]] = tc
		tf[tc.k]++
	}
	x.touches = sorted
	x.writes, x.reads = make([]opRef, ws), make([]opRef, rs)
	wf, rf := writeCnt[:nk], readCnt[:nk]
	copy(wf, x.writeStart[:nk])
	copy(rf, x.readStart[:nk])
	for ti := range h.Txns {
		t := &h.Txns[ti]
		for j := range t.Ops {
			o := &t.Ops[j]
			switch o.Kind {
			case history.Write:
				x.writes[wf[o.Key]] = opRef{int32(ti), int32(j)}
				wf[o.Key]++
			case history.Read:
				if t.Status == history.Committed {
					x.reads[rf[o.Key]] = opRef{int32(ti), int32(j)}
					rf[o.Key]++
				}
			}
		}
	}
	return x, nil
}

func rwInternalAnomaly(h *history.History, t, j, src, exp int32) check.Anomaly {
	o := &h.Txns[t].Ops[j]
	so := &h.Txns[t].Ops[src]
	how := "read"
	if so.Kind == history.Write {
		how = "wrote"
	}
	return check.Anomaly{
		Txns: []int32{t},
		Key:  h.KeyName(o.Key),
		Explanation: fmt.Sprintf("%s read key %s = %s (op %d), but it %s %s = %s earlier (op %d), so that read should have returned %s: a transaction must observe its own earlier reads and writes (internal consistency)",
			h.TxnName(t), h.KeyName(o.Key), h.ValueName(o.Value), j, how, h.KeyName(o.Key), h.ValueName(exp), src, h.ValueName(exp)),
		Ops: check.TxnOps(h, t),
	}
}

// vEdge is one inferred version-order edge of a key, with its evidence:
// transactions a then b (sequential/linearizable: a's last value of the key
// precedes b's first; wfr: a = b read from then wrote to the key).
type vEdge struct {
	k        int32
	from, to int32 // value ids (history.NoValue = the initial state)
	src      uint8
	a, b     int32
}

// dupWrite records a value written to one key by two transactions.
type dupWrite struct {
	k, v          int32
	first, second opRef
}

type rwOpts struct {
	wfr, sequential, linearizable bool
	// noVO: Params "use-version-order"="false" (ignore the recorded
	// version order; recorded.go)
	noVO bool
}

func rwOptions(opts check.Options) rwOpts {
	on := func(name string) bool {
		switch strings.ToLower(opts.Param(name, "")) {
		case "true", "1", "yes", "on":
			return true
		}
		return false
	}
	return rwOpts{
		wfr:          on("wfr-keys") || on("wfr-keys?"),
		sequential:   on("sequential-keys") || on("sequential-keys?"),
		linearizable: on("linearizable-keys") || on("linearizable-keys?"),
		noVO:         strings.EqualFold(opts.Param("use-version-order", ""), "false"),
	}
}

// rwKeys runs the per-key analysis.
type rwKeys struct {
	x    *rwIndex
	o    rwOpts
	col  *collector
	sink edgeSink
	// scratch by value id
	writerOf []int32 // 1 + index into the key's writes
	vnode    []int32 // 1 + local version node
	// sequential pairs grouped by key: (touch index a, touch index b)
	seqStart []int32
	seqPairs [][2]int32
	// kept version edges of every key, sorted by (k, from, to), for
	// explanations
	vlog []vEdge
	// per-key scratch
	sExtW, sRdStart, sRdList, sRdFill []int32
	sKept, sAdd                       []vEdge
	dups                              []dupWrite
	nDups                             int
	// version-order completion (completion.go): keys whose versions the
	// kept edges do not order totally, and how many keys have an inferred
	// path through a version nobody installed
	partial                            []int32
	through                            int
	forced                             int
	sIndeg, sOutdeg, sOff, sAdj, sFill []int32
	edges                              [3]int64
	vedge                              int64
	// the recorded version order (recorded.go)
	vo voState
}

func (p *rwKeys) add(from, to int32, rel graph.Rel, why graph.Why) {
	switch rel {
	case graph.WW:
		p.edges[0]++
	case graph.WR:
		p.edges[1]++
	case graph.RW:
		p.edges[2]++
	}
	p.sink.Add(from, to, rel, why)
}

// sequentialPairs computes, for every session, consecutive transactions
// touching the same key: the last committed toucher before each toucher.
func (p *rwKeys) sequentialPairs() {
	x, h := p.x, p.x.h
	// Touch indices per transaction: touches are grouped by key, so build
	// per-txn lists.
	n := len(h.Txns)
	cnt := make([]int32, n+1)
	for i := range x.touches {
		cnt[x.touches[i].t+1]++
	}
	for i := 1; i <= n; i++ {
		cnt[i] += cnt[i-1]
	}
	byTxn := make([]int32, len(x.touches))
	fill := slices.Clone(cnt[:n])
	for i := range x.touches {
		t := x.touches[i].t
		byTxn[fill[t]] = int32(i)
		fill[t]++
	}
	order := make([]int32, 0, n)
	for i := range h.Txns {
		if h.Txns[i].Session >= 0 && h.Txns[i].Status != history.Aborted {
			order = append(order, int32(i))
		}
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		ta, tb := &h.Txns[a], &h.Txns[b]
		if c := cmp.Compare(ta.Session, tb.Session); c != 0 {
			return c
		}
		return cmp.Compare(ta.Seq, tb.Seq)
	})
	last := make([]int32, x.nk) // 1 + touch index of the last committed toucher
	lastSess := make([]int32, x.nk)
	for i := range lastSess {
		lastSess[i] = -1
	}
	var pairs [][2]int32
	for _, t := range order {
		sess := h.Txns[t].Session
		committed := h.Txns[t].Status == history.Committed
		for _, ti := range byTxn[cnt[t]:cnt[t+1]] {
			tc := &x.touches[ti]
			if !p.interacts(tc) {
				continue
			}
			if lastSess[tc.k] == sess && last[tc.k] != 0 {
				pairs = append(pairs, [2]int32{last[tc.k] - 1, ti})
			}
			if committed {
				lastSess[tc.k], last[tc.k] = sess, ti+1
			}
		}
	}
	// Group by key (pairs' touches share a key).
	kc := make([]int32, x.nk+1)
	for _, pr := range pairs {
		kc[x.touches[pr[0]].k+1]++
	}
	for k := 1; k <= x.nk; k++ {
		kc[k] += kc[k-1]
	}
	p.seqStart = kc
	p.seqPairs = make([][2]int32, len(pairs))
	f := slices.Clone(kc[:x.nk])
	for _, pr := range pairs {
		k := x.touches[pr[0]].k
		p.seqPairs[f[k]] = pr
		f[k]++
	}
}

// interacts reports whether a touch takes part in version inference: a
// committed transaction's external read or write, or an unknown-outcome
// transaction's external write (Elle's ext-keys).
func (p *rwKeys) interacts(tc *touch) bool {
	if p.x.h.Txns[tc.t].Status == history.Committed {
		return tc.rOp >= 0 || tc.wOp >= 0
	}
	return tc.wOp >= 0
}

// lastVal is the value of k a touch leaves (external write, else external
// read); firstVal the value it first uses (external read, else write).
func (p *rwKeys) lastVal(tc *touch) int32 {
	if tc.wOp >= 0 {
		return p.x.writeVal(tc)
	}
	return p.x.readVal(tc)
}

func (p *rwKeys) firstVal(tc *touch) int32 {
	if tc.rOp >= 0 {
		return p.x.readVal(tc)
	}
	return p.x.writeVal(tc)
}

func (p *rwKeys) run() {
	if p.o.sequential {
		p.sequentialPairs()
	}
	for k := int32(0); int(k) < p.x.nk; k++ {
		p.key(k)
	}
}

// local version graph of one key
type vgraph struct {
	vals  []int32 // node -> value id (node 0 = nil)
	edges []vEdge // from/to hold node ids here
}

// versionNodes returns a version graph holding one node per value the
// key's touches read or write (the initial version is node 0). The caller
// must release it with releaseNodes, which resets p.vnode for reuse.
func (p *rwKeys) versionNodes(touches []touch) *vgraph {
	x := p.x
	g := &vgraph{vals: []int32{history.NoValue}}
	for i := range touches {
		tc := &touches[i]
		if tc.rOp >= 0 {
			p.node(g, x.readVal(tc))
		}
		if tc.wOp >= 0 {
			p.node(g, x.writeVal(tc))
		}
	}
	return g
}

// releaseNodes clears the value-to-node index versionNodes filled.
func (p *rwKeys) releaseNodes(g *vgraph) {
	for _, v := range g.vals[1:] {
		p.vnode[v] = 0
	}
}

func (p *rwKeys) node(g *vgraph, v int32) int32 {
	if v == history.NoValue {
		return 0
	}
	if n := p.vnode[v]; n != 0 {
		return n - 1
	}
	g.vals = append(g.vals, v)
	p.vnode[v] = int32(len(g.vals))
	return int32(len(g.vals) - 1)
}

func (p *rwKeys) key(k int32) {
	x, h := p.x, p.x.h
	writes := x.writes[x.writeStart[k]:x.writeStart[k+1]]
	reads := x.reads[x.readStart[k]:x.readStart[k+1]]
	touches := x.touches[x.touchStart[k]:x.touchStart[k+1]]

	for i, w := range writes {
		v := x.op(w).Value
		if f := p.writerOf[v]; f != 0 {
			if first := writes[f-1]; first.t != w.t {
				p.nDups++
				if len(p.dups) < 8 {
					p.dups = append(p.dups, dupWrite{k, v, first, w})
				}
			} else {
				// The transaction wrote v again: a read of v may be of this
				// later write, so judge it by the last one (the first is
				// intermediate, and a read of the final value is no G1b).
				p.writerOf[v] = int32(i + 1)
			}
			continue
		}
		p.writerOf[v] = int32(i + 1)
	}
	defer func() {
		for _, w := range writes {
			p.writerOf[x.op(w).Value] = 0
		}
	}()

	// G1a and G1b: committed reads of aborted or intermediate writes.
	for _, r := range reads {
		v := x.op(r).Value
		if v == history.NoValue {
			continue
		}
		f := p.writerOf[v]
		if f == 0 {
			continue
		}
		w := writes[f-1]
		if h.Txns[w.t].Status == history.Aborted {
			rr := r
			p.col.add(aG1a, func() check.Anomaly { return p.g1aAnomaly(k, w, rr) })
		}
		if w.t != r.t && x.interm.has(x.opBase[w.t]+w.o) {
			rr := r
			p.col.add(aG1b, func() check.Anomaly { return p.g1bAnomaly(k, w, rr) })
		}
	}

	// Version nodes and their external writers/readers.
	g := p.versionNodes(touches)
	defer p.releaseNodes(g)
	nn := len(g.vals)
	p.sExtW = slices.Grow(p.sExtW[:0], nn)[:nn]
	extW := p.sExtW // 1 + touch index (local)
	clear(extW)
	p.sRdStart = slices.Grow(p.sRdStart[:0], nn+1)[:nn+1]
	rdStart := p.sRdStart
	clear(rdStart)
	for i := range touches {
		tc := &touches[i]
		if tc.wOp >= 0 {
			if nd := p.node(g, x.writeVal(tc)); extW[nd] == 0 {
				extW[nd] = int32(i + 1)
			}
		}
		if tc.rOp >= 0 {
			rdStart[p.node(g, x.readVal(tc))+1]++
		}
	}
	for i := 1; i <= nn; i++ {
		rdStart[i] += rdStart[i-1]
	}
	p.sRdList = slices.Grow(p.sRdList[:0], int(rdStart[nn]))[:rdStart[nn]]
	rdList := p.sRdList
	p.sRdFill = append(p.sRdFill[:0], rdStart[:nn]...)
	rf := p.sRdFill
	for i := range touches {
		tc := &touches[i]
		if tc.rOp >= 0 {
			nd := p.node(g, x.readVal(tc))
			rdList[rf[nd]] = int32(i)
			rf[nd]++
		}
	}

	// wr edges: an external read of v depends on v's external writer.
	for i := range touches {
		tc := &touches[i]
		if tc.rOp < 0 {
			continue
		}
		v := x.readVal(tc)
		if v == history.NoValue {
			continue
		}
		if w := extW[p.node(g, v)]; w != 0 {
			wt := &touches[w-1]
			if wt.t != tc.t {
				p.add(wt.t, tc.t, graph.WR, graph.Why{Key: k, V1: v, V2: history.NoValue, Op1: wt.wOp, Op2: tc.rOp})
			}
		}
	}

	// Version graph, source by source.
	kept := p.sKept[:0]
	defer func() { p.sKept = kept[:0] }()
	var sources []string
	try := func(src uint8, add []vEdge) {
		if len(add) == 0 {
			return
		}
		n0 := len(kept)
		kept = append(kept, add...)
		if sccs := vSCCs(nn, kept); len(sccs) > 0 {
			srcs := append(slices.Clone(sources), srcNames[src])
			for _, scc := range sccs {
				p.col.add(model.CyclicVersions, func() check.Anomaly { return p.cyclicAnomaly(k, g, kept, scc, srcs) })
			}
			kept = kept[:n0]
			return
		}
		sources = append(sources, srcNames[src])
	}
	add := p.sAdd[:0]
	defer func() { p.sAdd = add[:0] }()
	for nd := 1; nd < nn; nd++ {
		add = append(add, vEdge{k: k, from: 0, to: int32(nd), src: srcInitial, a: -1, b: -1})
	}
	try(srcInitial, add)
	recorded := false
	if rec, ok := p.recordedEdges(k, writes, touches); ok {
		recorded = true
		try(srcRecorded, rec)
	}
	if p.o.wfr {
		add = add[:0]
		for i := range touches {
			tc := &touches[i]
			if tc.rOp < 0 || tc.wOp < 0 || h.Txns[tc.t].Status != history.Committed {
				continue
			}
			rv, wv := x.readVal(tc), x.writeVal(tc)
			if rv == history.NoValue || rv == wv {
				continue
			}
			add = append(add, vEdge{k: k, from: p.node(g, rv), to: p.node(g, wv), src: srcWFR, a: tc.t, b: tc.t})
		}
		try(srcWFR, add)
	}
	if p.o.sequential {
		add = add[:0]
		for _, pr := range p.seqPairs[p.seqStart[k]:p.seqStart[k+1]] {
			a, b := &x.touches[pr[0]], &x.touches[pr[1]]
			v1, v2 := p.lastVal(a), p.firstVal(b)
			if v1 == v2 {
				continue
			}
			add = append(add, vEdge{k: k, from: p.node(g, v1), to: p.node(g, v2), src: srcSequential, a: a.t, b: b.t})
		}
		try(srcSequential, add)
	}
	if p.o.linearizable {
		try(srcLinearizable, p.linearizableEdges(k, g, touches))
	}

	// Deduplicate, then turn version edges into ww and rw edges.
	slices.SortStableFunc(kept, func(a, b vEdge) int {
		if c := cmp.Compare(a.from, b.from); c != 0 {
			return c
		}
		return cmp.Compare(a.to, b.to)
	})
	kept = slices.CompactFunc(kept, func(a, b vEdge) bool { return a.from == b.from && a.to == b.to })
	p.vedge += int64(len(kept))
	np := len(p.partial)
	p.keyShape(k, nn, kept, extW)
	switch {
	case nn <= 1:
	case len(p.partial) > np:
		p.vo.byCompletion++
	case recorded:
		p.vo.byRecorded++
	default:
		p.vo.byInference++
	}
	for _, e := range kept {
		w2 := extW[e.to]
		if w2 == 0 {
			continue
		}
		wt := &touches[w2-1]
		v1, v2 := g.vals[e.from], g.vals[e.to]
		if e.from != 0 {
			if w1 := extW[e.from]; w1 != 0 {
				at := &touches[w1-1]
				if at.t != wt.t {
					p.add(at.t, wt.t, graph.WW, graph.Why{Key: k, V1: v1, V2: v2, Op1: at.wOp, Op2: wt.wOp, Note: e.src})
				}
			}
		}
		for _, ri := range rdList[rdStart[e.from]:rdStart[e.from+1]] {
			rt := &touches[ri]
			if rt.t != wt.t {
				p.add(rt.t, wt.t, graph.RW, graph.Why{Key: k, V1: v1, V2: v2, Op1: rt.rOp, Op2: wt.wOp, Note: e.src})
			}
		}
	}
	for _, e := range kept {
		e.from, e.to = g.vals[e.from], g.vals[e.to]
		p.vlog = append(p.vlog, e)
	}
	n0 := len(p.vlog) - len(kept)
	slices.SortFunc(p.vlog[n0:], func(a, b vEdge) int {
		if c := cmp.Compare(a.from, b.from); c != 0 {
			return c
		}
		return cmp.Compare(a.to, b.to)
	})

	// Lost update: committed transactions that first read the same value of
	// k and then wrote k.
	var cand []*touch
	for i := range touches {
		if touches[i].luOp >= 0 {
			cand = append(cand, &touches[i])
		}
	}
	if len(cand) >= 2 {
		val := func(tc *touch) int32 { return h.Txns[tc.t].Ops[tc.luOp].Value }
		sort.SliceStable(cand, func(i, j int) bool { return val(cand[i]) < val(cand[j]) })
		for i := 0; i < len(cand); {
			j := i + 1
			for j < len(cand) && val(cand[j]) == val(cand[i]) {
				j++
			}
			if j-i >= 2 {
				group := make([]opRef, 0, j-i)
				for _, tc := range cand[i:j] {
					group = append(group, opRef{tc.t, tc.luOp})
				}
				p.col.add(aLostUpdate, func() check.Anomaly { return p.lostAnomaly(k, group) })
			}
			i = j
		}
	}
}

// linearizableEdges infers version edges from real-time order: for each
// committed toucher a with client times, the value it left precedes the
// first value of every minimal toucher b with a.Complete < b.Invoke
// (minimal: no toucher c with a.Complete < c.Invoke and c.Complete <
// b.Invoke). Unknown-outcome transactions never complete, so they are only
// successors.
func (p *rwKeys) linearizableEdges(k int32, g *vgraph, touches []touch) []vEdge {
	h := p.x.h
	type ent struct {
		ti            int32
		inv, comp     int64
		pred          bool
		lastV, firstV int32
	}
	var es []ent
	for i := range touches {
		tc := &touches[i]
		t := &h.Txns[tc.t]
		if !t.HasTime || !p.interacts(tc) {
			continue
		}
		c := max(t.Complete, t.Invoke)
		pred := t.Status == history.Committed
		if !pred {
			c = 1<<63 - 1
		}
		es = append(es, ent{int32(i), t.Invoke, c, pred, p.lastVal(tc), p.firstVal(tc)})
	}
	if len(es) < 2 {
		return nil
	}
	slices.SortStableFunc(es, func(a, b ent) int { return cmp.Compare(a.inv, b.inv) })
	// sufMin[i] = min comp over es[i:].
	sufMin := make([]int64, len(es)+1)
	sufMin[len(es)] = 1<<63 - 1
	for i := len(es) - 1; i >= 0; i-- {
		sufMin[i] = min(sufMin[i+1], es[i].comp)
	}
	var out []vEdge
	for _, a := range es {
		if !a.pred {
			continue
		}
		i := sort.Search(len(es), func(j int) bool { return es[j].inv > a.comp })
		if i == len(es) {
			continue
		}
		m := sufMin[i]
		for j := i; j < len(es) && es[j].inv <= m; j++ {
			b := es[j]
			if a.lastV == b.firstV {
				continue
			}
			out = append(out, vEdge{k: k, from: p.node(g, a.lastV), to: p.node(g, b.firstV), src: srcLinearizable,
				a: touches[a.ti].t, b: touches[b.ti].t})
		}
	}
	return out
}

// vSCCs returns the nontrivial SCCs of a version graph over nodes
// 0..n-1, each as its sorted node list, ordered by first node
// (graph.CSRComponents, after a quick acyclicity test).
func vSCCs(n int, edges []vEdge) [][]int32 {
	off := make([]int32, n+1)
	for _, e := range edges {
		off[e.from+1]++
	}
	for i := 1; i <= n; i++ {
		off[i] += off[i-1]
	}
	adj := make([]int32, len(edges))
	f := slices.Clone(off[:n])
	for _, e := range edges {
		adj[f[e.from]] = e.to
		f[e.from]++
	}
	// Quick acyclicity test (Kahn) before Tarjan.
	indeg := make([]int32, n)
	for _, w := range adj {
		indeg[w]++
	}
	queue := make([]int32, 0, n)
	for v := range indeg {
		if indeg[v] == 0 {
			queue = append(queue, int32(v))
		}
	}
	for i := 0; i < len(queue); i++ {
		v := queue[i]
		for _, w := range adj[off[v]:off[v+1]] {
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	if len(queue) == n {
		return nil
	}
	comp, ncomp := graph.CSRComponents(off, adj, nil)
	members := make([][]int32, ncomp)
	for v, c := range comp {
		members[c] = append(members[c], int32(v)) // ascending
	}
	var sccs [][]int32
	for _, m := range members {
		if len(m) > 1 {
			sccs = append(sccs, m)
		}
	}
	slices.SortFunc(sccs, func(a, b []int32) int { return cmp.Compare(a[0], b[0]) })
	return sccs
}

// vCycle finds a cycle through the SCC's first node using only edges inside
// the SCC (BFS), as a list of edges.
func vCycle(edges []vEdge, scc []int32) []vEdge {
	in := map[int32]bool{}
	for _, v := range scc {
		in[v] = true
	}
	start := scc[0]
	prev := map[int32]int{} // node -> edge index that reached it
	queue := []int32{start}
	seen := map[int32]bool{start: true}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for i, e := range edges {
			if e.from != v || !in[e.to] {
				continue
			}
			if e.to == start {
				var path []vEdge
				path = append(path, e)
				for u := v; u != start; {
					pe := edges[prev[u]]
					path = append(path, pe)
					u = pe.from
				}
				slices.Reverse(path)
				return path
			}
			if !seen[e.to] {
				seen[e.to] = true
				prev[e.to] = i
				queue = append(queue, e.to)
			}
		}
	}
	return nil
}

func (p *rwKeys) cyclicAnomaly(k int32, g *vgraph, edges []vEdge, scc []int32, sources []string) check.Anomaly {
	h := p.x.h
	vals := make([]string, len(scc))
	for i, nd := range scc {
		vals[i] = h.ValueName(g.vals[nd])
	}
	cyc := vCycle(edges, scc)
	var b strings.Builder
	how := "inferred from"
	if slices.Contains(sources, srcNames[srcRecorded]) {
		how = "given by"
	}
	fmt.Fprintf(&b, "the version order of key %s %s %s is cyclic over values {%s}:", h.KeyName(k), how, strings.Join(sources, ", "), strings.Join(vals, ", "))
	var txns []int32
	for _, e := range cyc {
		e.from, e.to = g.vals[e.from], g.vals[e.to]
		b.WriteString("\n  - ")
		b.WriteString(p.versionWhy(e))
		if e.a >= 0 {
			txns = append(txns, e.a)
		}
		if e.b >= 0 {
			txns = append(txns, e.b)
		}
	}
	b.WriteString("\nso no total version order of key " + h.KeyName(k) + " exists (cyclic versions)")
	txns = uniq(txns...)
	return check.Anomaly{Txns: txns, Key: h.KeyName(k), Explanation: b.String(), Ops: check.TxnOps(h, txns...)}
}

// versionWhy explains one version edge (values, not nodes).
func (p *rwKeys) versionWhy(e vEdge) string {
	h := p.x.h
	k := h.KeyName(e.k)
	v1, v2 := h.ValueName(e.from), h.ValueName(e.to)
	switch e.src {
	case srcInitial:
		return fmt.Sprintf("nil (the initial state) precedes %s: every value of key %s follows the initial state", v2, k)
	case srcWFR:
		return fmt.Sprintf("%s precedes %s: %s read key %s = %s and then wrote %s (writes follow reads)", v1, v2, h.TxnName(e.a), k, v1, v2)
	case srcSequential:
		return fmt.Sprintf("%s precedes %s: %s last used key %s at %s, and %s, the next transaction of its session to use key %s, first used it at %s (sequential keys)",
			v1, v2, h.TxnName(e.a), k, v1, h.TxnName(e.b), k, v2)
	case srcRecorded:
		return p.recordedWhy(e.k, e.from, e.to)
	case srcLinearizable:
		ta, tb := &h.Txns[e.a], &h.Txns[e.b]
		return fmt.Sprintf("%s precedes %s: %s last used key %s at %s and completed (at %d) before %s was invoked (at %d), which first used key %s at %s (linearizable keys)",
			v1, v2, h.TxnName(e.a), k, v1, max(ta.Complete, ta.Invoke), h.TxnName(e.b), tb.Invoke, k, v2)
	}
	return v1 + " precedes " + v2
}

// findVersionEdge returns the recorded evidence for v1 -> v2 on k.
func (p *rwKeys) findVersionEdge(k, v1, v2 int32) (vEdge, bool) {
	i, ok := slices.BinarySearchFunc(p.vlog, vEdge{k: k, from: v1, to: v2}, func(a, b vEdge) int {
		if c := cmp.Compare(a.k, b.k); c != 0 {
			return c
		}
		if c := cmp.Compare(a.from, b.from); c != 0 {
			return c
		}
		return cmp.Compare(a.to, b.to)
	})
	if !ok {
		return vEdge{}, false
	}
	return p.vlog[i], true
}

func (p *rwKeys) g1aAnomaly(k int32, w, r opRef) check.Anomaly {
	h := p.x.h
	v := p.x.op(w).Value
	return check.Anomaly{
		Txns: uniq(w.t, r.t),
		Key:  h.KeyName(k),
		Explanation: fmt.Sprintf("%s wrote key %s = %s and aborted, yet %s (committed) read key %s = %s: a committed transaction observed an aborted write (G1a, aborted read)",
			h.TxnName(w.t), h.KeyName(k), h.ValueName(v), h.TxnName(r.t), h.KeyName(k), h.ValueName(v)),
		Ops: check.TxnOps(h, w.t, r.t),
	}
}

func (p *rwKeys) g1bAnomaly(k int32, w, r opRef) check.Anomaly {
	h := p.x.h
	v := p.x.op(w).Value
	var later []int32
	for j := int(w.o) + 1; j < len(h.Txns[w.t].Ops); j++ {
		o := &h.Txns[w.t].Ops[j]
		if o.Kind == history.Write && o.Key == k {
			later = append(later, o.Value)
		}
	}
	return check.Anomaly{
		Txns: []int32{w.t, r.t},
		Key:  h.KeyName(k),
		Explanation: fmt.Sprintf("%s read key %s = %s, but %s wrote %s and then %s to key %s in the same transaction, so %s read a state %s never committed (G1b, intermediate read)",
			h.TxnName(r.t), h.KeyName(k), h.ValueName(v), h.TxnName(w.t), h.ValueName(v), valuesString(h, later), h.KeyName(k), h.TxnName(r.t), h.TxnName(w.t)),
		Ops: check.TxnOps(h, w.t, r.t),
	}
}

func (p *rwKeys) lostAnomaly(k int32, group []opRef) check.Anomaly {
	h := p.x.h
	v := p.x.op(group[0]).Value
	var txns []int32
	var parts []string
	for _, r := range group {
		txns = append(txns, r.t)
		var ws []int32
		for j := int(r.o) + 1; j < len(h.Txns[r.t].Ops); j++ {
			o := &h.Txns[r.t].Ops[j]
			if o.Kind == history.Write && o.Key == k {
				ws = append(ws, o.Value)
			}
		}
		parts = append(parts, fmt.Sprintf("%s wrote %s", h.TxnName(r.t), valuesString(h, ws)))
	}
	return check.Anomaly{
		Txns: txns,
		Key:  h.KeyName(k),
		Explanation: fmt.Sprintf("%d committed transactions read key %s = %s and then wrote it (%s); each overwrote the same version without seeing the others' writes, so at most one of those updates can be based on the state it read (lost update)",
			len(group), h.KeyName(k), h.ValueName(v), strings.Join(parts, "; ")),
		Ops: check.TxnOps(h, txns...),
	}
}

// rwExplainer renders rw-register edges.
type rwExplainer struct{ p *rwKeys }

func (e *rwExplainer) Explain(from, to int32, rel graph.Rel, why graph.Why) string {
	h := e.p.x.h
	if rel&(graph.WW|graph.WR|graph.RW) == 0 || why.Key < 0 || int(why.Key) >= h.Keys.Len() {
		return orderExplain(h, from, to, rel)
	}
	k := h.KeyName(why.Key)
	a, b := h.TxnName(from), h.TxnName(to)
	order := func() string {
		ve, ok := e.p.findVersionEdge(why.Key, why.V1, why.V2)
		if !ok {
			return "inferred version order"
		}
		return e.p.versionWhy(ve)
	}
	switch rel {
	case graph.WR:
		return fmt.Sprintf("%s read key %s = %s, which %s wrote, so %s < %s (wr)", b, k, h.ValueName(why.V1), a, a, b)
	case graph.WW:
		return fmt.Sprintf("%s wrote key %s = %s and %s wrote %s = %s, and %s, so %s < %s (ww)",
			a, k, h.ValueName(why.V1), b, k, h.ValueName(why.V2), order(), a, b)
	case graph.RW:
		if why.V1 == history.NoValue {
			return fmt.Sprintf("%s read key %s = nil (the initial state), and %s wrote %s = %s, which follows the initial state, so %s < %s (rw)",
				a, k, b, k, h.ValueName(why.V2), a, b)
		}
		return fmt.Sprintf("%s read key %s = %s, and %s wrote %s = %s, and %s, so %s < %s (rw)",
			a, k, h.ValueName(why.V1), b, k, h.ValueName(why.V2), order(), a, b)
	}
	return orderExplain(h, from, to, rel)
}

// checkRWRegister is RWRegister.Check.
func checkRWRegister(ctx context.Context, h *history.History, opts check.Options) (*check.Result, error) {
	if h == nil {
		return nil, errors.New("rw-register: nil history")
	}
	st := newStats()
	p := planFor(opts.Model)
	r := newResult("rw-register", p)
	hs := h.Stats()
	st.m["txns"], st.m["ops"], st.m["keys"] = hs.Txns, hs.Ops, hs.Keys
	st.m["committed"], st.m["aborted"], st.m["unknown"] = hs.Committed, hs.Aborted, hs.Unknown
	ro := rwOptions(opts)
	var srcs []string
	srcs = append(srcs, srcNames[srcInitial])
	if ro.wfr {
		srcs = append(srcs, srcNames[srcWFR])
	}
	if ro.sequential {
		srcs = append(srcs, srcNames[srcSequential])
	}
	if ro.linearizable {
		srcs = append(srcs, srcNames[srcLinearizable])
	}
	useVO := h.Evidence.VersionOrder && h.VersionOrder != nil
	switch {
	case useVO && ro.noVO:
		useVO = false
		st.m["version_order"] = "ignored (use-version-order=false)"
	case useVO:
		srcs = slices.Insert(srcs, 1, srcNames[srcRecorded])
		st.m["version_order"] = "used where consistent with the history"
	default:
		st.m["version_order"] = "none"
	}
	st.m["version_sources"] = srcs
	// Order-free read checks (package regread): thin-air and future reads,
	// which the inference below cannot see (a read of a value nobody wrote
	// is otherwise just a version with no writer), and own-write reads
	// (not-my-own-write, not-my-last-write; also reported below as Elle's
	// internal). Aborted and intermediate reads are reported below in
	// Elle's vocabulary (G1a, G1b).
	// Inference then runs on regread's initial-state view: reads of the
	// initial value (Params "initial-value") read nil, and an explicit
	// initial transaction writes nothing, so both count as the initial
	// state (Elle's initial-state version source).
	ra := regread.Analyze(h, regread.Options{InitialValue: opts.Param("initial-value", "")})
	var initVal map[int32]int32
	if useVO && ra.InitTxn >= 0 {
		// the initial transaction's values lead a recorded order as the
		// initial state (recorded.go)
		initVal = map[int32]int32{}
		for _, o := range h.Txns[ra.InitTxn].Ops {
			if o.Kind == history.Write {
				initVal[o.Key] = o.Value
			}
		}
	}
	h, nInit := ra.InitialStateView(h)
	if ra.InitTxn >= 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s writes the initial value of every key and was taken as the initial state (package regread): its writes are not versions", h.TxnName(ra.InitTxn)))
	}
	if nInit > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d read(s) of the initial value are shown as reads of nil (the initial state)", nInit))
	}
	st.m["initial_txn"], st.m["thin_air_reads"], st.m["future_reads"] = ra.InitTxn, ra.Counts[model.ThinAirRead], ra.Counts[model.FutureRead]
	col := newCollector(h, opts.MaxPerType())
	for i := range ra.Anomalies {
		an := ra.Anomalies[i]
		// Elle's own G1a/G1b/internal checks judge committed readers only;
		// an unknown-outcome reader that another transaction observed
		// committed, and regread judged it (Analysis.Judged): keep those.
		observed := len(an.Txns) > 0 && an.Txns[0] >= 0 && int(an.Txns[0]) < len(h.Txns) && h.Txns[an.Txns[0]].Status == history.Unknown
		// Own-write reads are Elle's internal too, but Elle's internal also
		// covers re-reads (which read committed allows): not-my-own-write
		// and not-my-last-write are prohibited by every model.
		if an.Type == model.ThinAirRead || an.Type == model.FutureRead || an.Type == model.NotMyOwnWrite || an.Type == model.NotMyLastWrite || observed {
			col.add(an.Type, func() check.Anomaly { return an })
		}
	}
	st.lap("reads")
	progress(opts, "index", 0, int64(len(h.Txns)))
	x, err := buildRW(h, col)
	if err != nil {
		return nil, err
	}
	st.lap("index")
	if x.unsupportedN > 0 {
		return unknownResult(r, unsupportedReason(h, "register reads and writes", x.unsupported, x.unsupportedN), st), nil
	}
	if res, stop := cancelled(ctx, r, st); stop {
		return res, nil
	}
	b := graph.NewBuilder(len(h.Txns))
	pk := &rwKeys{x: x, o: ro, col: col, sink: b, writerOf: make([]int32, x.nv), vnode: make([]int32, x.nv)}
	if useVO {
		pk.vo = voState{order: h.VersionOrder, initVal: initVal, seen: make([]int32, x.nv)}
	}
	progress(opts, "keys", 0, int64(x.nk))
	pk.run()
	progress(opts, "keys", int64(x.nk), int64(x.nk))
	st.lap("versions")
	if pk.nDups > 0 {
		d := pk.dups[0]
		reason := fmt.Sprintf("value %s written to key %s by two transactions (%s and %s); rw-register needs every written value to be unique per key, so reads cannot be attributed to writes",
			h.ValueName(d.v), h.KeyName(d.k), h.TxnString(d.first.t), h.TxnString(d.second.t))
		if pk.nDups > 1 {
			reason += fmt.Sprintf(" (%d duplicate writes in all)", pk.nDups)
		}
		col.into(r)
		return unknownResult(r, reason, st), nil
	}
	st.m["ww_edges"], st.m["wr_edges"], st.m["rw_edges"] = pk.edges[0], pk.edges[1], pk.edges[2]
	st.m["version_edges"] = pk.vedge
	if useVO {
		st.m["version_order_keys"] = pk.vo.used
		st.m["version_order_rejected_keys"] = pk.vo.rejected
		st.m["version_order_unknown_writers"] = pk.vo.unknownWriters
	}
	st.m["keys_ordered_by"] = map[string]int{"recorded": pk.vo.byRecorded, "inference": pk.vo.byInference, "completion": pk.vo.byCompletion}
	if res, stop := cancelled(ctx, r, st); stop {
		return res, nil
	}
	g := cycleStage(ctx, h, b, p, opts, &rwExplainer{pk}, col, r, st)
	col.into(r)
	r.Finish()
	if r.Verdict == check.Valid && Decides(r.Model) {
		// Valid on the known edges: is it valid on a total version order?
		completeVersions(ctx, h, g, pk, p, opts, r, st)
	}
	if pk.vo.rejected > 0 {
		// The recorded order contradicts the history (recorded.go):
		// never valid on it, never silently resolved.
		why := pk.vo.rejectionText()
		switch r.Verdict {
		case check.Valid:
			r.Verdict, r.Reason = check.Unknown, why
		case check.Unknown:
			if r.Reason == "" {
				r.Reason = why
			} else {
				r.Reason = why + "; " + r.Reason
			}
		default:
			r.Warnings = append(r.Warnings, why)
		}
	}
	r.Stats = st.done()
	return r, nil
}
