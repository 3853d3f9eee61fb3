package graph

import (
	"cmp"
	"slices"
	"sort"

	"github.com/txray/txray/history"
	"github.com/txray/txray/internal/mem"
)

// fresh returns make([]T, n), faulted in by one request to the kernel
// when it is big (internal/mem): Builder and Build write hundreds of
// megabytes of fresh arrays, and a page fault per page cost more than the
// writes.
func fresh[T any](n int) []T { return mem.Make[T](n, 1<<20) }

// NoKey is the Why.Key of edges that are not about a key: the process and
// realtime edges this package creates.
const NoKey int32 = -1

// inPlaceAbove is the edge count above which Build groups edges in place
// (about 2x slower, about half the peak memory: 11M edges peak at ~670 MiB
// instead of ~980 MiB) instead of scattering them into a new array. A
// variable so tests can exercise both paths.
var inPlaceAbove = 8 << 20

const (
	chunkShift = 15
	chunkSize  = 1 << chunkShift
)

// Builder accumulates edges for a Graph. It is not safe for concurrent use.
//
// Memory: edges are buffered in fixed-size chunks (no doubling copies);
// Build scatters them into one CSR array, so the peak is about twice the
// edge storage (36 bytes per edge).
type Builder struct {
	n       int
	deg     []int // deg[v+1] counts edges out of v
	chunks  [][]Edge
	count   int
	dropped int
	rt      *realtime
}

// NewBuilder returns a builder for a graph over n transactions (nodes
// 0..n-1, history.Txn.Index).
func NewBuilder(n int) *Builder {
	if n < 0 {
		n = 0
	}
	return &Builder{n: n, deg: fresh[int](n + 1)}
}

// Add records the edge from -> to. Self-loops are ignored (a dependency of
// a transaction on itself is not a cycle in Adya's DSG; checkers report such
// cases as non-cycle anomalies, e.g. future reads). Endpoints outside
// 0..n-1 are ignored and counted (see Dropped). If rel has several bits, one
// edge per relation is added. Duplicate (from, to, rel) edges keep the first
// Why.
func (b *Builder) Add(from, to int32, rel Rel, why Why) {
	if from == to {
		return
	}
	if from < 0 || to < 0 || int(from) >= b.n || int(to) >= b.n {
		b.dropped++
		return
	}
	rel &= All
	for r := WW; r <= Realtime && rel != 0; r <<= 1 {
		if rel&r == 0 {
			continue
		}
		rel &^= r
		if len(b.chunks) == 0 || len(b.chunks[len(b.chunks)-1]) == chunkSize {
			b.chunks = append(b.chunks, fresh[Edge](chunkSize)[:0])
		}
		c := &b.chunks[len(b.chunks)-1]
		*c = append(*c, Edge{From: from, To: to, Rel: r, Why: why})
		b.count++
		b.deg[from+1]++
	}
}

// Dropped counts Add calls ignored because an endpoint was out of range
// (a caller bug; reported rather than panicking).
func (b *Builder) Dropped() int { return b.dropped }

