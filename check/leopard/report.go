package leopard

import (
	"strconv"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/graph"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// reporter collects bug descriptors (Leopard §V-E): per violation the
// mechanism, the operations with their intervals, and why every possible
// order fails. At most max anomalies are listed per type; the rest are
// counted in truncated.
type reporter struct {
	keys, vals *history.Interner
	h          *history.History
	max        int
	plain      bool
	anomalies  []check.Anomaly
	counts     map[string]int
	truncated  map[string]int
	pairs      map[[2]int32]bool
	// spill holds the records of collected transactions (online);
	// spillErrs counts those that could not be read back.
	spill     *spillLog
	spillErrs int
	// spillDropped counts records asked for that the spill limit dropped.
	spillDropped int
	// rc: key ids may be recycled (explanations of collected
	// transactions render released keys as forgotten).
	rc *recycler
}

func newReporter(keys, vals *history.Interner, h *history.History, max int, plain bool) *reporter {
	if max <= 0 {
		max = 8
	}
	return &reporter{keys: keys, vals: vals, h: h, max: max, plain: plain,
		counts: map[string]int{}, truncated: map[string]int{}, pairs: map[[2]int32]bool{}}
}

func (r *reporter) add(a check.Anomaly) {
	r.counts[a.Type]++
	if r.counts[a.Type] > r.max {
		r.truncated[a.Type]++
		return
	}
	r.anomalies = append(r.anomalies, a)
}

// full reports whether type typ is already at its cap (explanations need
// not be built).
func (r *reporter) full(typ string) bool {
	if r.counts[typ] >= r.max {
		r.counts[typ]++
		r.truncated[typ]++
		return true
	}
	return false
}

func (r *reporter) key(k int32) string {
	if k == staleKey {
		return "(a key forgotten since)"
	}
	if r.keys == nil {
		return strconv.Itoa(int(k))
	}
	return r.keys.String(k)
}

func (r *reporter) val(v int32) string {
	if v == history.NoValue {
		return "nil"
	}
	if r.vals == nil {
		return "#" + strconv.Itoa(int(v))
	}
	return r.vals.String(v)
}

// ref returns t's record, reading it back from the spill log when it was
// moved there (the copy is kept on t: explanations name few
// transactions). A record that cannot be read back is replaced by one
// that names the transaction by index, without operations (counted in
// spillErrs, reported as a warning).
func (r *reporter) ref(t *txn) *history.Txn {
	if t.ref != nil {
		if r.rc != nil && t.gc {
			return r.rc.fresh(t, t.ref)
		}
		return t.ref
	}
	dropped := false
	if r.spill != nil && t.spill > 0 {
		var err error
		var ep uint32
		if t.ref, ep, err = r.spill.get(t.spill); err == nil {
			t.epoch = ep // a stand-in (keys.go warm) learns its record's epoch
		}
		dropped = err == errSpillDropped
	}
	if t.ref == nil {
		if dropped {
			r.spillDropped++
		} else {
			r.spillErrs++
		}
		t.ref = &history.Txn{Index: t.idx, Status: t.status}
	}
	if r.rc != nil && t.gc {
		return r.rc.fresh(t, t.ref)
	}
	return t.ref
}

func (r *reporter) name(t *txn) string {
	ref := r.ref(t)
	if r.h != nil && int(ref.Index) < len(r.h.Txns) && &r.h.Txns[ref.Index] == ref {
		return r.h.TxnName(ref.Index)
	}
	s := "T" + strconv.Itoa(int(ref.Index))
	if ref.ID != "" && ref.ID != strconv.Itoa(int(ref.Index)) {
		s += " (" + ref.ID + ")"
	}
	return s
}

func (r *reporter) opString(t *history.Txn, o *history.Op) string {
	switch o.Kind {
	case history.Read:
		s := "r " + r.key(o.Key) + " "
		if o.IsList {
			if o.ListUnknown {
				return s + "nil"
			}
			l := t.ListOf(o)
			parts := make([]string, len(l))
			for i, v := range l {
				parts[i] = r.val(v)
			}
			return s + "[" + strings.Join(parts, " ") + "]"
		}
		return s + r.val(o.Value)
	case history.PredRead:
		if p := t.PredOf(o); p != nil {
			return "rp " + p.Table + " where " + p.Where
		}
		return "rp"
	}
	return o.Kind.String() + " " + r.key(o.Key) + " " + r.val(o.Value)
}

func (r *reporter) txnString(t *txn) string {
	var b strings.Builder
	b.WriteString(r.name(t))
	b.WriteString(" [")
	ops := r.ref(t).Ops
	for i := range ops {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.opString(r.ref(t), &ops[i]))
	}
	b.WriteString("]")
	if t.status != history.Committed {
		b.WriteString(" " + t.status.String())
	}
	return b.String()
}

