package leopard

import "github.com/txray/txray/history"

// Trace kinds: the transaction's begin (its snapshot lower bound), one
// operation, and its end (commit or abort).
const (
	kBegin uint8 = iota
	kOp
	kEnd
)

// trace is one operation trace in a client buffer. b is its
// before-timestamp, clamped to be non-decreasing per client (a client is
// sequential), which is the dispatch key.
type trace struct {
	t    *txn
	b    int64
	op   int32
	kind uint8
}

// skewTxn is a transaction whose lock acquisition (the completion bound,
// writer.acqA, of a write with an interval) lies before its clamped begin:
// low is the lowest such bound.
type skewTxn struct {
	t   *txn
	low int64
}

// client is one client's local buffer (the first level of Leopard's
// two-level pipeline, §V): traces in the client's own order.
type client struct {
	q     []trace
	head  int
	lastB int64 // before-timestamp of the latest trace received
	hpos  int   // position in the global heap, -1 if absent
	// active is the client's transaction whose end has not been dispatched.
	active *txn
	closed bool
	// session is the client's session (-1: a transaction of its own).
	session int32
}

func (c *client) empty() bool { return c.head >= len(c.q) }

// pend is a read waiting until every commit that may precede its snapshot
// has been dispatched: all traces with before-timestamp < sa.
type pend struct {
	t        *txn
	sb, sa   int64
	op       int32
	key, val int32
}

// engine is the verifier: the global min-heap over client buffers (the
// second level of the pipeline), the dispatch frontier, and the
// mechanism-mirrored verification state.
type engine struct {
	m mechs
	// regions: declared-table predicate regions (region.go), built on
	// first use.
	regions *regionIndex
	// slots is the per-key record table, dense by key id in chunks
	// (keys.go); hot holds the state of the keys that are not cold
	// (keySlot.hot indexes it), hotFree its free indexes, hotPool freed
	// states for reuse.
	slots   []*[keyChunk]keySlot
	hot     []*keyState
	hotFree []int32
	hotPool []*keyState
	// chunkHot counts the hot keys of each chunk of slots; liveChunks the
	// chunks allocated; maxChunks (0 = no bound) bounds them
	// (OnlineOptions.MaxKeys, engine.forget), forgetFrom is where the
	// next search for a chunk to forget starts.
	chunkHot              []int32
	liveChunks, maxChunks int
	forgetFrom            int
	// forgot: per forgotten chunk, a bit per key that had state.
	forgot [][]uint64
	// earlier holds the writer.earlier values of cold keys (slotEarlier).
	earlier map[int32][]int32
	// spill holds collected writers' records for explanations (online).
	spill *spillLog
	// rc recycles forgotten keys' ids (OnlineOptions.RecycleKeys; nil
	// otherwise).
	rc *recycler
	// forgetSessions: forget idle sessions (OnlineOptions.ForgetSessions,
	// window mode); onForget is told each one forgotten.
	forgetSessions bool
	onForget       func(session int32)
	clients        []*client
	heap           []int32 // client ids ordered by head before-timestamp
	pending        []pend  // min-heap by sa
	front          int64   // before-timestamp of the last dispatched trace
	// manual is a watermark set by the caller (Online.Advance).
	manual int64
	// window: only manual moves the watermark (OnlineOptions.Window).
	window bool
	// compact: collected transactions that may still name a version get
	// a private copy of their record (online; see compactTxn).
	compact bool
	cmap    map[int32]int32 // session -> client id
	open    []int32         // clients of sessions (they bound the watermark)
	free    []int32         // drained single-transaction clients to reuse

	sinceGC   int
	gcEvery   int  // traces between collections (gcEvery; tests lower it)
	noCool    bool // keys never cool (tests: the differential of keys.go)
	dirtyKeys []int32
	done      []*txn // ended transactions not yet collected
	// skewed: the transactions not yet ended (buffered or active) that
	// hold a lock certainly acquired before their begin, which the
	// session clamp moved (addTxn); activeLow stays below their
	// acquisition. lockDropped is the latest release lower bound of a
	// lock hold collected so far (prune).
	skewed      []skewTxn
	lockDropped int64
	stamp       uint32
	dropBuf     []bool

	rep   *reporter
	stats stats
}