// AddProcessOrder adds Process edges between consecutive included
// transactions of each session, in Seq order (Elle §4: process order).
// Their Why is {Key: NoKey, V1: from's Seq, V2: to's Seq, Op1: -1, Op2: -1}.
// Transactions with Session < 0 have no session and get no edges.
//
// A transaction whose Status is history.Unknown (an indeterminate outcome,
// Jepsen :info) may have committed at any later time, so it is never a
// process predecessor: the next transaction of the session is linked from
// the last included transaction whose outcome is known. The number of edges
// is at most the number of included transactions.
func (b *Builder) AddProcessOrder(h *history.History, include func(t *history.Txn) bool) {
	if h == nil {
		return
	}
	type ent struct {
		sess, seq, idx int32
		unknown        bool
	}
	// Bucket by session (dense ids: counting sort), then order each
	// session by Seq (usually already in order).
	maxSess := int32(-1)
	cnt := 0
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Session < 0 || int(t.Index) >= b.n || t.Index < 0 || (include != nil && !include(t)) {
			continue
		}
		maxSess = max(maxSess, t.Session)
		cnt++
	}
	if cnt == 0 {
		return
	}
	var es []ent
	if int(maxSess) <= 4*cnt {
		off := make([]int32, maxSess+2)
		for i := range h.Txns {
			t := &h.Txns[i]
			if t.Session < 0 || int(t.Index) >= b.n || t.Index < 0 || (include != nil && !include(t)) {
				continue
			}
			off[t.Session+1]++
		}
		for i := 1; i < len(off); i++ {
			off[i] += off[i-1]
		}
		es = make([]ent, cnt)
		pos := slices.Clone(off)
		for i := range h.Txns {
			t := &h.Txns[i]
			if t.Session < 0 || int(t.Index) >= b.n || t.Index < 0 || (include != nil && !include(t)) {
				continue
			}
			es[pos[t.Session]] = ent{t.Session, t.Seq, t.Index, t.Status == history.Unknown}
			pos[t.Session]++
		}
		for sidx := 0; sidx+1 < len(off); sidx++ {
			seg := es[off[sidx]:off[sidx+1]]
			if !slices.IsSortedFunc(seg, func(a, c ent) int { return cmp.Compare(a.seq, c.seq) }) {
				slices.SortStableFunc(seg, func(a, c ent) int { return cmp.Compare(a.seq, c.seq) })
			}
		}
	} else {
		es = make([]ent, 0, cnt)
		for i := range h.Txns {
			t := &h.Txns[i]
			if t.Session < 0 || int(t.Index) >= b.n || t.Index < 0 || (include != nil && !include(t)) {
				continue
			}
			es = append(es, ent{t.Session, t.Seq, t.Index, t.Status == history.Unknown})
		}
		slices.SortStableFunc(es, func(a, c ent) int {
			if a.sess != c.sess {
				return cmp.Compare(a.sess, c.sess)
			}
			return cmp.Compare(a.seq, c.seq)
		})
	}
	prev, prevSeq := int32(-1), int32(0)
	prevSess := int32(-1)
	for _, e := range es {
		if e.sess != prevSess {
			prev, prevSess = -1, e.sess
		}
		if prev >= 0 {
			b.Add(prev, e.idx, Process, Why{Key: NoKey, V1: prevSeq, V2: e.seq, Op1: -1, Op2: -1})
		}
		if !e.unknown {
			prev, prevSeq = e.idx, e.seq
		}
	}
}

// realtime is the realtime order in linear space: instead of the (possibly
// quadratic) set of pairs T1.Complete < T2.Invoke, or Elle's transitive
// reduction (which still has Θ(concurrency) edges per transaction), we keep
// one "time point" per predecessor transaction, sorted by completion time,
// chained in order: T1 -> point(T1) -> point(next) -> ... -> point(k) -> T2
// where point(k) is the last completion strictly before T2's invocation.
// T1 reaches T2 through the chain exactly when T1.Complete < T2.Invoke, so
// the order is represented exactly with 3n links. Searches walk the points
// as zero-length hops and report a single Realtime edge T1 -> T2.
type realtime struct {
	m     int     // number of points
	of    []int32 // per txn: its point (as predecessor), -1 if none
	off   []int32 // per point k: successors rtSucc[off[k]:off[k+1]]
	succ  []int32 // txns whose last preceding completion is point k
	inv   []int64 // per txn: invoke time (for explanations)
	comp  []int64 // per txn: clamped complete time
	hasTo []bool  // per txn: has a realtime predecessor
}