func iv(b, a int64) string {
	if a == inf {
		return "[" + strconv.FormatInt(b, 10) + ", ?]"
	}
	return "[" + strconv.FormatInt(b, 10) + ", " + strconv.FormatInt(a, 10) + "]"
}

// opAt renders op i of t with its interval.
// An op the record does not hold (a spilled record that could not be
// read back) is named by position.
func (r *reporter) opAt(t *txn, i int32) string {
	ref := r.ref(t)
	if i < 0 || int(i) >= len(ref.Ops) {
		return r.name(t) + "'s op " + strconv.Itoa(int(i))
	}
	b, a := opBounds(ref, int(i))
	return r.name(t) + "'s " + r.opString(ref, &ref.Ops[i]) + " during " + iv(b, a)
}

func (r *reporter) endAt(t *txn) string {
	what := "commit"
	switch t.status {
	case history.Aborted:
		what = "abort"
	case history.Unknown:
		what = "unknown outcome"
	}
	return r.name(t) + "'s " + what + " during " + iv(t.relB, t.relA)
}

func (r *reporter) ops(ts ...*txn) map[int32]string {
	m := map[int32]string{}
	for _, t := range ts {
		m[t.idx] = r.txnString(t)
	}
	return m
}

func idx(ts ...*txn) []int32 {
	out := make([]int32, 0, len(ts))
	seen := map[int32]bool{}
	for _, t := range ts {
		if !seen[t.idx] {
			seen[t.idx] = true
			out = append(out, t.idx)
		}
	}
	return out
}

// internal: a read did not return the transaction's own last write.
func (r *reporter) internal(e *engine, t *txn, i, k, got int32, w *writeEnt) {
	typ := readType(e)
	if r.plain {
		typ = model.Internal
	}
	if r.full(typ) {
		return
	}
	expl := r.opAt(t, i) + " returned " + r.key(k) + " = " + r.val(got) + ", but " + r.name(t) + " itself wrote " + r.key(k) + " = " +
		r.val(w.val) + " earlier (" + r.opAt(t, w.op) + " was its first write of the key); every consistent-read " +
		"implementation shows a transaction its own latest write, so no order of the operations explains the read"
	r.add(check.Anomaly{Type: typ, Txns: idx(t), Key: r.key(k), Explanation: expl, Ops: r.ops(t)})
}

// repeat: two snapshot reads of one key in one transaction returned
// different versions (engine.repeatRead).
func (r *reporter) repeat(e *engine, t *txn, i0, i1, k, v0, v1 int32) {
	typ := readType(e)
	if r.full(typ) {
		return
	}
	expl := r.opAt(t, i0) + " and later " + r.opAt(t, i1) + " read " + r.key(k) + " under " + r.name(t) +
		"'s transaction snapshot, and " + r.name(t) + " did not write " + r.key(k) + " before either read; "
	if o0, o1 := &r.ref(t).Ops[i0], &r.ref(t).Ops[i1]; o0.Kind == history.Read && o1.Kind == history.Read && o0.IsList && o1.IsList {
		expl += "they returned different lists, so different versions"
	} else {
		expl += "they returned different values (" + r.val(v0) + ", " + r.val(v1) + "), so different versions"
	}
	expl += ". The engine takes one snapshot per transaction and never moves its read view, and a snapshot shows exactly " +
		"one version of each key, so no placement of the snapshot point explains both reads."
	r.add(check.Anomaly{Type: typ, Txns: idx(t), Key: r.key(k), Explanation: expl, Ops: r.ops(t)})
}

