package sim

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	"github.com/txray/txray/history"
)

type status uint8

const (
	active status = iota
	committed
	aborted
)

// readMode is how a level's plain reads choose a version.
type readMode uint8

const (
	readSnapshot readMode = iota // last version committed before the start timestamp
	readLatest                   // latest committed version (statement snapshot)
	readDirty                    // latest version not aborted, committed or not
)

// mech is the set of mechanisms a level uses (design.md §5: consistent read,
// mutual exclusion, first-updater-wins, serialization certifier).
type mech struct {
	global bool // serial executor: one global lock, held begin to end
	lag    bool // read-only transactions read a lagging snapshot, lock-free
	xlocks bool // exclusive per-key write locks held to commit
	slocks bool // shared read locks held to commit
	read   readMode
	fuw    bool // first-updater-wins on write
	fcw    bool // buffered writes, first-committer-wins at commit
	ssi    bool // dangerous-structure certifier
}

func mechFor(level string) mech {
	switch level {
	case Serializable:
		return mech{global: true, lag: true, read: readSnapshot}
	case Strict2PL:
		return mech{xlocks: true, slocks: true, read: readLatest}
	case SnapshotIsolation:
		return mech{xlocks: true, fuw: true, read: readSnapshot}
	case SnapshotIsolationFCW:
		return mech{fcw: true, read: readSnapshot}
	case SerializableSI:
		return mech{xlocks: true, fuw: true, ssi: true, read: readSnapshot}
	case RepeatableReadMySQL:
		return mech{xlocks: true, read: readSnapshot}
	case ReadCommitted:
		return mech{xlocks: true, read: readLatest}
	case ReadUncommitted:
		return mech{xlocks: true, read: readDirty}
	}
	return mech{global: true, read: readSnapshot} // StrictSerializable
}

// pop is a planned micro-op.
type pop struct {
	kind    history.Kind // Read, Write or Append
	locking bool         // locking read
	ks      *keyState
	val     int64 // written value
	// predN > 0 starts a predicate read made of this read and the next
	// predN-1 ones (predCont set): executed in one step, recorded as one
	// history.PredRead (Config.PredicateReads).
	predN    int
	predCont bool
}

// opres is a micro-op's outcome.
type opres struct {
	done     bool
	inv, end int64
	val      int64 // register read (0 = initial nil)
	list     []int64
}

// version is one version of a key: the writer, the value (register) or the
// appended element, and for lists the whole list after it.
type version struct {
	w    *txn
	val  int64
	list []int64
}

func (v *version) dead() bool    { return v.w.st == aborted || v.w.lost }
func (v *version) visible() bool { return v.w.st == committed && !v.w.lost }

// keyState is one key: its versions in install order and its locks.
type keyState struct {
	key     int64
	vers    []version
	x       *txn   // exclusive lock holder
	s       []*txn // shared lock holders
	readers []*txn // SSI read marks
	nolock  []nolockRead
	refs    int // planned micro-ops of unfinished transactions
	retired bool
}

// nolockRead is a read that skipped its shared lock because of a fault.
type nolockRead struct {
	t     *txn
	fault int
}

// bufw is a buffered write (snapshot-isolation-fcw).
type bufw struct {
	ks  *keyState
	val int64
}

type txn struct {
	serial    int
	client    int
	seq       int32
	ops       []pop
	res       []opres
	pc        int
	st        status
	lost      bool
	begun     bool
	readOnly  bool
	lagged    bool
	escaped   bool
	holdsG    bool
	willAbort bool
	doomed    bool
	writes    []*keyState // planned write keys (distinct)
	held      []*keyState // keys locked (x or s)
	buf       []bufw
	invSnap   int64 // timestamp counter at invocation
	sts, cts  int64
	recSTS    int64 // recorded start timestamp when disordered (else 0)
	recCTS    int64
	invoke    int64
	complete  int64
	opInv     int64
	rolled    bool // the current op's lock-bypass fault has been rolled
	bypass    bool // the current op bypasses a held write lock (dirty-write)
	blocked   bool
	wantKS    *keyState
	wantX     bool
	wantG     bool
	in, out   bool // SSI rw anti-dependency flags
	faults    uint32
	mark      int // DFS stamp
}

func (t *txn) plansWrite(ks *keyState) bool {
	for _, w := range t.writes {
		if w == ks {
			return true
		}
	}
	return false
}

type engine struct {
	cfg   Config
	m     mech
	r     *rand.Rand // scheduler
	fr    *rand.Rand // faults
	wl    *workload
	h     *history.History
	sink  Sink
	quiet bool // no output (fault-count pre-pass)

	stream bool
	truth  *Truth
	preset map[string]int

	prob    []float64 // per fault index
	keys    map[int64]*keyState
	active  []*txn
	idle    []int
	seqs    []int32
	ready   []int64 // per client: when its last transaction completed
	sess    []int32
	started int
	serial  int
	now     int64
	ts      int64 // timestamp counter (multiples of 4 are real events)
	prevCTS int64
	recent  []int64 // recent commit timestamps (Serializable lag)
	holderG *txn
	stamp   int
	emitted int32
	orderTS []tsIdx
	err     error

	ht      history.Txn
	opsBuf  []history.Op
	listBuf []int32
	timeBuf []history.OpTime
	extBuf  history.TxnExt
	cand    []*txn
}

