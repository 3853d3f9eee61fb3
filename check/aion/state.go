package aion

import (
	"math/bits"

	"github.com/txray/txray/history"
)

// The checker's per-key state is pointer-free and dense, so that checking
// one op costs as few cache misses as possible and the garbage collector
// has nothing to scan in it (docs/benchmarks.md, issue 17 item 4):
//
//   - keyState, one 64-byte cache line per key id, holds what the common
//     read and write need: the last version's commit timestamp and value,
//     the bound on pending reads' snapshots, the newest pending read, and
//     where the key's versions are;
//   - versions live in a pool of size-classed slots (vpool) and name their
//     writer by an index into the writer table (writers), which holds the
//     explanation data (id, start timestamp, the transaction while some
//     version still names it in full);
//   - pending reads are values in one arrival-ordered queue (readQ); a
//     key's pending reads form a chain through it (read.prev), newest
//     first, so inserting a read appends to the queue (sequential memory)
//     and touches no per-key array. Reads become final in arrival order,
//     so the queue's head is also the end of every chain.

// keyState is a key's hot state: one cache line, no pointers.
type keyState struct {
	lastP, lastL int64 // commit timestamp of the last version (nv > 0)
	maxP, maxL   int64 // bounds every pending read's snapshot (rhead > head)
	lastVN       int64 // value of the last version (N; K in lastVK)
	rhead        int64 // number+1 of the newest pending read in readQ (0: none)
	voff         uint32
	nv           uint32 // versions retained, sorted by commit timestamp
	nfail        int32  // pending reads currently failing
	vcls         uint8  // size class of the versions slot voff (0: none)
	lastVK       uint8
	flags        uint8
}

const (
	// fGced: versions older than keyCold.gc were discarded.
	fGced = 1 << iota
	// fV0Ghost: the first version names its writer as a ghost already
	// (Tick need not look at it).
	fV0Ghost
	// fActive: the key is in Checker.active: more than one version, or
	// pending reads, or a first version not yet a ghost.
	fActive
	// fFailed: the key has final Ext failures a late write may re-open
	// (Checker.failed).
	fFailed
	// fRef: the key was used since the forgetting clock hand last
	// passed it (keys.go).
	fRef
	// fUnk: an unknown-outcome write names the key (Checker.unkW): it is
	// never forgotten.
	fUnk
	// fForgot: the key's name may have been forgotten with versions
	// (keys.go): its reads are checked only against versions committed
	// after Checker.forgotMax.
	fForgot
	// fProbe: the key was created while names were in the filter of
	// forgotten names, which was not consulted yet: it is, only when a
	// read or write of the key would be affected (keys.go, probeForgot)
	fProbe
)

func (ks *keyState) last() history.Timestamp {
	return history.Timestamp{P: ks.lastP, L: ks.lastL, Set: true}
}

func (ks *keyState) lastV() Val { return Val{N: ks.lastVN, K: ks.lastVK} }

// keyCold is a key's rarely used state (parallel to keyState).
type keyCold struct {
	gcP, gcL int64 // versions committed before this were discarded (fGced)
	// born: the sequence number (Txn.seq) from which transactions may
	// name this key by its id; 0 while the id is free (keys.go)
	born int64
}

// version is a committed write kept for a key. w indexes Checker.writers;
// ghost says the version names its writer only by id and timestamps (the
// writer's ops are no longer retained for it).
type version struct {
	ctsP, ctsL int64
	vN         int64
	w          int32
	vK         uint8
	ghost      bool
}

func (v *version) cts() history.Timestamp {
	return history.Timestamp{P: v.ctsP, L: v.ctsL, Set: true}
}

func (v *version) val() Val { return Val{N: v.vN, K: v.vK} }

// vpool hands out slots of versions by size class: class 0 is "no slot",
// class 1 holds one version (a key's last one, once nothing else is
// retained), class c ≥ 2 holds 2<<c versions (8, 16, 32, ...). Slots are recycled through
// per-class free lists; the pages hold no pointers.
type vpool struct {
	cls []vclass
}

type vclass struct {
	size  int // versions per slot (a power of two)
	per   int // slots per page (a power of two)
	perSh uint8
	szSh  uint8
	pages [][]version
	n     uint32 // slots handed out (slot 0 is never used)
	free  []uint32
}

// vpage is how many versions a page holds (at least one slot).
const vpage = 1 << 15

func clsSize(c uint8) int {
	if c == 1 {
		return 1
	}
	return 2 << c
}