// cr: no candidate version of the read's snapshot has the value read.
func (r *reporter) cr(e *engine, ks *keyState, t *txn, i, key, val int32, sb, sa int64, initPossible bool) {
	typ := readType(e)
	if r.full(typ) {
		return
	}
	var b strings.Builder
	b.WriteString(r.opAt(t, i))
	if ref := r.ref(t); int(i) < len(ref.Ops) && ref.Ops[i].Kind == history.PredRead && ref.PredOf(&ref.Ops[i]) != nil && val == history.NoValue && !predReturned(ref.PredOf(&ref.Ops[i]), key) {
		b.WriteString(" did not return the row of " + r.key(key) + ", which its predicate's region covers (record identified from the predicate), so it read no row of " + r.key(key) + ". ")
	} else {
		b.WriteString(" returned " + r.key(key) + " = " + r.val(val) + ". ")
	}
	if !e.m.cr {
		b.WriteString("Without consistent read the read is a locking read: it returns the latest committed version at a point during the read, " + iv(sb, sa) + ". ")
	} else if e.m.curRead {
		b.WriteString("As a consistent read (read view created at the first consistent read) or a locking read (latest committed version), it read a snapshot taken between " + r.name(t) + "'s begin and the end of the read, " + iv(sb, sa) + ". ")
	} else if e.m.stmt {
		b.WriteString("Its snapshot (statement-level) was taken during the read, " + iv(sb, sa) + ". ")
	} else {
		b.WriteString("Its transaction snapshot was taken between " + r.name(t) + "'s begin and the end of its first read, " + iv(sb, sa) + ". ")
	}
	involved := []*txn{t}
	var cands []string
	if initPossible {
		cands = append(cands, "the initial version")
	}
	var why []string
	for iv := range ks.writers {
		v := &ks.writers[iv]
		if v.t == t {
			continue
		}
		possible := v.hasVersion && e.possible(ks, v, t, sb, sa)
		if possible {
			if len(cands) < 6 {
				cands = append(cands, r.val(v.val)+" by "+r.name(v.t)+" ("+r.endAt(v.t)+")")
			}
			continue
		}
		if v.val != val {
			continue
		}
		involved = append(involved, v.t)
		switch {
		case v.status == history.Aborted:
			why = append(why, r.name(v.t)+" wrote "+r.val(val)+" but aborted ("+r.endAt(v.t)+"): its version was never committed")
		case v.relB > sa:
			why = append(why, r.name(v.t)+" wrote "+r.val(val)+" but "+r.endAt(v.t)+" began after the snapshot's latest point "+
				strconv.FormatInt(sa, 10)+": a future version")
		default:
			for iu := range ks.writers {
				u := &ks.writers[iu]
				if u.t != v.t && u.sureCommit && u.relA < sb && u.t != t && e.certainBefore(v, u) {
					involved = append(involved, u.t)
					why = append(why, r.name(v.t)+"'s version "+r.val(val)+" ("+r.endAt(v.t)+") was overwritten by "+r.name(u.t)+
						"'s "+r.val(u.val)+" ("+r.endAt(u.t)+", finished before the snapshot's earliest point "+strconv.FormatInt(sb, 10)+
						"), and "+r.orderWhy(e, v, u)+": a garbage version")
					break
				}
			}
		}
		if len(why) >= 6 {
			break
		}
	}
	if val == history.NoValue && !initPossible && !e.m.initUnknown {
		for iu := range ks.writers {
			u := &ks.writers[iu]
			if u.sureCommit && u.relA < sb && u.t != t {
				involved = append(involved, u.t)
				why = append(why, "the initial version was overwritten by "+r.name(u.t)+"'s "+r.val(u.val)+" ("+r.endAt(u.t)+
					", finished before the snapshot's earliest point "+strconv.FormatInt(sb, 10)+")")
				break
			}
		}
		if len(why) == 0 && ks.dropped {
			why = append(why, "the initial version was overwritten by versions committed long before the snapshot (collected)")
		}
	}
	if len(why) == 0 {
		if e.m.initUnknown && ks.hasInit {
			b.WriteString("No transaction in the retained window wrote " + r.val(val) + ", and the key's initial value was observed as " + r.val(ks.init) + ". ")
		} else {
			b.WriteString("No committed transaction wrote " + r.key(key) + " = " + r.val(val) + ". ")
		}
	} else {
		b.WriteString("Every version with that value is impossible: " + strings.Join(why, "; ") + ". ")
	}
	if len(cands) == 0 {
		b.WriteString("No version of " + r.key(key) + " could be visible to the read.")
	} else {
		b.WriteString("The read could only have returned one of: " + strings.Join(cands, "; ") + ".")
	}
	r.add(check.Anomaly{Type: typ, Txns: idx(involved...), Key: r.key(key), Explanation: b.String(), Ops: r.ops(involved...)})
}

