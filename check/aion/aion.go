// Package aion is txray's online timestamp-based checker, after Aion (the
// online mode of Chronos/TimeKiller, ICDE 2024). Transactions
// arrive one at a time, in any order across sessions (in session order within
// a session), each with its start and commit timestamps; the checker keeps,
// per key, a versioned frontier (committed versions ordered by commit
// timestamp) and the pending external reads, and re-checks the affected
// reads when a write arrives late.
//
// Axioms checked (the same as package chronos; key-value data model):
// Session (a session's next transaction starts no earlier than its
// predecessor committed), Int, Ext (an external read returns the last
// version committed at or before the snapshot; for serializability, before
// the commit timestamp) and NoConflict (SI only: writers of a key do not
// overlap). List (append) ops are not checked online; they are counted in
// the "unchecked_list_ops" statistic.
//
// Finality. Session, Int and NoConflict violations are final when found. An
// Ext verdict may change while writes with earlier commit timestamps are
// still arriving; each flip of a read's verdict is counted ("flips"). A
// read's verdict becomes final FinalAfter after the reading transaction
// arrived (or at Close), and only final failures are reported as anomalies.
//
// Late writes after finality (re-opening). A write that arrives after a
// failing read became final may still change that read's verdict: Aion
// re-checks reads when writes arrive late (flip-flop), and the same holds
// past the window. Each final Ext failure keeps a small record (key,
// snapshot, value read; at most maxFailRecs in all): when a late version
// becomes the one visible at the failure's snapshot and holds the value
// read, the failure is withdrawn (counted in "ext_withdrawn", the
// anomaly removed); when the versions that decide it were already
// discarded (the late version commits below the key's retained state and
// the failure's snapshot too), the failure is no longer certain and is
// withdrawn into "ext_reopened_unknown", which makes a verdict that would
// otherwise be valid unknown, with the reason. A report is therefore never
// a silent false INVALID caused by a writer that arrived more than
// FinalAfter late.
//
// Memory (the watermark rule). State is kept only for transactions whose
// verdicts are not final, so the live state is about (arrival rate) ×
// FinalAfter × (~1.3 KB per 15-op transaction), plus one entry per key and
// per session and the interned string values. Each can be bounded: the
// keys retained by Config.MaxKeys, beyond which settled keys are forgotten
// (keys.go); the window by Config.MaxWindowBytes, the string values by
// Config.MaxValueBytes and the unknown-outcome writes by
// Config.MaxUnknownWrites (values.go), the sessions (under
// strong-session-snapshot-isolation) by Config.MaxSessions (sessions.go). Let W be the smallest snapshot timestamp of
// any transaction whose verdicts are not yet final (or, when none is
// pending, the largest snapshot seen). Any transaction still to arrive is
// expected to have a snapshot ≥ W, and then needs of each key only the last
// version committed at or before W and the versions after it; older
// versions, and final reads, are discarded by a Tick (every Tick once the
// versions and reads added since the last discard number at least half
// the keys with something to discard, else every 8th: the discard's cost
// stays proportional to the work, whatever the tick rate). A transaction that
// arrives with a snapshot older than the oldest retained version of a key it
// reads cannot be checked on that key: the read is counted as
// "late_unchecked" and the verdict becomes Unknown (unless invalid). Its
// NoConflict checks are made against the retained versions only
// ("late_noconflict_partial"), and the verdict becomes Unknown (unless
// invalid): an overlap with a discarded writer may have been missed.
//
// What stays per key after that: the version visible at W, whose writer is
// then kept without its ops (id, session and timestamps: explanations name
// it, and a late NoConflict report lists its ops as no longer retained), so
// old transactions are not kept alive by the keys they wrote last. Tick
// visits only keys with something to discard (more than one version,
// pending reads, or a writer not yet stripped), so its cost does not grow
// with the number of keys ever seen. Measured: 10,000,000 transactions
// (txray gen rw-register, snapshot-isolation, 50 clients, 1,000 keys live,
// zipfian, 15 ops; 2.3 million keys over the run) in about 500 MB
// (docs/benchmarks.md, Issue 4).
//
// Layout (state.go). The per-key state is pointer-free and dense by key id
// so that checking an op costs few cache misses and the garbage collector
// scans nothing of it: a 64-byte key line (the last version's commit
// timestamp and value, the bound on pending reads' snapshots, the newest
// pending read), versions in pooled slots naming their writer by an index
// into a writer table that holds the explanation data (reference-counted:
// a writer loses its ops when only ghost versions name it, and its entry
// when none does), and pending reads as values in one arrival-ordered
// queue, chained per key. Add loads every key line and version slot a
// transaction needs in one pass of independent loads before checking it,
// so the processor overlaps those misses (docs/benchmarks.md, issue 17
// item 4).
package aion

