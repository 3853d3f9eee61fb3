package leopard

import (
	"slices"

	"github.com/txray/txray/graph"
	"github.com/txray/txray/history"
)

// readValue returns the value a read op observed, for version matching: the
// register value, or for a list read the last element (the version is the
// one whose writer appended it; NoValue = empty list = initial). ok is false
// for ops this checker cannot match (unknown list reads).
func readValue(t *history.Txn, o *history.Op) (int32, bool) {
	if o.IsList {
		if o.ListUnknown {
			return 0, false
		}
		l := t.ListOf(o)
		if len(l) == 0 {
			return history.NoValue, true
		}
		return l[len(l)-1], true
	}
	return o.Value, true
}

// op applies one operation trace of t.
func (e *engine) op(t *txn, i int32) {
	o := &t.ref.Ops[i]
	switch o.Kind {
	case history.Read:
		e.stats.reads++
		v, ok := readValue(t.ref, o)
		if ok && !o.IsList && v == history.NoValue && t.status == history.Unknown {
			// Jepsen :info convention: a nil read result in a transaction
			// whose outcome the client never learnt is unknown, not a read
			// of the initial version (a decoded list-append read of null
			// is not even known to be a list).
			ok = false
		}
		if !ok || !o.HasTime || o.Key < 0 {
			// A read that never completed has no known result.
			e.stats.uncheckedOps++
			return
		}
		e.read(t, i, o.Key, v)
	case history.PredRead:
		// Record-level reads: each returned row is a read of its key
		// under the statement's snapshot (counted as one read each, so
		// reads and reads_checked count the same unit).
		e.stats.predReads++
		pr := t.ref.PredOf(o)
		if pr == nil || !o.HasTime {
			e.stats.reads++
			e.stats.uncheckedOps++
			return
		}
		e.stats.reads += int64(len(pr.Result))
		for _, row := range pr.Result {
			if row.Key >= 0 {
				e.read(t, i, row.Key, row.Value)
			}
		}
		// The rows it did not return, where the predicate identifies
		// its records (region.go); conservatively nothing otherwise.
		if e.m.reads {
			if e.predRegion(t, i, pr) {
				e.stats.regions++
			} else {
				e.stats.regionsUndecided++
			}
		}
	case history.Write, history.Append:
		e.stats.writes++
		if o.Key < 0 {
			e.stats.uncheckedOps++
			return
		}
		if w := t.write(o.Key); w != nil {
			w.earlier = append(w.earlier, w.val)
			w.val = o.Value
			return
		}
		b, a := opBounds(t.ref, int(i))
		t.writes = append(t.writes, writeEnt{key: o.Key, val: o.Value, op: i, acqB: b, acqA: a, locked: o.HasTime && !t.floating})
	default:
		// Predicate reads and increments are not matched to versions.
		e.stats.uncheckedOps++
	}
}

// read checks a read of key k returning v by op i of t.
func (e *engine) read(t *txn, i, k, v int32) {
	if w := t.write(k); w != nil && v == absentRead {
		// A row the transaction wrote itself and its predicate read did
		// not return: its own version must not satisfy the clause.
		e.stats.readsChecked++
		if !e.absentSees(t, i, k, w.val) {
			e.rep.absentOwn(e, t, i, k, w)
		}
		return
	} else if w != nil {
		// Every mechanism lets a transaction see its own last write.
		e.stats.readsChecked++
		if v != w.val {
			e.rep.internal(e, t, i, k, v, w)
		}
		return
	}
	if !e.m.reads {
		e.stats.uncheckedOps++
		return
	}
	if e.m.cr && !e.m.stmt && !e.m.curRead && v != absentRead && !e.repeatRead(t, i, k, v) {
		return
	}
	sb, sa := t.begin, t.snapA
	if e.m.curRead {
		_, a := opBounds(t.ref, int(i))
		sa = max(a, sb)
	} else if e.m.stmt {
		sb, sa = opBounds(t.ref, int(i))
		sb = max(sb, t.begin)
		sa = max(sa, sb)
	}
	if sa < e.front {
		e.verifyRead(t, i, k, v, sb, sa)
	} else {
		e.pendPush(pend{t: t, op: i, key: k, val: v, sb: sb, sa: sa})
	}
}

