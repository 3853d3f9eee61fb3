package record

import (
	"fmt"
	"maps"
	"slices"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/db"
)

// Version sets of MariaDB/MySQL REPEATABLE READ predicate reads
// (record/db/mysnap.go captures what they need).
//
// InnoDB evaluates a statement in one of two ways (MySQL 8.4 Reference Manual
// 17.7.2.3 "Consistent Nonlocking Reads" and 17.7.2.4 "Locking Reads";
// MariaDB KB "REPEATABLE READ"):
//
//   - A plain SELECT is a consistent read of the transaction's read view,
//     created by its first consistent read. For each row InnoDB walks the
//     versions back from the newest and returns the first one whose writer
//     the read view sees (or the transaction's own). The snapshot markers
//     say exactly which writers the view sees, so the version set is: for
//     each row, the transaction's own last earlier write if any, else the
//     last version in the key's version order whose writer is visible
//     (none: the unborn row).
//
//   - A locking read (SELECT ... FOR UPDATE, and UPDATE/DELETE ... WHERE)
//     is a current read: it reads the newest committed version of every
//     row it scans, waiting for the lock of an uncommitted writer, and at
//     REPEATABLE READ (and SERIALIZABLE) it keeps next-key locks on every
//     index record it scanned and the gaps before them, plus the gap after
//     the last, until it commits, so no other transaction can change,
//     delete or insert a row in the scanned range before it commits
//     (MySQL 8.4 manual 17.7.1 "InnoDB Locking", Next-Key Locks;
//     17.7.4 "Phantom Rows"). For
//     the rows of the range its version is therefore the newest version
//     whose writer committed before the reader did: the last version in
//     the key's version order whose writer's commit position (GTID
//     sequence number) is below the reader's, or the reader's own earlier
//     write. Rows outside the range were not evaluated; the set lists them
//     at the same rule (the committed state just before the reader's
//     commit). For the predicate workload's key ranges no version of such
//     a row matches, so their versions give no edge either way. A reader
//     needs its own commit position, which every transaction has under
//     marker capture (each writes its marker); at READ COMMITTED there
//     are no gap locks and no version set is derived.
//
// A read's set lists the rows of its key region only (the integer keys its
// WHERE clause can match; every row of a declared table or when the clause
// bounds no key range), like PostgreSQL's (certificate.go, keyRegions):
// no version of a row outside it matches, so the version evaluated there
// decides no dependency, and emme visits only the region's keys.
//
// A read gets no version set (counted as skipped) when a version's writer
// of a key in its region has no marker or commit position, or a key has no
// version order.

// markState is what the recorder keeps for marker version sets.
type markState struct {
	mark  map[int32][2]int64 // transaction -> (session, seq) of its marker
	pos   map[int32]int64    // committed transaction -> commit position
	reads []markRead
}

// markRead is a predicate read (op of txn) and how it read.
type markRead struct {
	txn, op int32
	marks   string // the read view's markers (plain reads)
	locking bool
}

// keepMarks remembers t's marker, commit position and predicate reads.
func (r *recorder) keepMarks(t int32, raw *rawTxn) {
	if raw.ev.MarkSession == 0 || r.cfg.WL.NoCertificate {
		return
	}
	m := r.marks
	if m == nil {
		m = &markState{mark: map[int32][2]int64{}, pos: map[int32]int64{}}
		r.marks = m
	}
	m.mark[t] = [2]int64{raw.ev.MarkSession, raw.ev.MarkSeq}
	if raw.status != history.Committed {
		return
	}
	if raw.ev.CommitTS.Set {
		m.pos[t] = raw.ev.CommitTS.P
	}
	for i := range raw.ops {
		o := &raw.ops[i]
		if o.Kind != history.PredRead || o.Pred == nil || !o.Done {
			continue
		}
		m.reads = append(m.reads, markRead{txn: t, op: int32(i), marks: raw.ev.Marks, locking: o.Pred.Locking})
	}
}