import (
	"fmt"
	"hash/maphash"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// Anomaly type names (design.md §5).
const (
	TypeSession    = "session"
	TypeInternal   = "internal"
	TypeExt        = "ext"
	TypeNoConflict = "noconflict"
)

// Val is a scalar value: null (K=0), an integer (K=1, N), or a string
// (K=2, N = id in the checker's string table).
type Val struct {
	N int64
	K uint8
}

// Op is one micro-operation of an arriving transaction.
type Op struct {
	Key  int32 // id in Checker.Keys (set by Add when the Reader left a raw key)
	Kind history.Kind
	List bool // a list read or an append (not checked online)
	// raw: the key as decoded, not yet interned, is in Key (rawInt: an
	// integer key 0 ≤ n < 2³¹; rawBig: Key indexes Txn.keyInts; rawStr:
	// Key indexes Txn.keyStrs); rawNone: Key is an id. The small fields
	// share V's first word, so Op is 24 bytes (a 15-op transaction's ops
	// fill 6 cache lines, not 8).
	raw uint8
	V   Val
}

// Txn is an arriving transaction.
type Txn struct {
	ID       string
	Session  string
	Status   history.Status
	StartTS  history.Timestamp
	CommitTS history.Timestamp
	Ops      []Op
	seq      int64
	keyStrs  []string // string keys of ops with a raw key (Op.raw)
	keyInts  []int64  // integer keys of ops outside [0, 2³¹) (Op.raw)
	// holds: the checker's references to the transaction (its ptx
	// entry, its writer entry, its session's entry; see Recycler);
	// slab: the Reader's op slab its ops lie in (nil: none)
	holds int32
	slab  *opSlab
}

// Config configures a Checker.
type Config struct {
	// Model: "snapshot-isolation" (default), "strong-session-snapshot-isolation"
	// (SI plus the Session axiom; plain SI lets a transaction read a
	// snapshot older than its session predecessor's commit) or
	// "serializable".
	Model string
	// CommitOrderSerializes: the database serializes transactions in
	// commit-timestamp order (timestamp-ordered engines: TiDB, CockroachDB,
	// Spanner, FoundationDB; see chronos.CommitOrderSerializes). Only then
	// is a failing serializability (commit-order) read a violation; without
	// it such failures make the verdict Unknown (under serializable snapshot
	// isolation, e.g. PostgreSQL, commit order is not a serialization
	// order). Ignored for snapshot isolation.
	CommitOrderSerializes bool
	// InitialZero: the initial value of every key is 0 (else null).
	InitialZero bool
	// FinalAfter: how long after arrival an Ext verdict becomes final.
	FinalAfter time.Duration
	// MaxKeys bounds the keys retained (0 = no bound): beyond it a Tick
	// forgets the coldest settled keys, and a later read of a forgotten
	// key is not checked and makes the verdict unknown (keys.go).
	MaxKeys int
	// MaxWindowBytes bounds the arrival window (0 = no bound), plus
	// what the retained keys leave unused of MaxKeys × KeyBytes: when the
	// transactions with pending reads hold more than this (about 384
	// bytes each, 32 per op, 64 per write, 80 per pending read: see
	// txnBytes), a Tick makes the
	// oldest ones' reads final before FinalAfter ("early_final_reads"),
	// down to 3/4 of it. A write arriving later than that is handled as
	// any write arriving after finality (re-opening; unknown with the
	// reason when it cannot be decided), never a false verdict.
	MaxWindowBytes int64
	// MaxFilterBytes is the size of the filter of forgotten key names
	// (keys.go: a Bloom filter allocated when the first key is
	// forgotten; 0 = 32 bytes per key of MaxKeys).
	MaxFilterBytes int64
	// MaxValueBytes bounds the table of distinct string values (0 = no
	// bound): beyond it a Tick drops the values no retained state names,
	// and a failing read that may be due to a dropped value makes the
	// verdict unknown (values.go).
	MaxValueBytes int64
	// MaxUnknownWrites bounds the writes of unknown-outcome transactions
	// remembered exactly (0 = no bound): beyond it the oldest are kept
	// only in a filter, and a failing read the filter may explain makes
	// the verdict unknown (values.go).
	MaxUnknownWrites int
	// MaxSessions bounds the sessions retained under
	// strong-session-snapshot-isolation (0 = no bound): beyond it a Tick
	// forgets the coldest idle sessions, and a transaction whose Session
	// check would need a forgotten predecessor is not checked and makes
	// the verdict unknown (sessions.go).
	MaxSessions int
	// MaxPerType caps listed anomalies per type (0 = 8).
	MaxPerType int
	// Recycler, when set, gets back the transactions added with AddAll
	// once the checker no longer refers to them (see Recycler).
	Recycler *Recycler
	// Now is the clock (default time.Now); tests inject one.
	Now func() time.Time
	// seed, when seeded, is the filters' hash seed, else New draws one
	// at random (hash.go; tests and fuzz targets fix it with withSeed so
	// that a failure replays). tinyFilters makes every filter 64 bits,
	// so that false positives are common (tests: the paths they take are
	// exercised).
	seed        uint64
	seeded      bool
	tinyFilters bool
}

// failRec is a final Ext failure kept for re-opening: the read's snapshot
// and value, and the explanation of its listed anomaly ("" if it was only
// counted).
type failRec struct {
	snap history.Timestamp
	v    Val
	expl string
}

// windowBudget is the window's bound now: MaxWindowBytes, plus the part
// of the key budget the retained keys leave unused (a stream with few keys
// keeps a long window; one that fills the key budget gets
// MaxWindowBytes).
func (c *Checker) windowBudget() int64 {
	m := c.cfg.MaxWindowBytes
	if m > 0 && c.cfg.MaxKeys > c.liveKeys {
		m += int64(c.cfg.MaxKeys-c.liveKeys) * KeyBytes
	}
	return m
}

// What a transaction with pending reads is counted as holding in the
// arrival window (Config.MaxWindowBytes): txnBytes for the Txn, its id,
// its ptx entry (in a ring up to twice as long as the window) and its
// writer entry; opBytes per op (24 bytes in an op slab that is reused only
// once all its transactions are released); writeBytes per write (its
// version: 32 bytes in a slot of a size class, up to half of it empty);
// readBytes per pending read (72 bytes, in pages recycled whole). Counted
// as 256 + 32 per op + 80 per read before, the window held about twice
// what it was counted at on the committed-heavy stream, and a stream with
// few keys (whose window borrows the unused key budget) grew the heap to
// the runtime's memory limit, where the collector ran back to back
// (docs/benchmarks.md, issue 17 item 4, branch watchm).
const (
	txnBytes   = 384
	opBytes    = 32
	writeBytes = 64
	readBytes  = 80
)

// sweepAhead: how many active keys ahead a sweep loads key lines (and
// versions, half as far).
const sweepAhead = 16

// sweepEvery: a tick sweeps the active keys at least this often.
const sweepEvery = 8

// sweepWork: with more than sweepSmall active keys, a tick sweeps them
// when the work since the last sweep is at least sweepWork per active key
// (else every sweepEvery ticks); with fewer, at half a unit of work per
// key (a sweep of few keys costs little). At 16 per key, the
// committed-heavy stream (100,000 keys, 15 ops) was swept every 230,000
// transactions or so: transactions, their ops and their keys' versions were
// held up to that long after their reads became final, which took the heap
// to the runtime's memory limit; at 4, a sweep of 200,000 active keys
// (about 40 ms) runs about once per tick at 300,000 transactions/s, the
// sweeps' total cost is about the same (it is mostly the discarding, the
// same work either way), and the collector runs 7 times instead of 34
// (docs/benchmarks.md, issue 17 item 4, branch watchm).
const (
	sweepWork  = 4
	sweepSmall = 1 << 14
)

// maxFailRecs bounds the failure records kept for re-opening; past it, any
// late write that may be visible at some unrecorded failure's snapshot
// re-opens into unknown (Checker.failOverflow).
const maxFailRecs = 1 << 16

// Checker is an online checker. It is not safe for concurrent use; callers
// serialise Add, Tick and Result.
type Checker struct {
	cfg Config
	ser bool
	// Keys interns keys (the checker's own table, keys.go: Add interns
	// the raw keys a Reader leaves in ops; direct use is for tests and
	// single-goroutine callers). vals interns string values (values.go);
	// Readers intern through methods that lock nmu, so a Reader may
	// decode in another goroutine while the checker runs.
	Keys *Keys
	vals valTab
	nmu  sync.RWMutex
	// reads whose failure may be due to a string value dropped from the
	// table (values.go), and the first
	valReads int64
	valFirst string
	kt       keyTab
	keys     keyStates
	// key budget (Config.MaxKeys, keys.go): keys retained, the clock
	// hand, the filter of forgotten names, the latest commit of a
	// forgotten version, keys forgotten with versions, reads of them
	// not checked (and the first)
	liveKeys    int
	hand        int
	forgotten   bloom
	forgotMax   history.Timestamp
	forgotKeys  int64
	forgotReads int64
	forgotFirst string
	// arrival window (Config.MaxWindowBytes): bytes held by ptx, reads
	// made final early
	winBytes int64
	early    int64
	// the filter consulted (probeForgot), and how often it held the name
	filterProbes int64
	suspectKeys  int64
	vp           vpool
	// activeBits: the keys Tick must visit (fActive), nactive of them
	activeBits []uint64
	nactive    int
	// per-session state under strong-session SI (sessions.go)
	sess sessions
	// seed: the filters' hash seed (hash.go)
	seed uint64
	// reads: pending external reads in arrival order (see state.go)
	reads readQ
	// kinds: classification of failing pending reads, by read number,
	// fixed when versions that may explain them are discarded
	kinds map[int64]string
	// ptx: transactions with pending reads, in arrival order, numbered
	// from ptxBase on
	ptx     ptxRing
	ptxBase int64
	// writer table (see state.go)
	writers writerTab
	wfree   []int32
	// reference changes deferred during a sweep (deferRef), and
	// applyRefs's scratch; sweepKeys: tick's list of the active keys
	refs, refSorted []uint32
	sweepKeys       []int32
	refCnt, refPos  []int32
	// failed: per key, final Ext failures that a late write may still
	// re-open (see "Late writes after finality"; fFailed)
	failed  map[int32][]failRec
	anoms   map[string][]check.Anomaly
	counts  map[string]int
	n       int64
	aborted int64
	flips   int64
	rechk   int64
	late    int64
	lateNC  int64
	listOps int64
	deletes int64 // delete ops: not modelled online (see Result)
	maxSnap history.Timestamp
	start   time.Time
	// work: versions installed and reads inserted since the last sweep
	// of the active keys; ticks and swept count ticks (see tick)
	work         int64
	ticks, swept int64
	// lastAccess index of the big transaction accT
	accT    *Txn
	accPrev []int32
	sink    uint8 // see prefetch
	// unkW: (key, value) written by unknown-outcome transactions without
	// timestamps; a failing read of one is undecided, not a violation.
	unkW map[unkRef]struct{}
	// bound on unkW (Config.MaxUnknownWrites, values.go): entries in
	// arrival order (from unkHead on), entries per key, the filter of
	// forgotten ones, how many were forgotten, failing reads they may
	// explain (and the first)
	unkQ        []unkRef
	unkHead     int
	unkKeys     map[int32]int32
	unkForgot   bloom
	unkDropped  int64
	unkMaybe    int64
	unkFirst    string
	undecided   int64 // failing reads explained by an unknown-outcome write
	coUndecided int64 // commit-order failures without CommitOrderSerializes
	coFirst     string
	// re-opening of final Ext failures by late writes (see the package
	// comment): withdrawn failures, failures re-opened into unknown (and
	// the first reason), records kept, and whether records overflowed
	// (then maxFailSnap bounds every unrecorded failure's snapshot).
	withdrawn    int64
	reopenUnk    int64
	reopenFirst  string
	nFailRecs    int
	failOverflow bool
	maxFailSnap  history.Timestamp
	// Final passing reads are not re-checked (their versions may be
	// discarded): maxPassSnap is the latest snapshot of a read that became
	// final as passing, and a write arriving with a commit timestamp
	// visible there may have changed such a read, so it makes the verdict
	// unknown (latePass, with the first such write) instead of leaving a
	// possibly false valid.
	maxPassSnap   history.Timestamp
	latePass      int64
	latePassFirst string

	// rc: Config.Recycler; rel: releases not yet passed on to it
	rc  *Recycler
	rel []*Txn
}

// New returns a checker.
func New(cfg Config) *Checker {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxPerType <= 0 {
		cfg.MaxPerType = 8
	}
	if cfg.Model == "" {
		cfg.Model = "snapshot-isolation"
	}
	seed := cfg.seed
	if !cfg.seeded {
		seed = newSeed()
	}
	c := &Checker{cfg: cfg, vals: newValTab(seed), kt: keyTab{seed: maphash.MakeSeed(), dmax: denseFor(cfg.MaxKeys)},
		anoms: map[string][]check.Anomaly{}, counts: map[string]int{},
		kinds: map[int64]string{}, failed: map[int32][]failRec{}, seed: seed}
	c.Keys = &Keys{c: c}
	c.rc = cfg.Recycler
	c.ser = cfg.Model == "serializable"
	c.start = cfg.Now()
	return c
}

// Models reports whether model (canonical name) can be checked online.
func Models(model string) bool {
	return model == "snapshot-isolation" || model == "serializable" || model == sessionSI
}

// keyStates holds per-key state in pages of 4096 keys, so growing it never
// copies (keys can number in the millions when a workload keeps creating
// them).
type keyStates struct {
	pages [][]keyState
	cold  [][]keyCold
	n     int
}

const keyPage = 4096

// get returns key k's state; k < n.
func (ks *keyStates) get(k int32) *keyState { return &ks.pages[k/keyPage][k%keyPage] }

func (ks *keyStates) getCold(k int32) *keyCold { return &ks.cold[k/keyPage][k%keyPage] }

func (c *Checker) key(k int32) *keyState {
	for int(k) >= c.keys.n {
		if c.keys.n%keyPage == 0 {
			c.keys.pages = append(c.keys.pages, make([]keyState, keyPage))
			c.keys.cold = append(c.keys.cold, make([]keyCold, keyPage))
		}
		c.keys.n = min(int(k)+1, (c.keys.n/keyPage+1)*keyPage)
	}
	return c.keys.get(k)
}

// gcTS returns the timestamp below which key k's versions were discarded
// (when fGced).
func (c *Checker) gcTS(k int32) history.Timestamp {
	x := c.keys.getCold(k)
	return history.Timestamp{P: x.gcP, L: x.gcL, Set: true}
}

// vers returns key ks's retained versions.
func (c *Checker) vers(ks *keyState) []version {
	if ks.vcls == 0 {
		return nil
	}
	return c.vp.slot(ks.vcls, ks.voff)[:ks.nv]
}

// resize moves ks's versions into a slot of class cl (0: none; nv must
// fit).
func (c *Checker) resize(ks *keyState, cl uint8) {
	var nw []version
	var off uint32
	if cl != 0 {
		off = c.vp.alloc(cl)
		nw = c.vp.slot(cl, off)
	}
	if ks.vcls != 0 {
		old := c.vp.slot(ks.vcls, ks.voff)
		copy(nw, old[:ks.nv])
		c.vp.release(ks.vcls, ks.voff)
	}
	ks.vcls, ks.voff = cl, off
}

// activate puts key k on the list Tick visits.
func (c *Checker) activate(k int32, ks *keyState) {
	if ks.flags&fActive == 0 {
		ks.flags |= fActive
		for int(k>>6) >= len(c.activeBits) {
			c.activeBits = append(c.activeBits, 0)
		}
		c.activeBits[k>>6] |= 1 << (k & 63)
		c.nactive++
	}
}

// hasReads reports whether ks has pending reads.
func (c *Checker) hasReads(ks *keyState) bool { return ks.rhead > c.reads.head }

// newWriter enters t in the writer table.
func (c *Checker) newWriter(t *Txn) int32 {
	w := writer{t: t, id: t.ID, sts: t.StartTS}
	t.holds++
	if n := len(c.wfree); n > 0 {
		i := c.wfree[n-1]
		c.wfree = c.wfree[:n-1]
		*c.writers.at(i) = w
		*c.writers.ref(i) = wref{}
		return i
	}
	return c.writers.add(w)
}

// unref drops one reference to writer i (a full one, or a ghost one),
// stripping the writer of its transaction when only ghosts name it and
// freeing the entry when nothing does.
func (c *Checker) unref(i int32, ghost bool) {
	r := c.writers.ref(i)
	if ghost {
		r.ghost--
	} else {
		r.full--
	}
	if r.full == 0 {
		if r.ghost == 0 {
			c.release(c.writers.at(i).t)
			*c.writers.at(i) = writer{}
			c.wfree = append(c.wfree, i)
		} else if w := c.writers.at(i); w.t != nil {
			c.release(w.t)
			w.t = nil
		}
	}
}

// toGhost makes version v name its writer as a ghost; the change of
// the writer's references is deferred (deferRef).
func (c *Checker) toGhost(v *version) {
	if v.ghost {
		return
	}
	v.ghost = true
	c.deferRef(v.w, refToGhost)
}

// Reference changes made by a sweep of the active keys (tick) are not
// applied to the writer table as each version is discarded or made a
// ghost: the versions of consecutive keys name writers all over the table,
// so that cost a cache miss per version (about half of Tick's time on the
// committed-heavy stream, docs/benchmarks.md, issue 17 item 4, sixth
// session). They are collected (deferRef) and applied at the end of the
// sweep grouped by page of the table (applyRefs). The result is the one
// unref and toGhost give applied one by one: the counts only add up, and
// an entry is stripped or freed by its final counts (a writer still named
// by a version keeps a count above zero throughout). Nothing reads the
// counts during a sweep.
const (
	refFull    = 0 // a full reference dropped
	refGhost   = 1 // a ghost reference dropped
	refToGhost = 2 // a full reference became a ghost one
)

// deferRef records a reference change of writer i (refFull, refGhost or
// refToGhost), applied by applyRefs.
func (c *Checker) deferRef(i int32, kind uint32) {
	c.refs = append(c.refs, uint32(i)<<2|kind)
}

// applyRefs applies the deferred reference changes (see deferRef), page
// by page of the writer table: first the counts of a page's entries, then
// the stripping or freeing their final counts call for.
func (c *Checker) applyRefs() {
	d := c.refs
	if len(d) == 0 {
		return
	}
	const sh = 2 + writerPageBits
	np := len(c.writers.r)
	cnt := slices.Grow(c.refCnt[:0], np+1)[:np+1]
	clear(cnt)
	for _, x := range d {
		cnt[x>>sh+1]++
	}
	for p := 1; p <= np; p++ {
		cnt[p] += cnt[p-1]
	}
	out := slices.Grow(c.refSorted[:0], len(d))[:len(d)]
	pos := slices.Grow(c.refPos[:0], np)[:np]
	copy(pos, cnt[:np])
	for _, x := range d {
		p := x >> sh
		out[pos[p]] = x
		pos[p]++
	}
	for p := range np {
		grp := out[cnt[p]:cnt[p+1]]
		for _, x := range grp {
			r := c.writers.ref(int32(x >> 2))
			switch x & 3 {
			case refFull:
				r.full--
			case refGhost:
				r.ghost--
			default:
				r.full--
				r.ghost++
			}
		}
		for _, x := range grp {
			i := int32(x >> 2)
			if r := c.writers.ref(i); r.full == 0 {
				if r.ghost == 0 {
					c.release(c.writers.at(i).t)
					*c.writers.at(i) = writer{}
					c.wfree = append(c.wfree, i)
					r.ghost = -1 // freed (newWriter resets it)
				} else if w := c.writers.at(i); r.ghost > 0 && w.t != nil {
					c.release(w.t)
					w.t = nil
				}
			}
		}
	}
	c.refs, c.refCnt, c.refSorted, c.refPos = d[:0], cnt, out, pos
}

func (c *Checker) isInitial(v Val) bool {
	return v.K == 0 || (c.cfg.InitialZero && v.K == 1 && v.N == 0)
}

// snap is the timestamp a transaction reads at.
func (c *Checker) snap(t *Txn) history.Timestamp {
	if c.ser {
		return t.CommitTS
	}
	return t.StartTS
}

// less orders timestamps (P, L) without building them.
func less(aP, aL, bP, bL int64) bool { return aP < bP || (aP == bP && aL < bL) }

// vis reports whether a version committed at (cP, cL) is in the state read
// at snapshot (sP, sL): cts ≤ snap for SI (TimeKiller), cts < snap for
// serializability.
func (c *Checker) vis(cP, cL, sP, sL int64) bool {
	if c.ser {
		return less(cP, cL, sP, sL)
	}
	return !less(sP, sL, cP, cL)
}

// visible reports whether a version committed at cts is in the state read
// at snap (see vis).
func (c *Checker) visible(cts, snap history.Timestamp) bool {
	return c.vis(cts.P, cts.L, snap.P, snap.L)
}

// at returns the index of the version visible at snap (-1 = initial).
func (c *Checker) at(ks *keyState, snap history.Timestamp) int {
	i := int(ks.nv) - 1
	if i < 0 {
		return -1
	}
	if c.vis(ks.lastP, ks.lastL, snap.P, snap.L) {
		return i
	}
	vs := c.vers(ks)
	lo, hi := 0, len(vs) // first version not visible at snap
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.vis(vs[m].ctsP, vs[m].ctsL, snap.P, snap.L) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// Add checks one arriving transaction. Aborted transactions, and those of
// unknown outcome without both timestamps, are counted and skipped (their
// writes are never visible); an unknown-outcome transaction with both
// timestamps is treated as committed, as in package chronos. A committed
// transaction must carry both timestamps.
func (c *Checker) Add(t *Txn) error {
	if t.Status == history.Unknown && t.StartTS.Set && t.CommitTS.Set {
		t.Status = history.Committed
	}
	if t.Status != history.Committed {
		c.aborted++
		if t.Status == history.Unknown {
			// It may have committed at an unknown time: remember its
			// writes so reads of them are undecided rather than invalid.
			c.resolve(t, c.n+1)
			for i := range t.Ops {
				if o := &t.Ops[i]; o.Kind == history.Write && !o.List && o.Key >= 0 {
					c.addUnknownWrite(o.Key, o.V)
				}
			}
		}
		return nil
	}
	if !t.StartTS.Set || !t.CommitTS.Set {
		return fmt.Errorf("transaction %s has no start or commit timestamp", t.ID)
	}
	if t.CommitTS.Less(t.StartTS) {
		return fmt.Errorf("transaction %s commits (%s) before it starts (%s)", t.ID, t.CommitTS, t.StartTS)
	}
	now := c.cfg.Now()
	c.n++
	t.seq = c.n
	c.resolve(t, c.n)
	if c.cfg.Model == sessionSI && t.Session != "" {
		c.checkSession(t, now)
	}
	c.prefetch(t)
	snap := c.snap(t)
	if c.maxSnap.Less(snap) || !c.maxSnap.Set {
		c.maxSnap = snap
	}
	// Int and external reads: a read is internal if an earlier op of the
	// transaction accessed its key (see lastAccess). The transaction's
	// pending reads refer to it by its number in ptx (tx).
	tx := c.ptxBase + int64(c.ptx.len())
	hasPending := false
	firstRead := c.reads.tail
	nw := int64(0) // key-value writes (versions the transaction may add)
	for j := range t.Ops {
		o := &t.Ops[j]
		if o.List {
			if o.Kind == history.Delete {
				c.deletes++
			} else {
				c.listOps++
			}
			continue
		}
		if o.Kind != history.Read {
			if o.Kind == history.Write {
				c.key(o.Key)
				nw++
			}
			continue
		}
		ks := c.key(o.Key)
		if p := c.lastAccess(t, j); p >= 0 {
			if acc := t.Ops[p].V; acc != o.V && !c.aliased(acc, o.V, func() string {
				return fmt.Sprintf("%s: op %d read %s of %s after op %d", name(t), j, c.valString(o.V), c.keyName(o.Key), p)
			}) {
				c.report(TypeInternal, c.keyName(o.Key), fmt.Sprintf("%s: op %d (%s) follows op %d (%s) on the same key, so it must return %s, but it returned %s. Int axiom.",
					c.txnString(t), j, c.opStringIn(t, o), p, c.opStringIn(t, &t.Ops[p]), c.valString(acc), c.valString(o.V)))
			}
			continue
		}
		// snap < gcTS implies snap < the last version's cts (gcTS is a
		// retained version's), so the cold state is read only then.
		if ks.flags&fGced != 0 && less(snap.P, snap.L, ks.lastP, ks.lastL) && snap.Less(c.gcTS(o.Key)) {
			c.late++
			continue
		}
		if ks.flags&(fForgot|fProbe) != 0 && c.forgottenRead(o.Key, ks, snap.P, snap.L) {
			c.forgotReads++
			if c.forgotFirst == "" {
				c.forgotFirst = fmt.Sprintf("%s (snapshot %s) read %s of %s", name(t), snap, c.valString(o.V), c.keyName(o.Key))
			}
			continue
		}
		fail := !c.matches(ks, snap, o.V)
		n, r := c.reads.push()
		r.snapP, r.snapL, r.vN, r.vK = snap.P, snap.L, o.V.N, o.V.K
		r.tx, r.key, r.op, r.fail = tx, o.Key, int32(j), fail
		if c.hasReads(ks) {
			r.prev = ks.rhead
			if less(ks.maxP, ks.maxL, snap.P, snap.L) {
				ks.maxP, ks.maxL = snap.P, snap.L
			}
		} else {
			ks.maxP, ks.maxL = snap.P, snap.L
		}
		r.cmP, r.cmL = ks.maxP, ks.maxL
		ks.rhead = n + 1
		if fail {
			ks.nfail++
		}
		c.work++
		c.activate(o.Key, ks)
		hasPending = true
	}
	if hasPending {
		// the transaction, its ops and its pending reads (read: 80 bytes)
		b := int64(txnBytes+opBytes*cap(t.Ops)+len(t.ID)) + writeBytes*nw + readBytes*(c.reads.tail-firstRead)
		c.winBytes += b
		c.ptx.push(ptxEntry{t: t, arrived: int64(now.Sub(c.start)), snapP: snap.P, snapL: snap.L, bytes: b})
	} else {
		tx = -1
	}
	// Install writes (last write per key), NoConflict, re-check reads.
	// A write is installed unless a later op of t writes its key. later
	// has a bit per key (id mod 64) of the writes after op j, so the later
	// ops are scanned only when the key's bit is set (about one write in
	// ten of a 15-op transaction; the scan of every later op was an eighth
	// of Add's time: docs/benchmarks.md, issue 17 item 4, branch wchk).
	w := int32(-1)
	var later uint64
	for j := len(t.Ops) - 1; j >= 0; j-- {
		o := &t.Ops[j]
		if o.Kind != history.Write {
			continue
		}
		bit := uint64(1) << (uint32(o.Key) & 63)
		maybe := later&bit != 0
		later |= bit
		if o.List {
			continue
		}
		if maybe {
			dup := false
			for jj := j + 1; jj < len(t.Ops); jj++ {
				if t.Ops[jj].Kind == history.Write && t.Ops[jj].Key == o.Key {
					dup = true
					break
				}
			}
			if dup {
				continue
			}
		}
		if w < 0 {
			w = c.newWriter(t)
		}
		c.install(t, o, w, tx)
	}
	return nil
}

// prefetch loads the key lines of t's ops, then the version slots its
// writes will append to, each in a tight loop of independent loads: the
// processor overlaps their cache misses, which Add's per-op work (one
// dependent miss after another) cannot (docs/benchmarks.md, issue 17
// item 4). It changes nothing but the keys' reference bits (fRef).
func (c *Checker) prefetch(t *Txn) {
	var x uint8
	n := int32(c.keys.n)
	for j := range t.Ops {
		if k := t.Ops[j].Key; k >= 0 && k < n {
			ks := c.keys.get(k)
			x += ks.flags
			ks.flags |= fRef // used: spared by the next forgetting pass (keys.go)
		}
	}
	var grows [8]uint8 // slots of each class this transaction's installs will take
	for j := range t.Ops {
		if o := &t.Ops[j]; o.Kind == history.Write && o.Key >= 0 && o.Key < n {
			ks := c.keys.get(o.Key)
			if ks.vcls != 0 && int(ks.nv) < clsSize(ks.vcls) {
				x += c.vp.slot(ks.vcls, ks.voff)[ks.nv].vK
				continue
			}
			// install will move the key's versions to a slot of the
			// next class (resize): start loading both
			cl := uint8(1)
			if ks.nv > 0 {
				cl = growClass(ks.vcls)
				prefetchVers(c.vp.slot(ks.vcls, ks.voff)[:ks.nv])
			}
			if int(cl) < len(grows) {
				if s, ok := c.vp.peek(cl, int(grows[cl])); ok {
					prefetchVers(c.vp.slot(cl, s)[:ks.nv+1])
				}
				grows[cl]++
			}
		}
	}
	c.sink += x
}

// prefetchLines starts loading the cache lines of the n bytes at p
// (changes nothing).
func prefetchLines(p unsafe.Pointer, n uintptr) {
	const line = 64
	a, end := uintptr(p), uintptr(p)+n
	for a &^= line - 1; a < end; a += line {
		prefetch(a)
	}
}

// prefetchVers starts loading the cache lines of vs (changes nothing).
func prefetchVers(vs []version) {
	if len(vs) > 0 {
		prefetchLines(unsafe.Pointer(&vs[0]), uintptr(len(vs))*unsafe.Sizeof(version{}))
	}
}

// AddAll adds ts in order, as Add does one by one, and calls refused for
// each transaction Add refuses; it returns how many were added. While a
// transaction is checked, the cache misses of the next ones are started
// without waiting for them (see Prefetch): their ids' direct-index entries
// three transactions ahead, their key lines two ahead, the version slots
// their writes append to one ahead, and the writer table entries the
// next writers take. The checker's time per transaction is
// mostly such misses (docs/benchmarks.md, issue 17 item 4).
func (c *Checker) AddAll(ts []*Txn, refused func(*Txn, error)) int {
	n := 0
	for i, t := range ts {
		if i+6 < len(ts) {
			prefetchLines(unsafe.Pointer(ts[i+6]), unsafe.Sizeof(Txn{}))
		}
		if i+4 < len(ts) {
			if ops := ts[i+4].Ops; len(ops) > 0 {
				prefetchLines(unsafe.Pointer(&ops[0]), uintptr(len(ops))*unsafe.Sizeof(Op{}))
			}
		}
		if i+3 < len(ts) {
			c.prefetchIDs(ts[i+3])
		}
		if i+2 < len(ts) {
			c.prefetchKeys(ts[i+2])
		}
		if i+1 < len(ts) {
			c.prefetchSlots(ts[i+1])
		}
		c.prefetchWriter()
		if err := c.Add(t); err != nil {
			refused(t, err)
			c.added(t)
			continue
		}
		c.added(t)
		n++
	}
	return n
}

// peekID returns the id op o's key has now, or -1 (new, or a key the
// direct index does not hold): a read-only look-up for the prefetches.
func (c *Checker) peekID(o *Op) int32 {
	k := o.Key
	switch o.raw {
	case rawInt:
		if int(k) >= len(c.kt.dense) {
			return -1
		}
		k = c.kt.dense[k] - 1
	case rawNone:
	default:
		return -1
	}
	if k < 0 || int(k) >= c.keys.n {
		return -1
	}
	return k
}

// prefetchIDs starts loading the direct-index entries of t's integer keys
// (changes nothing).
func (c *Checker) prefetchIDs(t *Txn) {
	for j := range t.Ops {
		if o := &t.Ops[j]; o.raw == rawInt && int(o.Key) < len(c.kt.dense) {
			prefetch(uintptr(unsafe.Pointer(&c.kt.dense[o.Key])))
		}
	}
}

// prefetchKeys starts loading the key lines of t's ops (changes nothing).
func (c *Checker) prefetchKeys(t *Txn) {
	for j := range t.Ops {
		if k := c.peekID(&t.Ops[j]); k >= 0 {
			prefetch(uintptr(unsafe.Pointer(c.keys.get(k))))
		}
	}
}

// prefetchWriter starts loading the writer table entries the next two
// writers will take (newWriter reuses freed entries, last freed first,
// and those lie anywhere in the table); it changes nothing.
func (c *Checker) prefetchWriter() {
	for n := len(c.wfree) - 1; n >= 0 && n >= len(c.wfree)-2; n-- {
		i := c.wfree[n]
		w := uintptr(unsafe.Pointer(c.writers.at(i)))
		prefetch(w)
		prefetch(w + unsafe.Sizeof(writer{}) - 1)
		prefetch(uintptr(unsafe.Pointer(c.writers.ref(i))))
	}
}

// prefetchSlots starts loading, for t's writes, the version slot entry
// each will be installed at (changes nothing).
func (c *Checker) prefetchSlots(t *Txn) {
	for j := range t.Ops {
		o := &t.Ops[j]
		if o.Kind != history.Write {
			continue
		}
		if k := c.peekID(o); k >= 0 {
			if ks := c.keys.get(k); ks.vcls != 0 && int(ks.nv) < clsSize(ks.vcls) {
				prefetch(uintptr(unsafe.Pointer(&c.vp.slot(ks.vcls, ks.voff)[ks.nv])))
			}
		}
	}
}

// lastAccess returns the index of the last op of t before op j that
// reads or writes op j's key (key-value ops only), or -1: the value op j
// must return by the Int axiom is that op's value. Small transactions are
// scanned; big ones use an index built once per transaction.
func (c *Checker) lastAccess(t *Txn, j int) int {
	k := t.Ops[j].Key
	if len(t.Ops) <= 64 {
		for p := j - 1; p >= 0; p-- {
			if o := &t.Ops[p]; o.Key == k && !o.List && (o.Kind == history.Read || o.Kind == history.Write) {
				return p
			}
		}
		return -1
	}
	if c.accT != t {
		// index: for each op, the previous key-value op on the same key
		c.accT = t
		c.accPrev = slices.Grow(c.accPrev[:0], len(t.Ops))[:len(t.Ops)]
		last := map[int32]int32{}
		for p := range t.Ops {
			c.accPrev[p] = -1
			o := &t.Ops[p]
			if l, ok := last[o.Key]; ok {
				c.accPrev[p] = l
			}
			if !o.List && (o.Kind == history.Read || o.Kind == history.Write) {
				last[o.Key] = int32(p)
			}
		}
	}
	return int(c.accPrev[j])
}

// matches reports whether a read at snap returning v passes Ext on ks.
func (c *Checker) matches(ks *keyState, snap history.Timestamp, v Val) bool {
	if ks.nv > 0 && c.vis(ks.lastP, ks.lastL, snap.P, snap.L) {
		return ks.lastVN == v.N && ks.lastVK == v.K
	}
	i := c.at(ks, snap)
	if i < 0 {
		return c.isInitial(v)
	}
	return c.vers(ks)[i].val() == v
}

// install adds t's write o as a version of its key (t is writer w in the
// writer table, tx its number in ptx or -1), checks NoConflict against
// the retained versions, and re-checks the pending reads it may change.
func (c *Checker) install(t *Txn, o *Op, w int32, tx int64) {
	ks := c.key(o.Key)
	cts := t.CommitTS
	if c.maxPassSnap.Set && c.visible(cts, c.maxPassSnap) {
		c.latePass++
		if c.latePassFirst == "" {
			c.latePassFirst = fmt.Sprintf("%s's write of %s (cts %s) arrived after a read at snapshot %s had become final as passing", name(t), c.keyName(o.Key), cts, c.maxPassSnap)
		}
	}
	n := int(ks.nv)
	// position: after every version with cts ≤ t.cts
	i := n
	if i > 0 && less(cts.P, cts.L, ks.lastP, ks.lastL) {
		vs := c.vers(ks)
		for i > 0 && less(cts.P, cts.L, vs[i-1].ctsP, vs[i-1].ctsL) {
			i--
		}
	}
	if !c.ser && ks.flags&(fForgot|fProbe) != 0 && c.forgotMax.Set && !c.forgotMax.Less(t.StartTS) && c.probeForgot(o.Key, ks) {
		// a forgotten writer of the key may overlap t (keys.go)
		c.lateNC++
	}
	if !c.ser {
		// Both checks below need t.sts < the last version's cts
		// (gcTS and every retained cts are at most it), or a version
		// after t.
		if i < n || (i > 0 && less(t.StartTS.P, t.StartTS.L, ks.lastP, ks.lastL)) {
			if ks.flags&fGced != 0 && t.StartTS.Less(c.gcTS(o.Key)) {
				c.lateNC++
			}
			vs := c.vers(ks)
			// writers committed within (t.sts, t.cts]
			for x := i - 1; x >= 0 && less(t.StartTS.P, t.StartTS.L, vs[x].ctsP, vs[x].ctsL); x-- {
				c.noConflict(c.writerString(&vs[x]), c.writers.at(vs[x].w).sts, vs[x].cts(), c.txnString(t), t.StartTS, cts, o.Key, vs[x].cts())
			}
			// writers whose interval contains t.cts: every later
			// version is looked at (a writer committing later may have
			// started earlier than one committing before it)
			for x := i; x < n; x++ {
				if sts := c.writers.at(vs[x].w).sts; sts.Less(cts) {
					c.noConflict(c.txnString(t), t.StartTS, cts, c.writerString(&vs[x]), sts, vs[x].cts(), o.Key, cts)
				}
			}
		}
	}
	if ks.vcls == 0 || n == clsSize(ks.vcls) {
		// a new key's first version takes a one-version slot (a stream
		// of ever-new keys writes most keys once: 32 bytes, not 256,
		// until the sweep); the second goes to 8 (growing 2, 4, 8
		// would copy every busy key's versions three times), the ninth
		// to 32 (growClass); a key left with one version moves back to
		// class 1 (tick)
		if n == 0 {
			c.resize(ks, 1)
		} else {
			c.resize(ks, growClass(ks.vcls))
		}
	}
	vs := c.vp.slot(ks.vcls, ks.voff)[:n+1]
	copy(vs[i+1:], vs[i:n])
	vs[i] = version{ctsP: cts.P, ctsL: cts.L, vN: o.V.N, vK: o.V.K, w: w}
	c.writers.ref(w).full++
	ks.nv++
	if i == n {
		ks.lastP, ks.lastL, ks.lastVN, ks.lastVK = cts.P, cts.L, o.V.N, o.V.K
	}
	if i == 0 {
		ks.flags &^= fV0Ghost
	}
	c.activate(o.Key, ks)
	c.work++
	if ks.flags&fFailed != 0 || c.failOverflow {
		c.reopen(ks, o.Key, i, t)
	}
	// Reads whose visible version is now this one: snap in [cts, next
	// cts). The key's chain is walked newest first; it ends at the first
	// final read, or where no older read can see cts.
	if !c.hasReads(ks) || !c.vis(cts.P, cts.L, ks.maxP, ks.maxL) {
		return
	}
	hasNext := i+1 < len(vs)
	var next history.Timestamp
	if hasNext {
		next = vs[i+1].cts()
	}
	for rn := ks.rhead - 1; rn >= c.reads.head; {
		r := c.reads.get(rn)
		if !c.vis(cts.P, cts.L, r.cmP, r.cmL) {
			break
		}
		if c.vis(cts.P, cts.L, r.snapP, r.snapL) && !(hasNext && c.vis(next.P, next.L, r.snapP, r.snapL)) && r.tx != tx {
			c.rechk++
			fail := o.V.N != r.vN || o.V.K != r.vK
			if fail != r.fail {
				r.fail = fail
				r.flips++
				c.flips++
				if fail {
					ks.nfail++
				} else {
					ks.nfail--
					delete(c.kinds, rn)
				}
			}
		}
		rn = r.prev - 1
	}
}

// Tick finalises Ext verdicts older than FinalAfter and discards state
// below the watermark (see the package comment).
func (c *Checker) Tick() { c.tick(c.cfg.Now().Add(-c.cfg.FinalAfter)) }

func (c *Checker) tick(before time.Time) {
	defer c.flushReleases()
	b := int64(before.Sub(c.start))
	c.stripSessions(b)
	// reads become final in arrival order
	q := &c.reads
	rn := q.head
	// Over MaxWindowBytes, the oldest transactions' reads become final
	// before FinalAfter, down to 3/4 of it (see Config.MaxWindowBytes).
	cut := int64(-1)
	if m := c.windowBudget(); m > 0 && c.winBytes > m {
		sum, j := c.winBytes, 0
		for j < c.ptx.len() && sum > m-m/4 {
			sum -= c.ptx.at(j).bytes
			j++
		}
		cut = c.ptxBase + int64(j)
	}
	for ; rn < q.tail; rn++ {
		r := q.get(rn)
		if c.ptx.at(int(r.tx-c.ptxBase)).arrived > b {
			if r.tx >= cut {
				break
			}
			c.early++
		}
		c.finalize(r, rn)
	}
	q.advance(rn)
	// transactions whose reads are all final
	j := c.ptx.len()
	if rn < q.tail {
		j = int(q.get(rn).tx - c.ptxBase)
	}
	for i := range j {
		e := c.ptx.at(i)
		c.winBytes -= e.bytes
		c.release(e.t)
	}
	c.ptx.drop(j)
	c.ptxBase += int64(j)
	// watermark
	w := c.maxSnap
	for i := range c.ptx.len() {
		if p := c.ptx.at(i); less(p.snapP, p.snapL, w.P, w.L) {
			w.P, w.L = p.snapP, p.snapL
		}
	}
	if !w.Set {
		c.bound()
		return
	}
	// Sweep the keys only when the work since the last sweep (versions
	// installed, reads inserted) is at least half the keys to visit (at
	// least sweepWork times them beyond sweepSmall keys), or every
	// sweepEvery ticks: a sweep costs one visit per active key (a few
	// cache misses), so its cost stays a small fraction of the work
	// whatever the tick rate, and what it discards grows by at most that
	// work in between (docs/benchmarks.md, issue 17 item 4: sweeping at
	// half the keys' worth of work was about a quarter of the checker's
	// time on a 100,000-key stream).
	c.ticks++
	need := int64(c.nactive) / 2
	if c.nactive > sweepSmall {
		need = sweepWork * int64(c.nactive)
	}
	if c.cfg.MaxKeys > 0 && c.liveKeys > c.cfg.MaxKeys {
		need = 0 // over the key budget: settle keys so they can be forgotten
	}
	if cut >= 0 {
		need = 0 // over the window budget: discard what the reads made final held
	}
	if c.work < need && c.ticks-c.swept < sweepEvery {
		c.bound()
		return
	}
	defer c.bound()
	c.work, c.swept = 0, c.ticks
	// Only active keys can have anything to discard: a key with at most one
	// version (already naming a ghost) and no pending reads keeps that
	// version, the last one visible at any snapshot from its commit on.
	// Active keys are visited in key order (their lines are consecutive);
	// while one is swept, the lines of the key sweepAhead keys further on
	// and the versions of the one half as far are being loaded (see
	// prefetch): a sweep reads every retained version of every active key
	// (the binary search for the watermark, the copy of what is kept), and
	// loading only the first version's line ahead left the rest to demand
	// misses (docs/benchmarks.md, issue 17 item 4, branch watchm).
	ks := c.sweepKeys[:0]
	for wi, word := range c.activeBits {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			ks = append(ks, int32(wi<<6|b))
		}
	}
	c.sweepKeys = ks
	for i, k := range ks {
		if i+sweepAhead < len(ks) {
			prefetch(uintptr(unsafe.Pointer(c.keys.get(ks[i+sweepAhead]))))
		}
		if i+sweepAhead/2 < len(ks) {
			if x := c.keys.get(ks[i+sweepAhead/2]); x.vcls != 0 {
				prefetchVers(c.vp.slot(x.vcls, x.voff)[:x.nv])
			}
		}
		c.sweepKey(k, w)
	}
	c.applyRefs()
}

// sweepKey discards key k's state below the watermark w (see tick).
func (c *Checker) sweepKey(k int32, w history.Timestamp) {
	q := &c.reads
	ks := c.keys.get(k)
	// keep the last version visible at w and everything after it
	x := c.at(ks, w)
	if x > 0 && ks.nfail > 0 {
		// classify failing reads while the versions that may explain
		// them are still here
		for rn := ks.rhead - 1; rn >= q.head; {
			r := q.get(rn)
			if r.fail && !r.final {
				if _, ok := c.kinds[rn]; !ok {
					c.kinds[rn] = c.classify(ks, r)
				}
			}
			rn = r.prev - 1
		}
	}
	if x > 0 {
		vs := c.vers(ks)
		for i := range vs[:x] {
			k := uint32(refFull)
			if vs[i].ghost {
				k = refGhost
			}
			c.deferRef(vs[i].w, k)
		}
		m := copy(vs, vs[x:])
		ks.nv = uint32(m)
		// gcTS only grows: versions that arrived late below an earlier
		// cut are retained, but the ones discarded there are gone, so the
		// state below the highest cut stays incomplete even when this
		// cut is lower (a watermark held back by late pending reads).
		// Lowering it let a read between the two cuts be checked against
		// a version list with holes: a false Ext failure
		// (TestLateSessionsAnyTickScheduleNeverInvalid).
		cold := c.keys.getCold(k)
		if ks.flags&fGced == 0 || less(cold.gcP, cold.gcL, vs[0].ctsP, vs[0].ctsL) {
			cold.gcP, cold.gcL = vs[0].ctsP, vs[0].ctsL
		}
		ks.flags |= fGced
	}
	if x > 0 || (x == 0 && ks.flags&fV0Ghost == 0) {
		// the version visible at the watermark: its writer is only
		// named in explanations from now on (see writer)
		c.toGhost(&c.vers(ks)[0])
		ks.flags |= fV0Ghost
	}
	if ks.nv > 1 || c.hasReads(ks) || (ks.nv == 1 && ks.flags&fV0Ghost == 0) {
		if ks.vcls > 2 && int(ks.nv) < clsSize(ks.vcls)/4 {
			c.resize(ks, clsFor(2*int(ks.nv)))
		}
		return
	}
	ks.flags &^= fActive
	c.activeBits[k>>6] &^= 1 << (k & 63)
	c.nactive--
	ks.rhead = 0
	if cl := clsFor(int(ks.nv)); ks.nv == 0 {
		c.resize(ks, 0)
	} else if cl != ks.vcls {
		c.resize(ks, cl)
	}
}

// finalize makes pending read number rn final: a failing read becomes an
// Ext anomaly (or an undecided one, see Close).
func (c *Checker) finalize(r *read, rn int64) {
	if r.final {
		return
	}
	r.final = true
	if !r.fail {
		if snap := r.snap(); !c.maxPassSnap.Set || c.maxPassSnap.Less(snap) {
			c.maxPassSnap = snap
		}
		return
	}
	ks := c.keys.get(r.key)
	ks.nfail--
	t := c.ptx.at(int(r.tx - c.ptxBase)).t
	o := &t.Ops[r.op]
	snap, rv := r.snap(), r.val()
	var state string
	var seen Val // the value visible at snap
	if i := c.at(ks, snap); i >= 0 {
		v := &c.vers(ks)[i]
		seen = v.val()
		state = fmt.Sprintf("%s, written by %s (cts %s)", c.valString(v.val()), c.writerName(v), v.cts())
	} else {
		state = "the initial value"
	}
	if rv.K == 2 && c.aliased(rv, seen, func() string {
		return fmt.Sprintf("%s (snapshot %s) read %s of %s, where %s was visible", name(t), snap, c.valString(rv), c.keyName(r.key), state)
	}) {
		// the string read may equal the one visible, or one an
		// unknown-outcome transaction wrote, under another id
		return
	}
	kind, ok := c.kinds[rn]
	if ok {
		delete(c.kinds, rn)
	} else {
		kind = c.classify(ks, r)
	}
	if _, ok := c.unkW[unkRef{r.key, rv}]; ok && !c.isInitial(rv) && !strings.HasPrefix(kind, "written") {
		c.undecided++
		return
	}
	if c.unkForgot.w != nil && !c.isInitial(rv) && !strings.HasPrefix(kind, "written") && c.unkForgot.has(c.unkHash(r.key, rv)) {
		// an unknown-outcome write forgotten under MaxUnknownWrites
		// may have written it
		c.unkMaybe++
		if c.unkFirst == "" {
			c.unkFirst = fmt.Sprintf("%s (snapshot %s) read %s of %s", name(t), snap, c.valString(rv), c.keyName(r.key))
		}
		return
	}
	word := "snapshot"
	if c.ser {
		word = "commit point"
	}
	if c.ser && !c.cfg.CommitOrderSerializes {
		c.coUndecided++
		if c.coFirst == "" {
			c.coFirst = fmt.Sprintf("%s (sts %s, cts %s): op %d (%s) read %s, but at its commit point %s the last committed value of %s was %s [%s]",
				c.txnString(t), t.StartTS, t.CommitTS, r.op, c.opStringIn(t, o), c.valString(rv), snap, c.keyName(r.key), state, kind)
		}
		return
	}
	expl := fmt.Sprintf("%s (sts %s, cts %s): op %d (%s) is an external read. At its %s %s the last committed value of %s was %s, but it read %s [%s]. The verdict flipped %d times before becoming final. Ext axiom.",
		c.txnString(t), t.StartTS, t.CommitTS, r.op, c.opStringIn(t, o), word, snap, c.keyName(r.key), state, c.valString(rv), kind, r.flips)
	listed := c.report(TypeExt, c.keyName(r.key), expl)
	if c.nFailRecs >= maxFailRecs {
		c.failOverflow = true
		if c.maxFailSnap.Less(snap) || !c.maxFailSnap.Set {
			c.maxFailSnap = snap
		}
		return
	}
	c.nFailRecs++
	fr := failRec{snap: snap, v: rv}
	if listed {
		fr.expl = expl
	}
	c.failed[r.key] = append(c.failed[r.key], fr)
	ks.flags |= fFailed
}

// reopen re-checks the final Ext failures of key k after version i (by t)
// was installed late (see "Late writes after finality").
func (c *Checker) reopen(ks *keyState, k int32, i int, t *Txn) {
	if c.failOverflow && c.visible(t.CommitTS, c.maxFailSnap) {
		c.reopenUnk++
		if c.reopenFirst == "" {
			c.reopenFirst = fmt.Sprintf("%s's write of %s arrived after more than %d final failures had been recorded and may change one of them", name(t), c.keyName(k), maxFailRecs)
		}
	}
	if ks.flags&fFailed == 0 {
		return
	}
	vs := c.vers(ks)
	failed := c.failed[k]
	n := 0
	for _, fr := range failed {
		if !c.visible(t.CommitTS, fr.snap) || (i+1 < len(vs) && c.visible(vs[i+1].cts(), fr.snap)) {
			// not visible at the failure's snapshot, or a later retained
			// version still is: the failure stands as it was
			failed[n] = fr
			n++
			continue
		}
		undecidable := i == 0 && ks.flags&fGced != 0 && fr.snap.Less(c.gcTS(k))
		if !undecidable && vs[i].val() != fr.v && vs[i].vK == 2 && fr.v.K == 2 && (c.suspect(vs[i].val()) || c.suspect(fr.v)) {
			// the late string may be the one read, under another id
			// (values.go)
			undecidable = true
		}
		if !undecidable && vs[i].val() != fr.v {
			failed[n] = fr
			n++
			continue
		}
		// withdraw the failure: it is passed now, or undecidable
		c.nFailRecs--
		c.counts[TypeExt]--
		if c.counts[TypeExt] <= 0 {
			delete(c.counts, TypeExt)
		}
		if fr.expl != "" {
			as := c.anoms[TypeExt]
			for j := range as {
				if as[j].Explanation == fr.expl {
					c.anoms[TypeExt] = append(as[:j], as[j+1:]...)
					break
				}
			}
			if len(c.anoms[TypeExt]) == 0 {
				delete(c.anoms, TypeExt)
			}
		}
		if undecidable {
			c.reopenUnk++
			if c.reopenFirst == "" {
				c.reopenFirst = fmt.Sprintf("%s (cts %s) wrote %s after a read of it at snapshot %s had become final as failing, and the versions between them were already discarded", name(t), t.CommitTS, c.keyName(k), fr.snap)
			}
		} else {
			c.withdrawn++
			// the read is final as passing now: a later write visible
			// at its snapshot must count as latePass, as for a read
			// that passed when it became final (finalize)
			if !c.maxPassSnap.Set || c.maxPassSnap.Less(fr.snap) {
				c.maxPassSnap = fr.snap
			}
		}
	}
	clear(failed[n:])
	if n == 0 {
		delete(c.failed, k)
		ks.flags &^= fFailed
	} else {
		c.failed[k] = failed[:n]
	}
}

// classify says where the value a failing read returned came from, among
// the versions retained now. It runs when the verdict becomes final, or
// earlier, just before versions are discarded, while a read is failing.
func (c *Checker) classify(ks *keyState, r *read) string {
	rv, snap := r.val(), r.snap()
	kind := "value never written (among retained versions)"
	if c.isInitial(rv) {
		kind = "written before the snapshot (the initial value, overwritten)"
	}
	vs := c.vers(ks)
	for i := range vs {
		v := &vs[i]
		if v.val() == rv {
			if c.visible(v.cts(), snap) {
				kind = fmt.Sprintf("written before the snapshot, by %s (cts %s)", c.writerName(v), v.cts())
			} else {
				kind = fmt.Sprintf("written after the snapshot, by %s (sts %s, cts %s)", c.writerName(v), c.writers.at(v.w).sts, v.cts())
			}
		}
	}
	return kind
}

// writerName names version v's writer.
func (c *Checker) writerName(v *version) string { return "T(" + c.writers.at(v.w).id + ")" }

// writerString is version v's writer as listed in explanations: with its
// ops while the version names it in full, else without.
func (c *Checker) writerString(v *version) string {
	if w := c.writers.at(v.w); !v.ghost && w.t != nil {
		return c.txnString(w.t)
	}
	return c.writerName(v) + " [ops no longer retained]"
}

// noConflict reports two overlapping writers (a, then b) of key k; ts is
// the commit timestamp inside the other's interval.
func (c *Checker) noConflict(a string, asts, acts history.Timestamp, b string, bsts, bcts history.Timestamp, k int32, ts history.Timestamp) {
	c.report(TypeNoConflict, c.keyName(k), fmt.Sprintf("%s (sts %s, cts %s) and %s (sts %s, cts %s) both write %s and overlap (one commits at %s inside the other's interval). NoConflict axiom.",
		a, asts, acts, b, bsts, bcts, c.keyName(k), ts))
}

// report counts an anomaly and lists it while fewer than MaxPerType of its
// type are listed; it reports whether it was listed.
func (c *Checker) report(typ, key, expl string) bool {
	c.counts[typ]++
	if len(c.anoms[typ]) < c.cfg.MaxPerType {
		c.anoms[typ] = append(c.anoms[typ], check.Anomaly{Type: typ, Key: key, Explanation: expl, Txns: []int32{}})
		return true
	}
	return false
}

const sessionSI = "strong-session-snapshot-isolation"

// unkRef is a (key, value) written by an unknown-outcome transaction.
type unkRef struct {
	k int32
	v Val
}

func name(t *Txn) string { return "T(" + t.ID + ")" }

func (c *Checker) opString(o *Op) string { return c.opStringIn(nil, o) }

// opStringIn renders op o of transaction t (see keyNameIn).
func (c *Checker) opStringIn(t *Txn, o *Op) string {
	f := "r"
	switch o.Kind {
	case history.Write:
		f = "w"
	case history.Append:
		f = "append"
	}
	return f + " " + c.keyNameIn(t, o.Key) + " " + c.valString(o.V)
}

func (c *Checker) txnString(t *Txn) string {
	var b strings.Builder
	b.WriteString(name(t))
	b.WriteString(" [")
	for j := range t.Ops {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.opStringIn(t, &t.Ops[j]))
	}
	b.WriteString("]")
	return b.String()
}