// repeatRead checks a snapshot read of key k (returning v, by op i of t,
// which has not written k) against t's earlier snapshot read of k, and
// records it if it is the first: under a transaction snapshot whose read
// view never moves (consistent read without statement snapshots or
// current reads: PostgreSQL repeatable read and serializable, the
// first-updater-wins profiles), every read of a key before the
// transaction's own write of it returns the one version visible at the
// snapshot point (Leopard §IV-A: the snapshot is one point shared by the
// transaction's reads; Berenson et al., SIGMOD 1995, P2/A2 fuzzy read).
// Two different values, or two different lists, are two versions, which
// no placement of the single snapshot point explains. It returns false
// when the read was reported (the per-read candidate check would only
// repeat the first read's verdict or blame the wrong read).
func (e *engine) repeatRead(t *txn, i, k, v int32) bool {
	for j := range t.snapReads {
		p := &t.snapReads[j]
		if p.key != k {
			continue
		}
		if p.val != v || !sameList(t.ref, &t.ref.Ops[p.op], &t.ref.Ops[i]) {
			e.stats.readsChecked++
			e.rep.repeat(e, t, p.op, i, k, p.val, v)
			return false
		}
		return true
	}
	t.snapReads = append(t.snapReads, snapRead{key: k, val: v, op: i})
	return true
}

// sameList reports whether two ops that are both list reads returned the
// same list (true when either is not a list read: their values were
// compared).
func sameList(t *history.Txn, a, b *history.Op) bool {
	if a.Kind != history.Read || b.Kind != history.Read || !a.IsList || !b.IsList || a.ListUnknown || b.ListUnknown {
		return true
	}
	return slices.Equal(t.ListOf(a), t.ListOf(b))
}

// verifyRead is consistent-read verification (Leopard §IV-A): the read's
// snapshot point lies in [sb, sa]; a committed version v is a candidate iff
// its commit may precede the snapshot (v.relB < sa; otherwise a future
// version) and no version u certainly committed before the snapshot
// (u.relA < sb) certainly follows v (otherwise v is garbage). Versions whose
// commit overlaps the snapshot stay candidates (overlap versions). The read
// must return the value of a candidate.
func (e *engine) verifyRead(t *txn, i, key, val int32, sb, sa int64) {
	ks := e.key(key)
	if ks.forgotten && !e.shadowed(ks, t, i, sb) {
		// The key's versions were discarded (engine.forget): the read
		// cannot be checked.
		if e.stats.forgottenReads == 0 {
			e.stats.forgottenFirst = e.rep.key(key)
		}
		e.stats.forgottenReads++
		e.stats.uncheckedOps++
		return
	}
	e.stats.readsChecked++
	var match *writer
	matches, cands := 0, 0
	initPossible := !ks.dropped
	for iu := range ks.writers {
		u := &ks.writers[iu]
		if u.sureCommit && u.relA < sb && u.t != t {
			initPossible = false
			break
		}
	}
	writtenByAny := false
	for iv := range ks.writers {
		v := &ks.writers[iv]
		if v.t == t || !v.hasVersion {
			if v.val == val && v.t != t {
				writtenByAny = true
			}
			continue
		}
		if v.val == val {
			writtenByAny = true
		}
		if !e.possible(ks, v, t, sb, sa) {
			continue
		}
		cands++
		if v.val == val || (val == absentRead && e.absentSees(t, i, key, v.val)) {
			matches++
			if match == nil || match.t != v.t {
				match = v
			}
		}
	}
	initMatch := false
	if initPossible {
		cands++
		switch {
		case !e.m.initUnknown:
			initMatch = val == history.NoValue || val == absentRead
		case ks.hasInit:
			initMatch = val == ks.init
		case matches == 0 && !writtenByAny:
			ks.init, ks.hasInit = val, true
			initMatch = true
		}
		if initMatch {
			matches++
		}
	}
	e.stats.deps++
	if cands > 1 {
		e.stats.uncertain++
		e.stats.readUncertain++
	}
	if matches == 0 {
		if val == absentRead {
			e.rep.crAbsent(e, ks, t, i, key, sb, sa, initPossible)
			return
		}
		e.rep.cr(e, ks, t, i, key, val, sb, sa, initPossible)
		return
	}
	if val == absentRead {
		return // names no one version: no certifier edges
	}
	if o := &t.ref.Ops[i]; o.Kind == history.Read && o.IsList && o.Key == key && o.ListLen() > 1 && !e.m.initUnknown {
		l := t.ref.ListOf(o)
		e.verifyPrefix(ks, t, i, key, l[:len(l)-1], sa)
	}
	if !e.m.sc || matches != 1 || ambiguous(ks, t, match, initMatch, val) {
		return
	}
	var v *writer
	if !initMatch {
		v = match
	}
	rr := readRec{t: t, op: i, init: v == nil}
	if v != nil {
		rr.v = *v
	}
	ks.reads = append(ks.reads, rr)
	if v != nil && v.sureCommit {
		e.addEdge(v.t, t, graph.WR, key, i)
	}
	for iu := range ks.writers {
		u := &ks.writers[iu]
		if u.sureCommit && u.t != t && (v == nil || u.t != v.t) && e.certainBefore(v, u) {
			e.addEdge(t, u.t, graph.RW, key, i)
		}
	}
}