type stats struct {
	// reads counts record reads (an item read, or one row a predicate
	// read returned); readsChecked the record reads verified, unreturned
	// rows of identified regions included (regionRows); predReads the
	// predicate read operations.
	traces, reads, readsChecked, writes, txns int64
	// mayCommit counts the transactions added that committed or may
	// have (status not aborted): with none, nothing a level constrains
	// was seen and a valid verdict would be a claim about nothing.
	mayCommit                                       int64
	predReads                                       int64
	uncheckedOps                                    int64
	deps, uncertain, readUncertain                  int64
	gcVersions, gcTxns, gcReads, peakLive, liveTxns int64
	cycleBudget                                     int64
	// regions counts predicate reads whose region was identified,
	// regionsUndecided those left to their returned rows, regionRows the
	// unreturned rows of identified regions checked as absent.
	regions, regionsUndecided, regionRows int64
	// lateFloating counts floating transactions added after some read was
	// verified (online only): their versions were missing for it.
	lateFloating int64
	// lateTxns counts timed transactions that arrived behind the
	// dispatch frontier (see addTxn); lateFirst is the first of them.
	lateTxns  int64
	lateFirst *history.Txn
	// ssiOpen counts committed SSI dangerous structures that certain
	// dependencies do not close into a cycle (engine.pivot).
	ssiOpen      int64
	ssiOpenFirst string
	// cooled and warmed count keys moved into their slot and back
	// (keys.go; online only).
	cooled, warmed int64
	// forgottenKeys counts keys whose state was discarded under
	// OnlineOptions.MaxKeys; forgottenReads the reads of such keys left
	// unchecked, forgottenFirst the first such key.
	forgottenKeys, forgottenReads int64
	forgottenFirst                string
	// suspectKeys counts keys first seen under a recycled or new id whose
	// name the filter of forgotten keys holds (recycle.go);
	// forgottenSessions the idle sessions forgotten (forgetIdle).
	suspectKeys, forgottenSessions int64
}

func newEngine(m mechs, rep *reporter) *engine {
	return &engine{m: m, rep: rep, front: -1 << 62, manual: -1 << 62, lockDropped: -1 << 62, cmap: map[int32]int32{}, gcEvery: gcEvery}
}

// clientFor returns the dense client id of a session; a negative session
// gets a fresh closed client of its own (recycled once drained).
func (e *engine) clientFor(session int32) int32 {
	if session >= 0 {
		if id, ok := e.cmap[session]; ok {
			return id
		}
		var id int32
		if n := len(e.free); n > 0 && e.forgetSessions {
			// Reuse a drained client (bounded by the sessions active at
			// once, not every session ever seen).
			id = e.free[n-1]
			e.free = e.free[:n-1]
			c := e.clients[id]
			c.q, c.head = c.q[:0], 0
			c.lastB, c.closed, c.active = -1<<62, false, nil
		} else {
			id = e.newClient()
		}
		e.clients[id].session = session
		e.cmap[session] = id
		e.open = append(e.open, id)
		return id
	}
	if n := len(e.free); n > 0 {
		id := e.free[n-1]
		e.free = e.free[:n-1]
		c := e.clients[id]
		c.lastB, c.closed, c.session = -1<<62, true, -1
		return id
	}
	id := e.newClient()
	e.clients[id].closed = true
	e.clients[id].session = -1
	return id
}

func (e *engine) newClient() int32 {
	e.clients = append(e.clients, &client{hpos: -1, lastB: -1 << 62})
	return int32(len(e.clients) - 1)
}

// opBounds returns op i's interval, widening a missing interval to the
// neighbouring known bounds within the transaction (conservative: a wider
// interval never creates a violation).
func opBounds(t *history.Txn, i int) (b, a int64) {
	if inv, com, ok := t.OpTime(i); ok {
		b, a = inv, com
		if a < b {
			b, a = a, b
		}
		return b, a
	}
	b, a = t.Invoke, t.Complete
	for j := i - 1; j >= 0; j-- {
		if inv, _, ok := t.OpTime(j); ok {
			b = max(b, inv)
			break
		}
	}
	for j := i + 1; j < len(t.Ops); j++ {
		if _, com, ok := t.OpTime(j); ok {
			a = min(a, com)
			break
		}
	}
	if a < b {
		a = b
	}
	return b, a
}

// skipOp reports whether op i of t is not verified: an op of an aborted
// transaction without an interval never completed (it may have failed
// before acquiring its lock or returning a result).
func skipOp(t *history.Txn, i int) bool {
	return t.Status == history.Aborted && !t.Ops[i].HasTime
}