// prefix: element x of a list read (not its last) cannot be in the
// snapshot.
func (r *reporter) prefix(e *engine, ks *keyState, t *txn, i, key, x int32, sa int64, g *goneVal) {
	typ := readType(e)
	if r.full(typ) {
		return
	}
	involved := []*txn{t}
	var why []string
	for iv := range ks.writers {
		v := &ks.writers[iv]
		if v.t == t || !v.wrote(x) {
			continue
		}
		involved = append(involved, v.t)
		if v.status == history.Aborted {
			why = append(why, r.name(v.t)+" appended it but aborted ("+r.endAt(v.t)+")")
		} else {
			why = append(why, r.name(v.t)+" appended it but "+r.endAt(v.t)+" began after the snapshot's latest point "+strconv.FormatInt(sa, 10))
		}
	}
	if g != nil {
		name := "T" + strconv.Itoa(int(g.idx))
		if r.h != nil && int(g.idx) < len(r.h.Txns) {
			name = r.h.TxnName(g.idx)
			involved = append(involved, &txn{ref: &r.h.Txns[g.idx], idx: g.idx, status: history.Aborted, relB: g.relB, relA: g.relA})
		} else if g.id != "" && g.id != strconv.Itoa(int(g.idx)) {
			name += " (" + g.id + ")"
		}
		why = append(why, name+" appended it but aborted (abort during "+iv(g.relB, g.relA)+")")
	}
	expl := r.opAt(t, i) + " returned a list containing " + r.val(x) + " before its last element. A list read returns the version " +
		"its last element's writer installed, whose every earlier element was appended by a version committed before it, hence before the snapshot. "
	if len(why) == 0 {
		expl += "No transaction whose commit may precede the snapshot's latest point " + strconv.FormatInt(sa, 10) + " appended " + r.val(x) + " to " + r.key(key) + "."
	} else {
		expl += "That is impossible for " + r.val(x) + ": " + strings.Join(why, "; ") + "."
	}
	r.add(check.Anomaly{Type: typ, Txns: idx(involved...), Key: r.key(key), Explanation: expl, Ops: r.ops(involved...)})
}

// readType is the mechanism a bad read violates: consistent read, or, for
// engines without it (reads take shared locks), mutual exclusion.
func readType(e *engine) string {
	if e.m.cr {
		return model.CR
	}
	return model.ME
}