// verifyPrefix checks the rest of a list read (Elle's list-append: the
// list is the version its last element's writer installed, and each
// element before it was appended by a version earlier in the chain, so
// every one of them was committed before the snapshot too). An element is
// impossible when every transaction that appended it aborted or began
// committing after the snapshot's latest point sa, or (unless versions were
// collected) when no transaction appended it. Collected writers count
// through keyState.gone: a collected version that may have committed
// (committed before every live snapshot) makes the element possible; a
// collected aborted append with no possibly committed one does not. One
// violation per read.
func (e *engine) verifyPrefix(ks *keyState, t *txn, i, key int32, prefix []int32, sa int64) {
	for _, x := range prefix {
		found, ok := false, false
		for iv := range ks.writers {
			v := &ks.writers[iv]
			if v.t == t || !v.wrote(x) {
				continue
			}
			found = true
			if v.hasVersion && v.relB <= sa {
				ok = true
				break
			}
		}
		if ok {
			continue
		}
		g, gone := ks.gone[x]
		if gone && g.version || !found && !gone && ks.dropped {
			continue
		}
		var ga *goneVal
		if gone {
			ga = &g
		}
		e.rep.prefix(e, ks, t, i, key, x, sa, ga)
		return
	}
}

// ambiguous reports whether the version a read observed cannot be named for
// certain: some other transaction (possible for this read or not) also
// wrote the value, or the initial version matched after versions were
// collected. The certifier's edges use only unambiguous reads.
func ambiguous(ks *keyState, t *txn, match *writer, initMatch bool, val int32) bool {
	if initMatch && ks.dropped {
		return true
	}
	for iv := range ks.writers {
		v := &ks.writers[iv]
		if v.val == val && v.t != t && (initMatch || v.t != match.t) {
			return true
		}
	}
	return false
}

// possible reports whether version v (written by another transaction than
// the reader t) may be the one visible at a snapshot in [sb, sa].
func (e *engine) possible(ks *keyState, v *writer, t *txn, sb, sa int64) bool {
	if v.relB > sa {
		return false // future version
	}
	for iu := range ks.writers {
		u := &ks.writers[iu]
		if u.t != v.t && u.sureCommit && u.relA < sb && u.t != t && e.certainBefore(v, u) {
			return false // garbage: overwritten before the snapshot
		}
	}
	return true
}