// addTxn splits a transaction into its traces and appends them to the
// client's buffer. The transaction must not be modified afterwards.
func (e *engine) addTxn(session int32, ht *history.Txn) {
	cid := e.clientFor(session)
	c := e.clients[cid]
	t := &txn{txnLive: &txnLive{}, ref: ht, idx: ht.Index, client: cid, status: ht.Status, begin: ht.Invoke, snapA: inf, relA: ht.Complete, readOnly: !writes(ht)}
	if e.rc != nil {
		e.rc.add(ht, 1)
		t.epoch = e.rc.epoch
	}
	if ht.Complete < ht.Invoke {
		t.relA = ht.Invoke
	}
	if ht.Status == history.Unknown {
		t.relA = inf
	}
	first := int64(inf)
	lockLow := int64(inf)
	t.relB = t.begin
	for i := range ht.Ops {
		if skipOp(ht, i) {
			continue
		}
		b, a := opBounds(ht, i)
		t.begin = min(t.begin, b)
		first = min(first, a)
		if o := &ht.Ops[i]; (o.Kind == history.Write || o.Kind == history.Append) && o.Key >= 0 && o.HasTime {
			lockLow = min(lockLow, a) // a locked write (engine.op)
		}
		if k := ht.Ops[i].Kind; (k == history.Read || k == history.PredRead) && t.snapA == inf {
			t.snapA = a
		}
		if ht.Ops[i].HasTime {
			t.relB = max(t.relB, a)
		} else {
			// An op without an interval executed (if at all) after b:
			// only that bounds the commit from below.
			t.relB = max(t.relB, b)
		}
	}
	// A client is sequential: its transaction cannot begin before its
	// previous one began committing (guards against skewed intervals, and
	// keeps every snapshot lower bound above the GC watermark).
	t.begin = max(t.begin, c.lastB)
	t.relB = max(t.relB, t.begin)
	if t.begin < e.front {
		// The pipeline already dispatched traces that began after this
		// transaction did (its session was first seen, or resumed, after
		// the watermark passed it): reads verified without its versions
		// and its own checks against collected state may both be wrong.
		// It is still verified as well as can be; engine.result makes the
		// verdict unknown.
		e.stats.lateTxns++
		if e.stats.lateFirst == nil {
			e.stats.lateFirst = ht
		}
	} else if lockLow < e.lockDropped {
		// Its lock was acquired before the release of a lock hold
		// already collected (possible only with skewed intervals: the
		// clamp above moved its begin past its own write): the mutual
		// exclusion check against that hold was missed, so it is late
		// too.
		e.stats.lateTxns++
		if e.stats.lateFirst == nil {
			e.stats.lateFirst = ht
		}
	}
	if lockLow < t.begin {
		e.skewed = append(e.skewed, skewTxn{t: t, low: lockLow})
	}
	if t.snapA == inf {
		t.snapA = first
	}
	if t.snapA == inf {
		t.snapA = t.begin
	}
	if t.relA != inf && t.relA < t.relB {
		t.relA = t.relB
	}
	e.stats.txns++
	if ht.Status != history.Aborted {
		e.stats.mayCommit++
	}
	push := func(kind uint8, op int32, b int64) {
		if b < c.lastB {
			b = c.lastB
		}
		c.lastB = b
		c.q = append(c.q, trace{t: t, b: b, op: op, kind: kind})
	}
	push(kBegin, -1, t.begin)
	for i := range ht.Ops {
		if skipOp(ht, i) {
			e.stats.uncheckedOps++
			continue
		}
		b, _ := opBounds(ht, i)
		push(kOp, int32(i), b)
	}
	push(kEnd, -1, t.relB)
	if c.hpos < 0 && !c.empty() {
		e.heapPush(cid)
	}
}

// floatLow is the dispatch key and commit lower bound of floating
// transactions: before every real timestamp.
const floatLow = -1 << 61

