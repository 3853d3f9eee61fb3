package aion

import (
	"sync"
	"sync/atomic"
)

// Recycler hands the memory of decoded transactions (the Txn and the op
// slab its ops lie in) back to the Readers that decode into it once the
// checker no longer refers to them, so that a long stream decodes into the
// same memory instead of fresh memory for every transaction (fewer page
// faults, less for the garbage collector; docs/benchmarks.md, branch
// wdec). It is optional: a Reader or Checker without one allocates as
// usual.
//
// The contract. A Checker with Config.Recycler counts the references it
// keeps to each transaction added with AddAll (Txn.holds: the arrival
// window's entry, the writer table's entry, a session's last transaction)
// and releases the transaction when it drops the last one, or at the end
// of AddAll when it kept none (refused and aborted transactions
// included). After the release the checker never reads the transaction
// again (nor its ops), so the Recycler may give it to a Reader, which
// overwrites it. The caller of AddAll must not use a transaction after
// AddAll returns (nor in its refused callback after that callback
// returns). Transactions added with Add are never released (they are
// left to the garbage collector). Close releases nothing.
//
// An op slab is reused once every transaction whose ops lie in it was
// released and the Reader that filled it moved on to another slab.
//
// Releases are passed from the checker in batches (relBatch, and at the
// end of each Tick); Readers take recycled transactions and slabs in
// batches. A Recycler is safe for concurrent use by one Checker and any
// number of Readers. What it keeps unused is bounded (maxFreeTxns
// transactions, maxFreeSlabs slabs): beyond that, released memory is left
// to the garbage collector, so a shrinking window gives memory back.
type Recycler struct {
	mu      sync.Mutex
	pending [][]*Txn  // released batches not yet processed (FIFO)
	txns    []*Txn    // transactions free for reuse
	slabs   []*opSlab // slabs free for reuse
	bufs    [][]*Txn  // empty batch buffers for the checker
	// poison: see Poison; slabOps: ops per slab (0: opChunk; tests use
	// small slabs so that slabs are recycled in short streams)
	poison  bool
	slabOps int
	// recycled counts the transactions handed out again (tests)
	recycled int64
}

// Poison makes rc overwrite every transaction and op slab as it is
// recycled (id and session "recycled", ops of key -7 and value -7), so
// that a use after release shows in explanations instead of going
// unnoticed; a debugging aid for tests. Call it before rc is used.
func (rc *Recycler) Poison() { rc.poison = true }

// Recycled reports how many transactions rc handed out again.
func (rc *Recycler) Recycled() int64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.recycled
}

// chunkOps is how many ops a slab holds.
func (rc *Recycler) chunkOps() int {
	if rc.slabOps > 0 {
		return rc.slabOps
	}
	return opChunk
}

// opSlab is a chunk of ops shared by consecutive transactions of one
// Reader.
type opSlab struct {
	ops []Op
	// live: transactions kept with ops in the slab that are not yet
	// recycled, plus slabBias while a Reader still fills it
	live atomic.Int64
}

// slabBias is the Reader's own reference to the slab it fills (larger
// than any count of transactions), so that releases cannot bring live to
// zero before the Reader moves on.
const slabBias = 1 << 40

const (
	relBatch     = 512     // releases the checker passes on at once
	takeBatch    = 256     // recycled transactions a Reader takes at once
	maxFreeTxns  = 1 << 17 // transactions kept for reuse (about 24 MiB)
	maxFreeSlabs = 64      // slabs kept for reuse (12 MiB at opChunk ops)
	maxPending   = 64      // release batches waiting for a Reader
)

// NewRecycler returns an empty Recycler.
func NewRecycler() *Recycler { return &Recycler{} }

// put passes a batch of released transactions on (the checker's side) and
// returns an empty buffer for the next batch.
func (rc *Recycler) put(b []*Txn) []*Txn {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.pending = append(rc.pending, b)
	if len(rc.pending) >= maxPending {
		rc.process() // no Reader takes any: bound what waits
	}
	if n := len(rc.bufs); n > 0 {
		nb := rc.bufs[n-1]
		rc.bufs = rc.bufs[:n-1]
		return nb
	}
	return make([]*Txn, 0, relBatch)
}

// process recycles the pending releases (rc.mu held): each drops one of
// the checker's references to its transaction (Txn.holds); a transaction
// with none left is free, and so is a slab with no transaction left.
func (rc *Recycler) process() {
	for _, b := range rc.pending {
		for i, t := range b {
			b[i] = nil
			if t.holds--; t.holds > 0 {
				continue
			}
			if t.holds < 0 {
				panic("aion: transaction released more often than held")
			}
			if s := t.slab; s != nil {
				t.slab = nil
				if s.live.Add(-1) == 0 {
					rc.freeSlab(s)
				}
			}
			if rc.poison {
				poisonTxn(t)
			}
			if len(rc.txns) < maxFreeTxns {
				rc.txns = append(rc.txns, t)
			}
		}
		if len(rc.bufs) < 8 {
			rc.bufs = append(rc.bufs, b[:0])
		}
	}
	clear(rc.pending)
	rc.pending = rc.pending[:0]
}

// freeSlab keeps s for reuse (rc.mu held).
func (rc *Recycler) freeSlab(s *opSlab) {
	if rc.poison {
		for i := range s.ops {
			s.ops[i] = Op{Key: -7, V: Val{N: -7, K: 1}}
		}
	}
	if len(rc.slabs) < maxFreeSlabs {
		rc.slabs = append(rc.slabs, s)
	}
}

// poisonTxn overwrites a recycled transaction (tests: a use after release
// names "recycled" transactions).
func poisonTxn(t *Txn) {
	for i := range t.Ops {
		t.Ops[i] = Op{Key: -7, V: Val{N: -7, K: 1}}
	}
	*t = Txn{ID: "recycled", Session: "recycled", Ops: t.Ops[:0]}
}

// take appends up to takeBatch recycled transactions to dst.
func (rc *Recycler) take(dst []*Txn) []*Txn {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.process()
	n := min(len(rc.txns), takeBatch)
	rc.recycled += int64(n)
	dst = append(dst, rc.txns[len(rc.txns)-n:]...)
	clear(rc.txns[len(rc.txns)-n:])
	rc.txns = rc.txns[:len(rc.txns)-n]
	return dst
}

// slab returns a free slab, or nil.
func (rc *Recycler) slab() *opSlab {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.process()
	n := len(rc.slabs)
	if n == 0 {
		return nil
	}
	s := rc.slabs[n-1]
	rc.slabs[n-1] = nil
	rc.slabs = rc.slabs[:n-1]
	return s
}

// release drops one of the checker's references to t (see Recycler);
// without a Recycler it does nothing.
func (c *Checker) release(t *Txn) {
	if c.rc == nil || t == nil {
		return
	}
	if c.accT == t {
		c.accT = nil // lastAccess's index is by pointer
	}
	if c.rel == nil {
		c.rel = make([]*Txn, 0, relBatch)
	}
	c.rel = append(c.rel, t)
	if len(c.rel) >= relBatch {
		c.rel = c.rc.put(c.rel)
	}
}

// flushReleases passes the releases collected so far on.
func (c *Checker) flushReleases() {
	if c.rc != nil && len(c.rel) > 0 {
		c.rel = c.rc.put(c.rel)
	}
}

// added ends AddAll's hold on t: released now if the checker kept no
// reference to it.
func (c *Checker) added(t *Txn) {
	if c.rc != nil && t.holds == 0 {
		t.holds = 1
		c.release(t)
	}
}