// end applies t's commit or abort: its lock releases (ME), its versions,
// the first-updater-wins rule, and the certifier's edges and checks.
func (e *engine) end(t *txn) {
	t.ended = true
	t.snapReads = nil
	e.stats.liveTxns--
	e.done = append(e.done, t)
	low := int64(-1 << 62)
	if len(t.writes) > 0 {
		low = e.activeLow()
	}
	for wi := range t.writes {
		we := &t.writes[wi]
		ks := e.key(we.key)
		if len(ks.writers) > 2 {
			e.prune(ks, low)
		}
		w := &writer{t: t, val: we.val, op: we.op, acqA: we.acqA, relB: t.relB, relA: t.relA, snapA: t.snapA,
			status: t.status, hasVersion: t.status != history.Aborted, sureCommit: t.status == history.Committed, locked: we.locked,
			list: int(we.op) < len(t.ref.Ops) && t.ref.Ops[we.op].Kind == history.Append}
		if len(we.earlier) > 0 {
			// Its own slice header: a pointer to we.earlier, inside
			// t.writes, would keep t's whole write set alive as long as
			// the version stays.
			ev := slices.Clip(we.earlier)
			w.earlier = &ev
		}
		for ix := range ks.writers {
			x := &ks.writers[ix]
			if e.m.me && x.locked && w.locked && x.relB > w.acqA && w.relB > x.acqA {
				e.rep.me(e, we.key, x, w)
			}
			if e.m.fuw && x.sureCommit && w.sureCommit && x.relB > w.snapA && w.relB > x.snapA {
				e.rep.fuw(e, we.key, x, w)
			}
		}
		// Uncertainty of the version order with the previous version.
		for ix := len(ks.writers) - 1; ix >= 0; ix-- {
			if x := &ks.writers[ix]; x.hasVersion && w.hasVersion {
				e.stats.deps++
				if !e.certainBefore(x, w) && !e.certainBefore(w, x) {
					e.stats.uncertain++
				}
				break
			}
		}
		if e.m.sc && w.sureCommit {
			// ww from the latest certain predecessors.
			for ix := range ks.writers {
				x := &ks.writers[ix]
				if !x.sureCommit || x.t == t || !e.certainBefore(x, w) {
					continue
				}
				latest := true
				for iy := range ks.writers {
					y := &ks.writers[iy]
					if y.t != x.t && y.sureCommit && y.t != t && e.certainBefore(x, y) && e.certainBefore(y, w) {
						latest = false
						break
					}
				}
				if latest {
					e.addEdge(x.t, t, graph.WW, we.key, -1)
				}
			}
			for ir := range ks.reads {
				r := &ks.reads[ir]
				if rv := r.version(); r.t != t && e.certainBefore(rv, w) && (rv == nil || rv.t != t) {
					e.addEdge(r.t, t, graph.RW, we.key, r.op)
				}
			}
		}
		ks.writers = append(ks.writers, *w)
	}
	if e.m.sc && t.status == history.Committed {
		e.findCycle(t)
		if e.m.ssi {
			e.pivot(t)
			for _, ed := range t.out {
				if ed.rel == graph.RW {
					e.pivot(ed.to)
				}
			}
			for _, ed := range t.in {
				if ed.rel == graph.RW {
					e.pivot(ed.to)
				}
			}
		}
	}
}

func (e *engine) addEdge(a, b *txn, rel graph.Rel, key, op int32) {
	if a == b || a.gc || b.gc {
		return
	}
	for _, ed := range a.out {
		if ed.to == b && ed.rel == rel {
			return
		}
	}
	a.out = append(a.out, edge{to: b, rel: rel, key: key, op: op})
	b.in = append(b.in, edge{to: a, rel: rel, key: key, op: op})
	if e.m.to && rel == graph.RW && a.status == history.Committed && b.status == history.Committed &&
		!a.floating && !b.floating && b.relA < a.relB && writes(a.ref) {
		e.rep.to(e, a, b, a.out[len(a.out)-1])
	}
}

// sure reports whether t certainly committed and has ended.
func sure(t *txn) bool { return t.ended && !t.gc && t.status == history.Committed }