type tsIdx struct {
	ts  int64
	idx int32
}

func newEngine(cfg Config, sink Sink, quiet bool) *engine {
	e := &engine{cfg: cfg, m: mechFor(cfg.Level), sink: sink, quiet: sink == nil && quiet,
		r:    rand.New(rand.NewPCG(cfg.Seed, 0x5eed0001)),
		fr:   rand.New(rand.NewPCG(cfg.Seed, 0xfa017002)),
		keys: map[int64]*keyState{},
		prob: make([]float64, len(faultList)),
	}
	e.wl = newWorkload(cfg, rand.New(rand.NewPCG(cfg.Seed, 0x10ad0003)), e)
	for _, f := range cfg.Faults {
		e.prob[faultIdx(f.Name)] = f.Prob
	}
	e.truth = &Truth{Level: cfg.Level, FaultCounts: map[string]int{}, Faults: map[int32][]string{},
		TrueStatus: map[int32]history.Status{}, TrueCommitTS: map[int32]history.Timestamp{},
		TrueStartTS: map[int32]history.Timestamp{}, Aborts: map[string]int{}}
	for _, f := range cfg.Faults {
		e.truth.FaultCounts[f.Name] += 0
	}
	h := history.New()
	e.h = h
	li, _ := lookupLevel(cfg.Level)
	h.Header = history.Header{DB: "txray-sim", Version: "1", Level: li.Model, Workload: cfg.Workload,
		Clock: "simulated-ns", Extra: map[string]string{
			"sim.level": cfg.Level, "sim.seed": strconv.FormatUint(cfg.Seed, 10),
			"sim.txns": strconv.Itoa(cfg.Txns), "sim.clients": strconv.Itoa(cfg.Clients),
			"sim.concurrency": strconv.Itoa(cfg.Concurrency), "sim.keys": strconv.Itoa(cfg.Keys),
			"sim.dist": cfg.Dist,
			// whether ordering committed transactions by commit_ts gives a
			// serial order explaining every read (absent faults)
			"sim.commit-order-serializes": strconv.FormatBool(cfg.Level == StrictSerializable ||
				cfg.Level == Serializable || cfg.Level == Strict2PL),
		}}
	for _, f := range cfg.Faults {
		h.Header.Extra["fault."+f.Name] = "0"
		h.Header.Extra["fault."+f.Name+".prob"] = strconv.FormatFloat(f.Prob, 'g', -1, 64)
	}
	h.Evidence = history.Evidence{Sessions: true, ClientTime: true, OpTime: true, Timestamps: true,
		VersionOrder: true, CommitOrder: true, PredicateRead: cfg.PredicateReads > 0, VersionSets: cfg.PredicateReads > 0,
		TombstoneReads: cfg.Deletes > 0}
	e.seqs = make([]int32, cfg.Clients)
	e.ready = make([]int64, cfg.Clients)
	e.sess = make([]int32, cfg.Clients)
	for c := 0; c < cfg.Clients; c++ {
		e.sess[c] = h.Sessions.Str(strconv.Itoa(c))
		e.idle = append(e.idle, c)
	}
	return e
}

func (e *engine) presetCounts(c map[string]int) {
	for n, v := range c {
		e.h.Header.Extra["fault."+n] = strconv.Itoa(v)
	}
}

func (e *engine) setHeaderCounts() {
	for n, v := range e.truth.FaultCounts {
		e.h.Header.Extra["fault."+n] = strconv.Itoa(v)
	}
}

// roll reports whether fault f fires at this opportunity.
func (e *engine) roll(f int) bool {
	p := e.prob[f]
	return p > 0 && (p >= 1 || e.fr.Float64() < p)
}

// fired records that fault f changed the execution for the given txns.
func (e *engine) fired(f int, ts ...*txn) {
	e.truth.FaultCounts[faultList[f].Name]++
	for _, t := range ts {
		if t != nil {
			t.faults |= 1 << f
		}
	}
}

func (e *engine) tick() int64 {
	e.ts += 4
	return e.ts
}

