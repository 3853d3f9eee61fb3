package chronos

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/internal/serial"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// event is a start (kind 1) or commit (kind 0) of transaction txn at ts.
type event struct {
	p, l int64
	txn  int32
	kind uint8
}

// version is one committed version of a key: its writer, commit timestamp
// (TS), and (key-value) the value or (list) the list length after the
// commit. The replay state is shared with enne (check/internal/serial).
type version = serial.Version

// writerRef is one write of (key, value) for Ext classification.
type writerRef struct {
	txn int32
	op  int32
}

type run struct {
	h        *history.History
	opts     check.Options
	initZero bool
	zeroID   int32 // value id of integer 0, or NoValue
	gc       bool
	gcEvery  int
	nkeys    int

	incl []bool // transaction replayed (committed with both timestamps)

	// replay state per key
	st    *serial.State // committed versions per key (frontier = last)
	lists [][]int32     // list model: full committed list, in commit order
	// per-transaction scratch, valid when epoch[k] == cur
	epoch    []int32
	cur      int32
	intVal   []int32   // kv: last value accessed
	intOp    []int32   // op index of that access
	intList  [][]int32 // list: expected list (or own appends when suffix)
	intSufx  []bool    // list: state is "snapshot + intList" (first access was an append)
	wroteKey []int32   // epoch stamp of keys written (NoConflict once per key)

	// results
	anoms           map[string][]check.Anomaly
	counts          map[string]int
	extKinds        map[string]int
	started         []bool
	windex          []indexed       // lazily built: every write, sorted by (key,value)
	unkIdx          map[uint64]bool // (key,value) -> written only by unknown-outcome txns without timestamps
	gcRounds        int
	maxVers         int
	unchecked       int
	otherOps        int // predicate reads and increments: not replayed
	warnings        []string
	realtimeUnknown string
	undecided       int // reads of writes by unknown-outcome txns without timestamps

	// commit-order replay (serializability models)
	ser         bool   // replaying commit events only
	coKnown     bool   // commit order is known to serialize (CommitOrderSerializes)
	coWhy       string // its evidence
	coUndecided int    // failures that would need coKnown to be violations
	coFirst     string // the first such failure, explained
	hasUnkW     bool   // some unknown-outcome txn without timestamps writes
}

// errMissing: committed transactions without timestamps (not an input
// error: the checker does not apply, and says so with an Unknown verdict).
type errMissing struct{ n int }

func (e errMissing) Error() string {
	return fmt.Sprintf("%d committed transactions lack a start or commit timestamp; chronos needs both on every committed transaction", e.n)
}

func newRun(h *history.History, opts check.Options, initZero, gc bool, gcEvery int) *run {
	c := &run{h: h, opts: opts, initZero: initZero, gc: gc, gcEvery: gcEvery, zeroID: history.NoValue,
		anoms: map[string][]check.Anomaly{}, counts: map[string]int{}, extKinds: map[string]int{}}
	if initZero {
		if id, ok := h.Values.LookupInt(0); ok {
			c.zeroID = id
		}
	}
	return c
}

// opScan is what prepare and Check need from the ops of a history, found
// in one pass over them (the ops are most of a big history's memory; three
// passes cost a third of the check of 1M transactions × 15 ops).
type opScan struct {
	deletes bool  // some op is a Delete (history.HasDeletes)
	list    bool  // some op is an Append or a list read
	other   []int // per transaction: ops other than reads, writes and appends (nil if none anywhere)
}

// kindBit is the bit of a Kind in a per-transaction kind mask (Kind values
// past 63 share bit 63, which is an "other" kind).
func kindBit(k history.Kind) uint64 { return 1 << min(uint(k), 63) }

const rwaBits = 1<<history.Read | 1<<history.Write | 1<<history.Append

// scanOps scans every op of h once.
func scanOps(h *history.History) opScan {
	var sc opScan
	for i := range h.Txns {
		ops := h.Txns[i].Ops
		var m uint64
		lr := false
		for j := range ops {
			o := &ops[j]
			m |= kindBit(o.Kind)
			lr = lr || (o.IsList && o.Kind == history.Read)
		}
		if lr || m&kindBit(history.Append) != 0 {
			sc.list = true
		}
		if m&kindBit(history.Delete) != 0 {
			sc.deletes = true
		}
		if m&^rwaBits != 0 {
			if sc.other == nil {
				sc.other = make([]int, len(h.Txns))
			}
			for j := range ops {
				if k := ops[j].Kind; k != history.Read && k != history.Write && k != history.Append {
					sc.other[i]++
				}
			}
		}
	}
	return sc
}