// concurrent reports whether a and b are certainly concurrent: each one's
// snapshot certainly precedes the other's commit.
func concurrent(a, b *txn) bool { return a.snapA < b.relB && b.snapA < a.relB }

// pivot checks the SSI dangerous structure (Ports & Grittner, "Serializable
// Snapshot Isolation in PostgreSQL", VLDB 2012, §3.2-3.3; Leopard SC):
// committed T1 -rw-> p -rw-> T3, each pair concurrent, T3 certainly
// committed first (the commit-ordering optimization, §3.3: PostgreSQL lets
// the structure stand unless T_out commits before T_pivot and T_in).
// PostgreSQL aborts one of them, so all three committing is a certifier
// violation, with one documented exception, the read-only optimization
// (Ports & Grittner §4.1, Theorem 3; src/backend/storage/lmgr/README-SSI,
// "Read-only transactions"; predicate.c checks it with
// SxactIsReadOnly(T_in) against T_out's commit sequence number and
// T_in's lastCommitBeforeSnapshot, and marks a transaction that committed
// without writing as read-only): when T1 (T_in) is read-only the
// structure can only complete a cycle if T3 (T_out) committed before T1
// took its snapshot, so PostgreSQL may commit all three otherwise. A
// read-only T1 is therefore reported only when T3's commit certainly
// ended before T1's snapshot could have been taken (t3.relA < t1.begin).
//
// A structure is an anomaly only when certain dependencies close it into a
// cycle (T3 reaches T1): PostgreSQL 15 was observed to commit dangerous
// structures that close no cycle (issue 12's bar runs; the same commit
// race as the G2-item in docs/findings.md), and those histories are
// serializable, so flagging them would call correct histories invalid.
// Such open structures are counted ("ssi_open_structures") and warned
// about, not reported as violations.
func (e *engine) pivot(p *txn) {
	if p.pivotDone || !sure(p) {
		return
	}
	for _, in := range p.in {
		t1 := in.to
		if in.rel != graph.RW || !sure(t1) || !concurrent(t1, p) {
			continue
		}
		for _, out := range p.out {
			t3 := out.to
			if out.rel != graph.RW || t3 == t1 || !sure(t3) || !concurrent(p, t3) {
				continue
			}
			if t3.relA < p.relB && t3.relA < t1.relB && (!t1.readOnly || t3.relA < t1.begin) {
				if e.reaches(t3, t1) {
					p.pivotDone = true
					e.rep.ssi(e, t1, p, t3, in, out)
					return
				}
				if !p.ssiOpen {
					// Not (yet) closed by certain dependencies: no
					// anomaly. Counted once per pivot; re-checked at
					// later commits in case the cycle closes.
					p.ssiOpen = true
					e.stats.ssiOpen++
					if e.stats.ssiOpenFirst == "" {
						e.stats.ssiOpenFirst = e.rep.name(t1) + " -rw-> " + e.rep.name(p) + " -rw-> " + e.rep.name(t3)
					}
				}
			}
		}
	}
}

// reaches reports whether certain dependencies among committed
// transactions lead from a to b (bounded like findCycle).
func (e *engine) reaches(a, b *txn) bool {
	e.stamp++
	if e.stamp == 0 {
		e.stamp = 1
	}
	budget := cycleBudget
	var dfs func(x *txn, depth int) bool
	dfs = func(x *txn, depth int) bool {
		for _, ed := range x.out {
			y := ed.to
			if y == b {
				return true
			}
			if depth+1 >= maxCycleDepth || !sure(y) || y.mark == e.stamp {
				continue
			}
			if budget--; budget <= 0 {
				return false
			}
			y.mark = e.stamp
			if dfs(y, depth+1) {
				return true
			}
		}
		return false
	}
	a.mark = e.stamp
	return dfs(a, 0)
}

const (
	maxCycleDepth = 6
	cycleBudget   = 4096
)