// addFloating adds a transaction without a client interval that may have
// committed (status committed or unknown; an aborted one installed
// nothing). It cannot be placed in time, so nothing is verified about it,
// but its writes are possible versions for every read: its commit may lie
// anywhere (relB before everything, relA never certain) and it is never
// certainly committed, so it never makes another version garbage, never
// holds a certain lock and adds no certifier edge. Its reads are not
// checked (counted as unchecked). Offline, floating transactions are
// dispatched before every timed trace; online, one that arrives after some
// read was verified may explain a violation already reported, so an invalid
// verdict then becomes unknown (see engine.result).
func (e *engine) addFloating(ht *history.Txn) {
	if ht.Status == history.Aborted {
		e.stats.uncheckedOps += int64(len(ht.Ops))
		return
	}
	if e.stats.readsChecked > 0 {
		e.stats.lateFloating++
	}
	cid := e.clientFor(-1)
	c := e.clients[cid]
	t := &txn{txnLive: &txnLive{}, ref: ht, idx: ht.Index, client: cid, status: history.Unknown, begin: floatLow, snapA: floatLow, relB: floatLow, relA: inf, floating: true}
	if e.rc != nil {
		e.rc.add(ht, 1)
		t.epoch = e.rc.epoch
	}
	e.stats.txns++
	e.stats.mayCommit++
	push := func(kind uint8, op int32) {
		b := max(int64(floatLow), c.lastB)
		c.lastB = b
		c.q = append(c.q, trace{t: t, b: b, op: op, kind: kind})
	}
	push(kBegin, -1)
	for i := range ht.Ops {
		if k := ht.Ops[i].Kind; k != history.Write && k != history.Append {
			e.stats.uncheckedOps++
			continue
		}
		push(kOp, int32(i))
	}
	push(kEnd, -1)
	if c.hpos < 0 && !c.empty() {
		e.heapPush(cid)
	}
}

// watermark is the before-timestamp below which every trace has been
// received: the minimum, over open clients, of the latest before-timestamp
// each delivered (a client's traces arrive in order). Sessions not seen
// yet cannot hold it back: offline every session is declared before the
// first transaction (Checker.Check), online the caller declares them
// (OnlineOptions.Sessions) or bounds arrival (OnlineOptions.Window); a
// transaction that still arrives behind the dispatch frontier is counted
// as late (stats.lateTxns) and makes the verdict unknown. In window mode
// only Advance moves the watermark.
func (e *engine) watermark() int64 {
	if e.window {
		return e.manual
	}
	w := int64(inf)
	for _, id := range e.open {
		if c := e.clients[id]; c.lastB < w {
			w = c.lastB
		}
	}
	return max(w, e.manual)
}

// declare registers session s as open before any of its transactions
// arrives, so it holds the watermark back from the start.
func (e *engine) declare(s int32) {
	if s >= 0 {
		e.clientFor(s)
	}
}

// endSession closes session s: it no longer holds the watermark back.
func (e *engine) endSession(s int32) {
	id, ok := e.cmap[s]
	if !ok {
		return
	}
	for i, x := range e.open {
		if x == id {
			e.open = append(e.open[:i], e.open[i+1:]...)
			break
		}
	}
	e.clients[id].closed = true
}

// forgetIdle forgets the sessions idle past the window (window mode,
// OnlineOptions.ForgetSessions): a session with nothing buffered, no
// transaction in progress, and whose latest before-timestamp is behind the
// dispatch frontier. What the pipeline keeps of it is that
// before-timestamp, which clamps the next transaction's begin (a client is
// sequential); a transaction of the session arriving later either begins
// at or after the frontier, where the clamp (below the frontier) changes
// nothing, or before it, where it is late (stats.lateTxns, verdict
// unknown) with the clamp or without. So a forgotten session that returns
// is verified exactly as if it had been kept: as a new session.
func (e *engine) forgetIdle() {
	if !e.forgetSessions || !e.window {
		return
	}
	keep := e.open[:0]
	for _, id := range e.open {
		c := e.clients[id]
		if c.empty() && c.active == nil && c.hpos < 0 && c.lastB < e.front && c.session >= 0 {
			delete(e.cmap, c.session)
			c.closed = true
			c.q = nil
			e.free = append(e.free, id)
			e.stats.forgottenSessions++
			if e.onForget != nil {
				e.onForget(c.session)
			}
			continue
		}
		keep = append(keep, id)
	}
	e.open = keep
}

// drain dispatches, in order of before-timestamp, every buffered trace with
// before-timestamp <= limit (batch dispatch).
func (e *engine) drain(limit int64) {
	for len(e.heap) > 0 {
		cid := e.heap[0]
		c := e.clients[cid]
		tr := c.q[c.head]
		if tr.b > limit {
			break
		}
		c.q[c.head] = trace{} // a dispatched slot must not keep its transaction alive
		c.head++
		if c.empty() {
			c.q = c.q[:0]
			c.head = 0
			e.heapPop()
		} else {
			if c.head > 1024 && c.head*2 > len(c.q) {
				n := copy(c.q, c.q[c.head:])
				clear(c.q[n:])
				c.q = c.q[:n]
				c.head = 0
			}
			e.heapFix(0)
		}
		e.dispatch(&tr)
	}
}