func (c *run) prepare(sc opScan) error {
	h := c.h
	c.nkeys = h.Keys.Len()
	c.incl = make([]bool, len(h.Txns))
	missing := 0
	other := 0
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Status == history.Aborted {
			continue
		}
		if t.StartTS.Set && t.CommitTS.Set {
			c.incl[i] = true
			if sc.other != nil {
				other += sc.other[i]
			}
		} else if t.Status == history.Committed {
			missing++
		} else if !c.hasUnkW {
			for j := range t.Ops {
				if k := t.Ops[j].Kind; k == history.Write || k == history.Append {
					c.hasUnkW = true
					break
				}
			}
		}
	}
	if missing > 0 {
		return errMissing{missing}
	}
	c.otherOps = other
	if other > 0 {
		c.warnings = append(c.warnings, fmt.Sprintf("%d predicate-read or increment ops are not checked by chronos", other))
	}
	n := c.nkeys
	c.st = serial.NewState(n)
	c.epoch = make([]int32, n)
	for i := range c.epoch {
		c.epoch[i] = -1
	}
	c.intVal = make([]int32, n)
	c.intOp = make([]int32, n)
	c.wroteKey = make([]int32, n)
	for i := range c.wroteKey {
		c.wroteKey[i] = -1
	}
	if sc.list {
		c.lists = make([][]int32, n)
		c.intList = make([][]int32, n)
		c.intSufx = make([]bool, n)
	}
	return nil
}

// events builds the sorted event list; commits only when ser.
func (c *run) events(ser bool) []event {
	h := c.h
	n := 0
	for _, in := range c.incl {
		if in {
			n++
		}
	}
	if !ser {
		n *= 2
	}
	ev := make([]event, 0, n)
	for i := range h.Txns {
		if !c.incl[i] {
			continue
		}
		t := &h.Txns[i]
		if !ser {
			ev = append(ev, event{p: t.StartTS.P, l: t.StartTS.L, txn: int32(i), kind: 1})
		}
		ev = append(ev, event{p: t.CommitTS.P, l: t.CommitTS.L, txn: int32(i), kind: 0})
	}
	slices.SortFunc(ev, func(a, b event) int {
		switch {
		case a.p != b.p:
			if a.p < b.p {
				return -1
			}
			return 1
		case a.l != b.l:
			if a.l < b.l {
				return -1
			}
			return 1
		case a.kind != b.kind:
			return int(a.kind) - int(b.kind) // commits before starts
		}
		return int(a.txn - b.txn)
	})
	return ev
}

func tsLE(a, b history.Timestamp) bool { return !b.Less(a) }

// replaySI replays start and commit events in timestamp order.
// With session, the Session axiom is checked too (strong session SI).
func (c *run) replaySI(ctx context.Context, session bool) error {
	h := c.h
	if session {
		c.session()
	}
	ev := c.events(false)
	c.started = make([]bool, len(h.Txns))
	// active: started, not yet committed transactions in start order.
	active := make([]int32, 0, 64)
	head := 0
	committed := make([]bool, len(h.Txns))
	ncommit := 0
	for i, e := range ev {
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if c.opts.Progress != nil {
				c.opts.Progress("chronos replay", int64(i), int64(len(ev)))
			}
		}
		t := &h.Txns[e.txn]
		if e.kind == 1 {
			if c.started[e.txn] {
				continue
			}
			c.started[e.txn] = true
			c.startTxn(e.txn, t.StartTS, false)
			active = append(active, e.txn)
			continue
		}
		if !c.started[e.txn] { // sts == cts: own start precedes own commit
			c.started[e.txn] = true
			c.startTxn(e.txn, t.StartTS, false)
		}
		c.commitTxn(e.txn, true)
		committed[e.txn] = true
		ncommit++
		if c.gc && ncommit%c.gcEvery == 0 {
			for head < len(active) && committed[active[head]] {
				head++
			}
			if head > len(active)/2 {
				active = append(active[:0], active[head:]...)
				head = 0
			}
			var oldest history.Timestamp
			if head < len(active) {
				oldest = h.Txns[active[head]].StartTS
			} else {
				oldest = t.CommitTS
			}
			c.collect(oldest)
		}
	}
	return nil
}

// replaySER replays commit events in commit order: each transaction reads
// the state committed before it.
func (c *run) replaySER(ctx context.Context) error {
	h := c.h
	order := serial.Order(h, func(i int32, _ *history.Txn) bool { return c.incl[i] },
		func(t *history.Txn) history.Timestamp { return t.CommitTS })
	var progress func(done, total int64)
	if c.opts.Progress != nil {
		progress = func(done, total int64) { c.opts.Progress("chronos replay", done, total) }
	}
	return serial.Replay(ctx, order, progress, func(x, t int32) {
		c.startTxn(t, h.Txns[t].CommitTS, true)
		c.commitTxn(t, false)
		if c.gc && (x+1)%int32(c.gcEvery) == 0 {
			c.collect(h.Txns[t].CommitTS)
		}
	})
}