// orderWhy explains why v's commit certainly precedes u's.
func (r *reporter) orderWhy(e *engine, v, u *writer) string {
	switch {
	case u.relB > v.relA:
		return r.name(u.t) + "'s commit began after " + r.name(v.t) + "'s finished"
	case e.m.me && u.relB >= v.acqA:
		return "under mutual exclusion " + r.name(u.t) + " cannot have released its lock before " + r.name(v.t) +
			"'s write (which finished at " + strconv.FormatInt(v.acqA, 10) + ") acquired it, so " + r.name(v.t) + " wrote first"
	default:
		return "under first-updater-wins " + r.name(u.t) + " cannot have committed before " + r.name(v.t) +
			"'s snapshot (taken by " + strconv.FormatInt(v.snapA, 10) + "), so " + r.name(v.t) + " committed first"
	}
}

func (r *reporter) pairSeen(a, b *txn) bool {
	// By index: a cold key's writer is a stand-in for its transaction
	// (keys.go), so one transaction may have several *txn.
	k := [2]int32{a.idx, b.idx}
	if r.pairs[k] {
		return true
	}
	if len(r.pairs) < 1<<16 {
		r.pairs[k] = true
	}
	return false
}

// me: two transactions held the write lock of one key at once.
func (r *reporter) me(e *engine, k int32, x, w *writer) {
	if r.pairSeen(x.t, w.t) || r.full(model.ME) {
		return
	}
	expl := "Both " + r.name(x.t) + " and " + r.name(w.t) + " wrote " + r.key(k) + ", so each held its write lock from its write to its commit or abort. " +
		r.name(x.t) + " first wrote it in " + r.opAt(x.t, x.op) + " and released it in " + r.endAt(x.t) + "; " +
		r.name(w.t) + " first wrote it in " + r.opAt(w.t, w.op) + " and released it in " + r.endAt(w.t) + ". " +
		r.name(x.t) + " first is impossible: its release began at " + strconv.FormatInt(x.relB, 10) + ", after " + r.name(w.t) +
		"'s write finished at " + strconv.FormatInt(w.acqA, 10) + "; " + r.name(w.t) + " first is impossible: its release began at " +
		strconv.FormatInt(w.relB, 10) + ", after " + r.name(x.t) + "'s write finished at " + strconv.FormatInt(x.acqA, 10) +
		". So both held the exclusive lock at the same time."
	r.add(check.Anomaly{Type: model.ME, Txns: idx(x.t, w.t), Key: r.key(k), Explanation: expl, Ops: r.ops(x.t, w.t)})
}

// fuw: two certainly concurrent transactions both committed writes of a key.
func (r *reporter) fuw(e *engine, k int32, x, w *writer) {
	if r.pairSeen(w.t, x.t) || r.full(model.FUW) {
		return
	}
	expl := "Both " + r.name(x.t) + " and " + r.name(w.t) + " committed a write of " + r.key(k) + " (" + r.opAt(x.t, x.op) + "; " +
		r.opAt(w.t, w.op) + "). " + r.name(x.t) + "'s snapshot was taken by " + strconv.FormatInt(x.snapA, 10) + ", " +
		r.endAt(x.t) + "; " + r.name(w.t) + "'s snapshot was taken by " + strconv.FormatInt(w.snapA, 10) + ", " + r.endAt(w.t) +
		". Neither committed before the other's snapshot (each commit began after the other's snapshot was taken), " +
		"so they were concurrent, and first-updater-wins lets at most one of them commit."
	r.add(check.Anomaly{Type: model.FUW, Txns: idx(x.t, w.t), Key: r.key(k), Explanation: expl, Ops: r.ops(x.t, w.t)})
}