// run is the scheduler loop.
func (e *engine) run() error {
	for {
		for len(e.active) < e.cfg.Concurrency && e.started < e.cfg.Txns && len(e.idle) > 0 {
			e.startTxn()
		}
		if len(e.active) == 0 {
			break
		}
		e.cand = e.cand[:0]
		for _, t := range e.active {
			if !t.blocked {
				e.cand = append(e.cand, t)
			}
		}
		e.now += e.cfg.StepNanos + e.r.Int64N(e.cfg.Jitter+1)
		if len(e.cand) == 0 {
			// Every transaction waits: a deadlock the detector did not
			// break (cannot happen with the detector, kept as a safety net).
			v := e.active[e.r.IntN(len(e.active))]
			e.abort(v, "deadlock")
			continue
		}
		e.step(e.cand[e.r.IntN(len(e.cand))])
		if e.err != nil {
			return e.err
		}
	}
	e.finishKeys()
	return e.err
}

func (e *engine) startTxn() {
	i := e.r.IntN(len(e.idle))
	c := e.idle[i]
	e.idle[i] = e.idle[len(e.idle)-1]
	e.idle = e.idle[:len(e.idle)-1]
	inv := e.now
	if r := e.ready[c]; e.seqs[c] > 0 && r >= inv {
		inv = r + 1 // a client invokes its next transaction after the last one completed
	}
	t := &txn{serial: e.serial, client: c, seq: e.seqs[c], invoke: inv, invSnap: e.ts + 1}
	e.serial++
	e.seqs[c]++
	e.started++
	e.wl.plan(t)
	t.readOnly = len(t.writes) == 0
	e.active = append(e.active, t)
}

func (e *engine) lat() int64 { return 1 + e.r.Int64N(e.cfg.StepNanos/2+1) }

// step advances t by one micro-op, or commits it.
func (e *engine) step(t *txn) {
	if t.opInv == 0 {
		t.opInv = e.now
	}
	if !t.begun && !e.begin(t) {
		return
	}
	if t.pc == len(t.ops) {
		e.commit(t)
		return
	}
	for {
		o := &t.ops[t.pc]
		var ok bool
		if o.kind == history.Read {
			ok = e.read(t, o, &t.res[t.pc])
		} else {
			ok = e.write(t, o)
		}
		if t.st != active || !ok {
			return
		}
		r := &t.res[t.pc]
		r.done, r.inv, r.end = true, t.opInv, e.now+e.lat()
		t.pc++
		t.opInv, t.rolled, t.bypass = 0, false, false
		// The rows of one predicate read are read in the same step.
		if t.pc == len(t.ops) || !t.ops[t.pc].predCont {
			return
		}
		t.opInv = e.now
	}
}

// begin takes the global lock (serial levels) and the start timestamp.
func (e *engine) begin(t *txn) bool {
	if e.m.global {
		if e.m.lag && t.readOnly {
			t.lagged = true
			t.sts = 1
			if n := len(e.recent); n > 0 {
				t.sts = e.recent[e.r.IntN(n)] + 1
			}
			t.begun = true
			return true
		}
		if e.holderG != nil && e.holderG != t {
			if !t.rolled {
				t.rolled = true
				if e.roll(fDirtyWrite) {
					t.escaped = true
					e.fired(fDirtyWrite, t)
				}
			}
			if !t.escaped {
				t.blocked, t.wantG = true, true
				return false
			}
		} else {
			e.holderG, t.holdsG = t, true
		}
		t.rolled = false
	}
	t.sts = e.tick()
	t.begun = true
	return true
}

var (
	fDirtyWrite       = faultIdx(FaultDirtyWrite)
	fAbortedRead      = faultIdx(FaultAbortedRead)
	fIntermediateRead = faultIdx(FaultIntermediateRead)
	fStaleRead        = faultIdx(FaultStaleRead)
	fLostUpdate       = faultIdx(FaultLostUpdate)
	fWriteSkew        = faultIdx(FaultWriteSkew)
	fTSDisorder       = faultIdx(FaultTSDisorder)
	fLostCommit       = faultIdx(FaultLostCommit)
	fNoOwnWrite       = faultIdx(FaultNoOwnWrite)
	abortClient       = "client rollback"
	abortDeadlock     = "deadlock"
	abortFUW          = "first-updater-wins"
	abortFCW          = "first-committer-wins"
	abortSSI          = "ssi"
	abortVictim       = "aborted-read victim"
)

const initialIdx = -1

// --- version lookup ---

func lastVisibleBefore(ks *keyState, ts int64) int {
	for i := len(ks.vers) - 1; i >= 0; i-- {
		v := &ks.vers[i]
		if v.visible() && v.w.cts < ts {
			return i
		}
	}
	return initialIdx
}

func latestCommitted(ks *keyState) int {
	for i := len(ks.vers) - 1; i >= 0; i-- {
		if ks.vers[i].visible() {
			return i
		}
	}
	return initialIdx
}

func tailLive(ks *keyState) int {
	for i := len(ks.vers) - 1; i >= 0; i-- {
		if !ks.vers[i].dead() {
			return i
		}
	}
	return initialIdx
}

