package weak

import (
	"context"
	"fmt"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/regread"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// List-append histories (Elle's list-append: appends of unique values, reads
// of whole lists). In Cerone et al.'s abstract executions a list read
// returns the appends of the transactions visible to the reader in
// arbitration (commit) order, so, for a read of x returning [e1 ... em]:
//
//   - the reader observed every element's writer (a wr edge from each);
//   - the writers' order in the list is their commit order (version
//     edges writer(e_i) -> writer(e_i+1), from the longest read of x);
//   - every transaction the level makes visible to the reader (the axiom's
//     premise: an earlier read's writer for read committed, so ∪ wr for read
//     atomic, (so ∪ wr)+ for causal) must have all its appends to x in the
//     list. A visible append missing from the list is reported at once,
//     typed by the premise as the register patterns are.
//
// The order-free checks of list reads (elements nobody appended, aborted
// appends, duplicates, incompatible orders, own appends missing) are Elle's:
// the checker runs the registered "list-append" checker at read-committed
// and reports every anomaly it finds that read-committed prohibits (each of
// them is forbidden at every level decided here, which all imply
// read-committed).

// listIndex maps appended elements to their writers.
type listIndex struct {
	writers map[[2]int32]int32 // (key, value) -> txn, -2 if appended twice
	list    []bool             // per rd* index: a list read
	nw      []int32            // per rd* index of a list read: distinct external writers
	longest map[int32][2]int32 // per key: (txn, op) of its longest committed list read
}

func newListIndex(h *history.History) *listIndex {
	var li *listIndex
	for i := range h.Txns {
		for j := range h.Txns[i].Ops {
			o := &h.Txns[i].Ops[j]
			if o.Kind != history.Append {
				continue
			}
			if li == nil {
				li = &listIndex{writers: map[[2]int32]int32{}, longest: map[int32][2]int32{}}
			}
			k := [2]int32{o.Key, o.Value}
			if w, ok := li.writers[k]; ok && w != int32(i) {
				li.writers[k] = -2
			} else {
				li.writers[k] = int32(i)
			}
		}
	}
	return li
}

// writer returns the transaction that appended v to k, or -1 (none) / -2
// (ambiguous).
func (li *listIndex) writer(k, v int32) int32 {
	if w, ok := li.writers[[2]int32{k, v}]; ok {
		return w
	}
	return -1
}

// indexList records a list read of t (op j) if every element has one
// included writer (Elle reports the others).
func (a *analysis) indexList(t int32, j int, o *history.Op, seenW []int32) {
	li := a.lists
	if o.ListUnknown {
		return
	}
	lst := a.h.Txns[t].ListOf(o)
	last, nw := regread.Initial, int32(0)
	for _, v := range lst {
		w := li.writer(o.Key, v)
		if w < 0 || !a.incl[w] {
			return
		}
		if w != t {
			last = w
		}
	}
	r := int32(len(a.rdOp))
	a.rdOp = append(a.rdOp, int32(j))
	a.rdKey = append(a.rdKey, o.Key)
	a.rdW = append(a.rdW, last)
	li.list = append(li.list, make([]bool, int(r)+1-len(li.list))...)
	li.list[r] = true
	for _, v := range lst {
		w := li.writer(o.Key, v)
		if w == t {
			continue
		}
		if seenW[w] != t+1 {
			seenW[w] = t + 1
			a.pred = append(a.pred, w)
			a.predLab = append(a.predLab, int32(j))
		}
	}
	// distinct external writers of this read
	seen := map[int32]bool{}
	for _, v := range lst {
		if w := li.writer(o.Key, v); w != t && !seen[w] {
			seen[w] = true
			nw++
		}
	}
	li.nw = append(li.nw, make([]int32, int(r)+1-len(li.nw))...)
	li.nw[r] = nw
	if a.h.Txns[t].Status == history.Committed {
		if cur, ok := li.longest[o.Key]; !ok || a.h.Txns[cur[0]].Ops[cur[1]].ListLen() < len(lst) {
			li.longest[o.Key] = [2]int32{t, int32(j)}
		}
	}
}

// inList reports whether t1's appends to the key of read r all appear in it.
func (a *analysis) inList(t1, r int32) bool {
	rt := &a.h.Txns[a.reader(r)]
	o := &rt.Ops[a.rdOp[r]]
	all := 0
	for i := range a.h.Txns[t1].Ops {
		if p := &a.h.Txns[t1].Ops[i]; p.Kind == history.Append && p.Key == o.Key {
			all++
		}
	}
	if all == 0 {
		return true // no append to the key: nothing can be missing
	}
	in := 0
	for _, v := range rt.ListOf(o) {
		if a.lists.writer(o.Key, v) == t1 {
			in++
		}
	}
	return in == all
}

// reader returns the transaction of rd* index r.
func (a *analysis) reader(r int32) int32 {
	lo, hi := 0, a.n
	for lo < hi { // first t with rdStart[t+1] > r
		m := (lo + hi) / 2
		if a.rdStart[m+1] > r {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return int32(lo)
}

// versionEdges adds the commit-order edges the longest list read of each key
// shows, reporting at once those causal order contradicts.
func (a *analysis) versionEdges() {
	for k, ref := range a.lists.longest {
		o := &a.h.Txns[ref[0]].Ops[ref[1]]
		prev := int32(-1)
		for _, v := range a.h.Txns[ref[0]].ListOf(o) {
			w := a.lists.writer(k, v)
			if w < 0 || w == prev {
				continue
			}
			if prev >= 0 {
				e := coEdge{from: prev, to: w, reader: ref[0], key: k, readOp: ref[1], via: -1, rank: levelRC, version: true}
				switch {
				case a.hbEq(prev, w):
				case a.hbEq(w, prev):
					a.report(e, nil, false)
				default:
					a.edges = append(a.edges, e)
				}
			}
			prev = w
		}
	}
}

// missingAppend reports a transaction the level makes visible to a list
// read whose appends the list lacks.
func (a *analysis) missingAppend(e coEdge) {
	typ := anomalyType([]coEdge{e}, true)
	a.res.Counts[typ]++
	if a.res.Counts[typ] > a.cap {
		return
	}
	h := a.h
	o := &h.Txns[e.reader].Ops[e.readOp]
	why := a.premiseOf(e)
	defer func() {
		an := &a.res.Anomalies[len(a.res.Anomalies)-1]
		an.Txns = append(an.Txns, e.from)
		an.Ops[e.from] = h.TxnString(e.from)
	}()
	a.add(typ, nil, []coEdge{e}, fmt.Sprintf("%s read %s (op %d); %s appended to %s, and %s, so %s makes %s visible to %s (Biswas & Enea 2019; Cerone et al. 2015): a list read returns every visible append, but %s's append to %s is not in the list (or only partly).",
		h.TxnName(e.reader), h.OpString(&h.Txns[e.reader], o), e.readOp, h.TxnName(e.from), h.KeyName(e.key), why, e.rank,
		h.TxnName(e.from), h.TxnName(e.reader), h.TxnName(e.from), h.KeyName(e.key)))
}

// premiseOf is the premise clause of premise(e), for list explanations.
func (a *analysis) premiseOf(e coEdge) string {
	h := a.h
	t3 := h.Txns[e.reader]
	switch {
	case e.via >= 0:
		v := &t3.Ops[e.via]
		return fmt.Sprintf("%s also read %s (op %d) from it", h.TxnName(e.reader), h.OpString(&t3, v), e.via)
	case a.sess[e.from] == a.sess[e.reader] && a.pos[e.from] < a.pos[e.reader]:
		return fmt.Sprintf("it precedes %s in session %s", h.TxnName(e.reader), a.sessName[a.sess[e.reader]])
	}
	return fmt.Sprintf("it is in the causal past of %s (%s)", h.TxnName(e.reader), renderPath(h, a.hbPath(e.from, e.reader)))
}

// elleListAnomalies runs the registered list-append checker at
// read-committed and returns the anomalies it finds that read-committed
// prohibits; ok is false when no list-append checker is registered.
func elleListAnomalies(ctx context.Context, h *history.History, opts check.Options) ([]check.Anomaly, map[string]int, bool, error) {
	c, found := check.Lookup("list-append")
	if !found {
		return nil, nil, false, nil
	}
	o := opts
	o.Model = model.ReadCommitted
	r, err := c.Check(ctx, h, o)
	if err != nil {
		return nil, nil, true, err
	}
	var out []check.Anomaly
	for _, an := range r.Anomalies {
		if !an.Allowed {
			out = append(out, an)
		}
	}
	trunc := map[string]int{}
	for t, n := range r.Truncated {
		if model.Prohibits(model.ReadCommitted, t) {
			trunc[t] = n
		}
	}
	return out, trunc, true, nil
}

// soInList counts the distinct writers of list read r that precede its
// reader t3 in session order.
func (a *analysis) soInList(t3, r int32) int32 {
	o := &a.h.Txns[t3].Ops[a.rdOp[r]]
	var seen []int32
	for _, v := range a.h.Txns[t3].ListOf(o) {
		w := a.lists.writer(o.Key, v)
		if w >= 0 && w != t3 && a.sess[w] == a.sess[t3] && a.pos[w] < a.pos[t3] && !containsTxn(seen, w) {
			seen = append(seen, w)
		}
	}
	return int32(len(seen))
}

func containsTxn(xs []int32, x int32) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// missingSo reports the latest session predecessor of t3 whose appends to
// the key of list read r are missing from it.
func (a *analysis) missingSo(t3, r int32) {
	x := a.rdKey[r]
	l := a.sessions[a.sess[t3]]
	for p := a.pos[t3] - 2; p >= 0; p-- {
		t1 := l[p]
		if a.writesKey(t1, x) && !a.inList(t1, r) {
			via, rank, same := a.refine(t1, t3, r)
			a.missingAppend(coEdge{from: t1, to: a.rdW[r], reader: t3, key: x, readOp: a.rdOp[r], via: via, rank: rank, sameKey: same})
			return
		}
	}
}

func (a *analysis) writesKey(t, x int32) bool {
	for i := a.wkStart[t]; i < a.wkStart[t+1]; i++ {
		if a.wk[i] == x {
			return true
		}
	}
	return false
}

// listCausalCheck reports, for each list read whose causal past holds more
// transactions writing its key than the list shows, one missing writer.
func (a *analysis) listCausalCheck(acc []int32) {
	var byKey map[int32][]int32
	for r := range acc {
		if !a.lists.list[r] || acc[r] <= a.lists.nw[r] {
			continue
		}
		if byKey == nil {
			byKey = map[int32][]int32{}
			for t := 0; t < a.n; t++ {
				if a.incl[t] {
					for i := a.wkStart[t]; i < a.wkStart[t+1]; i++ {
						byKey[a.wk[i]] = append(byKey[a.wk[i]], int32(t))
					}
				}
			}
		}
		t3 := a.reader(int32(r))
		for _, t1 := range byKey[a.rdKey[r]] {
			if t1 != t3 && a.hbEq(t1, t3) && !a.inList(t1, int32(r)) {
				via, rank, same := a.refine(t1, t3, int32(r))
				a.missingAppend(coEdge{from: t1, to: a.rdW[r], reader: t3, key: a.rdKey[r], readOp: a.rdOp[r], via: via, rank: rank, sameKey: same})
				break
			}
		}
	}
}

// observed reports whether list read r of t3 contains an element of t1.
func (a *analysis) observed(t3, r, t1 int32) bool {
	o := &a.h.Txns[t3].Ops[a.rdOp[r]]
	for _, v := range a.h.Txns[t3].ListOf(o) {
		if a.lists.writer(o.Key, v) == t1 {
			return true
		}
	}
	return false
}