// collect discards versions no longer needed: per key, every version older
// than the last one committed at or before oldest (the start of the oldest
// running transaction). Later starts read only the frontier; running
// transactions need only versions committed after their start (NoConflict).
func (c *run) collect(oldest history.Timestamp) {
	c.gcRounds++
	if m := c.st.Collect(oldest); m > c.maxVers {
		c.maxVers = m
	}
}

// frontier returns the latest committed version of k, ok false for the
// initial state.
func (c *run) frontier(k int32) (version, bool) { return c.st.Frontier(k) }

func (c *run) isInitial(v int32) bool {
	return v == history.NoValue || (c.initZero && v == c.zeroID)
}

// startTxn checks Int for all reads of t and Ext for its external reads,
// against the current frontier (the snapshot at snap).
func (c *run) startTxn(ti int32, snap history.Timestamp, ser bool) {
	t := &c.h.Txns[ti]
	c.cur = ti
	for j := range t.Ops {
		o := &t.Ops[j]
		k := o.Key
		if k < 0 || int(k) >= c.nkeys {
			continue
		}
		seen := c.epoch[k] == ti
		switch o.Kind {
		case history.Write:
			c.epoch[k] = ti
			c.intVal[k], c.intOp[k] = o.Value, int32(j)
		case history.Append:
			if c.intList == nil {
				continue
			}
			if !seen {
				c.epoch[k] = ti
				c.intList[k] = c.intList[k][:0]
				c.intSufx[k] = true
			}
			c.intList[k] = append(c.intList[k], o.Value)
			c.intOp[k] = int32(j)
		case history.Read:
			if o.IsList {
				if o.ListUnknown || c.intList == nil {
					continue
				}
				lst := t.ListOf(o)
				if seen {
					exp := c.intList[k]
					if c.intSufx[k] {
						// snapshot + own appends: the suffix is Int, the prefix Ext.
						if len(lst) < len(exp) || !slices.Equal(lst[len(lst)-len(exp):], exp) {
							c.intViolation(ti, int32(j), k, true)
						} else {
							c.extList(ti, int32(j), k, lst[:len(lst)-len(exp)], snap, ser)
						}
					} else if !slices.Equal(lst, exp) {
						c.intViolation(ti, int32(j), k, false)
					}
				} else {
					c.extList(ti, int32(j), k, lst, snap, ser)
				}
				c.epoch[k] = ti
				c.intList[k] = append(c.intList[k][:0], lst...)
				c.intSufx[k] = false
				c.intOp[k] = int32(j)
				continue
			}
			if seen {
				if c.intVal[k] != o.Value {
					c.intViolation(ti, int32(j), k, false)
				}
			} else {
				f, ok := c.frontier(k)
				match := o.Value == f.Val || (!ok && c.isInitial(o.Value))
				if !match {
					c.extKV(ti, int32(j), k, o.Value, f, ok, snap, ser)
				}
			}
			c.epoch[k] = ti
			c.intVal[k], c.intOp[k] = o.Value, int32(j)
		}
	}
}

// commitTxn installs t's final writes per key as new versions; with
// noconflict it first checks that no version of a written key committed
// after t's start.
func (c *run) commitTxn(ti int32, noconflict bool) {
	t := &c.h.Txns[ti]
	// Iterate ops in reverse so each key's last write is installed once.
	for j := len(t.Ops) - 1; j >= 0; j-- {
		o := &t.Ops[j]
		if o.Kind != history.Write && o.Kind != history.Append {
			continue
		}
		k := o.Key
		if k < 0 || int(k) >= c.nkeys || c.wroteKey[k] == ti {
			continue
		}
		c.wroteKey[k] = ti
		if noconflict {
			vs := c.st.Versions(k)
			for x := len(vs) - 1; x >= 0 && t.StartTS.Less(vs[x].TS); x-- {
				c.noConflict(vs[x].Writer, ti, k, vs[x].TS)
			}
		}
		v := version{TS: t.CommitTS, Writer: ti, Val: o.Value}
		if o.Kind == history.Append && c.lists != nil {
			// append all of t's appends to k, in program order
			for jj := 0; jj <= j; jj++ {
				if p := &t.Ops[jj]; p.Kind == history.Append && p.Key == k {
					c.lists[k] = append(c.lists[k], p.Value)
				}
			}
			v.Val = int32(len(c.lists[k]))
		}
		c.st.Install(k, v)
	}
}

// --- anomaly recording --------------------------------------------------

func (c *run) capped(typ string) bool {
	c.counts[typ]++
	return len(c.anoms[typ]) >= c.opts.MaxPerType()
}

