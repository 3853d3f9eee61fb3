package proptest

import (
	"sort"

	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// graphModel resolves m (a model or DBMS profile) to the edge kinds whose
// cycles it prohibits: "ww" (G0), "wwwr" (G1c), "si" (G1c and
// G-single-item), "all" (G2-item), "rt" (G2-item-realtime); "" for none.
func graphModel(m string) string {
	switch {
	case model.Prohibits(m, model.G2ItemRealtime):
		return "rt"
	case model.Prohibits(m, model.G2Item):
		return "all"
	case model.Prohibits(m, model.GSingleItem):
		return "si"
	case model.Prohibits(m, model.G1c):
		return "wwwr"
	case model.Prohibits(m, model.G0):
		return "ww"
	}
	return ""
}

const (
	eWW = 1 << iota
	eWR
	eRW
	eRT
)

type dsg struct {
	n   int
	adj []map[int32]uint8 // from -> to -> edge kinds
}

func (g *dsg) add(a, b int32, k uint8) {
	if a == b || a < 0 || b < 0 {
		return
	}
	if g.adj[a] == nil {
		g.adj[a] = map[int32]uint8{}
	}
	g.adj[a][b] |= k
}

// observableCycle builds the dependency graph of committed transactions
// that list reads reveal (Elle §3, §5.1; Adya 1999 §3): for each key the
// version order is the longest committed read (every committed read must
// be a prefix of it, else the key is skipped); ww edges join the writers of
// consecutive observed elements of committed writers, wr edges run from the writer of a read's
// last element to the reader, rw edges from a reader to the writer of the
// element following what it read (only reads before the reader's own
// write of the key), and for strict models realtime edges T1 → T2 when T1
// completed before T2 was invoked. It returns a witness if the graph has a
// cycle m prohibits: any cycle for serializable and stronger (with
// realtime edges for strict-serializable), a ww/wr cycle or a cycle with
// exactly one rw edge for snapshot-isolation, a ww/wr cycle for
// read-committed, a ww cycle for read-uncommitted. Only list-append
// histories are considered.
func observableCycle(h *history.History, ix *writeIndex, m string) string {
	gm := graphModel(m)
	if gm == "" {
		return ""
	}
	n := len(h.Txns)
	g := &dsg{n: n, adj: make([]map[int32]uint8, n)}
	longest := longestReads(h)
	bad := incompatibleKeys(h, longest)
	writer := func(k, v int32) int32 {
		w, ok := ix.w[wkey{k, v}]
		if !ok || !committed(&h.Txns[w.txn]) {
			return -1
		}
		return w.txn
	}
	for k, l := range longest {
		if bad[k] {
			continue
		}
		prev := int32(-1) // versions of uncommitted writers are not in the order (Adya §3.1)
		for _, e := range l {
			if w := writer(k, e); w >= 0 {
				g.add(prev, w, eWW)
				prev = w
			}
		}
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		if !committed(t) {
			continue
		}
		wrote := map[int32]bool{}
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind != history.Read {
				wrote[o.Key] = true
				continue
			}
			if !o.IsList || o.ListUnknown || bad[o.Key] || wrote[o.Key] {
				continue
			}
			if len(t.ListOf(o)) > 0 {
				g.add(writer(o.Key, t.ListOf(o)[len(t.ListOf(o))-1]), t.Index, eWR)
			}
			for _, e := range longest[o.Key][len(t.ListOf(o)):] {
				if w := writer(o.Key, e); w >= 0 {
					g.add(t.Index, w, eRW)
					break
				}
			}
		}
	}
	if gm == "rt" {
		var cs []int32
		for i := range h.Txns {
			if committed(&h.Txns[i]) && h.Txns[i].HasTime {
				cs = append(cs, int32(i))
			}
		}
		sort.Slice(cs, func(a, b int) bool { return h.Txns[cs[a]].Invoke < h.Txns[cs[b]].Invoke })
		for _, a := range cs {
			for _, b := range cs {
				if h.Txns[a].Complete < h.Txns[b].Invoke {
					g.add(a, b, eRT)
				}
			}
		}
	}
	var mask uint8
	switch gm {
	case "rt":
		mask = eWW | eWR | eRW | eRT
	case "all":
		mask = eWW | eWR | eRW
	case "si", "wwwr":
		mask = eWW | eWR
	case "ww":
		mask = eWW
	}
	if a, b := g.cycle(mask); a >= 0 {
		return "dependency cycle through " + h.TxnName(a) + " and " + h.TxnName(b)
	}
	if gm == "si" {
		for a := range g.adj {
			for b, k := range g.adj[a] {
				if k&eRW != 0 && g.reach(b, int32(a), eWW|eWR) {
					return "G-single: " + h.TxnName(int32(a)) + " -rw-> " + h.TxnName(b) + " and back by ww/wr"
				}
			}
		}
	}
	return ""
}

