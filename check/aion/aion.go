// Package aion is txray's online timestamp-based checker, after Aion (the
// online mode of Chronos/TimeKiller, ICDE 2024). Transactions
// arrive one at a time, in any order across sessions (in session order within
// a session), each with its start and commit timestamps; the checker keeps,
// per key, a versioned frontier (committed versions ordered by commit
// timestamp) and the pending external reads ordered by snapshot, and
// re-checks the affected reads when a write arrives late.
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
// FinalAfter × (~1.5 KB per 15-op transaction), plus one entry per key and
// per session and the interned keys and string values (which grow with
// the number of distinct keys and string values seen). Let W be the smallest snapshot timestamp of
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
// NoConflict checks are made against the retained versions only.
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
package aion

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

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
	Kind history.Kind
	Key  int32 // id in Checker.Keys
	V    Val
	List bool // a list read or an append (not checked online)
}

// Txn is an arriving transaction.
type Txn struct {
	ID       string
	Session  string
	Status   history.Status
	StartTS  history.Timestamp
	CommitTS history.Timestamp
	Ops      []Op
	arrived  time.Time
	seq      int64
	// ghost is this transaction without its ops, which versions below the
	// watermark refer to instead of it (see Checker.tick); stripped marks
	// a ghost.
	ghost    *Txn
	stripped bool
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
	// MaxPerType caps listed anomalies per type (0 = 8).
	MaxPerType int
	// Now is the clock (default time.Now); tests inject one.
	Now func() time.Time
}

type version struct {
	cts history.Timestamp
	v   Val
	w   *Txn
	// g is w's ghost, made at install while w is at hand, so Tick can
	// strip the version without touching w (a cache miss per key).
	g *Txn
}

// readRef is a pending read in its key's list: the snapshot and the
// reading transaction's arrival number are copied in, so sorting, skipping
// and dropping reads never touches the read itself (with many keys, each
// such access is a cache miss).
type readRef struct {
	snapP, snapL int64
	seq          int64 // Txn.seq of the reader; final once ≤ Checker.finalSeq
	r            *read
}

func (x *readRef) snap() history.Timestamp {
	return history.Timestamp{P: x.snapP, L: x.snapL, Set: true}
}

type read struct {
	snap  history.Timestamp
	v     Val
	t     *Txn
	op    int32
	fail  bool
	final bool
	flips int32
	kind  string // classification, fixed when versions that may explain it are discarded
}

type keyState struct {
	vers  []version // sorted by cts
	reads []readRef // pending external reads, sorted by snap
	gcTS  history.Timestamp
	gced  bool // versions older than gcTS were discarded
	nfail int  // pending reads currently failing
	// nfinal: reads in reads that are final (dropped by Tick once they
	// are half of them, so each read is moved O(1) times)
	nfinal int
	// failed: final Ext failures of this key that a late write may still
	// re-open (see "Late writes after finality").
	failed []failRec
	// maxSnap bounds from above every read's snapshot in reads, so
	// install can skip a key without touching its reads and insertRead
	// can append without comparing.
	maxSnap history.Timestamp
	// lastCTS and lastV copy the last version (when vers is not empty),
	// so the common checks (a read at a recent snapshot, a write
	// committing after every retained version) do not touch vers: with
	// many keys each access to another array is a cache miss.
	lastCTS history.Timestamp
	lastV   Val
	// v0ghost: vers[0].w is a ghost already (Tick need not look at it).
	v0ghost bool
	// active: the key is in Checker.active: it has more than one version,
	// or pending reads, or a version whose writer is not yet a ghost, so
	// Tick has work on it.
	active bool
}

// failRec is a final Ext failure kept for re-opening: the read's snapshot
// and value, and the explanation of its listed anomaly ("" if it was only
// counted).
type failRec struct {
	snap history.Timestamp
	v    Val
	expl string
	done bool
}

// sweepEvery: a tick sweeps the active keys at least this often.
const sweepEvery = 8

// maxFailRecs bounds the failure records kept for re-opening; past it, any
// late write that may be visible at some unrecorded failure's snapshot
// re-opens into unknown (Checker.failOverflow).
const maxFailRecs = 1 << 16