func (c *run) add(a check.Anomaly) {
	a.Ops = check.TxnOps(c.h, a.Txns...)
	c.anoms[a.Type] = append(c.anoms[a.Type], a)
}

func (c *run) ts(ti int32) string {
	t := &c.h.Txns[ti]
	return "sts " + t.StartTS.String() + ", cts " + t.CommitTS.String()
}

func (c *run) session() {
	h := c.h
	last := map[int32]int32{}
	// Group replayed transactions by session with a counting sort (stable:
	// history order within a session), then order each session by Seq.
	ns := int32(h.Sessions.Len())
	cnt := make([]int32, ns+1)
	for i := range h.Txns {
		if s := h.Txns[i].Session; c.incl[i] && s >= 0 && s < ns {
			cnt[s+1]++
		}
	}
	for s := int32(1); s <= ns; s++ {
		cnt[s] += cnt[s-1]
	}
	idx := make([]int32, cnt[ns])
	pos := append([]int32(nil), cnt[:ns]...)
	for i := range h.Txns {
		if s := h.Txns[i].Session; c.incl[i] && s >= 0 && s < ns {
			idx[pos[s]] = int32(i)
			pos[s]++
		}
	}
	for s := int32(0); s < ns; s++ {
		b := idx[cnt[s]:cnt[s+1]]
		if !slices.IsSortedFunc(b, func(x, y int32) int { return int(h.Txns[x].Seq - h.Txns[y].Seq) }) {
			slices.SortFunc(b, func(x, y int32) int { return int(h.Txns[x].Seq-h.Txns[y].Seq)*2 + min(max(int(x-y), -1), 1) })
		}
	}
	for _, i := range idx {
		t := &h.Txns[i]
		if p, ok := last[t.Session]; ok && c.ser {
			// strong-session-serializable: the serialization order (commit
			// order) must contain the session order.
			pt := &h.Txns[p]
			if t.CommitTS.Less(pt.CommitTS) {
				expl := fmt.Sprintf("%s and %s are consecutive in session %s, but %s committed at %s, before its predecessor %s committed at %s: the commit order, taken as the serialization order, contradicts the session order. Strong session serializability: the serialization order must extend each session's order.",
					h.TxnString(p), h.TxnString(i), h.Sessions.String(t.Session), h.TxnName(i), t.CommitTS, h.TxnName(p), pt.CommitTS)
				if !c.coKnown {
					c.inconclusive(expl)
				} else if !c.capped(TypeSession) {
					c.add(check.Anomaly{Type: TypeSession, Txns: []int32{p, i}, Explanation: expl})
				}
			}
		} else if ok {
			pt := &h.Txns[p]
			if t.StartTS.Less(pt.CommitTS) && !c.capped(TypeSession) {
				c.add(check.Anomaly{Type: TypeSession, Txns: []int32{p, i},
					Explanation: fmt.Sprintf("%s and %s are consecutive in session %s, but %s started at %s, before its predecessor %s committed at %s: its snapshot does not include its own session's previous transaction. Session axiom: a transaction's snapshot must follow its session predecessor's commit (prev.cts ≤ next.sts).",
						h.TxnString(p), h.TxnString(i), h.Sessions.String(t.Session), h.TxnName(i), t.StartTS, h.TxnName(p), pt.CommitTS)})
			}
		}
		last[t.Session] = i
	}
}

func (c *run) intViolation(ti, op, k int32, suffix bool) {
	if c.capped(TypeInternal) {
		return
	}
	h := c.h
	t := &h.Txns[ti]
	o := &t.Ops[op]
	prev := c.intOp[k]
	var want string
	if o.IsList {
		if suffix {
			want = fmt.Sprintf("a list ending with its own appends %s", h.ListString(c.intList[k]))
		} else {
			want = h.ListString(c.intList[k]) + " (what it read earlier plus its own appends since)"
		}
	} else {
		want = h.ValueName(c.intVal[k])
	}
	c.add(check.Anomaly{Type: TypeInternal, Txns: []int32{ti}, Key: h.KeyName(k),
		Explanation: fmt.Sprintf("%s: op %d (%s) follows op %d (%s) on the same key %s in the same transaction, so it must return %s, but it returned %s. Int axiom: a read of a key the transaction already accessed returns the value of its last access.",
			h.TxnString(ti), op, h.OpString(t, o), prev, h.OpString(t, &t.Ops[prev]), h.KeyName(k), want, readText(h, t, o))})
}

func readText(h *history.History, t *history.Txn, o *history.Op) string {
	if o.IsList {
		return h.ListString(t.ListOf(o))
	}
	return h.ValueName(o.Value)
}

// indexed is one write of (key, value) packed in kv.
type indexed struct {
	kv uint64
	writerRef
}