// Status is a snapshot of the checker's progress.
type Status struct {
	Txns          int64          `json:"txns"`
	Skipped       int64          `json:"not_committed"`
	Pending       int            `json:"pending_reads"`
	Flips         int64          `json:"flips"`
	Rechecks      int64          `json:"rechecks"`
	LateUnchecked int64          `json:"late_unchecked"`
	Violations    map[string]int `json:"violations"`
	Versions      int            `json:"versions_retained"`
	// key budget (Config.MaxKeys): keys retained, keys forgotten with
	// their versions, reads of forgotten keys not checked
	Keys           int   `json:"keys_retained"`
	ForgottenKeys  int64 `json:"forgotten_keys"`
	ForgottenReads int64 `json:"forgotten_reads"`
}

// Status reports progress counters.
func (c *Checker) Status() Status {
	s := Status{Txns: c.n, Skipped: c.aborted, Pending: int(c.reads.tail - c.reads.head), Flips: c.flips, Rechecks: c.rechk,
		LateUnchecked: c.late, Violations: map[string]int{}, Keys: c.liveKeys, ForgottenKeys: c.forgotKeys, ForgottenReads: c.forgotReads}
	for k, v := range c.counts {
		s.Violations[k] = v
	}
	for rn := c.reads.head; rn < c.reads.tail; rn++ {
		if c.reads.get(rn).fail {
			s.Violations["ext (tentative)"]++
		}
	}
	for i := 0; i < c.keys.n; i++ {
		s.Versions += int(c.keys.get(int32(i)).nv)
	}
	return s
}