// AddRealtimeOrder records the realtime order among included transactions
// that have client times (Txn.HasTime): T1 precedes T2 when T1.Complete <
// T2.Invoke (Adya's PL-SS / Elle's strict-serializable realtime edges).
// Intervals with Complete < Invoke are treated as the point [Invoke, Invoke].
// A transaction with Status Unknown is never a realtime predecessor (its
// commit could be arbitrarily late, as in Elle), but can be a successor.
//
// The order is stored implicitly in O(n) space (see Graph.RealtimeBefore);
// Graph.Out does not list realtime edges, but SCCs and FindCycles follow
// them and report them as single Realtime edges with Why {Key: NoKey, V1,
// V2, Op1, Op2: -1}. Calling it again replaces
// the previous realtime order.
func (b *Builder) AddRealtimeOrder(h *history.History, include func(t *history.Txn) bool) {
	if h == nil {
		return
	}
	n := b.n
	rt := &realtime{of: fresh[int32](n), inv: fresh[int64](n), comp: fresh[int64](n), hasTo: fresh[bool](n)}
	for i := range rt.of {
		rt.of[i] = -1
	}
	type tv struct {
		t int64
		i int32
	}
	// At most one entry per transaction each: sized once (growing them by
	// append copied and faulted in about twice the memory).
	preds := fresh[tv](len(h.Txns))[:0]
	succs := fresh[tv](len(h.Txns))[:0]
	for i := range h.Txns {
		t := &h.Txns[i]
		if !t.HasTime || t.Index < 0 || int(t.Index) >= n {
			continue
		}
		if include != nil && !include(t) {
			continue
		}
		c := t.Complete
		if c < t.Invoke {
			c = t.Invoke
		}
		rt.inv[t.Index], rt.comp[t.Index] = t.Invoke, c
		succs = append(succs, tv{t.Invoke, t.Index})
		if t.Status != history.Unknown {
			preds = append(preds, tv{c, t.Index})
		}
	}
	// Stable LSD radix sorts on t - min (ties keep index order), with only
	// as many 16-bit passes as the span max - min needs: three for the
	// nanosecond clocks of histories up to about three days.
	var tmp []tv
	for _, a := range [][]tv{preds, succs} {
		if len(a) == 0 {
			continue
		}
		sorted := true
		lo, hi := a[0].t, a[0].t
		for i := 1; i < len(a); i++ {
			x := a[i].t
			if x < a[i-1].t {
				sorted = false
			}
			lo, hi = min(lo, x), max(hi, x)
		}
		if sorted {
			continue
		}
		if tmp == nil {
			tmp = fresh[tv](max(len(preds), len(succs)))
		}
		span := uint64(hi) - uint64(lo) // hi - lo without overflow
		src, dst := a, tmp[:len(a)]
		for shift := 0; shift < 64 && span>>shift != 0; shift += 16 {
			var cnt [1 << 16]int32
			for _, x := range src {
				cnt[(uint64(x.t)-uint64(lo))>>shift&0xffff]++
			}
			sum := int32(0)
			for d := range cnt {
				c := cnt[d]
				cnt[d] = sum
				sum += c
			}
			for _, x := range src {
				d := (uint64(x.t) - uint64(lo)) >> shift & 0xffff
				dst[cnt[d]] = x
				cnt[d]++
			}
			src, dst = dst, src
		}
		if &src[0] != &a[0] {
			copy(a, src) // an odd number of passes: the result is in tmp
		}
	}
	tmp = nil
	rt.m = len(preds)
	for k, p := range preds {
		rt.of[p.i] = int32(k)
	}
	// For each successor (by invoke time), the last point whose
	// completion is strictly before its invoke: a merge of the two orders.
	last := fresh[int32](len(succs))
	cnt := fresh[int32](rt.m + 1)
	k := -1
	for i, sc := range succs {
		for k+1 < len(preds) && preds[k+1].t < sc.t {
			k++
		}
		last[i] = int32(k)
		if k >= 0 {
			cnt[k+1]++
			rt.hasTo[sc.i] = true
		}
	}
	for k := 1; k <= rt.m; k++ {
		cnt[k] += cnt[k-1]
	}
	rt.off = cnt
	rt.succ = fresh[int32](int(cnt[rt.m]))
	pos := slices.Clone(cnt[:rt.m])
	for i, sc := range succs {
		if k := last[i]; k >= 0 {
			rt.succ[pos[k]] = sc.i
			pos[k]++
		}
	}
	b.rt = rt
}