// buildIndex indexes every write/append of every transaction by (key,
// value): a sorted slice (16 bytes per write; a map of slices would cost
// several times that on histories with millions of writes). It is built on
// the first Ext failure only.
func (c *run) buildIndex() {
	if c.windex != nil {
		return
	}
	n := 0
	for i := range c.h.Txns {
		for j := range c.h.Txns[i].Ops {
			if k := c.h.Txns[i].Ops[j].Kind; k == history.Write || k == history.Append {
				n++
			}
		}
	}
	c.windex = make([]indexed, 0, n+1)
	for i := range c.h.Txns {
		t := &c.h.Txns[i]
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind == history.Write || o.Kind == history.Append {
				c.windex = append(c.windex, indexed{packKV(o.Key, o.Value), writerRef{int32(i), int32(j)}})
			}
		}
	}
	// Stable in (txn, op) order within one (key, value): history order.
	slices.SortStableFunc(c.windex, func(a, b indexed) int {
		switch {
		case a.kv < b.kv:
			return -1
		case a.kv > b.kv:
			return 1
		}
		return 0
	})
}

func packKV(k, v int32) uint64 { return uint64(uint32(k))<<32 | uint64(uint32(v)) }

// writes returns every write of (k, v), in history order.
func (c *run) writes(k, v int32) []indexed {
	c.buildIndex()
	kv := packKV(k, v)
	i, _ := slices.BinarySearchFunc(c.windex, kv, func(e indexed, t uint64) int {
		switch {
		case e.kv < t:
			return -1
		case e.kv > t:
			return 1
		}
		return 0
	})
	j := i
	for j < len(c.windex) && c.windex[j].kv == kv {
		j++
	}
	return c.windex[i:j]
}

// Ext failure classes.
const (
	extNever       = "value never written"
	extBefore      = "written before the snapshot"
	extUncommitted = "written by an uncommitted or aborted transaction"
	extAfter       = "written after the snapshot"
	extNotVersion  = "not any committed version"
	// extUnknownOutcome: the writer's outcome is unknown and it has no
	// timestamps, so whether the read is legal cannot be decided; such
	// reads make the verdict unknown instead of invalid.
	extUnknownOutcome = "written by a transaction of unknown outcome"
)

// classify finds who wrote (k, v) relative to the snapshot at snap.
func (c *run) classify(ti, k, v int32, snap history.Timestamp, ser bool) (string, writerRef) {
	refs := c.writes(k, v)
	var before, after, unc = writerRef{-1, -1}, writerRef{-1, -1}, writerRef{-1, -1}
	for _, x := range refs {
		r := x.writerRef
		w := &c.h.Txns[r.txn]
		switch {
		case !c.incl[r.txn] && c.h.Txns[r.txn].Status == history.Unknown:
			if unc.txn < 0 || c.h.Txns[unc.txn].Status != history.Aborted {
				unc = r
			}
		case !c.incl[r.txn]:
			unc = r
		case r.txn == ti:
			after = r
		case tsLE(w.CommitTS, snap) && !(ser && !w.CommitTS.Less(snap) && r.txn > ti):
			before = r
		default:
			if after.txn < 0 {
				after = r
			}
		}
	}
	switch {
	case before.txn >= 0:
		return extBefore, before
	case after.txn >= 0:
		return extAfter, after
	case unc.txn >= 0 && c.h.Txns[unc.txn].Status == history.Unknown:
		return extUnknownOutcome, unc
	case unc.txn >= 0:
		return extUncommitted, unc
	}
	return extNever, writerRef{-1, -1}
}

func (c *run) writerText(r writerRef, k int32, v int32) string {
	h := c.h
	if r.txn < 0 {
		return "no transaction wrote " + h.ValueName(v) + " to " + h.KeyName(k)
	}
	t := &h.Txns[r.txn]
	s := fmt.Sprintf("%s was written by %s (op %d", h.ValueName(v), h.TxnName(r.txn), r.op)
	if c.incl[r.txn] {
		s += ", " + c.ts(r.txn) + ")"
	} else {
		s += ", status " + t.Status.String() + ", never committed)"
	}
	return s
}

func (c *run) snapWord(ser bool) string {
	if ser {
		return "commit point"
	}
	return "snapshot"
}