// ownIdx is the index of t's latest version of ks, or initialIdx. Only
// keys t planned to write can hold its versions (workload.plan), which
// spares the scan of ks.vers for the common case, a read of a key t does
// not write.
func ownIdx(ks *keyState, t *txn) int {
	if !t.plansWrite(ks) {
		return initialIdx
	}
	for i := len(ks.vers) - 1; i >= 0; i-- {
		if ks.vers[i].w == t {
			return i
		}
	}
	return initialIdx
}

// --- locks ---

func (e *engine) conflictsX(ks *keyState, t *txn) bool {
	if ks.x != nil && ks.x != t {
		return true
	}
	for _, s := range ks.s {
		if s != t {
			return true
		}
	}
	return false
}

// lockX acquires an exclusive lock, or blocks t (false). The dirty-write
// fault lets a write (not a locking read) through a held exclusive lock.
func (e *engine) lockX(t *txn, ks *keyState, forWrite bool) bool {
	if ks.x == t {
		return true
	}
	if !e.conflictsX(ks, t) {
		ks.x = t
		if i := slices.Index(ks.s, t); i >= 0 {
			ks.s = slices.Delete(ks.s, i, i+1)
		} else {
			t.held = append(t.held, ks)
		}
		e.grantedX(t, ks)
		return true
	}
	if forWrite && ks.x != nil && ks.x != t {
		if !t.rolled {
			t.rolled = true
			t.bypass = e.roll(fDirtyWrite)
		}
		if t.bypass {
			return true
		}
	}
	return e.block(t, ks, true)
}

// grantedX counts lost-update / write-skew firings: a writer got a key that
// an active transaction read without its shared lock.
func (e *engine) grantedX(t *txn, ks *keyState) {
	if len(ks.nolock) == 0 {
		return
	}
	keep := ks.nolock[:0]
	for _, nr := range ks.nolock {
		if nr.t.st != active {
			continue
		}
		if nr.t != t {
			e.fired(nr.fault, nr.t, t)
			continue
		}
		keep = append(keep, nr)
	}
	ks.nolock = keep
}

func (e *engine) lockS(t *txn, ks *keyState) bool {
	if ks.x == t || slices.Contains(ks.s, t) {
		return true
	}
	if ks.x == nil {
		ks.s = append(ks.s, t)
		t.held = append(t.held, ks)
		return true
	}
	return e.block(t, ks, false)
}

func (e *engine) block(t *txn, ks *keyState, x bool) bool {
	t.blocked, t.wantKS, t.wantX, t.wantG = true, ks, x, false
	if e.deadlocked(t) {
		e.abort(t, abortDeadlock)
	}
	return false
}

// waitsFor appends the transactions t waits for.
func (e *engine) waitsFor(t *txn, out []*txn) []*txn {
	if !t.blocked {
		return out
	}
	if t.wantG {
		if e.holderG != nil {
			out = append(out, e.holderG)
		}
		return out
	}
	ks := t.wantKS
	if ks.x != nil && ks.x != t {
		out = append(out, ks.x)
	}
	if t.wantX {
		for _, s := range ks.s {
			if s != t {
				out = append(out, s)
			}
		}
	}
	return out
}

// deadlocked reports whether t is on a waits-for cycle.
func (e *engine) deadlocked(t *txn) bool {
	e.stamp++
	stack := e.waitsFor(t, nil)
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if u == t {
			return true
		}
		if u.mark == e.stamp {
			continue
		}
		u.mark = e.stamp
		stack = e.waitsFor(u, stack)
	}
	return false
}

// --- reads ---

// read performs a read micro-op; false if t blocked (or aborted).
func (e *engine) read(t *txn, o *pop, r *opres) bool {
	ks := o.ks
	m := e.m
	mode := m.read
	snap := t.sts
	switch {
	case m.global:
		if !t.lagged && !t.escaped {
			f := fWriteSkew
			if t.plansWrite(ks) {
				f = fLostUpdate
			}
			if e.prob[f] > 0 && e.roll(f) {
				if lastVisibleBefore(ks, t.invSnap) != lastVisibleBefore(ks, t.sts) {
					snap = t.invSnap
					e.fired(f, t)
				}
			}
		}
	case o.locking && m.xlocks:
		if !e.lockX(t, ks, false) {
			return false
		}
		if m.fuw && !e.fuwCheck(t, ks) {
			return false
		}
		mode = readLatest
	case m.slocks:
		f := fWriteSkew
		if t.plansWrite(ks) {
			f = fLostUpdate
		}
		if !slices.Contains(ks.s, t) && ks.x != t && e.prob[f] > 0 && e.roll(f) {
			if ks.x != nil {
				e.fired(f, t, ks.x) // read past a writer's lock
			}
			ks.nolock = append(ks.nolock, nolockRead{t, f})
		} else if !e.lockS(t, ks) {
			return false
		}
	}
	// Own writes.
	if m.fcw {
		if n := e.bufView(t, ks, r); n {
			if !e.roll(fNoOwnWrite) {
				return true
			}
			e.fired(fNoOwnWrite, t)
		}
	} else if oi := ownIdx(ks, t); oi >= 0 {
		if !e.roll(fNoOwnWrite) {
			e.setView(r, ks, oi)
			return true
		}
		e.fired(fNoOwnWrite, t)
	}
	var idx int
	switch mode {
	case readSnapshot:
		idx = lastVisibleBefore(ks, snap)
	case readLatest:
		idx = latestCommitted(ks)
	default:
		idx = tailLive(ks)
		if idx >= 0 && ks.vers[idx].w == t {
			idx = latestCommitted(ks)
		}
	}
	idx = e.readFaults(t, ks, idx)
	if t.st != active {
		return false
	}
	if m.ssi {
		e.ssiRead(t, ks, idx)
		if t.st != active {
			return false
		}
	}
	e.setView(r, ks, idx)
	return true
}