// longestReads returns, per key, the longest list a committed transaction
// read.
func longestReads(h *history.History) map[int32][]int32 {
	longest := map[int32][]int32{}
	for i := range h.Txns {
		t := &h.Txns[i]
		if !committed(t) {
			continue
		}
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind == history.Read && o.IsList && !o.ListUnknown && len(t.ListOf(o)) > len(longest[o.Key]) {
				longest[o.Key] = t.ListOf(o)
			}
		}
	}
	return longest
}

// incompatibleKeys returns the keys with a committed list read that is not
// a prefix of the longest committed read of the key.
func incompatibleKeys(h *history.History, longest map[int32][]int32) map[int32]bool {
	bad := map[int32]bool{}
	for i := range h.Txns {
		t := &h.Txns[i]
		if !committed(t) {
			continue
		}
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind == history.Read && o.IsList && !o.ListUnknown {
				l := longest[o.Key]
				if len(t.ListOf(o)) > len(l) || !sameState(t.ListOf(o), l[:len(t.ListOf(o))]) {
					bad[o.Key] = true
				}
			}
		}
	}
	return bad
}

// incompatibleOrder: two committed reads of one list key are not prefixes
// of a single version order (Elle §5.1 incompatible-order).
func incompatibleOrder(h *history.History) string {
	for k := range incompatibleKeys(h, longestReads(h)) {
		return "committed reads of " + h.KeyName(k) + " are not prefixes of one order"
	}
	return ""
}

// cycle returns two transactions on a cycle of edges in mask (Tarjan's
// SCC), or -1.
func (g *dsg) cycle(mask uint8) (int32, int32) {
	idx := make([]int32, g.n)
	low := make([]int32, g.n)
	on := make([]bool, g.n)
	for i := range idx {
		idx[i] = -1
	}
	var stack []int32
	var next int32
	ra, rb := int32(-1), int32(-1)
	var visit func(v int32)
	visit = func(v int32) {
		idx[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for w, k := range g.adj[v] {
			if k&mask == 0 {
				continue
			}
			if idx[w] < 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], idx[w])
			}
		}
		if low[v] == idx[v] {
			var comp []int32
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 && ra < 0 {
				ra, rb = comp[0], comp[1]
			}
		}
	}
	for v := range g.n {
		if idx[v] < 0 {
			visit(int32(v))
		}
	}
	return ra, rb
}

func (g *dsg) reach(from, to int32, mask uint8) bool {
	seen := map[int32]bool{from: true}
	q := []int32{from}
	for len(q) > 0 {
		v := q[0]
		q = q[1:]
		if v == to {
			return true
		}
		for w, k := range g.adj[v] {
			if k&mask != 0 && !seen[w] {
				seen[w] = true
				q = append(q, w)
			}
		}
	}
	return false
}