// versionSetsFromMarks fills the version set of every predicate read kept
// by keepMarks (see above) and returns how many it filled and how many it
// could not derive exactly.
func (r *recorder) versionSetsFromMarks(h *history.History) (filled, skipped int, err error) {
	m := r.marks
	if m == nil || len(m.reads) == 0 {
		return 0, 0, nil
	}
	writer := map[uint64]int32{}
	finalKeys := map[int32]bool{}
	for i := range h.Txns {
		t := &h.Txns[i]
		for _, o := range t.Ops {
			if o.Kind.IsWrite() && o.Value != history.NoValue {
				writer[packKV(o.Key, o.Value)] = t.Index
				if t.Status == history.Committed {
					finalKeys[o.Key] = true
				}
			}
		}
	}
	complete := true
	for k := range finalKeys {
		if _, ok := h.VersionOrder[k]; !ok {
			complete = false
		}
	}
	keys := slices.Sorted(maps.Keys(h.VersionOrder))
	// writers[k][i] is the writer of version i of k, -1 if unknown
	writers := make(map[int32][]int32, len(keys))
	for _, k := range keys {
		ord := h.VersionOrder[k]
		ws := make([]int32, len(ord))
		for i, v := range ord {
			w, ok := writer[packKV(k, v)]
			if !ok {
				w = -1
			}
			ws[i] = w
		}
		writers[k] = ws
	}
	posOf := func(w int32) (int64, bool) {
		if p, ok := m.pos[w]; ok {
			return p, true
		}
		if t := &h.Txns[w]; t.Status == history.Committed && t.CommitTS.Set {
			return t.CommitTS.P, true
		}
		return 0, false
	}
	parsed := map[string]map[int64]int64{}
	tableOf := map[int32]int{}
	rg := newKeyRegions(h, keys)
	for _, mr := range m.reads {
		t := &h.Txns[mr.txn]
		if t.Status != history.Committed || int(mr.op) >= len(t.Ops) || t.Ops[mr.op].Kind != history.PredRead || t.PredOf(&t.Ops[mr.op]) == nil {
			continue
		}
		p := t.PredOf(&t.Ops[mr.op])
		if !complete {
			skipped++
			continue
		}
		// visible(i) of key k's version i, and whether it is known
		var visible func(w int32) (bool, bool)
		if mr.locking {
			rp, ok := m.pos[mr.txn]
			if !ok {
				skipped++
				continue
			}
			visible = func(w int32) (bool, bool) {
				if w == mr.txn {
					return false, true // its own later writes (earlier ones are "own")
				}
				wp, ok := posOf(w)
				return ok && wp < rp, ok
			}
		} else {
			view := parsed[mr.marks]
			if view == nil {
				v, err := db.ParseMarks(mr.marks)
				if err != nil {
					return filled, skipped, err
				}
				view, parsed[mr.marks] = v, v
			}
			visible = func(w int32) (bool, bool) {
				mk, ok := m.mark[w]
				if !ok {
					return false, false
				}
				return view[mk[0]] >= mk[1], true
			}
		}
		var own map[int32]int32
		for _, o := range t.Ops[:mr.op] {
			if o.Kind.IsWrite() && o.Value != history.NoValue {
				if own == nil {
					own = map[int32]int32{}
				}
				own[o.Key] = o.Value
			}
		}
		// A declared table's rows, an undeclared one's rows of the read's
		// key region (certificate.go, keyRegions), as on PostgreSQL.
		ti := h.TableByName(p.Table)
		member := tableMember(h, tableOf, ti)
		reg := rg.region(h, p.Table, p.Where)
		in := member
		if reg != nil {
			in = func(k int32) bool { return member(k) && reg.has(h, k) }
		}
		vs := make([]history.Row, 0, rg.size(reg)+len(own))
		ok := true
	key:
		for _, k := range rg.keys(reg) {
			if !member(k) {
				continue
			}
			if v, mine := own[k]; mine {
				vs = append(vs, history.Row{Key: k, Value: v})
				continue
			}
			ws, ord := writers[k], h.VersionOrder[k]
			// the newest version whose writer is visible (InnoDB walks
			// back from the newest); every version scanned must be decided
			for i := len(ord) - 1; i >= 0; i-- {
				if ws[i] < 0 {
					ok = false
					break key
				}
				vis, known := visible(ws[i])
				if !known {
					ok = false
					break key
				}
				if vis {
					vs = append(vs, history.Row{Key: k, Value: ord[i]})
					break
				}
			}
		}
		if !ok {
			skipped++
			continue
		}
		if reg != nil {
			// keys(reg) lists the region's keys by integer value
			slices.SortFunc(vs, func(a, b history.Row) int { return int(a.Key) - int(b.Key) })
		}
		for _, k := range slices.Sorted(maps.Keys(own)) {
			if _, ordered := h.VersionOrder[k]; !ordered && in(k) {
				vs = append(vs, history.Row{Key: k, Value: own[k]})
			}
		}
		p.VersionSet, p.HasVersionSet = vs, true
		filled++
	}
	if filled > 0 {
		h.Evidence.VersionSets = true
	}
	return filled, skipped, nil
}

// writeMarkVersionSets writes the version_set records of the reads
// versionSetsFromMarks filled.
func (r *recorder) writeMarkVersionSets(h *history.History) error {
	if r.marks == nil || r.w == nil {
		return nil
	}
	for _, mr := range r.marks.reads {
		t := &h.Txns[mr.txn]
		if int(mr.op) >= len(t.Ops) {
			continue
		}
		if p := t.PredOf(&t.Ops[mr.op]); p != nil && p.HasVersionSet {
			if err := r.w.WriteVersionSet(h, t, int(mr.op), p.VersionSet); err != nil {
				return fmt.Errorf("version set of %s: %w", h.TxnName(t.Index), err)
			}
		}
	}
	return nil
}

// deletesDecidable reports whether predicate deletes keep emme's verdicts
// definite on d (Config.DefaultDeletes): every predicate read then has a
// version set. PostgreSQL at repeatable read and serializable derives them
// from snapshots (certificate.go); MariaDB at repeatable read from
// snapshot markers and, for locking reads, GTID commit positions (which
// need the binary log; a run without recording issues the same workload).
// Elsewhere (read committed, MariaDB serializable, SQLite) some or all
// reads have none, and emme answers unknown once a row was deleted and
// re-inserted (enne decides MariaDB serializable and SQLite without
// version sets, but only under serializable).
func deletesDecidable(d db.DB, noRecord bool) bool {
	switch d.Name() {
	case "postgres":
		return d.Level() == db.RepeatableRead || d.Level() == db.Serializable
	case "mariadb":
		if d.Level() != db.RepeatableRead {
			return false
		}
		g, ok := d.(interface{ HasCommitOrder() bool })
		return noRecord || (ok && g.HasCommitOrder())
	}
	return false
}