func (c *run) extKV(ti, op, k, v int32, f version, fok bool, snap history.Timestamp, ser bool) {
	kind, ref := extNever, writerRef{-1, -1}
	if c.isInitial(v) {
		kind = extBefore // the initial value, overwritten before the snapshot
	} else {
		kind, ref = c.classify(ti, k, v, snap, ser)
	}
	c.extKinds[kind]++
	if kind == extUnknownOutcome {
		c.undecided++
		return
	}
	typ := c.extType(kind, ref)
	if typ != "" && c.capped(typ) {
		return
	}
	if typ == "" && c.coFirst != "" {
		c.coUndecided++
		return
	}
	h := c.h
	o := &h.Txns[ti].Ops[op]
	var state string
	if fok {
		state = fmt.Sprintf("%s, written by %s (cts %s)", h.ValueName(f.Val), h.TxnName(f.Writer), f.TS)
	} else {
		state = "the initial value (" + c.initName() + "), no transaction having committed " + h.KeyName(k) + " yet"
	}
	var why string
	switch {
	case c.isInitial(v):
		why = "it read the initial value, which was overwritten before its " + c.snapWord(ser)
	default:
		why = c.writerText(ref, k, v)
	}
	txns := []int32{ti}
	if f.Writer >= 0 {
		txns = append(txns, f.Writer)
	}
	if ref.txn >= 0 && ref.txn != ti && ref.txn != f.Writer {
		txns = append(txns, ref.txn)
	}
	expl := fmt.Sprintf("%s (%s): op %d (%s) is its first access to %s, an external read. At its %s %s the last committed value of %s was %s, but it read %s; %s [%s]. %s",
		h.TxnString(ti), c.ts(ti), op, h.OpString(&h.Txns[ti], o), h.KeyName(k), c.snapWord(ser), snap, h.KeyName(k), state, h.ValueName(v), why, kind, c.axiomFor(typ, ser))
	if typ == "" {
		c.inconclusive(expl)
		return
	}
	c.add(check.Anomaly{Type: typ, Txns: txns, Key: h.KeyName(k), Explanation: expl})
}

// extType is the anomaly type of an Ext failure of class kind (writer ref),
// or "" when the failure is inconclusive. The timestamp SI replay reports
// every failure as "ext". The commit-order replay reports a read of an
// aborted transaction's write as G1a and of a value nobody wrote as
// garbage-versions (both prohibited by serializability whatever the
// serialization order), and any other mismatch as "ext" only when the
// commit order is known to serialize (CommitOrderSerializes).
func (c *run) extType(kind string, ref writerRef) string {
	if !c.ser {
		return TypeExt
	}
	switch kind {
	case extUncommitted:
		if ref.txn >= 0 && c.h.Txns[ref.txn].Status == history.Aborted {
			return model.G1a
		}
	case extNever:
		return model.GarbageVersions
	}
	if c.coKnown {
		return TypeExt
	}
	return ""
}

// inconclusive records a commit-order failure that is not a violation
// because the commit order is not known to be the serialization order.
func (c *run) inconclusive(expl string) {
	c.coUndecided++
	if c.coFirst == "" {
		c.coFirst = expl
	}
}

func (c *run) axiomFor(typ string, ser bool) string {
	switch typ {
	case model.G1a:
		return "Aborted read (Adya G1a): a committed transaction must not read a write of an aborted transaction."
	case model.GarbageVersions:
		return "A read must return the initial value or a value some transaction wrote."
	}
	return c.axiom(ser)
}

func (c *run) axiom(ser bool) string {
	if ser {
		return "Serializability (commit-order replay): a transaction's reads must return the latest state committed before its commit timestamp."
	}
	return "Ext axiom: an external read returns the value of the last transaction that committed the key at or before the reader's start timestamp."
}

func (c *run) initName() string {
	if c.initZero {
		return "0"
	}
	return "null"
}