func (r *reporter) edgeWhy(from, to *txn, ed edge) string {
	switch ed.rel {
	case graph.WW:
		return r.name(from) + " -ww-> " + r.name(to) + ": both wrote " + r.key(ed.key) + " and " + r.name(from) + "'s version certainly precedes"
	case graph.WR:
		return r.name(from) + " -wr-> " + r.name(to) + ": " + r.opAt(to, ed.op) + " read the version " + r.name(from) + " wrote"
	default:
		return r.name(from) + " -rw-> " + r.name(to) + ": " + r.opAt(from, ed.op) + " read a version of " + r.key(ed.key) +
			" that " + r.name(to) + "'s write certainly overwrote"
	}
}

// ssi: committed dangerous structure T1 -rw-> p -rw-> T3.
func (r *reporter) ssi(e *engine, t1, p, t3 *txn, in, out edge) {
	if r.full(model.SC) {
		return
	}
	expl := "Serializable snapshot isolation certifier: " + r.edgeWhy(t1, p, edge{to: p, rel: graph.RW, key: in.key, op: in.op}) + "; " +
		r.edgeWhy(p, t3, out) + ". Each pair was certainly concurrent (each snapshot ended before the other's commit began: " +
		r.endAt(t1) + ", " + r.endAt(p) + ", " + r.endAt(t3) + "), and " + r.name(t3) + " certainly committed first. " +
		"The certifier must abort one of the three, yet all committed."
	steps := []check.Step{
		{From: t1.idx, To: p.idx, Rel: "rw", Key: r.key(in.key), Why: r.edgeWhy(t1, p, edge{to: p, rel: graph.RW, key: in.key, op: in.op})},
		{From: p.idx, To: t3.idx, Rel: "rw", Key: r.key(out.key), Why: r.edgeWhy(p, t3, out)},
	}
	r.add(check.Anomaly{Type: model.SC, Txns: idx(t1, p, t3), Cycle: steps, Explanation: expl, Ops: r.ops(t1, p, t3)})
}

// to: timestamp-ordering certifier, a committed t1 -rw-> t2 against commit
// order.
func (r *reporter) to(e *engine, t1, t2 *txn, ed edge) {
	if r.pairSeen(t1, t2) || r.full(model.SC) {
		return
	}
	expl := "Timestamp-ordering certifier (the commit order is the serialization order): " + r.edgeWhy(t1, t2, ed) + ", so " +
		r.name(t1) + " must be serialized before " + r.name(t2) + "; but " + r.name(t2) + " certainly committed first (" +
		r.endAt(t2) + "; " + r.endAt(t1) + "). So in every placement " + r.name(t2) + "'s write committed after " + r.name(t1) + "'s snapshot (" + r.name(t1) +
		" did not see it) and before " + r.name(t1) + "'s commit, a read-write conflict the certifier must abort " + r.name(t1) + " for, yet both committed."
	steps := []check.Step{{From: t1.idx, To: t2.idx, Rel: "rw", Key: r.key(ed.key), Why: r.edgeWhy(t1, t2, ed)}}
	r.add(check.Anomaly{Type: model.SC, Txns: idx(t1, t2), Cycle: steps, Explanation: expl, Ops: r.ops(t1, t2)})
}

// cycle: a cycle of certain dependencies among committed transactions.
func (r *reporter) cycle(e *engine, t *txn, path []edge) {
	nrw, nwr := 0, 0
	for _, ed := range path {
		switch ed.rel {
		case graph.RW:
			nrw++
		case graph.WR:
			nwr++
		}
	}
	typ := model.SC
	if r.plain {
		switch {
		case nrw == 0 && nwr == 0:
			typ = model.G0
		case nrw == 0:
			typ = model.G1c
		case nrw == 1:
			typ = model.GSingleItem
		default:
			typ = model.G2Item
		}
	}
	if r.full(typ) {
		return
	}
	var steps []check.Step
	var whys []string
	ts := []*txn{t}
	from := t
	for _, ed := range path {
		w := r.edgeWhy(from, ed.to, ed)
		steps = append(steps, check.Step{From: from.idx, To: ed.to.idx, Rel: ed.rel.String(), Key: r.key(ed.key), Why: w})
		whys = append(whys, w)
		if ed.to != t {
			ts = append(ts, ed.to)
		}
		from = ed.to
	}
	expl := "Dependency cycle among committed transactions, every edge certain from the intervals: " + strings.Join(whys, "; ") +
		". The cycle returns to " + r.name(t) + ", so no serial order exists; a serialization certifier must have aborted one of them."
	r.add(check.Anomaly{Type: typ, Txns: idx(ts...), Cycle: steps, Explanation: expl, Ops: r.ops(ts...)})
}