// Close finalises every pending verdict and returns the result.
func (c *Checker) Close() *check.Result {
	for rn := c.reads.head; rn < c.reads.tail; rn++ {
		c.finalize(c.reads.get(rn), rn)
	}
	c.reads.advance(c.reads.tail)
	c.ptxBase += int64(c.ptx.len())
	c.ptx.reset()
	r := &check.Result{Checker: "aion", Model: c.cfg.Model}
	types := make([]string, 0, len(c.counts))
	for t := range c.counts {
		types = append(types, t)
	}
	slices.Sort(types)
	r.AnomalyTypes = types
	r.Anomalies = []check.Anomaly{}
	for _, t := range types {
		r.Anomalies = append(r.Anomalies, c.anoms[t]...)
		if extra := c.counts[t] - len(c.anoms[t]); extra > 0 {
			if r.Truncated == nil {
				r.Truncated = map[string]int{}
			}
			r.Truncated[t] = extra
		}
	}
	el := c.cfg.Now().Sub(c.start).Seconds()
	r.Stats = map[string]any{"txns": c.n, "not_committed": c.aborted, "flips": c.flips, "rechecks": c.rechk,
		"late_unchecked": c.late, "late_noconflict_partial": c.lateNC, "unchecked_list_ops": c.listOps,
		"seconds": el, "ext_withdrawn": c.withdrawn, "ext_reopened_unknown": c.reopenUnk, "late_writes_after_pass": c.latePass,
		"keys_retained": c.liveKeys, "forgotten_keys": c.forgotKeys, "forgotten_reads": c.forgotReads,
		"early_final_reads": c.early, "forgotten_filter_probes": c.filterProbes, "suspect_keys": c.suspectKeys,
		"values_retained": len(c.vals.byID), "forgotten_values": c.vals.dropped, "forgotten_value_reads": c.valReads,
		"unknown_writes_retained": len(c.unkW), "forgotten_unknown_writes": c.unkDropped, "forgotten_unknown_write_reads": c.unkMaybe,
		"sessions_retained": c.sess.n, "forgotten_sessions": c.sess.nforgot, "forgotten_session_checks": c.sess.unchecked}
	if el > 0 {
		r.Stats["txns_per_second"] = float64(c.n) / el
	}
	switch {
	case c.n == 0:
		r.Verdict = check.Unknown
		r.Reason = "no committed transaction was checked"
	case c.late > 0:
		r.Verdict = check.Unknown
		r.Reason = fmt.Sprintf("%d external reads arrived with a snapshot older than the discarded state (later than --final-after allows) and could not be checked", c.late)
	case c.forgotReads > 0:
		r.Verdict = check.Unknown
		r.Reason = fmt.Sprintf("%d reads of keys whose state was forgotten under the key budget (--memory-limit; %d keys forgotten) could not be checked; first: %s", c.forgotReads, c.forgotKeys, c.forgotFirst)
	case c.listOps > 0 && c.n > 0:
		r.Verdict = check.Unknown
		r.Reason = fmt.Sprintf("%d list, predicate or increment ops are not checked online; use txray check --checker chronos", c.listOps)
	}
	var why []string
	if c.undecided > 0 {
		why = append(why, fmt.Sprintf("%d reads returned values written by transactions of unknown outcome that carry no timestamps; they cannot be placed in the replay", c.undecided))
	}
	if c.coUndecided > 0 {
		why = append(why, fmt.Sprintf("%d reads contradict the commit-timestamp order, but the commit order is not known to be the database's serialization order (not a timestamp-ordered engine), so they do not prove non-serializability; check the history offline with --checker list-append or rw-register, or declare commit-order-serializes. First: %s", c.coUndecided, c.coFirst))
	}
	if c.lateNC > 0 {
		// a NoConflict check that could not see every writer it may
		// overlap: an overlap with a discarded one may be missed
		why = append(why, fmt.Sprintf("%d writes arrived below the watermark or to keys forgotten under --memory-limit; their NoConflict checks covered the retained versions only, so an overlap with a discarded writer may have been missed", c.lateNC))
	}
	if c.valReads > 0 {
		why = append(why, fmt.Sprintf("%d reads returned a string that may equal the one expected under another id: the table of string values was bounded (--memory-limit; %d values forgotten), so they could not be decided; first: %s", c.valReads, c.vals.dropped, c.valFirst))
	}
	if c.unkMaybe > 0 {
		why = append(why, fmt.Sprintf("%d failing reads returned values that a transaction of unknown outcome may have written (its writes were forgotten under --memory-limit: %d), so they cannot be decided; first: %s", c.unkMaybe, c.unkDropped, c.unkFirst))
	}
	if c.sess.unchecked > 0 {
		why = append(why, fmt.Sprintf("%d transactions of sessions not retained started before the last commit of a session forgotten under --memory-limit (%d sessions forgotten), and the filter of forgotten sessions holds their session's name, so their Session check (prev.cts ≤ next.sts) could not be made; first: %s", c.sess.unchecked, c.sess.nforgot, c.sess.first))
	}
	if c.reopenUnk > 0 {
		why = append(why, fmt.Sprintf("%d final external-read failures were re-opened by writes that arrived later than --final-after and can no longer be decided (the versions that decide them were discarded); first: %s", c.reopenUnk, c.reopenFirst))
	}
	if c.latePass > 0 {
		why = append(why, fmt.Sprintf("%d writes arrived later than --final-after with a commit timestamp at or before the snapshot of a read already final as passing; such reads are not re-checked online, so one may have read a stale value (txray check decides it offline); first: %s", c.latePass, c.latePassFirst))
	}
	if len(why) > 0 {
		r.Verdict = check.Unknown
		if r.Reason != "" {
			why = append([]string{r.Reason}, why...)
		}
		r.Reason = strings.Join(why, "; ")
	}
	if c.deletes > 0 {
		// Deleted versions are not modelled online: a read of a deleted
		// row would be judged against the version before the delete. What
		// was found is kept as warnings, not as anomalies that would make
		// the verdict invalid.
		for i, a := range r.Anomalies {
			if i == 8 {
				r.Warnings = append(r.Warnings, fmt.Sprintf("... %d more", len(r.Anomalies)-8))
				break
			}
			r.Warnings = append(r.Warnings, "not judged (the history has deletes): "+a.Type+": "+a.Explanation)
		}
		r.Anomalies, r.Truncated = nil, nil
		r.Verdict = check.Unknown
		r.Reason = fmt.Sprintf("%d delete ops: %s", c.deletes, history.DeletesUnsupported("aion"))
	}
	r.Stats["deletes_unchecked"] = c.deletes
	r.Stats["undecided_unknown_outcome"] = c.undecided
	r.Stats["commit_order_inconclusive"] = c.coUndecided
	r.Finish() // verdict, types and ruled-out models from package model
	if c.ser && len(r.AnomalyTypes) > 0 {
		// commit-order Ext failures say nothing about snapshot isolation
		r.Not, r.AlsoNot = []string{"serializable"}, []string{"strict-serializable", "strong-session-serializable"}
	}
	if c.cfg.Model == sessionSI && slices.Contains(r.AnomalyTypes, TypeSession) {
		// Session rules out strong-session SI (and what implies it), not
		// plain SI as model.RulesOut("session") would say.
		var rest []string
		for _, a := range r.AnomalyTypes {
			if a != TypeSession {
				rest = append(rest, a)
			}
		}
		not, also := model.RulesOut(rest)
		out := map[string]bool{}
		for _, m := range append(not, also...) {
			out[m] = true
		}
		for _, m := range model.Names() {
			if model.Implies(m, sessionSI) {
				out[m] = true
			}
		}
		r.Not, r.AlsoNot = nil, nil
		for m := range out {
			weakest := true
			for n := range out {
				if n != m && model.Implies(m, n) {
					weakest = false
					break
				}
			}
			if weakest {
				r.Not = append(r.Not, m)
			} else {
				r.AlsoNot = append(r.AlsoNot, m)
			}
		}
		slices.Sort(r.Not)
		slices.Sort(r.AlsoNot)
	}
	if c.withdrawn > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d external-read failures became final and were withdrawn when a write that explains them arrived later than --final-after", c.withdrawn))
	}
	return r
}

// Keys is the checker's key table as tests and single-goroutine callers
// use it (not safe for concurrent use with Add).
type Keys struct{ c *Checker }

// Str returns the id of string key s, interning it.
func (k *Keys) Str(s string) int32 { return k.c.internStrKey([]byte(s), k.c.n+1) }

// Int returns the id of integer key n, interning it.
func (k *Keys) Int(n int64) int32 { return k.c.internInt(n, k.c.n+1) }

// String renders key id id.
func (k *Keys) String(id int32) string { return k.c.keyName(id) }