// readFaults applies aborted-read, intermediate-read and stale-read.
func (e *engine) readFaults(t *txn, ks *keyState, idx int) int {
	if e.prob[fAbortedRead] > 0 && e.roll(fAbortedRead) {
		for j := len(ks.vers) - 1; j > idx; j-- {
			v := &ks.vers[j]
			if v.w == t || v.w.lost || v.w.st == committed {
				continue
			}
			if v.w.st == active {
				v.w.doomed = true
			}
			e.fired(fAbortedRead, t, v.w)
			return j
		}
	}
	if idx >= 0 && e.prob[fIntermediateRead] > 0 && ks.vers[idx].w.st == committed && e.roll(fIntermediateRead) {
		w := ks.vers[idx].w
		for j := idx - 1; j >= 0; j-- {
			if ks.vers[j].w == w {
				e.fired(fIntermediateRead, t)
				return j
			}
		}
	}
	if idx >= 0 && e.prob[fStaleRead] > 0 && e.roll(fStaleRead) {
		// An older committed version (or the initial state).
		var older []int
		for j := 0; j < idx; j++ {
			v := &ks.vers[j]
			if v.visible() && v.w != ks.vers[idx].w && (j+1 == len(ks.vers) || ks.vers[j+1].w != v.w) {
				older = append(older, j)
			}
		}
		e.fired(fStaleRead, t)
		if len(older) == 0 || e.fr.IntN(len(older)+1) == 0 {
			return initialIdx
		}
		return older[e.fr.IntN(len(older))]
	}
	return idx
}

func (e *engine) setView(r *opres, ks *keyState, idx int) {
	if idx < 0 {
		r.val, r.list = 0, nil
		return
	}
	v := &ks.vers[idx]
	r.val, r.list = v.val, v.list
}

// bufView renders t's own buffered writes of ks (fcw); false if none.
func (e *engine) bufView(t *txn, ks *keyState, r *opres) bool {
	found := false
	for _, b := range t.buf {
		if b.ks == ks {
			found = true
		}
	}
	if !found {
		return false
	}
	if e.cfg.Workload == RWRegister {
		for _, b := range t.buf {
			if b.ks == ks {
				r.val = b.val
			}
		}
		return true
	}
	base := lastVisibleBefore(ks, t.sts)
	var l []int64
	if base >= 0 {
		l = append(l, ks.vers[base].list...)
	}
	for _, b := range t.buf {
		if b.ks == ks {
			l = append(l, b.val)
		}
	}
	r.list = l
	return true
}

// --- writes ---

func (e *engine) write(t *txn, o *pop) bool {
	ks := o.ks
	switch {
	case e.m.fcw:
		t.buf = append(t.buf, bufw{ks, o.val})
		return true
	case e.m.xlocks:
		first := ks.x != t
		if !e.lockX(t, ks, true) {
			return false
		}
		if first && e.m.fuw && !e.fuwCheck(t, ks) {
			return false
		}
		if e.m.ssi {
			e.ssiWrite(t, ks)
			if t.st != active {
				return false
			}
		}
	}
	e.install(t, ks, o.val)
	return true
}

// fuwCheck aborts t if a version newer than its snapshot was committed
// (first-updater-wins), unless the lost-update fault skips the check.
func (e *engine) fuwCheck(t *txn, ks *keyState) bool {
	for i := len(ks.vers) - 1; i >= 0; i-- {
		v := &ks.vers[i]
		if v.w != t && v.visible() && v.w.cts > t.sts {
			if e.roll(fLostUpdate) {
				e.fired(fLostUpdate, t, v.w)
				return true
			}
			e.abort(t, abortFUW)
			return false
		}
	}
	return true
}