// predReturned reports whether a predicate read returned a row of key.
func predReturned(p *history.Predicate, key int32) bool {
	for _, row := range p.Result {
		if row.Key == key {
			return true
		}
	}
	return false
}

// absentOwn: a predicate read on a declared table did not return a row
// whose version the transaction itself wrote earlier, although that
// version satisfies the WHERE clause (region.go).
func (r *reporter) absentOwn(e *engine, t *txn, i, k int32, w *writeEnt) {
	typ := readType(e)
	if r.plain {
		typ = model.Internal
	}
	if r.full(typ) {
		return
	}
	expl := r.opAt(t, i) + " did not return the row " + r.key(k) + ", but " + r.name(t) + " itself wrote it earlier (" +
		r.opAt(t, w.op) + "), and its version " + r.val(w.val) + " satisfies the WHERE clause (" + r.absentCols(e, t, i, k, w.val) +
		"); every consistent-read implementation shows a transaction its own latest write"
	r.add(check.Anomaly{Type: typ, Txns: idx(t), Key: r.key(k), Explanation: expl, Ops: r.ops(t)})
}

// absentCols renders the columns of version v of k that op i's clause
// uses.
func (r *reporter) absentCols(e *engine, t *txn, i, k, v int32) string {
	pr := t.ref.PredOf(&t.ref.Ops[i])
	if pr == nil {
		return ""
	}
	return e.regionIdx().schema.Compile(pr.Table, pr.Where).Describe(k, v)
}

// crAbsent: a predicate read on a declared table did not return a row of
// its region, but every version of the row that may be visible at its
// snapshot satisfies the WHERE clause: it missed a row it had to return
// (a phantom read; region.go).
func (r *reporter) crAbsent(e *engine, ks *keyState, t *txn, i, key int32, sb, sa int64, initPossible bool) {
	typ := readType(e)
	if r.full(typ) {
		return
	}
	var b strings.Builder
	b.WriteString(r.opAt(t, i) + " did not return the row " + r.key(key) + " of its table, so it read a version of it that does not satisfy " +
		"the WHERE clause (not inserted yet, deleted, or with other column values). ")
	if e.m.stmt {
		b.WriteString("Its snapshot (statement-level) was taken during the read, " + iv(sb, sa) + ". ")
	} else {
		b.WriteString("Its snapshot was taken " + iv(sb, sa) + ". ")
	}
	involved := []*txn{t}
	var cands []string
	for iv := range ks.writers {
		v := &ks.writers[iv]
		if v.t == t || !v.hasVersion || !e.possible(ks, v, t, sb, sa) {
			continue
		}
		involved = append(involved, v.t)
		if len(cands) < 6 {
			cands = append(cands, r.val(v.val)+" by "+r.name(v.t)+" ("+r.endAt(v.t)+"; "+r.absentCols(e, t, i, key, v.val)+")")
		}
	}
	if initPossible {
		cands = append(cands, "the initial version (it would not satisfy it)")
	}
	if len(cands) == 0 {
		b.WriteString("No version of " + r.key(key) + " could be visible to the read.")
	} else {
		b.WriteString("Every version of it that could be visible satisfies the clause: " + strings.Join(cands, "; ") + ".")
	}
	r.add(check.Anomaly{Type: typ, Txns: idx(involved...), Key: r.key(key), Explanation: b.String(), Ops: r.ops(involved...)})
}
