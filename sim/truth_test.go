package sim

// Ground-truth analysis used by the self-tests: it rebuilds from a generated
// history and its Truth the real serialization graph (Adya, "Weak
// Consistency", 1999, §3: ww from the version order, wr from the unique
// values read, rw from the version a read saw to the next one) and replays
// serial orders. It is independent of every checker package.

import (
	"slices"

	"github.com/txray/txray/history"
)

type analysis struct {
	h         *history.History
	tr        *Truth
	list      bool
	committed []bool             // really committed (and not lost)
	writer    map[int64]int32    // (key, value) -> writing txn
	lastWrite map[int64]int32    // (key, txn) -> last value written by txn to key
	pos       map[int64]int      // (key, value) -> position in version order
	lost      map[int32]bool     // lost commits
	edges     map[int32][]int32  // dependency edges among committed txns
	wwEdges   map[int32][]int32  // ww only
	readsBy   map[int32][]readAt // per txn, its completed reads
}

type readAt struct {
	op   int
	key  int32
	ver  int32 // value id of the version read (last list element), NoValue = initial
	list []int32
}

func kv(k, v int32) int64 { return int64(k)<<32 | int64(uint32(v)) }

func analyze(h *history.History, tr *Truth) *analysis {
	a := &analysis{h: h, tr: tr, list: h.Header.Workload == ListAppend, writer: map[int64]int32{},
		lastWrite: map[int64]int32{}, pos: map[int64]int{}, lost: map[int32]bool{},
		edges: map[int32][]int32{}, wwEdges: map[int32][]int32{}, readsBy: map[int32][]readAt{}}
	a.committed = make([]bool, len(h.Txns))
	for _, i := range tr.Order {
		a.committed[i] = true
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		st := t.Status
		if s, ok := tr.TrueStatus[int32(i)]; ok {
			st = s
		}
		if st == history.Committed && !a.committed[i] {
			a.lost[int32(i)] = true
		}
		for j := range t.Ops {
			o := &t.Ops[j]
			switch o.Kind {
			case history.Write, history.Append:
				a.writer[kv(o.Key, o.Value)] = int32(i)
				a.lastWrite[kv(o.Key, int32(i))] = o.Value
			case history.Read:
				if o.HasTime && !o.ListUnknown && st != history.Unknown && t.Status != history.Unknown {
					l := t.ListOf(o)
					r := readAt{op: j, key: o.Key, ver: o.Value, list: l}
					if o.IsList {
						r.ver = history.NoValue
						if n := len(l); n > 0 {
							r.ver = l[n-1]
						}
					}
					a.readsBy[int32(i)] = append(a.readsBy[int32(i)], r)
				}
			}
		}
	}
	for k, ord := range h.VersionOrder {
		for p, v := range ord {
			a.pos[kv(k, v)] = p
			if p > 0 {
				w0, w1 := a.writer[kv(k, ord[p-1])], a.writer[kv(k, v)]
				if w0 != w1 {
					a.edges[w0] = append(a.edges[w0], w1)
					a.wwEdges[w0] = append(a.wwEdges[w0], w1)
				}
			}
		}
	}
	for i, rs := range a.readsBy {
		if !a.committed[i] {
			continue
		}
		for _, r := range rs {
			ord := h.VersionOrder[r.key]
			next := 0
			if r.ver != history.NoValue {
				w, ok := a.writer[kv(r.key, r.ver)]
				if ok && w != i {
					a.edges[w] = append(a.edges[w], i)
				}
				p, ok := a.pos[kv(r.key, r.ver)]
				if !ok {
					continue // not an installed version (checked elsewhere)
				}
				next = p + 1
			}
			// rw: to the writer of the next installed version by another txn
			for ; next < len(ord); next++ {
				w := a.writer[kv(r.key, ord[next])]
				if w != i {
					a.edges[i] = append(a.edges[i], w)
					break
				}
			}
		}
	}
	return a
}