// growClass is the class a full slot of class c (≥ 1) grows into: a key's
// second version goes to 8, the ninth to 32 (skipping 16: a busy key's
// versions were copied three times on their way to 32, into slots each
// touched for the first time, while a stream's window filled; growing
// 8 → 32 at once saves a copy of 8 versions and 512 bytes of fresh memory
// per key, docs/benchmarks.md, issue 17 item 4, branch wchk), then each
// class doubles.
func growClass(c uint8) uint8 {
	switch {
	case c <= 1:
		return 2
	case c == 2:
		return 4
	}
	return c + 1
}

// clsFor returns the smallest class holding n versions.
func clsFor(n int) uint8 {
	if n <= 1 {
		return 1
	}
	c := uint8(2)
	for clsSize(c) < n {
		c++
	}
	return c
}

func (p *vpool) class(c uint8) *vclass {
	for int(c) >= len(p.cls) {
		s := clsSize(uint8(len(p.cls)))
		per := max(1, vpage/s)
		p.cls = append(p.cls, vclass{size: s, per: per, perSh: uint8(bits.TrailingZeros(uint(per))),
			szSh: uint8(bits.TrailingZeros(uint(s))), n: 1})
	}
	return &p.cls[c]
}

func (p *vpool) alloc(c uint8) uint32 {
	k := p.class(c)
	if n := len(k.free); n > 0 {
		s := k.free[n-1]
		k.free = k.free[:n-1]
		return s
	}
	s := k.n
	k.n++
	if int(s)/k.per >= len(k.pages) {
		var pg []version
		if k.per*k.size == vpage {
			pg = versionPages.get() // faulted in off this goroutine (pages.go)
		} else {
			pg = make([]version, k.per*k.size)
		}
		k.pages = append(k.pages, pg)
	}
	return s
}

// peek returns the slot of class c that alloc will hand out after m more
// allocations of that class and no release, or false if it is not in a
// page yet (changes nothing).
func (p *vpool) peek(c uint8, m int) (uint32, bool) {
	if int(c) >= len(p.cls) {
		return 0, false
	}
	k := &p.cls[c]
	if m < len(k.free) {
		return k.free[len(k.free)-1-m], true
	}
	s := k.n + uint32(m-len(k.free))
	if int(s)/k.per >= len(k.pages) {
		return 0, false
	}
	return s, true
}

func (p *vpool) release(c uint8, s uint32) {
	if c == 0 {
		return
	}
	k := &p.cls[c]
	k.free = append(k.free, s)
}

// slot returns slot s of class c (its full capacity).
func (p *vpool) slot(c uint8, s uint32) []version {
	k := &p.cls[c]
	pg := k.pages[s>>k.perSh]
	o := int(s&uint32(k.per-1)) << k.szSh
	return pg[o : o+k.size : o+k.size]
}

// read is a pending external read (a value in readQ).
type read struct {
	snapP, snapL int64
	vN           int64
	// prev: number+1 of the previous pending read of the same key (0:
	// none); only numbers ≥ readQ.head are still pending.
	prev int64
	// cmP, cmL bound the snapshots of this read and of every older read
	// in its key's chain, so a walk can stop early.
	cmP, cmL int64
	tx       int64 // number of the reading transaction in Checker.ptx
	key      int32
	op       int32
	flips    int32
	vK       uint8
	fail     bool
	final    bool
}

func (r *read) snap() history.Timestamp {
	return history.Timestamp{P: r.snapP, L: r.snapL, Set: true}
}

func (r *read) val() Val { return Val{N: r.vN, K: r.vK} }

// readQ holds pending reads in arrival order, numbered from 0 on; numbers
// below head are final and their pages recycled.
type readQ struct {
	pages [][]read
	base  int64 // page number of pages[0]
	head  int64 // first read not yet final
	tail  int64 // next number
	spare [][]read
}

const readPageBits = 12
const readPage = 1 << readPageBits

func (q *readQ) get(n int64) *read {
	return &q.pages[n>>readPageBits-q.base][n&(readPage-1)]
}

// push appends a zero read and returns its number.
func (q *readQ) push() (int64, *read) {
	n := q.tail
	if int(n>>readPageBits-q.base) >= len(q.pages) {
		var pg []read
		if k := len(q.spare); k > 0 {
			pg, q.spare = q.spare[k-1], q.spare[:k-1]
		} else {
			pg = readPages.get() // faulted in off this goroutine (pages.go)
		}
		q.pages = append(q.pages, pg)
	}
	q.tail++
	r := q.get(n)
	*r = read{}
	return n, r
}