// install appends t's new version of ks on top of t's own latest version,
// else the newest live version.
func (e *engine) install(t *txn, ks *keyState, val int64) {
	base := ownIdx(ks, t)
	if base < 0 {
		base = tailLive(ks)
		if base >= 0 && ks.vers[base].w.st == active && ks.vers[base].w != t {
			e.fired(fDirtyWrite, t, ks.vers[base].w)
		}
	}
	v := version{w: t, val: val}
	if e.cfg.Workload == ListAppend {
		var l []int64
		if base >= 0 {
			bl := ks.vers[base].list
			l = make([]int64, len(bl), len(bl)+1)
			copy(l, bl)
		}
		v.list = append(l, val)
	}
	ks.vers = append(ks.vers, v)
}

// --- SSI ---

func (e *engine) ssiRead(t *txn, ks *keyState, idx int) {
	if len(ks.readers) == 0 || ks.readers[len(ks.readers)-1] != t {
		ks.readers = append(ks.readers, t)
		if len(ks.readers) > 64 {
			e.pruneReaders(ks)
		}
	}
	for j := len(ks.vers) - 1; j > idx && j >= 0; j-- {
		w := ks.vers[j].w
		if w != t && w.st != aborted && (w.st == active || w.cts > t.sts) {
			e.rwEdge(t, w)
			if t.st != active {
				return
			}
		}
	}
}

func (e *engine) ssiWrite(w *txn, ks *keyState) {
	for _, r := range ks.readers {
		if r != w && r.st != aborted && (r.st == active || r.cts > w.sts) {
			e.rwEdge(r, w)
			if w.st != active {
				return
			}
		}
	}
}

func (e *engine) pruneReaders(ks *keyState) {
	oldest := e.ts + 1
	for _, a := range e.active {
		if a.begun && a.sts < oldest {
			oldest = a.sts
		}
	}
	keep := ks.readers[:0]
	for _, r := range ks.readers {
		if r.st == active || (r.st == committed && r.cts > oldest) {
			keep = append(keep, r)
		}
	}
	ks.readers = keep
}

// rwEdge records r -rw-> w between concurrent transactions and breaks any
// dangerous structure (a transaction with both an incoming and an outgoing
// rw edge) by aborting an active transaction on this edge (Cahill §3).
func (e *engine) rwEdge(r, w *txn) {
	r.out, w.in = true, true
	for _, p := range []*txn{r, w} {
		if !(p.in && p.out) {
			continue
		}
		victim := p
		if p.st != active {
			victim = r
			if p == r {
				victim = w
			}
		}
		if victim.st != active {
			continue
		}
		if e.roll(fWriteSkew) {
			e.fired(fWriteSkew, r, w)
			return
		}
		e.abort(victim, abortSSI)
		return
	}
}

// --- commit / abort ---

func (e *engine) commit(t *txn) {
	switch {
	case t.willAbort:
		e.abort(t, abortClient)
		return
	case t.doomed:
		e.abort(t, abortVictim)
		return
	}
	if e.m.fcw && len(t.buf) > 0 {
		for _, b := range t.buf {
			ks := b.ks
			for i := len(ks.vers) - 1; i >= 0; i-- {
				v := &ks.vers[i]
				if v.visible() && v.w.cts > t.sts {
					if e.roll(fLostUpdate) {
						e.fired(fLostUpdate, t, v.w)
						break
					}
					e.abort(t, abortFCW)
					return
				}
			}
		}
		for _, b := range t.buf {
			e.install(t, b.ks, b.val)
		}
	}
	if t.lagged {
		t.cts = t.sts
	} else {
		t.cts = e.tick()
		if len(e.recent) < e.cfg.Lag {
			e.recent = append(e.recent, t.cts)
		} else {
			copy(e.recent, e.recent[1:])
			e.recent[len(e.recent)-1] = t.cts
		}
	}
	t.st = committed
	t.recCTS = t.cts
	if !t.readOnly && e.roll(fLostCommit) {
		t.lost = true
		e.fired(fLostCommit, t)
	}
	if !t.lagged {
		if e.prevCTS > 0 && e.roll(fTSDisorder) {
			// Just below the previous commit (timestamps are multiples of
			// 4, lagging snapshots are +1): keep start < commit, moving the
			// start too where the transaction began after that commit.
			t.recCTS = e.prevCTS - 1
			if t.sts >= t.recCTS {
				t.recSTS = e.prevCTS - 2
			}
			e.fired(fTSDisorder, t)
		}
		e.prevCTS = t.cts
	}
	t.complete = e.now + e.lat()
	e.finish(t)
}

func (e *engine) abort(t *txn, why string) {
	if t.st != active {
		return
	}
	if e.m.fcw && e.prob[fAbortedRead] > 0 {
		// Materialise the buffered writes as dead versions so that the
		// aborted-read fault can expose them (no correct read sees them).
		for _, b := range t.buf {
			e.install(t, b.ks, b.val)
		}
	}
	t.st = aborted
	e.truth.Aborts[why]++
	t.complete = e.now + e.lat()
	e.finish(t)
}