// extList checks an external list read got against the committed list
// c.lists[k] at the snapshot. Elements appended by unknown-outcome
// transactions without timestamps (not replayed; they may have committed
// at an unknown point) are projected out first: the true committed state at
// the snapshot, restricted to the replayed transactions' elements, is
// exactly c.lists[k], so the projected read must equal it (a mismatch is a
// violation whatever those transactions did). A read that matches only
// after projection is undecided (Unknown), like a register read of such a
// transaction's write.
func (c *run) extList(ti, op, k int32, got []int32, snap history.Timestamp, ser bool) {
	exp := c.lists[k]
	if slices.Equal(got, exp) {
		return
	}
	projected := false
	if c.hasUnkW {
		var keep []int32
		for x, v := range got {
			if c.unknownOnly(k, v) {
				if keep == nil {
					keep = append(make([]int32, 0, len(got)), got[:x]...)
				}
				continue
			}
			if keep != nil {
				keep = append(keep, v)
			}
		}
		if keep != nil {
			got, projected = keep, true
			if slices.Equal(got, exp) {
				c.extKinds[extUnknownOutcome]++
				c.undecided++
				return
			}
		}
	}
	h := c.h
	f, fok := c.frontier(k)
	kind := extNotVersion
	var ref writerRef = writerRef{-1, -1}
	switch {
	case len(got) < len(exp) && slices.Equal(got, exp[:len(got)]):
		kind = extBefore
	case len(got) > len(exp) && slices.Equal(got[:len(exp)], exp):
		kind, ref = c.classify(ti, k, got[len(exp)], snap, ser)
	default:
		// find the first element that differs; classify it if never written
		for x := range got {
			if x >= len(exp) || got[x] != exp[x] {
				if kk, r := c.classify(ti, k, got[x], snap, ser); kk == extNever || kk == extUncommitted {
					kind, ref = kk, r
				}
				break
			}
		}
	}
	c.extKinds[kind]++
	typ := c.extType(kind, ref)
	if typ != "" && c.capped(typ) {
		return
	}
	if typ == "" && c.coFirst != "" {
		c.coUndecided++
		return
	}
	o := &h.Txns[ti].Ops[op]
	state := "the empty list (no append committed yet)"
	txns := []int32{ti}
	if fok {
		state = fmt.Sprintf("%s, last appended by %s (cts %s)", h.ListString(exp), h.TxnName(f.Writer), f.TS)
		txns = append(txns, f.Writer)
	}
	why := ""
	switch kind {
	case extBefore:
		why = fmt.Sprintf("it read a prefix of length %d: versions committed before its %s are missing", len(got), c.snapWord(ser))
	case extNotVersion:
		why = "the list it read was never the committed state of the key"
	default:
		// the element classified: the first one past the committed list
		// (future / uncommitted suffix), or the first differing one.
		v := history.NoValue
		for x := range got {
			if x >= len(exp) || got[x] != exp[x] {
				v = got[x]
				break
			}
		}
		why = c.writerText(ref, k, v)
		if ref.txn >= 0 && ref.txn != ti && ref.txn != f.Writer {
			txns = append(txns, ref.txn)
		}
	}
	if projected {
		why += fmt.Sprintf(" (elements appended by transactions of unknown outcome without timestamps left out: the read without them is %s)", h.ListString(got))
	}
	expl := fmt.Sprintf("%s (%s): op %d (%s) reads %s externally. At its %s %s the committed list of %s was %s, but it read %s; %s [%s]. %s",
		h.TxnString(ti), c.ts(ti), op, h.OpString(&h.Txns[ti], o), h.KeyName(k), c.snapWord(ser), snap, h.KeyName(k), state, h.ListString(h.Txns[ti].ListOf(o)), why, kind, c.axiomFor(typ, ser))
	if typ == "" {
		c.inconclusive(expl)
		return
	}
	c.add(check.Anomaly{Type: typ, Txns: txns, Key: h.KeyName(k), Explanation: expl})
}

// unknownOnly reports whether (k, v) was written only by transactions of
// unknown outcome without timestamps (and by at least one). The index it
// uses covers those transactions' writes only (built once, small).
func (c *run) unknownOnly(k, v int32) bool {
	if c.unkIdx == nil {
		c.unkIdx = map[uint64]bool{}
		for i := range c.h.Txns {
			t := &c.h.Txns[i]
			if c.incl[i] || t.Status != history.Unknown {
				continue
			}
			for j := range t.Ops {
				if o := &t.Ops[j]; o.Kind == history.Write || o.Kind == history.Append {
					c.unkIdx[packKV(o.Key, o.Value)] = true
				}
			}
		}
	}
	if !c.unkIdx[packKV(k, v)] {
		return false
	}
	for _, r := range c.writes(k, v) {
		if c.incl[r.txn] || c.h.Txns[r.txn].Status != history.Unknown {
			return false
		}
	}
	return true
}

func (c *run) noConflict(w, ti, k int32, wcts history.Timestamp) {
	if c.capped(TypeNoConflict) {
		return
	}
	h := c.h
	t := &h.Txns[ti]
	c.add(check.Anomaly{Type: TypeNoConflict, Txns: []int32{w, ti}, Key: h.KeyName(k),
		Explanation: fmt.Sprintf("%s (%s) and %s (%s) both write %s, and they are concurrent: %s committed at %s, after %s started at %s and before it committed at %s. NoConflict axiom: concurrent transactions must not write the same key.",
			h.TxnString(w), c.ts(w), h.TxnString(ti), c.ts(ti), h.KeyName(k), h.TxnName(w), wcts, h.TxnName(ti), t.StartTS, t.CommitTS)})
}