// cycle reports whether the graph has a cycle through distinct nodes
// (Tarjan SCC of size > 1).
func cycle(g map[int32][]int32) bool {
	index := map[int32]int{}
	low := map[int32]int{}
	on := map[int32]bool{}
	var stack []int32
	n := 0
	found := false
	var visit func(v int32)
	visit = func(v int32) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		on[v] = true
		for _, w := range g[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			size := 0
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				size++
				if w == v {
					break
				}
			}
			if size > 1 {
				found = true
			}
		}
	}
	keys := make([]int32, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, v := range keys {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return found
}

// replay executes Truth.Order serially and returns the transactions whose
// reads differ from the serial execution.
func (a *analysis) replay() []int32 {
	lists := map[int32][]int32{}
	regs := map[int32]int32{}
	var bad []int32
	for _, i := range a.tr.Order {
		t := &a.h.Txns[i]
		ownL := map[int32][]int32{}
		ownR := map[int32]int32{}
		ok := true
		reads := a.readsBy[i]
		ri := 0
		for j := range t.Ops {
			o := &t.Ops[j]
			switch o.Kind {
			case history.Append:
				ownL[o.Key] = append(ownL[o.Key], o.Value)
			case history.Write:
				ownR[o.Key] = o.Value
			case history.Read:
				if ri >= len(reads) || reads[ri].op != j {
					continue
				}
				ri++
				if a.list {
					want := append(append([]int32{}, lists[o.Key]...), ownL[o.Key]...)
					if !slices.Equal(want, t.ListOf(o)) {
						ok = false
					}
				} else {
					want, has := ownR[o.Key]
					if !has {
						want, has = regs[o.Key]
					}
					if !has {
						want = history.NoValue
					}
					if want != o.Value {
						ok = false
					}
				}
			}
		}
		if !ok {
			bad = append(bad, i)
		}
		for k, l := range ownL {
			lists[k] = append(lists[k], l...)
		}
		for k, v := range ownR {
			regs[k] = v
		}
	}
	return bad
}

// realtimeViolations counts transactions placed in Order after one that was
// invoked after they completed.
func (a *analysis) realtimeViolations() int {
	n := 0
	maxInv := int64(-1)
	for _, i := range a.tr.Order {
		t := &a.h.Txns[i]
		if t.Complete < maxInv {
			n++
		}
		maxInv = max(maxInv, t.Invoke)
	}
	return n
}

// snapshotViolations checks the snapshot-isolation read rule (Adya PL-SI /
// Cerone et al.'s INT and EXT): each read of a key the transaction has not
// written yet returns exactly the versions committed before its start
// timestamp; it returns the offending transactions.
func (a *analysis) snapshotViolations() []int32 {
	var bad []int32
	for i, rs := range a.readsBy {
		if !a.committed[i] {
			continue
		}
		t := &a.h.Txns[i]
		for _, r := range rs {
			wroteBefore := false
			for j := 0; j < r.op; j++ {
				if o := &t.Ops[j]; o.Key == r.key && (o.Kind == history.Write || o.Kind == history.Append) {
					wroteBefore = true
				}
			}
			if wroteBefore {
				continue
			}
			var want []int32
			for _, v := range a.h.VersionOrder[r.key] {
				w := a.writer[kv(r.key, v)]
				if a.h.Txns[w].CommitTS.P < t.StartTS.P || a.tr.TrueCommitTS[w].Set && a.tr.TrueCommitTS[w].P < t.StartTS.P {
					want = append(want, v)
				}
			}
			if a.list {
				if !slices.Equal(want, r.list) {
					bad = append(bad, i)
					break
				}
			} else {
				wv := history.NoValue
				if len(want) > 0 {
					wv = want[len(want)-1]
				}
				if wv != r.ver {
					bad = append(bad, i)
					break
				}
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// lostUpdates counts pairs of committed transactions that both wrote a key
// while concurrent ([start, commit] intervals overlap): first-updater- and
// first-committer-wins forbid it.
func (a *analysis) lostUpdates() int {
	byKey := map[int32][]int32{}
	for _, i := range a.tr.Order {
		t := &a.h.Txns[i]
		seen := map[int32]bool{}
		for j := range t.Ops {
			o := &t.Ops[j]
			if (o.Kind == history.Write || o.Kind == history.Append) && !seen[o.Key] {
				seen[o.Key] = true
				byKey[o.Key] = append(byKey[o.Key], i)
			}
		}
	}
	n := 0
	for _, ws := range byKey {
		for x := 0; x < len(ws); x++ {
			for y := x + 1; y < len(ws); y++ {
				p, q := &a.h.Txns[ws[x]], &a.h.Txns[ws[y]]
				if p.StartTS.P < q.CommitTS.P && q.StartTS.P < p.CommitTS.P {
					n++
				}
			}
		}
	}
	return n
}

// readIssues counts reads by committed txns of values never written, of
// versions written by aborted transactions (G1a), and of non-final versions
// (G1b), excluding own writes.
func (a *analysis) readIssues() (phantom, g1a, g1b int, who []int32) {
	for i, rs := range a.readsBy {
		if !a.committed[i] {
			continue
		}
		for _, r := range rs {
			vals := r.list
			if !a.list {
				vals = nil
				if r.ver != history.NoValue {
					vals = []int32{r.ver}
				}
			}
			bad := false
			for _, v := range vals {
				w, ok := a.writer[kv(r.key, v)]
				if !ok {
					phantom++
					bad = true
					continue
				}
				if w != i && !a.committed[w] && !a.lost[w] {
					g1a++
					bad = true
				}
			}
			if r.ver != history.NoValue {
				if w, ok := a.writer[kv(r.key, r.ver)]; ok && w != i && a.lastWrite[kv(r.key, w)] != r.ver {
					g1b++
					bad = true
				}
			}
			if bad {
				who = append(who, i)
			}
		}
	}
	return
}

// commitOrderMismatch counts adjacent version pairs whose writers committed
// in the other order.
func (a *analysis) commitOrderMismatch() int {
	rank := make(map[int32]int, len(a.tr.Order))
	for p, i := range a.tr.Order {
		rank[i] = p
	}
	n := 0
	for k, ord := range a.h.VersionOrder {
		for p := 1; p < len(ord); p++ {
			w0, w1 := a.writer[kv(k, ord[p-1])], a.writer[kv(k, ord[p])]
			if w0 != w1 && rank[w0] > rank[w1] {
				n++
			}
		}
	}
	return n
}

// prefixViolations counts committed list reads (of keys not yet written by
// the reader) that are not a prefix of the version order.
func (a *analysis) prefixViolations() int {
	n := 0
	for i, rs := range a.readsBy {
		if !a.committed[i] || !a.list {
			continue
		}
		for _, r := range rs {
			ord := a.h.VersionOrder[r.key]
			if len(r.list) > len(ord) || !slices.Equal(ord[:len(r.list)], r.list) {
				own := false
				for _, v := range r.list {
					if a.writer[kv(r.key, v)] == i {
						own = true
					}
				}
				if !own {
					n++
				}
			}
		}
	}
	return n
}