// finish releases t's locks, frees its client and records it.
func (e *engine) finish(t *txn) {
	for _, ks := range t.held {
		if ks.x == t {
			ks.x = nil
		}
		if i := slices.Index(ks.s, t); i >= 0 {
			ks.s = slices.Delete(ks.s, i, i+1)
		}
	}
	// Wake the transactions waiting for a key t held; hand the global lock
	// to one waiter (at random) so the others do not spin.
	var gWaiters int
	for _, a := range e.active {
		if !a.blocked || a == t {
			continue
		}
		if a.wantG {
			gWaiters++
		} else if slices.Contains(t.held, a.wantKS) {
			a.blocked = false
		}
	}
	t.held = nil
	if t.holdsG {
		e.holderG, t.holdsG = nil, false
		if gWaiters > 0 {
			k := e.r.IntN(gWaiters)
			for _, a := range e.active {
				if a.blocked && a.wantG && a != t {
					if k == 0 {
						e.holderG, a.holdsG, a.blocked = a, true, false
						break
					}
					k--
				}
			}
		}
	}
	if i := slices.Index(e.active, t); i >= 0 {
		last := len(e.active) - 1
		e.active[i] = e.active[last]
		e.active[last] = nil
		e.active = e.active[:last]
	}
	e.idle = append(e.idle, t.client)
	e.ready[t.client] = t.complete
	e.emit(t)
	for i := range t.ops {
		ks := t.ops[i].ks
		ks.refs--
		if ks.retired && ks.refs == 0 {
			e.dropKey(ks)
		}
	}
	// Versions and SSI marks keep finished transactions reachable for their
	// status and timestamps only; drop the rest so that memory stays
	// bounded by the live keys (otherwise every key would stay reachable
	// through writer -> ops -> key chains).
	t.ops, t.res, t.writes, t.buf, t.wantKS = nil, nil, nil, nil, nil
}

// --- recording ---

func (e *engine) emit(t *txn) {
	idx := e.emitted
	e.emitted++
	st := history.Committed
	if t.st == aborted {
		st = history.Aborted
	}
	rec := st
	if e.cfg.InfoRate > 0 && e.r.Float64() < e.cfg.InfoRate {
		rec = history.Unknown
		e.truth.TrueStatus[idx] = st
	}
	if t.st == committed && !t.lost {
		e.orderTS = append(e.orderTS, tsIdx{t.cts, idx})
	}
	if t.recCTS != t.cts && t.st == committed {
		e.truth.TrueCommitTS[idx] = history.Timestamp{P: t.cts, Set: true}
		if t.recSTS != 0 {
			e.truth.TrueStartTS[idx] = history.Timestamp{P: t.sts, Set: true}
		}
	}
	if t.faults != 0 {
		var names []string
		for f := range faultList {
			if t.faults&(1<<f) != 0 {
				names = append(names, faultList[f].Name)
			}
		}
		e.truth.addFault(idx, names)
	}
	if e.quiet || e.err != nil {
		return
	}
	h := e.h
	if e.stream {
		// Ids are valid during one sink call only (Sink), so the interners
		// may be emptied between calls. Reset keeps their tables: a fresh
		// interner would allocate a new dense table sized to the largest
		// value (millions) on every replacement, which dominated the
		// simulator's allocation and GC time (docs/benchmarks.md).
		if h.Values.Len() > 1<<16 {
			h.Values.Reset()
		}
		if h.Keys.Len() > 1<<16 {
			h.Keys.Reset()
		}
	}
	ht := &e.ht
	var ops []history.Op
	var lists []int32
	var times []history.OpTime
	if e.stream {
		ops, lists, times = e.opsBuf[:0], e.listBuf[:0], e.timeBuf[:0]
	} else {
		ht = &history.Txn{}
		ops = make([]history.Op, 0, len(t.ops))
		times = make([]history.OpTime, 0, len(t.ops))
	}
	*ht = history.Txn{Session: e.sess[t.client], Seq: t.seq, Status: rec, HasTime: true,
		Invoke: t.invoke, Complete: t.complete,
		ID: "c" + strconv.Itoa(t.client) + "-" + strconv.Itoa(int(t.seq))}
	if e.stream {
		// one side-table record for every streamed transaction (the sink
		// uses a transaction during its call only)
		e.extBuf = history.TxnExt{}
		ht.Ext = &e.extBuf
	}
	if t.begun {
		ht.StartTS = history.Timestamp{P: t.sts, Set: true}
		if t.recSTS != 0 {
			ht.StartTS.P = t.recSTS
		}
	}
	if rec == history.Committed {
		ht.CommitTS = history.Timestamp{P: t.recCTS, Set: true}
	}
	for i := 0; i < len(t.ops); i++ {
		o := &t.ops[i]
		r := &t.res[i]
		if o.predN > 0 {
			if op, p, tm, ok := e.predRead(h, t, i, rec); ok {
				ht.SetPred(&op, p)
				ops = append(ops, op)
				times = append(times, tm)
			}
			i += o.predN - 1
			continue
		}
		op := history.Op{Kind: o.kind, Key: h.Keys.Int(o.ks.key), Value: history.NoValue}
		var tm history.OpTime
		if r.done {
			op.HasTime, tm = true, history.OpTime{Invoke: r.inv, Complete: r.end}
		}
		switch o.kind {
		case history.Read:
			known := r.done && rec != history.Unknown
			if e.cfg.Workload == ListAppend {
				op.SetListSpan(len(lists), 0)
				if !known {
					op.ListUnknown = true
				} else {
					s := len(lists)
					for _, v := range r.list {
						lists = append(lists, h.Values.Int(v))
					}
					op.SetListSpan(s, len(lists)-s)
				}
			} else if known && r.val != 0 {
				op.Value = h.Values.Int(r.val)
			}
		default:
			op.Value = h.Values.Int(o.val)
		}
		ops = append(ops, op)
		times = append(times, tm)
	}
	ht.Ops, ht.Lists = ops, lists
	ht.SetOpTimes(times)
	if e.stream {
		e.opsBuf, e.listBuf, e.timeBuf = ops, lists, times
	}
	ht.Index = idx
	if err := e.sink.WriteTxn(h, ht); err != nil {
		e.err = err
	}
}