// finish verifies everything still pending.
func (e *engine) finish() {
	e.drain(inf)
	e.verifyPending(inf)
	e.gc(inf)
}

func (e *engine) dispatch(tr *trace) {
	e.stats.traces++
	// Reads whose snapshot ended strictly before this trace began have
	// every possibly-preceding commit (begun at or before it) dispatched.
	e.verifyPending(tr.b)
	e.front = tr.b
	t := tr.t
	switch tr.kind {
	case kBegin:
		e.clients[t.client].active = t
		e.stats.liveTxns++
		e.stats.peakLive = max(e.stats.peakLive, e.stats.liveTxns)
	case kOp:
		e.op(t, tr.op)
	case kEnd:
		e.end(t)
		if c := e.clients[t.client]; c.active == t {
			c.active = nil
			if c.closed && c.empty() {
				e.free = append(e.free, t.client)
			}
		}
	}
	e.sinceGC++
	if e.sinceGC >= e.gcEvery {
		e.sinceGC = 0
		e.gc(e.activeLow())
	}
}

const gcEvery = 4096

// activeLow is the lowest snapshot lower bound any transaction not yet
// ended can have: the begin of every active transaction, and the frontier
// for transactions still to be dispatched; and, below that, the
// acquisition of every lock a transaction not yet ended holds since
// before its clamped begin (engine.skewed): a lock hold released before
// the begin of every such transaction may still conflict with its write
// (the ME check compares the hold with the write's acquisition, acqA, not
// with the begin), so it must not be collected until that write ends.
func (e *engine) activeLow() int64 {
	w := e.front
	sk := e.skewed[:0]
	for _, s := range e.skewed {
		if !s.t.ended {
			w = min(w, s.low)
			sk = append(sk, s)
		}
	}
	clear(e.skewed[len(sk):])
	e.skewed = sk
	for _, c := range e.clients {
		if c.active != nil && c.active.begin < w {
			w = c.active.begin
		}
	}
	for i := range e.pending {
		w = min(w, e.pending[i].sb)
	}
	return w
}

// heap of clients by head before-timestamp.
func (e *engine) hless(i, j int) bool {
	a, b := e.clients[e.heap[i]], e.clients[e.heap[j]]
	return a.q[a.head].b < b.q[b.head].b
}

func (e *engine) hswap(i, j int) {
	e.heap[i], e.heap[j] = e.heap[j], e.heap[i]
	e.clients[e.heap[i]].hpos = i
	e.clients[e.heap[j]].hpos = j
}

func (e *engine) heapPush(cid int32) {
	e.heap = append(e.heap, cid)
	i := len(e.heap) - 1
	e.clients[cid].hpos = i
	e.hup(i)
}

func (e *engine) hup(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !e.hless(i, p) {
			break
		}
		e.hswap(i, p)
		i = p
	}
}

func (e *engine) heapFix(i int) {
	n := len(e.heap)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && e.hless(r, l) {
			m = r
		}
		if !e.hless(m, i) {
			break
		}
		e.hswap(i, m)
		i = m
	}
}

func (e *engine) heapPop() {
	n := len(e.heap) - 1
	e.hswap(0, n)
	e.clients[e.heap[n]].hpos = -1
	e.heap = e.heap[:n]
	if n > 0 {
		e.heapFix(0)
	}
}

// pending reads: min-heap by sa.
func (e *engine) pendPush(p pend) {
	e.pending = append(e.pending, p)
	i := len(e.pending) - 1
	for i > 0 {
		q := (i - 1) / 2
		if e.pending[q].sa <= e.pending[i].sa {
			break
		}
		e.pending[q], e.pending[i] = e.pending[i], e.pending[q]
		i = q
	}
}

func (e *engine) pendPop() pend {
	p := e.pending[0]
	n := len(e.pending) - 1
	e.pending[0] = e.pending[n]
	e.pending = e.pending[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && e.pending[r].sa < e.pending[l].sa {
			m = r
		}
		if e.pending[m].sa >= e.pending[i].sa {
			break
		}
		e.pending[m], e.pending[i] = e.pending[i], e.pending[m]
		i = m
	}
	return p
}

// verifyPending verifies the reads whose snapshot upper bound is < b: every
// commit that began at or before it has been dispatched.
func (e *engine) verifyPending(b int64) {
	for len(e.pending) > 0 && e.pending[0].sa < b {
		p := e.pendPop()
		e.verifyRead(p.t, p.op, p.key, p.val, p.sb, p.sa)
	}
}