// tsViolation evaluates, by brute force, the timestamp axioms Chronos
// checks (package chronos doc; Chronos ICDE 2024 §III) on the committed
// transactions' recorded start/commit timestamps: for snapshot-isolation
// Ext (an external read returns the state committed at or before sts) and
// NoConflict (no writer of a key commits in (T.sts, T.cts] of another
// writer T); for serializable Ext at the commit point (state committed
// before cts); for strict-serializable also real time (T1 completed before
// T2 was invoked ⇒ T1.cts < T2.cts); Session (prev.cts ≤ next.sts in each
// session) only for the strong-session models — plain snapshot isolation
// and serializability do not order a session's transactions (Adya 1999;
// Elle's strong-session-* models add it). Returns a witness or "".
func tsViolation(h *history.History, ix *writeIndex, m string) string {
	base := m
	if p, ok := model.LookupProfile(m); ok {
		base = p.Model
	}
	if c, err := model.Canonical(base); err == nil {
		base = c
	}
	si := base == model.SnapshotIsolation || base == model.StrongSessionSnapshotIsolation
	session := base == model.StrongSessionSnapshotIsolation || base == model.StrongSessionSerializable
	strict := base == model.StrictSerializable
	if !si && !strict && base != model.Serializable && base != model.StrongSessionSerializable {
		return ""
	}
	var cs []*history.Txn
	for i := range h.Txns {
		t := &h.Txns[i]
		if committed(t) && t.StartTS.Set && t.CommitTS.Set {
			cs = append(cs, t)
		}
	}
	sort.Slice(cs, func(a, b int) bool { return cs[a].CommitTS.Less(cs[b].CommitTS) })
	type wr struct {
		t    *history.Txn
		vals []int32 // appends in order, or [final value]
	}
	writers := map[int32][]wr{} // key -> writers in commit order
	for _, t := range cs {
		per := map[int32][]int32{}
		var order []int32
		for _, o := range t.Ops {
			switch o.Kind {
			case history.Append:
				if _, ok := per[o.Key]; !ok {
					order = append(order, o.Key)
				}
				per[o.Key] = append(per[o.Key], o.Value)
			case history.Write:
				if _, ok := per[o.Key]; !ok {
					order = append(order, o.Key)
				}
				per[o.Key] = []int32{o.Value}
			}
		}
		for _, k := range order {
			writers[k] = append(writers[k], wr{t, per[k]})
		}
	}
	if session {
		bySess := map[int32][]*history.Txn{}
		for _, t := range cs {
			if t.Session >= 0 {
				bySess[t.Session] = append(bySess[t.Session], t)
			}
		}
		for _, ts := range bySess {
			sort.Slice(ts, func(a, b int) bool { return ts[a].Seq < ts[b].Seq })
			for i := 1; i < len(ts); i++ {
				if ts[i].StartTS.Less(ts[i-1].CommitTS) {
					return "session: " + h.TxnName(ts[i].Index) + " starts before " + h.TxnName(ts[i-1].Index) + " committed"
				}
			}
		}
	}
	if si {
		for k, ws := range writers {
			for _, a := range ws {
				for _, b := range ws {
					if a.t != b.t && a.t.StartTS.Less(b.t.CommitTS) && !a.t.CommitTS.Less(b.t.CommitTS) {
						return "noconflict: " + h.TxnName(b.t.Index) + " commits " + h.KeyName(k) + " inside " + h.TxnName(a.t.Index)
					}
				}
			}
		}
	}
	for _, t := range cs {
		snap := t.StartTS
		for k, a := range accesses(t) {
			if !a.readFirst {
				continue
			}
			var want []int32
			isList := false
			for _, o := range t.Ops {
				if o.Key == k {
					isList = o.IsList || o.Kind == history.Append
					break
				}
			}
			for _, w := range writers[k] {
				visible := !snap.Less(w.t.CommitTS) // w.cts ≤ sts
				if !si {
					visible = w.t.CommitTS.Less(t.CommitTS)
				}
				if !visible || w.t == t {
					continue
				}
				if isList {
					want = append(want, w.vals...)
				} else {
					want = w.vals
				}
			}
			if !sameState(want, a.state) {
				return "ext: " + h.TxnName(t.Index) + " read " + h.KeyName(k) + " = " + h.ListString(a.state) + ", committed state " + h.ListString(want)
			}
		}
	}
	if strict {
		for _, a := range cs {
			for _, b := range cs {
				if a.HasTime && b.HasTime && a.Complete < b.Invoke && !a.CommitTS.Less(b.CommitTS) {
					return "realtime: " + h.TxnName(a.Index) + " completed before " + h.TxnName(b.Index) + " began but commits later"
				}
			}
		}
	}
	_ = ix
	return ""
}