// Checker is an online checker. It is not safe for concurrent use; callers
// serialise Add, Tick and Result.
type Checker struct {
	cfg Config
	ser bool
	// Keys and Strs intern keys and string values. Readers intern through
	// methods that lock nmu, so a Reader may decode in another goroutine
	// while the checker runs; direct use is for single-goroutine callers.
	Keys    *history.Interner
	Strs    *history.Interner
	nmu     sync.RWMutex
	keys    keyStates
	active  []int32         // keys Tick must visit (keyState.active)
	last    map[string]*Txn // last transaction per session
	pending []*read         // non-final reads in arrival order
	// finalSeq: every read of a transaction with seq ≤ finalSeq is final
	finalSeq int64
	ptx      []*Txn // transactions with pending reads, arrival order
	anoms    map[string][]check.Anomaly
	counts   map[string]int
	n        int64
	aborted  int64
	flips    int64
	rechk    int64
	late     int64
	lateNC   int64
	listOps  int64
	deletes  int64 // delete ops: not modelled online (see Result)
	maxSnap  history.Timestamp
	start    time.Time
	slab     []read
	// work: versions installed and reads inserted since the last sweep
	// of the active keys; ticks and swept count ticks (see tick)
	work         int64
	ticks, swept int64
	// lastAccess index of the big transaction accT
	accT    *Txn
	accPrev []int32
	// unkW: (key, value) written by unknown-outcome transactions without
	// timestamps; a failing read of one is undecided, not a violation.
	unkW        map[unkRef]struct{}
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
	c := &Checker{cfg: cfg, Keys: history.NewInterner(), Strs: history.NewInterner(),
		last: map[string]*Txn{}, anoms: map[string][]check.Anomaly{}, counts: map[string]int{}}
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
	n     int
}

const keyPage = 4096

// get returns key k's state; k < n.
func (ks *keyStates) get(k int32) *keyState { return &ks.pages[k/keyPage][k%keyPage] }

func (c *Checker) key(k int32) *keyState {
	for int(k) >= c.keys.n {
		if c.keys.n%keyPage == 0 {
			c.keys.pages = append(c.keys.pages, make([]keyState, keyPage))
		}
		c.keys.n = min(int(k)+1, (c.keys.n/keyPage+1)*keyPage)
	}
	return c.keys.get(k)
}

// activate puts key k on the list Tick visits.
func (c *Checker) activate(k int32, ks *keyState) {
	if !ks.active {
		ks.active = true
		c.active = append(c.active, k)
	}
}