// findCycle searches a cycle of certain dependencies through t, which just
// committed (every edge of a cycle exists once its last member commits).
// The search is depth- and budget-bounded; exhausting the budget is counted
// in the statistics.
func (e *engine) findCycle(t *txn) {
	e.stamp++
	if e.stamp == 0 {
		e.stamp = 1
	}
	budget := cycleBudget
	path := make([]edge, 0, maxCycleDepth)
	var dfs func(x *txn, depth int) bool
	dfs = func(x *txn, depth int) bool {
		for _, ed := range x.out {
			if ed.to == t {
				path = append(path, ed)
				return true
			}
			y := ed.to
			if depth+1 >= maxCycleDepth || !sure(y) || y.mark == e.stamp {
				continue
			}
			if budget--; budget <= 0 {
				return false
			}
			y.mark = e.stamp
			path = append(path, ed)
			if dfs(y, depth+1) {
				return true
			}
			path = path[:len(path)-1]
		}
		return false
	}
	t.mark = e.stamp
	if dfs(t, 0) {
		e.rep.cycle(e, t, path)
	} else if budget <= 0 {
		e.stats.cycleBudget++
	}
}

// gc discards state no transaction still to be verified can need (Leopard
// Definition 4): w is the lowest snapshot lower bound of any transaction
// not yet ended. A version is dropped once a version certainly after it
// certainly committed before w (every later snapshot sees the newer one)
// and its lock release began before w (no later lock or snapshot can
// conflict with it); reads and transactions once they ended before w.
//
// Online, a collected transaction that wrote has its record moved to the
// spill log (its versions may stay: the last one of a key stays until
// overwritten), and a key whose state is settled cools into its slot
// (keys.go), so what stays per key is a fixed 64 bytes without pointers.
func (e *engine) gc(w int64) {
	// Transactions first: a key can cool only once its writer's record
	// is spilled.
	d := e.done[:0]
	for _, t := range e.done {
		if t.relA < w || (t.relA == inf && t.relB < w) {
			t.gc = true
			if e.rc != nil {
				e.rc.add(t.ref, -1)
			}
			if e.compact && len(t.writes) > 0 && t.status != history.Aborted {
				e.retire(t)
			}
			t.txnLive = nil
			e.stats.gcTxns++
			continue
		}
		d = append(d, t)
	}
	clear(e.done[len(d):])
	e.done = d
	keep := e.dirtyKeys[:0]
	for _, k := range e.dirtyKeys {
		ks := e.hot[e.slot(k).hot-1]
		e.prune(ks, w)
		if len(ks.reads) > 0 || !settled(ks, w) {
			keep = append(keep, k)
			continue
		}
		// The key is settled: no later watermark changes what prune
		// keeps, so it leaves the dirty list until it is accessed again
		// (e.key), and cools into its slot, or, when its state does not
		// fit there, keeps exactly its versions, without the capacity it
		// had while busy (a stream that keeps creating keys holds one
		// such key per key ever written, so slack capacity there, and
		// visiting them at every collection, were the bulk of the
		// verifier's memory and a cost growing with the stream).
		ks.dirty = false
		if e.cool(k, ks) {
			continue
		}
		if cap(ks.writers) > len(ks.writers) {
			ks.writers = append([]writer(nil), ks.writers...)
		}
		if cap(ks.reads) > 0 {
			ks.reads = nil
		}
	}
	clear(e.dirtyKeys[len(keep):])
	e.dirtyKeys = keep
	if e.maxChunks > 0 && e.liveChunks > e.maxChunks {
		e.forget()
	}
	if e.rc != nil && len(e.rc.waiting) > 0 && (e.spill == nil || e.spill.err == nil) {
		// (A spill error keeps records in memory, naming key ids without
		// the epoch guard: recycling stops.)
		e.release()
	}
	e.forgetIdle()
}

// retire moves the record of collected transaction t, whose versions may
// stay, out of the decoder's shared storage: to the spill log, or, when
// it cannot be written, to a private compact copy (compactTxn), so the
// retained versions pin none of the decoder's arenas either way.
func (e *engine) retire(t *txn) {
	if e.spill != nil {
		if off, ok := e.spill.put(t.ref, t.epoch); ok {
			t.ref, t.spill = nil, off
			return
		}
	}
	t.ref = compactTxn(t.ref)
}