// advance makes every read below n final (head = n) and recycles pages:
// the pages freed are kept for the reads to come, up to as many as were
// just freed (plus 16), so a steady stream, which pushes about as many
// reads between two ticks as a tick makes final, allocates no new pages
// (when at most 16 were kept, a 100,000-key stream at 170,000
// transactions/s allocated about 0.4 GB of fresh pages over a million
// transactions, touched for the first time: docs/benchmarks.md, issue 17
// item 4, fifth session), and a shrinking window gives its pages back.
// Keeping as many as were still in use as well held up to a second
// window's worth of empty pages (about 70 MB on the committed-heavy
// stream; branch watchm).
func (q *readQ) advance(n int64) {
	q.head = n
	k := int(n>>readPageBits - q.base)
	if k <= 0 {
		return
	}
	q.spare = append(q.spare, q.pages[:k]...)
	m := copy(q.pages, q.pages[k:])
	clear(q.pages[m:])
	q.pages = q.pages[:m]
	q.base += int64(k)
	if keep := k + 16; len(q.spare) > keep {
		clear(q.spare[keep:])
		q.spare = q.spare[:keep]
	}
}

// writer is an entry of the writer table: what explanations need of a
// transaction that wrote retained versions. t is nil once every version
// naming it is a ghost; the entry is freed when no version names it.
type writer struct {
	t   *Txn
	id  string
	sts history.Timestamp
}

// wref counts the versions naming a writer in full and as a ghost (kept
// apart from the writer table: it is small and stays in cache).
type wref struct{ full, ghost int32 }

// ptxEntry is a transaction with pending reads, in arrival order.
type ptxEntry struct {
	t            *Txn
	arrived      int64 // unix nanoseconds
	snapP, snapL int64
	bytes        int64 // about what it holds in the window (Checker.winBytes)
}

// ptxRing holds the transactions with pending reads (ptxEntry) in arrival
// order, as a ring: Add appends at the back, Tick drops from the front,
// and neither copies the window (a slice re-sliced from the front and
// appended to at the back copied the whole window into fresh memory
// every quarter of its length: docs/benchmarks.md, issue 17 item 4, fifth
// session). Entry i (0 = the oldest) is Checker.ptxBase+i.
type ptxRing struct {
	buf  []ptxEntry // a power of two long, or empty
	head int        // index in buf of entry 0
	n    int
}

// ptxMin is the smallest ring allocated.
const ptxMin = 1024

func (r *ptxRing) len() int { return r.n }

// at returns entry i (0 ≤ i < len).
func (r *ptxRing) at(i int) *ptxEntry { return &r.buf[(r.head+i)&(len(r.buf)-1)] }

// push appends e, which holds a reference to its transaction (Txn.holds,
// released by Tick when the entry is dropped).
func (r *ptxRing) push(e ptxEntry) {
	if e.t != nil {
		e.t.holds++
	}
	if r.n == len(r.buf) {
		r.resize(max(ptxMin, 2*len(r.buf)))
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = e
	r.n++
}

// drop removes the oldest j entries (j ≤ len), and gives memory back when
// the ring is at most a quarter full.
func (r *ptxRing) drop(j int) {
	for i := range j {
		*r.at(i) = ptxEntry{} // the transaction may be collected
	}
	if j > 0 {
		r.head = (r.head + j) & (len(r.buf) - 1)
		r.n -= j
	}
	if len(r.buf) > ptxMin && r.n < len(r.buf)/4 {
		size := ptxMin
		for size < 2*r.n {
			size *= 2
		}
		r.resize(size)
	}
}

// resize moves the entries, in order, into a new ring of size entries
// (a power of two ≥ len).
func (r *ptxRing) resize(size int) {
	nb := make([]ptxEntry, size)
	if r.n > 0 {
		k := copy(nb, r.buf[r.head:min(len(r.buf), r.head+r.n)])
		copy(nb[k:], r.buf[:r.n-k])
	}
	r.buf, r.head = nb, 0
}

// reset empties the ring and frees it.
func (r *ptxRing) reset() { *r = ptxRing{} }

// writerTab is the writer table (writer entries and their reference
// counts) in pages of writerPage entries, so that growing it never copies
// the entries into fresh memory (as appending to one slice did: growing
// the table was about a twentieth of the checker's time on the
// committed-heavy stream, docs/benchmarks.md, issue 17 item 4, fifth
// session). Indexes are stable.
type writerTab struct {
	w [][]writer
	r [][]wref
	n int32 // entries handed out (free ones included)
}

const writerPageBits = 12
const writerPage = 1 << writerPageBits

func (t *writerTab) at(i int32) *writer { return &t.w[i>>writerPageBits][i&(writerPage-1)] }

func (t *writerTab) ref(i int32) *wref { return &t.r[i>>writerPageBits][i&(writerPage-1)] }

// add appends an entry and returns its index.
func (t *writerTab) add(w writer) int32 {
	i := t.n
	if int(i>>writerPageBits) == len(t.w) {
		t.w = append(t.w, make([]writer, writerPage))
		t.r = append(t.r, make([]wref, writerPage))
	}
	t.n++
	*t.at(i) = w
	return i
}