// ghostOf returns t without its ops (shared by all versions t wrote).
func ghostOf(t *Txn) *Txn {
	if t.stripped {
		return t
	}
	if t.ghost == nil {
		t.ghost = &Txn{ID: t.ID, Session: t.Session, Status: t.Status, StartTS: t.StartTS, CommitTS: t.CommitTS,
			arrived: t.arrived, seq: t.seq, stripped: true}
	}
	return t.ghost
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

// visible reports whether a version committed at cts is in the state read
// at snap: cts ≤ snap for SI (TimeKiller), cts < snap for serializability.
func (c *Checker) visible(cts, snap history.Timestamp) bool {
	if c.ser {
		return cts.Less(snap)
	}
	return !snap.Less(cts)
}

// at returns the index of the version visible at snap (-1 = initial).
func (c *Checker) at(ks *keyState, snap history.Timestamp) int {
	vs := ks.vers
	i := len(vs) - 1
	if i >= 0 && c.visible(ks.lastCTS, snap) {
		return i
	}
	lo, hi := 0, len(vs) // first version not visible at snap
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.visible(vs[m].cts, snap) {
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
			for i := range t.Ops {
				if o := &t.Ops[i]; o.Kind == history.Write && !o.List {
					if c.unkW == nil {
						c.unkW = map[unkRef]struct{}{}
					}
					c.unkW[unkRef{o.Key, o.V}] = struct{}{}
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
	t.arrived = now
	c.n++
	t.seq = c.n
	if c.cfg.Model == sessionSI {
		if p := c.last[t.Session]; p != nil && t.Session != "" && t.StartTS.Less(p.CommitTS) {
			c.report(TypeSession, "", fmt.Sprintf("%s and %s are consecutive in session %s, but %s started at %s, before its predecessor committed at %s. Session axiom: prev.cts ≤ next.sts.",
				c.txnString(p), c.txnString(t), t.Session, name(t), t.StartTS, p.CommitTS))
		}
		if t.Session != "" {
			c.last[t.Session] = t
		}
	}
	snap := c.snap(t)
	if c.maxSnap.Less(snap) || !c.maxSnap.Set {
		c.maxSnap = snap
	}
	// Int and external reads: a read is internal if an earlier op of the
	// transaction accessed its key (see lastAccess).
	hasPending := false
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
		if o.Kind != history.Write && o.Kind != history.Read {
			continue
		}
		ks := c.key(o.Key)
		if o.Kind == history.Write {
			continue
		}
		if p := c.lastAccess(t, j); p >= 0 {
			if acc := t.Ops[p].V; acc != o.V {
				c.report(TypeInternal, c.keyName(o.Key), fmt.Sprintf("%s: op %d (%s) follows op %d (%s) on the same key, so it must return %s, but it returned %s. Int axiom.",
					c.txnString(t), j, c.opString(o), p, c.opString(&t.Ops[p]), c.valString(acc), c.valString(o.V)))
			}
		} else {
			r := c.newRead()
			*r = read{snap: snap, v: o.V, t: t, op: int32(j)}
			if ks.gced && snap.Less(ks.gcTS) {
				c.late++
			} else {
				if r.fail = !c.matches(ks, r); r.fail {
					ks.nfail++
				}
				ks.insertRead(r)
				c.work++
				c.activate(o.Key, ks)
				c.pending = append(c.pending, r)
				hasPending = true
			}
		}
	}
	if hasPending {
		c.ptx = append(c.ptx, t)
	}
	// Install writes (last write per key), NoConflict, re-check reads.
	for j := len(t.Ops) - 1; j >= 0; j-- {
		o := &t.Ops[j]
		if o.Kind != history.Write || o.List {
			continue
		}
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
		c.install(t, o)
	}
	return nil
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

// newRead hands out reads from slabs to avoid one allocation per read.
func (c *Checker) newRead() *read {
	if len(c.slab) == 0 {
		c.slab = make([]read, 1024)
	}
	r := &c.slab[0]
	c.slab = c.slab[1:]
	return r
}

func (ks *keyState) insertRead(r *read) {
	n := len(ks.reads)
	if n == cap(ks.reads) && n < 8 {
		ks.reads = slices.Grow(ks.reads, 8-n) // as for versions (install)
	}
	ref := readRef{snapP: r.snap.P, snapL: r.snap.L, seq: r.t.seq, r: r}
	if n == 0 || !r.snap.Less(ks.maxSnap) {
		ks.maxSnap = r.snap
		ks.reads = append(ks.reads, ref)
		return
	}
	i := n
	for i > 0 && r.snap.Less(ks.reads[i-1].snap()) {
		i--
	}
	ks.reads = append(ks.reads, readRef{})
	copy(ks.reads[i+1:], ks.reads[i:n])
	ks.reads[i] = ref
}

func (c *Checker) matches(ks *keyState, r *read) bool {
	if len(ks.vers) > 0 && c.visible(ks.lastCTS, r.snap) {
		return ks.lastV == r.v
	}
	i := c.at(ks, r.snap)
	if i < 0 {
		return c.isInitial(r.v)
	}
	return ks.vers[i].v == r.v
}

func (c *Checker) install(t *Txn, o *Op) {
	ks := c.key(o.Key)
	vs := ks.vers
	// position: after every version with cts ≤ t.cts
	i := len(vs)
	if i > 0 && t.CommitTS.Less(ks.lastCTS) {
		for i > 0 && t.CommitTS.Less(vs[i-1].cts) {
			i--
		}
	}
	if !c.ser {
		if ks.gced && t.StartTS.Less(ks.gcTS) {
			c.lateNC++
		}
		// writers committed within (t.sts, t.cts] (none when t commits
		// last and the last version committed at or before t.sts)
		if i < len(vs) || (i > 0 && t.StartTS.Less(ks.lastCTS)) {
			for x := i - 1; x >= 0 && t.StartTS.Less(vs[x].cts); x-- {
				c.noConflict(vs[x].w, t, o.Key, vs[x].cts)
			}
		}
		// writers whose interval contains t.cts
		for x := i; x < len(vs) && vs[x].w.StartTS.Less(t.CommitTS); x++ {
			c.noConflict(t, vs[x].w, o.Key, t.CommitTS)
		}
	}
	if len(vs) == cap(vs) && len(vs) < 8 {
		// start at 8: growing 1, 2, 4, 8 copies every key's versions
		// three times, and with a growing key space keys are always new
		ks.vers = slices.Grow(ks.vers, 8-len(vs))
	}
	ks.vers = append(ks.vers, version{})
	copy(ks.vers[i+1:], ks.vers[i:len(vs)])
	ks.vers[i] = version{cts: t.CommitTS, v: o.V, w: t, g: ghostOf(t)}
	if i == len(vs) {
		ks.lastCTS, ks.lastV = t.CommitTS, o.V
	}
	if i == 0 {
		ks.v0ghost = false
	}
	c.activate(o.Key, ks)
	c.work++
	if len(ks.failed) > 0 || c.failOverflow {
		c.reopen(ks, o.Key, i, t)
	}
	// Reads whose visible version is now this one: snap in [cts, next cts).
	rs := ks.reads
	if len(rs) == 0 || !c.visible(t.CommitTS, ks.maxSnap) || !c.visible(t.CommitTS, rs[len(rs)-1].snap()) {
		return
	}
	lo, hi := 0, len(rs) // first read that sees this version's commit
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.visible(t.CommitTS, rs[m].snap()) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	for j := lo; j < len(rs); j++ {
		x := &rs[j]
		if i+1 < len(ks.vers) && c.visible(ks.vers[i+1].cts, x.snap()) {
			break
		}
		if x.seq <= c.finalSeq || x.seq == t.seq {
			continue
		}
		r := x.r
		c.rechk++
		fail := ks.vers[i].v != r.v
		if fail != r.fail {
			r.fail = fail
			r.flips++
			c.flips++
			if fail {
				ks.nfail++
			} else {
				ks.nfail--
				r.kind = ""
			}
		}
	}
}

// Tick finalises Ext verdicts older than FinalAfter and discards state
// below the watermark (see the package comment).
func (c *Checker) Tick() { c.tick(c.cfg.Now().Add(-c.cfg.FinalAfter)) }

func (c *Checker) tick(before time.Time) {
	i := 0
	for ; i < len(c.pending); i++ {
		r := c.pending[i]
		if r.t.arrived.After(before) {
			break
		}
		c.finalize(r)
	}
	if i > 0 {
		// reads become final in arrival order (see readRef.seq)
		c.finalSeq = c.pending[i-1].t.seq
	}
	c.pending = c.pending[i:]
	if cap(c.pending) > 1024 && len(c.pending) < cap(c.pending)/4 {
		c.pending = append([]*read(nil), c.pending...)
	}
	j := 0
	for ; j < len(c.ptx) && !c.ptx[j].arrived.After(before); j++ {
	}
	c.ptx = c.ptx[j:]
	if cap(c.ptx) > 1024 && len(c.ptx) < cap(c.ptx)/4 {
		c.ptx = append([]*Txn(nil), c.ptx...)
	}
	// watermark
	w := c.maxSnap
	for _, t := range c.ptx {
		if s := c.snap(t); s.Less(w) {
			w = s
		}
	}
	if !w.Set {
		return
	}
	// Sweep the keys only when the work since the last sweep (versions
	// installed, reads inserted) is at least half the keys to visit, or
	// every sweepEvery ticks: a sweep costs one visit per active key, so
	// its cost stays proportional to the work whatever the tick rate, and
	// what it discards grows by at most that work in between.
	c.ticks++
	if 2*c.work < int64(len(c.active)) && c.ticks-c.swept < sweepEvery {
		return
	}
	c.work, c.swept = 0, c.ticks
	// Only active keys can have anything to discard: a key with at most one
	// version (already referring to a ghost) and no pending reads keeps that
	// version, the last one visible at any snapshot from its commit on.
	na := 0
	for _, k := range c.active {
		ks := c.keys.get(k)
		// drop final reads
		if 2*ks.nfinal >= len(ks.reads) {
			n := 0
			for _, x := range ks.reads {
				if x.seq > c.finalSeq {
					ks.reads[n] = x
					n++
				}
			}
			clear(ks.reads[n:])
			ks.reads = ks.reads[:n]
			ks.nfinal = 0
		}
		// keep the last version visible at w and everything after it
		x := c.at(ks, w)
		if x > 0 && ks.nfail > 0 {
			// classify failing reads while the versions that may explain
			// them are still here
			for _, x := range ks.reads {
				if r := x.r; r.fail && !r.final && r.kind == "" {
					r.kind = c.classify(ks, r)
				}
			}
		}
		if x > 0 {
			m := copy(ks.vers, ks.vers[x:])
			clear(ks.vers[m:])
			ks.vers = ks.vers[:m]
			ks.gced = true
			ks.gcTS = ks.vers[0].cts
		}
		if x > 0 || (x == 0 && !ks.v0ghost) {
			// the version visible at the watermark: its writer is only
			// named in explanations from now on (see ghostOf)
			ks.vers[0].w = ks.vers[0].g
			ks.v0ghost = true
		}
		if len(ks.vers) > 1 || len(ks.reads) > 0 || (len(ks.vers) == 1 && !ks.v0ghost) {
			c.active[na] = k
			na++
			continue
		}
		ks.active = false
		ks.reads = nil
		if cap(ks.vers) > len(ks.vers) {
			ks.vers = slices.Clip(slices.Clone(ks.vers))
		}
	}
	clear(c.active[na:])
	c.active = c.active[:na]
	if cap(c.active) > 1024 && na < cap(c.active)/4 {
		c.active = slices.Clone(c.active)
	}
}

func (c *Checker) finalize(r *read) {
	if r.final {
		return
	}
	r.final = true
	if k := r.t.Ops[r.op].Key; int(k) < c.keys.n {
		c.keys.get(k).nfinal++
	}
	if !r.fail {
		return
	}
	if o := &r.t.Ops[r.op]; int(o.Key) < c.keys.n {
		c.keys.get(o.Key).nfail--
	}
	t := r.t
	o := &t.Ops[r.op]
	ks := c.keys.get(o.Key)
	var state string
	if i := c.at(ks, r.snap); i >= 0 {
		v := ks.vers[i]
		state = fmt.Sprintf("%s, written by %s (cts %s)", c.valString(v.v), name(v.w), v.cts)
	} else {
		state = "the initial value"
	}
	kind := r.kind
	if kind == "" {
		kind = c.classify(ks, r)
	}
	if _, ok := c.unkW[unkRef{o.Key, r.v}]; ok && !c.isInitial(r.v) && !strings.HasPrefix(kind, "written") {
		c.undecided++
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
				c.txnString(t), t.StartTS, t.CommitTS, r.op, c.opString(o), c.valString(r.v), r.snap, c.keyName(o.Key), state, kind)
		}
		return
	}
	expl := fmt.Sprintf("%s (sts %s, cts %s): op %d (%s) is an external read. At its %s %s the last committed value of %s was %s, but it read %s [%s]. The verdict flipped %d times before becoming final. Ext axiom.",
		c.txnString(t), t.StartTS, t.CommitTS, r.op, c.opString(o), word, r.snap, c.keyName(o.Key), state, c.valString(r.v), kind, r.flips)
	listed := c.report(TypeExt, c.keyName(o.Key), expl)
	if c.nFailRecs >= maxFailRecs {
		c.failOverflow = true
		if c.maxFailSnap.Less(r.snap) || !c.maxFailSnap.Set {
			c.maxFailSnap = r.snap
		}
		return
	}
	c.nFailRecs++
	fr := failRec{snap: r.snap, v: r.v}
	if listed {
		fr.expl = expl
	}
	ks.failed = append(ks.failed, fr)
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
	n := 0
	for _, fr := range ks.failed {
		if fr.done || !c.visible(t.CommitTS, fr.snap) || (i+1 < len(ks.vers) && c.visible(ks.vers[i+1].cts, fr.snap)) {
			// not visible at the failure's snapshot, or a later retained
			// version still is: the failure stands as it was
			ks.failed[n] = fr
			n++
			continue
		}
		undecidable := i == 0 && ks.gced && fr.snap.Less(ks.gcTS)
		if !undecidable && ks.vers[i].v != fr.v {
			ks.failed[n] = fr
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
		}
	}
	clear(ks.failed[n:])
	ks.failed = ks.failed[:n]
}

// classify says where the value a failing read returned came from, among
// the versions retained now. It runs when the verdict becomes final, or
// earlier, just before versions are discarded, while a read is failing.
func (c *Checker) classify(ks *keyState, r *read) string {
	kind := "value never written (among retained versions)"
	if c.isInitial(r.v) {
		kind = "written before the snapshot (the initial value, overwritten)"
	}
	for _, v := range ks.vers {
		if v.v == r.v {
			if c.visible(v.cts, r.snap) {
				kind = fmt.Sprintf("written before the snapshot, by %s (cts %s)", name(v.w), v.cts)
			} else {
				kind = fmt.Sprintf("written after the snapshot, by %s (sts %s, cts %s)", name(v.w), v.w.StartTS, v.cts)
			}
		}
	}
	return kind
}

func (c *Checker) noConflict(a, b *Txn, k int32, ts history.Timestamp) {
	c.report(TypeNoConflict, c.keyName(k), fmt.Sprintf("%s (sts %s, cts %s) and %s (sts %s, cts %s) both write %s and overlap (one commits at %s inside the other's interval). NoConflict axiom.",
		c.txnString(a), a.StartTS, a.CommitTS, c.txnString(b), b.StartTS, b.CommitTS, c.keyName(k), ts))
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

func (c *Checker) valString(v Val) string {
	switch v.K {
	case 0:
		return "nil"
	case 2:
		c.nmu.RLock()
		defer c.nmu.RUnlock()
		return c.Strs.String(int32(v.N))
	}
	return fmt.Sprint(v.N)
}

func (c *Checker) opString(o *Op) string {
	f := "r"
	switch o.Kind {
	case history.Write:
		f = "w"
	case history.Append:
		f = "append"
	}
	return f + " " + c.keyName(o.Key) + " " + c.valString(o.V)
}

func (c *Checker) txnString(t *Txn) string {
	if t.stripped {
		return name(t) + " [ops no longer retained]"
	}
	var b strings.Builder
	b.WriteString(name(t))
	b.WriteString(" [")
	for j := range t.Ops {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.opString(&t.Ops[j]))
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
}

// Status reports progress counters.
func (c *Checker) Status() Status {
	s := Status{Txns: c.n, Skipped: c.aborted, Pending: len(c.pending), Flips: c.flips, Rechecks: c.rechk,
		LateUnchecked: c.late, Violations: map[string]int{}}
	for k, v := range c.counts {
		s.Violations[k] = v
	}
	for _, r := range c.pending {
		if r.fail {
			s.Violations["ext (tentative)"]++
		}
	}
	for i := 0; i < c.keys.n; i++ {
		s.Versions += len(c.keys.get(int32(i)).vers)
	}
	return s
}

// Close finalises every pending verdict and returns the result.
func (c *Checker) Close() *check.Result {
	for _, r := range c.pending {
		c.finalize(r)
	}
	c.finalSeq = c.n
	c.pending = nil
	c.ptx = nil
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
		"seconds": el, "ext_withdrawn": c.withdrawn, "ext_reopened_unknown": c.reopenUnk}
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
	if c.reopenUnk > 0 {
		why = append(why, fmt.Sprintf("%d final external-read failures were re-opened by writes that arrived later than --final-after and can no longer be decided (the versions that decide them were discarded); first: %s", c.reopenUnk, c.reopenFirst))
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
	if c.lateNC > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d writes arrived below the watermark; their NoConflict checks used retained versions only", c.lateNC))
	}
	return r
}

func (c *Checker) keyName(k int32) string {
	c.nmu.RLock()
	defer c.nmu.RUnlock()
	return c.Keys.String(k)
}

func (c *Checker) internKeyInt(n int64) int32 {
	c.nmu.Lock()
	defer c.nmu.Unlock()
	return c.Keys.Int(n)
}

func (c *Checker) internKeyStr(s string) int32 {
	c.nmu.Lock()
	defer c.nmu.Unlock()
	return c.Keys.Str(s)
}

func (c *Checker) internStr(b []byte) int32 {
	c.nmu.Lock()
	defer c.nmu.Unlock()
	if id, ok := c.Strs.LookupStr(string(b)); ok {
		return id
	}
	return c.Strs.Str(string(b))
}