// settled reports whether prune(ks, w') keeps exactly ks.writers for
// every w' >= w: each writer's release bounds are below w, so every drop
// condition (which compares them and the other writers' bounds with the
// watermark) is already decided. A writer with an unknown outcome (relA
// never known) keeps its key unsettled.
func settled(ks *keyState, w int64) bool {
	for i := range ks.writers {
		if x := &ks.writers[i]; x.relB >= w || x.relA >= w {
			return false
		}
	}
	return true
}

// prune drops the versions, lock holds and reads of one key that no
// transaction with snapshot lower bound >= w can need (see gc).
func (e *engine) prune(ks *keyState, w int64) {
	ws := ks.writers
	// Decide first, then compact: a dropped version may be the witness
	// that makes another one droppable.
	drops := e.dropBuf[:0]
	for ix := range ws {
		x := &ws[ix]
		drop := x.relB < w && x.relA < w
		if drop && x.hasVersion {
			drop = false
			for iu := range ws {
				u := &ws[iu]
				if u.t != x.t && u.sureCommit && u.relA < w && e.certainBefore(x, u) {
					drop = true
					break
				}
			}
		}
		drops = append(drops, drop)
	}
	e.dropBuf = drops
	n := 0
	for ix := range ws {
		if drops[ix] {
			if ws[ix].hasVersion {
				ks.dropped = true
			}
			if ws[ix].locked {
				e.lockDropped = max(e.lockDropped, ws[ix].relB)
			}
			ks.forget(&ws[ix])
			e.stats.gcVersions++
			continue
		}
		ws[n] = ws[ix]
		n++
	}
	clear(ws[n:])
	ks.writers = ws[:n]
	if cap(ws) > 8 && n <= cap(ws)/4 {
		// A key that was busy keeps few versions now: give back the
		// capacity (a stream that keeps creating keys would otherwise
		// hold each retired key's peak).
		ks.writers = append([]writer(nil), ks.writers...)
	}
	rs := ks.reads
	n = 0
	for _, r := range rs {
		if r.t.ended && r.t.relA < w {
			e.stats.gcReads++
			continue
		}
		rs[n] = r
		n++
	}
	clear(rs[n:])
	ks.reads = rs[:n]
	if cap(rs) > 8 && n <= cap(rs)/4 {
		ks.reads = append([]readRec(nil), ks.reads...)
	}
}

// writes reports whether t has a write (a read-only transaction of a
// timestamp-ordering engine is serialized at its snapshot, not its commit:
// FoundationDB commits read-only transactions without the resolvers).
func writes(t *history.Txn) bool {
	for i := range t.Ops {
		if k := t.Ops[i].Kind; k == history.Write || k == history.Append {
			return true
		}
	}
	return false
}

// compactTxn copies a transaction for retention after collection: the
// fields reports use and its ops (list contents copied), so the copy pins
// none of the decoder's shared arenas (online: memory stays bounded by the
// live state, not by every arena a retained version was decoded into).
func compactTxn(t *history.Txn) *history.Txn {
	c := &history.Txn{ID: t.ID, Index: t.Index, Session: t.Session, Seq: t.Seq, Status: t.Status, HasTime: t.HasTime,
		Invoke: t.Invoke, Complete: t.Complete}
	c.Ops = slices.Clone(t.Ops)
	c.Lists = slices.Clone(t.Lists)
	if t.Ext != nil {
		c.Ext = &history.TxnExt{OpTimes: slices.Clone(t.Ext.OpTimes)}
		if t.Ext.Preds != nil {
			c.Ext.Preds = make([]history.Predicate, len(t.Ext.Preds))
			for i, p := range t.Ext.Preds {
				p.Result = append([]history.Row(nil), p.Result...)
				c.Ext.Preds[i] = p
			}
		}
	}
	return c
}