// Build freezes the builder into a Graph: per node, edges sorted by (To,
// Rel) with duplicates removed (the first Why added wins). The builder must
// not be used afterwards.
//
// Memory: the edges are grouped by source in place, inside the builder's
// chunks (an in-place American-flag permutation, McIlroy et al. 1993, with
// a 4-byte insertion sequence number per edge to keep the first Why), so
// the peak is the edge storage plus ~12 bytes per edge, not twice the edge
// storage. Lists that straddle a chunk boundary are copied out.
func (b *Builder) Build() *Graph {
	n := b.n
	off := b.deg
	b.deg = nil
	for i := 1; i <= n; i++ {
		off[i] += off[i-1]
	}
	E := b.count
	chunks := b.chunks
	b.chunks = nil
	at := func(i int) *Edge { return &chunks[i>>chunkShift][i&(chunkSize-1)] }
	var seq []uint32
	if E <= inPlaceAbove {
		// Scatter into one new array: fast, stable (insertion order kept
		// per node), peak twice the edge storage.
		flat := fresh[Edge](E)
		pos := slices.Clone(off[:n])
		for ci, c := range chunks {
			for i := range c {
				e := &c[i]
				flat[pos[e.From]] = *e
				pos[e.From]++
			}
			chunks[ci] = nil
		}
		chunks = [][]Edge{flat}
		at = func(i int) *Edge { return &flat[i] }
	} else {
		seq = fresh[uint32](E)
		for i := range seq {
			seq[i] = uint32(i)
		}
		// Two in-place American-flag passes for locality: by From's high bits
		// (few buckets, sequential write streams), then by From within each
		// bucket (a cache-sized range).
		shift := 0
		for (n-1)>>shift >= 256 {
			shift++
		}
		nb := (n-1)>>shift + 1
		nxt := make([]int, max(nb, 1<<shift))
		permute := func(lo, hi int, bstart func(b int) int, nbk int, key func(from int) int) {
			for b := 0; b < nbk; b++ {
				nxt[b] = bstart(b)
			}
			for b := 0; b < nbk; b++ {
				end := bstart(b + 1)
				for nxt[b] < end {
					i := nxt[b]
					e := at(i)
					k := key(int(e.From))
					if k == b {
						nxt[b]++
						continue
					}
					j := nxt[k]
					nxt[k]++
					ej := at(j)
					*e, *ej = *ej, *e
					seq[i], seq[j] = seq[j], seq[i]
				}
			}
		}
		if n > 0 {
			permute(0, E, func(b int) int { return off[min(b<<shift, n)] }, nb,
				func(f int) int { return f >> shift })
			for b := 0; b < nb; b++ {
				v0 := b << shift
				v1 := min(v0+1<<shift, n)
				permute(off[v0], off[v1], func(k int) int { return off[v0+k] }, v1-v0,
					func(f int) int { return f - v0 })
			}
		}
		nxt = nil
	}
	adj := fresh[[]Edge](n)
	var keys []uint64
	var tmp []Edge
	total := 0
	for v := 0; v < n; v++ {
		lo, hi := off[v], off[v+1]
		if lo == hi {
			continue
		}
		var seg []Edge
		if seq == nil {
			seg = chunks[0][lo:hi]
		} else if lo>>chunkShift == (hi-1)>>chunkShift {
			c := lo & (chunkSize - 1)
			seg = chunks[lo>>chunkShift][c : c+hi-lo]
		} else {
			seg = make([]Edge, 0, hi-lo)
			for i := lo; i < hi; i++ {
				seg = append(seg, *at(i))
			}
		}
		if len(seg) > 1 {
			var sq []uint32
			if seq != nil {
				sq = seq[lo:hi]
			}
			sortSeg(seg, sq, &keys, &tmp)
		}
		w := 0
		for i := range seg {
			if i > 0 && seg[i].To == seg[w-1].To && seg[i].Rel == seg[w-1].Rel {
				continue
			}
			seg[w] = seg[i]
			w++
		}
		adj[v] = seg[:w:w]
		total += w
	}
	g := &Graph{n: n, adj: adj, m: total, rt: b.rt}
	b.rt = nil
	b.count = 0
	return g
}

// sortSeg sorts one adjacency list by (To, Rel, insertion sequence) through
// packed uint64 keys, so edges move once.
func sortSeg(seg []Edge, seq []uint32, keys *[]uint64, tmp *[]Edge) {
	if len(seg) >= 1<<27 {
		idx := make([]int, len(seg))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int {
			if x := cmpToRel(seg[a], seg[b]); x != 0 {
				return x
			}
			if seq == nil {
				return cmp.Compare(a, b)
			}
			return cmp.Compare(seq[a], seq[b])
		})
		t := slices.Clone(seg)
		for i, j := range idx {
			seg[i] = t[j]
		}
		return
	}
	if seq == nil && slices.IsSortedFunc(seg, cmpToRel) {
		return
	}
	k := (*keys)[:0]
	t := (*tmp)[:0]
	if seq != nil {
		// First restore insertion order (sequence numbers)...
		for i := range seg {
			k = append(k, uint64(seq[i])<<27|uint64(i))
		}
		sortKeys(k)
		t = append(t, seg...)
		for i, x := range k {
			seg[i] = t[x&(1<<27-1)]
		}
		k = k[:0]
	}
	// ...then sort stably by (To, Rel).
	for i := range seg {
		k = append(k, uint64(uint32(seg[i].To))<<32|uint64(seg[i].Rel)<<27|uint64(i))
	}
	sortKeys(k)
	t = append(t[:0], seg...)
	for i, x := range k {
		seg[i] = t[x&(1<<27-1)]
	}
	*keys, *tmp = k, t
}

func sortKeys(k []uint64) {
	if len(k) <= 16 {
		for i := 1; i < len(k); i++ {
			for j := i; j > 0 && k[j-1] > k[j]; j-- {
				k[j-1], k[j] = k[j], k[j-1]
			}
		}
		return
	}
	slices.Sort(k)
}