// predRead renders the predicate read starting at t.ops[i]: one PredRead
// op whose Where names its keys and whose Result has a row for each key
// read at a visible (non-initial) version. It is left out (false) when the
// outcome is recorded unknown or the statement did not complete.
func (e *engine) predRead(h *history.History, t *txn, i int, rec history.Status) (history.Op, history.Predicate, history.OpTime, bool) {
	n := t.ops[i].predN
	if rec == history.Unknown || !t.res[i+n-1].done {
		return history.Op{}, history.Predicate{}, history.OpTime{}, false
	}
	p := history.Predicate{Table: "kv", Result: make([]history.Row, 0, n),
		VersionSet: make([]history.Row, 0, n), HasVersionSet: true}
	where := make([]byte, 0, 16+8*n)
	where = append(where, "k IN ("...)
	op := history.Op{Kind: history.PredRead, Key: history.NoValue, Value: history.NoValue, HasTime: true}
	tm := history.OpTime{Invoke: t.res[i].inv}
	for j := i; j < i+n; j++ {
		if j > i {
			where = append(where, ", "...)
		}
		where = strconv.AppendInt(where, t.ops[j].ks.key, 10)
		r := &t.res[j]
		tm.Complete = max(tm.Complete, r.end)
		// the version set: the version of every row the statement
		// evaluated (history/certificate.go), unborn for a key still in its
		// initial state
		vsRow := history.Row{Key: h.Keys.Int(t.ops[j].ks.key), Value: history.NoValue}
		if r.val != 0 {
			vsRow.Value = h.Values.Int(r.val)
			if !e.wl.dead[r.val] { // a deleted row is not returned
				p.Result = append(p.Result, vsRow)
			}
		}
		p.VersionSet = append(p.VersionSet, vsRow)
	}
	p.Where = string(append(where, ')'))
	return op, p, tm, true
}

// versionOrder renders ks's committed version order (value ids).
func (e *engine) versionOrder(ks *keyState) []int32 {
	var ord []int32
	for i := range ks.vers {
		v := &ks.vers[i]
		if !v.visible() {
			continue
		}
		if e.cfg.Workload == RWRegister {
			// only a transaction's final write of the key is installed
			final := true
			for j := i + 1; j < len(ks.vers); j++ {
				if ks.vers[j].w == v.w {
					final = false
					break
				}
			}
			if !final {
				continue
			}
		}
		ord = append(ord, e.h.Values.Int(v.val))
	}
	return ord
}

func (e *engine) dropKey(ks *keyState) {
	if _, ok := e.keys[ks.key]; !ok {
		return
	}
	delete(e.keys, ks.key)
	e.writeOrder(ks)
}

func (e *engine) writeOrder(ks *keyState) {
	if e.quiet || e.err != nil || len(ks.vers) == 0 {
		return
	}
	ord := e.versionOrder(ks)
	if err := e.sink.WriteVersionOrder(e.h, e.h.Keys.Int(ks.key), ord); err != nil {
		e.err = err
	}
}

// finishKeys writes the remaining keys' version orders (by key) and the
// truth's serial order.
func (e *engine) finishKeys() {
	ks := make([]int64, 0, len(e.keys))
	for k := range e.keys {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		e.writeOrder(e.keys[k])
	}
	sort.SliceStable(e.orderTS, func(i, j int) bool { return e.orderTS[i].ts < e.orderTS[j].ts })
	e.truth.Order = make([]int32, len(e.orderTS))
	for i, x := range e.orderTS {
		e.truth.Order[i] = x.idx
	}
}