// realtime checks that commit order respects client real time: for each T2,
// the transaction with the earliest completion among those with a later
// commit timestamp must not have completed before T2 was invoked. Without
// commit-order evidence a contradiction is inconclusive (the serialization
// order need not be the commit order).
func (c *run) realtime() {
	h := c.h
	idx := make([]int32, 0, len(h.Txns))
	for i := range h.Txns {
		if c.incl[i] && h.Txns[i].HasTime {
			idx = append(idx, int32(i))
		}
	}
	if len(idx) == 0 || !h.Evidence.ClientTime {
		c.realtimeUnknown = "strict-serializable needs client invoke/complete times on every transaction to check real-time order; the history has none, so only serializability was checked"
		if len(idx) == 0 {
			return
		}
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if x := h.Txns[a].CommitTS.Compare(h.Txns[b].CommitTS); x != 0 {
			return x
		}
		return int(a - b)
	})
	minC := int32(-1)
	for x := len(idx) - 1; x >= 0; x-- {
		i := idx[x]
		t := &h.Txns[i]
		if minC >= 0 {
			a := &h.Txns[minC]
			if a.Complete < t.Invoke && t.CommitTS.Less(a.CommitTS) {
				if !c.coKnown {
					c.inconclusive(fmt.Sprintf("%s completed at %d, before %s was invoked at %d, yet %s committed at %s, before %s's commit at %s.",
						h.TxnString(minC), a.Complete, h.TxnString(i), t.Invoke, h.TxnName(i), t.CommitTS, h.TxnName(minC), a.CommitTS))
				} else if !c.capped(TypeRealtime) {
					c.add(check.Anomaly{Type: TypeRealtime, Txns: []int32{minC, i},
						Explanation: fmt.Sprintf("%s completed at %d, before %s was invoked at %d, yet %s committed at %s, before %s's commit at %s. Strict serializability: the commit order must extend the real-time order of transactions.",
							h.TxnString(minC), a.Complete, h.TxnString(i), t.Invoke, h.TxnName(i), t.CommitTS, h.TxnName(minC), a.CommitTS)})
				}
			}
		}
		if minC < 0 || t.Complete < h.Txns[minC].Complete {
			minC = i
		}
	}
}

func (c *run) result(r *check.Result, m string) {
	types := make([]string, 0, len(c.counts))
	for t := range c.counts {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		r.Anomalies = append(r.Anomalies, c.anoms[t]...)
		if extra := c.counts[t] - len(c.anoms[t]); extra > 0 {
			if r.Truncated == nil {
				r.Truncated = map[string]int{}
			}
			r.Truncated[t] = extra
		}
	}
	st := map[string]any{}
	replayed := 0
	for _, in := range c.incl {
		if in {
			replayed++
		}
	}
	st["txns"] = len(c.h.Txns)
	st["replayed"] = replayed
	st["keys"] = c.nkeys
	st["initial_value"] = c.initName()
	st["gc"] = c.gc
	st["gc_rounds"] = c.gcRounds
	for t, n := range c.counts {
		st["violations_"+t] = n
	}
	for k, n := range c.extKinds {
		st["ext_"+strings.ReplaceAll(k, " ", "_")] = n
	}
	r.Stats = st
	r.Warnings = append(r.Warnings, c.warnings...)
	if c.realtimeUnknown != "" {
		// Finish keeps Unknown unless a prohibited anomaly was found.
		r.Verdict = check.Unknown
		r.Reason = c.realtimeUnknown
	}
	if c.otherOps > 0 {
		// What the replay found stands (dropping reads only drops
		// constraints), but "valid" would vouch for reads it never looked at.
		r.Verdict = check.Unknown
		why := fmt.Sprintf("%d predicate-read or increment ops are not checked by chronos, so it cannot say valid (emme or enne check predicate reads)", c.otherOps)
		if r.Reason != "" {
			r.Reason += "; " + why
		} else {
			r.Reason = why
		}
	}
	if c.undecided > 0 {
		r.Verdict = check.Unknown
		why := fmt.Sprintf("%d reads returned values written by transactions of unknown outcome that carry no timestamps; they cannot be placed in the replay", c.undecided)
		if r.Reason != "" {
			r.Reason += "; " + why
		} else {
			r.Reason = why
		}
	}
	if c.coUndecided > 0 {
		r.Verdict = check.Unknown
		why := fmt.Sprintf("%d reads (or orderings) contradict the commit-timestamp order, but the commit order is not known to be this database's serialization order (e.g. PostgreSQL serializable snapshot isolation serializes in another order), so they do not prove non-serializability; only a passing commit-order replay is conclusive. Use --checker list-append or rw-register (graph inference), or set --param commit-order-serializes=true if the database serializes in commit-timestamp order (TiDB, CockroachDB, Spanner, FoundationDB). First: %s", c.coUndecided, c.coFirst)
		if r.Reason != "" {
			r.Reason += "; " + why
		} else {
			r.Reason = why
		}
	}
	st["commit_order_serializes"] = c.coKnown
	if c.coWhy != "" {
		st["commit_order_evidence"] = c.coWhy
	}
	st["commit_order_inconclusive"] = c.coUndecided
	finish(r, m)
	if r.Verdict != check.Unknown && r.Reason != "" {
		r.Warnings = append(r.Warnings, r.Reason)
		r.Reason = ""
	}
}