func cmpToRel(a, c Edge) int {
	if a.To != c.To {
		return cmp.Compare(a.To, c.To)
	}
	return cmp.Compare(a.Rel, c.Rel)
}

// Graph is an immutable dependency graph over transactions 0..N()-1.
// Methods are safe for concurrent use.
type Graph struct {
	n   int
	adj [][]Edge
	m   int
	rt  *realtime
}

// N is the number of transactions (nodes).
func (g *Graph) N() int { return g.n }

// NumEdges is the number of stored (explicit) edges; the implicit realtime
// order is not counted.
func (g *Graph) NumEdges() int { return g.m }

// Out returns the explicit edges out of v, sorted by (To, Rel): everything
// added with Add and AddProcessOrder. Realtime order recorded with
// AddRealtimeOrder is implicit (see RealtimeBefore). The slice must not be
// modified. Out of range v yields nil.
func (g *Graph) Out(v int32) []Edge {
	if v < 0 || int(v) >= g.n {
		return nil
	}
	return g.adj[v]
}

// HasRealtime reports whether a realtime order was recorded.
func (g *Graph) HasRealtime() bool { return g.rt != nil && g.rt.m > 0 }

// RealtimeBefore reports whether the recorded realtime order has a before b
// (a completed strictly before b was invoked, a's outcome is known, and both
// were included in AddRealtimeOrder).
func (g *Graph) RealtimeBefore(a, b int32) bool {
	rt := g.rt
	if rt == nil || a < 0 || b < 0 || int(a) >= g.n || int(b) >= g.n || a == b {
		return false
	}
	return rt.of[a] >= 0 && rt.hasTo[b] && rt.comp[a] < rt.inv[b]
}

// Rels returns the set of explicit relations on edges a -> b (plus Realtime
// if RealtimeBefore(a, b)).
func (g *Graph) Rels(a, b int32) Rel {
	var r Rel
	for _, e := range g.pairEdges(a, b) {
		r |= e.Rel
	}
	if g.RealtimeBefore(a, b) {
		r |= Realtime
	}
	return r
}

// pairEdges returns the explicit edges a -> b.
func (g *Graph) pairEdges(a, b int32) []Edge {
	out := g.Out(a)
	i := sort.Search(len(out), func(i int) bool { return out[i].To >= b })
	j := i
	for j < len(out) && out[j].To == b {
		j++
	}
	return out[i:j]
}

// Edge returns the explicit edge a -> b with relation rel, if any.
func (g *Graph) Edge(a, b int32, rel Rel) (Edge, bool) {
	for _, e := range g.pairEdges(a, b) {
		if e.Rel == rel {
			return e, true
		}
	}
	if rel == Realtime && g.RealtimeBefore(a, b) {
		return realtimeEdge(a, b), true
	}
	return Edge{}, false
}

func realtimeEdge(a, b int32) Edge {
	return Edge{From: a, To: b, Rel: Realtime, Why: Why{Key: NoKey, V1: -1, V2: -1, Op1: -1, Op2: -1}}
}

// --- extended node space: real nodes 0..n-1, realtime points n..n+m-1 ---

// numExt is the size of the node space a traversal with mask uses.
func (g *Graph) numExt(mask Rel) int {
	if mask&Realtime != 0 && g.rt != nil {
		return g.n + g.rt.m
	}
	return g.n
}

// succ returns the c-th candidate successor slot of v in the extended graph
// under mask: w (or -1 if the slot is filtered out), the relation, the
// edge's index in Out(v) (-1 for realtime links), and ok=false when v has no
// more slots. Relation 0 marks a zero-length hop between realtime points.
func (g *Graph) succ(v int32, c int, mask Rel) (w int32, rel Rel, ei int, ok bool) {
	if int(v) < g.n {
		out := g.adj[v]
		if c < len(out) {
			e := &out[c]
			if e.Rel&mask == 0 {
				return -1, 0, -1, true
			}
			return e.To, e.Rel, c, true
		}
		if c == len(out) && mask&Realtime != 0 && g.rt != nil {
			if k := g.rt.of[v]; k >= 0 {
				return int32(g.n) + k, Realtime, -1, true
			}
		}
		return -1, 0, -1, false
	}
	rt := g.rt
	k := int(v) - g.n
	if c == 0 {
		if k+1 < rt.m {
			return v + 1, 0, -1, true
		}
		return -1, 0, -1, true
	}
	i := int(rt.off[k]) + c - 1
	if i < int(rt.off[k+1]) {
		return rt.succ[i], 0, -1, true
	}
	return -1, 0, -1, false
}
