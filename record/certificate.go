package record

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/workload"
	"github.com/txray/txray/sqlpred"
)

// Certificates (issue 14; the seed paper's version certificate and expected
// serialization order) from what the recorder already captures.
//
// Version order from commit order: PostgreSQL (every level), InnoDB
// (MariaDB/MySQL, every level) and SQLite hold a row's write lock until the
// writing transaction commits (PostgreSQL: tuple lock and xmax wait; InnoDB:
// exclusive record locks; SQLite: the database write lock), so two
// committed writers of one key commit in the order they installed their
// versions. With an exact commit order on every committed writer
// (Evidence.CommitOrder: the PostgreSQL commit LSN from logical decoding,
// the MariaDB binlog GTID), the version order of every key is therefore its
// committed final writes sorted by commit position.
//
// Expected serialization order: MariaDB/MySQL serializable is strict
// two-phase locking (InnoDB turns plain SELECTs into locking reads,
// MariaDB KB "SET TRANSACTION"), a commitment-ordering protocol: commit
// order is a serialization order, so Evidence.SerialOrder = "commit".
// SQLite (every level runs as serializable) has one writer at a time, and
// a transaction whose read snapshot is older than the last commit cannot
// become a writer (SQLITE_BUSY_SNAPSHOT), so commit order of writers is a
// serialization order too (its commit positions: a counter each writer
// takes under the write lock, record/db/sqlite.go). Read-only transactions
// have no position; checkers place them where their reads allow.
// PostgreSQL serializable (SSI) is not: a transaction may precede, in every
// serial order, one that committed before it.

// serialOrderFor returns the expected serialization order a database and
// level promise, given an exact commit order ("" when none).
func serialOrderFor(db, level string, commitOrder bool) string {
	if !commitOrder {
		return ""
	}
	switch db {
	case "mariadb", "mysql":
		if level == "serializable" {
			return history.SerialCommit
		}
	case "sqlite":
		// every level runs as serializable: one writer at a time, readers
		// on snapshots; a writer whose snapshot is stale fails
		// (SQLITE_BUSY_SNAPSHOT), so writers serialize in commit order
		return history.SerialCommit
	}
	return ""
}

// versionOrderFromCommits builds h.VersionOrder from the commit positions
// of committed writers (see above). It returns false, leaving h unchanged,
// when some committed writer has no commit position (the order would be
// incomplete).
func versionOrderFromCommits(h *history.History) bool {
	type ver struct {
		ts  history.Timestamp
		val int32
	}
	per := map[int32][]ver{}
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Status != history.Committed {
			continue
		}
		for j := len(t.Ops) - 1; j >= 0; j-- {
			o := &t.Ops[j]
			if !o.Kind.IsWrite() || o.Value == history.NoValue {
				continue
			}
			if !t.CommitTS.Set {
				return false
			}
			vs := per[o.Key]
			if n := len(vs); n > 0 && vs[n-1].ts == t.CommitTS {
				continue // an earlier write of the key by the same txn
			}
			per[o.Key] = append(vs, ver{t.CommitTS, o.Value})
		}
	}
	vo := make(map[int32][]int32, len(per))
	for k, vs := range per {
		slices.SortStableFunc(vs, func(a, b ver) int { return a.ts.Compare(b.ts) })
		ord := make([]int32, len(vs))
		for i, v := range vs {
			ord[i] = v.val
		}
		vo[k] = ord
	}
	h.VersionOrder = vo
	h.Evidence.VersionOrder = true
	return true
}

// certify writes the version order at the end of a run (version_order
// records after the transactions): from the chains of replaced versions
// when the workload reported them, else from the commit order.
func (r *recorder) certify() error {
	h := r.h
	if h == nil || h.VersionOrder != nil || r.cfg.WL.NoCertificate {
		return nil
	}
	start := time.Now()
	switch {
	case r.chains.n > 0:
		// the replaced versions are exact even without a commit log
		r.versionOrderFromChains(h)
	case !h.Evidence.CommitOrder:
		return nil
	case !versionOrderFromCommits(h):
		r.warn("some committed writers have no commit position: no version order derived")
		return nil
	}
	filled, skipped, err := r.versionSetsFromSnapshots(h)
	if err == nil {
		mf, ms, merr := r.versionSetsFromMarks(h)
		filled, skipped, err = filled+mf, skipped+ms, merr
	}
	if err != nil {
		r.warn(fmt.Sprintf("version sets: %v; none derived", err))
		filled = 0
		for _, ps := range r.snaps {
			if t := &h.Txns[ps.txn]; int(ps.op) < len(t.Ops) && t.PredOf(&t.Ops[ps.op]) != nil {
				p := t.PredOf(&t.Ops[ps.op])
				p.VersionSet, p.HasVersionSet = nil, false
			}
		}
		h.Evidence.VersionSets = false
	}
	if skipped > 0 {
		r.warn(fmt.Sprintf("version sets: %d predicate reads get none (a writer without an xid, snapshot marker or commit position, or a key without a version order); checkers infer them from the rows returned", skipped))
	}
	if r.shadow.mismatched > 0 {
		r.warn(fmt.Sprintf("version sets: %d of %d derived from snapshots differ from the shadow transaction's (first: %s)",
			r.shadow.mismatched, r.shadow.compared, r.shadow.example))
	}
	r.certStats = CertStats{VersionSets: filled, Skipped: skipped, ShadowCompared: r.shadow.compared,
		ShadowMismatched: r.shadow.mismatched, ShadowUsed: r.shadow.used, Example: r.shadow.example, Time: time.Since(start)}
	if r.w == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(h.VersionOrder)) {
		if err := r.w.WriteVersionOrder(h, k, h.VersionOrder[k]); err != nil {
			return err
		}
	}
	if filled == 0 {
		return nil
	}
	if err := r.writeMarkVersionSets(h); err != nil {
		return err
	}
	for _, ps := range r.snaps {
		t := &h.Txns[ps.txn]
		if int(ps.op) < len(t.Ops) && t.PredOf(&t.Ops[ps.op]) != nil && t.PredOf(&t.Ops[ps.op]).HasVersionSet {
			if err := r.w.WriteVersionSet(h, t, int(ps.op), t.PredOf(&t.Ops[ps.op]).VersionSet); err != nil {
				return err
			}
		}
	}
	return nil
}

// chains collects, per key, the version each installed write replaced
// (workload.Op.Prev, reported by the write statement under the row lock):
// succ[(key, prev)] lists the values written over prev by transactions
// that did not abort (committed ones first).
type chains struct {
	succ  map[uint64][]link
	final map[uint64]bool // (key, value) final writes of committed txns
	n     int
}

type link struct {
	val       int32
	committed bool
}

func packKV(k, v int32) uint64 { return uint64(uint32(k))<<32 | uint64(uint32(v)) }

// chainVersions records the replaced versions of a transaction's final
// writes (the first write of a key in the transaction replaced the version
// before it; later ones replaced its own).
func (r *recorder) chainVersions(st history.Status, raw []workload.Op, ops []history.Op) {
	if st == history.Aborted {
		return
	}
	c := &r.chains
	for i := range raw {
		o := &raw[i]
		if !o.Kind.IsWrite() || !o.HasValue {
			continue
		}
		k := ops[i].Key
		first, last := true, true
		for j := range raw {
			if j != i && raw[j].Kind.IsWrite() && ops[j].Key == k {
				if j < i {
					first = false
				} else {
					last = false
				}
			}
		}
		if !last {
			continue
		}
		// the replaced version is what the transaction's first write of k
		// replaced
		src := o
		if !first {
			for j := range raw {
				if raw[j].Kind.IsWrite() && ops[j].Key == k {
					src = &raw[j]
					break
				}
			}
		}
		if !src.PrevKnown || !o.Done {
			continue
		}
		prev := history.NoValue
		if !src.PrevNone {
			prev = r.h.Values.Int(src.Prev)
		}
		if c.succ == nil {
			c.succ, c.final = map[uint64][]link{}, map[uint64]bool{}
		}
		c.succ[packKV(k, prev)] = append(c.succ[packKV(k, prev)], link{ops[i].Value, st == history.Committed})
		if st == history.Committed {
			c.final[packKV(k, ops[i].Value)] = true
		}
		c.n++
	}
}

// versionOrderFromChains follows, per key, the chain of replaced versions
// from the unborn row. A key is left out (a warning names it) when two
// committed writes replaced the same version (a lost update the row lock
// should have prevented) or when some committed final write is not on the
// chain; the checker then says the certificate is incomplete for it.
func (r *recorder) versionOrderFromChains(h *history.History) bool {
	c := &r.chains
	if c.n == 0 {
		return false
	}
	keys := map[int32]bool{}
	for kv := range c.final {
		keys[int32(kv>>32)] = true
	}
	vo := map[int32][]int32{}
	var bad []string
	for k := range keys {
		var ord []int32
		cur := history.NoValue
		ok := true
		for len(ord) <= len(c.final) {
			next := c.succ[packKV(k, cur)]
			var pick []int32
			for _, l := range next {
				if l.committed {
					pick = append(pick, l.val)
				}
			}
			if len(pick) == 0 {
				// an unknown-outcome write is on the chain only if a later
				// committed write replaced it (it then committed)
				for _, l := range next {
					if len(c.succ[packKV(k, l.val)]) > 0 {
						pick = append(pick, l.val)
					}
				}
			}
			if len(pick) == 0 {
				break
			}
			if len(pick) > 1 {
				bad = append(bad, fmt.Sprintf("key %s: %s and %s both replaced version %s", h.KeyName(k), h.ValueName(pick[0]), h.ValueName(pick[1]), h.ValueName(cur)))
				ok = false
				break
			}
			cur = pick[0]
			ord = append(ord, cur)
		}
		if !ok {
			continue
		}
		on := map[int32]bool{}
		for _, v := range ord {
			on[v] = true
		}
		for kv := range c.final {
			if int32(kv>>32) == k && !on[int32(uint32(kv))] {
				bad = append(bad, fmt.Sprintf("key %s: committed version %s is not on the chain of replaced versions", h.KeyName(k), h.ValueName(int32(uint32(kv)))))
				ok = false
				break
			}
		}
		if ok {
			vo[k] = ord
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		if len(bad) > 5 {
			bad = append(bad[:5], fmt.Sprintf("... %d keys in all", len(bad)))
		}
		r.warn("version order: " + strings.Join(bad, "; "))
	}
	h.VersionOrder = vo
	h.Evidence.VersionOrder = true
	return true
}

// Version sets from snapshots (PostgreSQL). A predicate read evaluates its
// WHERE clause on the version of each row that its snapshot sees, and a
// PostgreSQL snapshot "xmin:xmax:xip,..." (pg_current_snapshot) decides
// visibility exactly (HeapTupleSatisfiesMVCC, XidInMVCCSnapshot): a
// committed transaction's writes are visible iff its xid < xmin, or xmin
// <= xid < xmax and xid is not in xip. The reading transaction's own
// writes before the read are visible; its later ones are not.
//
// Along a key's version order the visible versions form a prefix: the
// writer of version i+1 replaced version i under the row lock, which the
// writer of version i released only after leaving the proc array, so a
// snapshot that sees the writer of version i+1 finished also sees the
// writer of version i finished. The version a snapshot sees is therefore
// the last version whose writer is visible (found by binary search).
//
// The snapshot is the statement's: the predicate workload evaluates
// pg_current_snapshot() inside the range read itself (at read committed
// every statement has its own snapshot; at repeatable read and
// serializable it is the transaction's). A predicate update records none:
// at repeatable read and serializable it read under the transaction's
// snapshot (a row updated after it is a serialization failure), which
// the recorder has from BEGIN; at read committed its row locking
// re-evaluates concurrently updated rows on their newest version
// (EvalPlanQual), so no one snapshot is what it evaluated, and it gets no
// version set (emme infers one from the rows it matched).
//
// Exactness needs the xid of every version's writer and the whole version
// order of every key; a read for which either is missing gets no version
// set (a warning counts them) rather than a guessed one.

// predSnap is a predicate read (op of txn) and the snapshot it read under.
type predSnap struct {
	txn, op int32
	snap    string
	// shadow is the version set a shadow transaction read (without the
	// reader's own writes), if any (workload.Config.ShadowVersionSets).
	shadow    []history.Row
	hasShadow bool
}

// shadowStats counts how the shadow transactions' version sets compared
// with those derived from snapshots.
type shadowStats struct {
	compared, mismatched, used int
	example                    string
}

// pgSnapshot is a parsed PostgreSQL snapshot.
type pgSnapshot struct {
	xmin, xmax uint64
	xip        []uint64 // sorted
}

// parsePGSnapshot parses "xmin:xmax:xip1,xip2,...".
func parsePGSnapshot(s string) (pgSnapshot, error) {
	var p pgSnapshot
	f := strings.Split(s, ":")
	if len(f) != 3 {
		return p, fmt.Errorf("snapshot %q: want xmin:xmax:xip", s)
	}
	var err error
	if p.xmin, err = strconv.ParseUint(f[0], 10, 64); err != nil {
		return p, fmt.Errorf("snapshot %q: xmin: %v", s, err)
	}
	if p.xmax, err = strconv.ParseUint(f[1], 10, 64); err != nil {
		return p, fmt.Errorf("snapshot %q: xmax: %v", s, err)
	}
	if f[2] != "" {
		for _, x := range strings.Split(f[2], ",") {
			v, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				return p, fmt.Errorf("snapshot %q: xip: %v", s, err)
			}
			p.xip = append(p.xip, v)
		}
		slices.Sort(p.xip)
	}
	return p, nil
}

// visible reports whether the writes of committed transaction xid are
// visible in the snapshot.
func (p *pgSnapshot) visible(xid uint64) bool {
	if xid < p.xmin {
		return true
	}
	if xid >= p.xmax {
		return false
	}
	_, in := slices.BinarySearch(p.xip, xid)
	return !in
}

// versionSetsFromSnapshots fills the version set of every committed
// transaction's predicate read that has a snapshot (see above) and returns
// how many it filled and how many it could not derive exactly.
func (r *recorder) versionSetsFromSnapshots(h *history.History) (filled, skipped int, err error) {
	if len(r.snaps) == 0 {
		return 0, 0, nil
	}
	writer := map[uint64]int32{}
	finalKeys := map[int32]bool{}
	var dead map[uint64]bool // tombstones (deleted versions)
	for i := range h.Txns {
		t := &h.Txns[i]
		for _, o := range t.Ops {
			if o.Kind == history.Delete && o.Value != history.NoValue {
				if dead == nil {
					dead = map[uint64]bool{}
				}
				dead[packKV(o.Key, o.Value)] = true
			}
			if o.Kind.IsWrite() && o.Value != history.NoValue {
				writer[packKV(o.Key, o.Value)] = t.Index
				if t.Status == history.Committed {
					finalKeys[o.Key] = true
				}
			}
		}
	}
	type keyVers struct {
		vals    []int32
		writers []int32
		xids    []uint64
		exact   bool
	}
	keys := slices.Sorted(maps.Keys(h.VersionOrder))
	kv := make(map[int32]*keyVers, len(keys))
	complete := true
	for k := range finalKeys {
		if _, ok := h.VersionOrder[k]; !ok {
			complete = false // a key whose versions are unknown
		}
	}
	for _, k := range keys {
		ord := h.VersionOrder[k]
		e := &keyVers{vals: ord, writers: make([]int32, len(ord)), xids: make([]uint64, len(ord)), exact: true}
		for i, v := range ord {
			w, ok := writer[packKV(k, v)]
			if !ok {
				e.exact = false
				continue
			}
			e.writers[i], e.xids[i] = w, r.xids[w]
			if e.xids[i] == 0 {
				e.exact = false
			}
		}
		kv[k] = e
	}
	parsed := map[string]*pgSnapshot{}
	tableOf := map[int32]int{}
	rg := newKeyRegions(h, keys)
	for _, ps := range r.snaps {
		t := &h.Txns[ps.txn]
		if t.Status != history.Committed || int(ps.op) >= len(t.Ops) || t.Ops[ps.op].Kind != history.PredRead || t.PredOf(&t.Ops[ps.op]) == nil {
			continue
		}
		var own map[int32]int32 // nil (no allocation) for reads before any write
		for _, o := range t.Ops[:ps.op] {
			if o.Kind.IsWrite() && o.Value != history.NoValue {
				if own == nil {
					own = map[int32]int32{}
				}
				own[o.Key] = o.Value
			}
		}
		var shadow []history.Row
		if ps.hasShadow {
			shadow = withOwn(ps.shadow, own)
		}
		use := func(vs []history.Row) {
			p := t.PredOf(&t.Ops[ps.op])
			p.VersionSet, p.HasVersionSet = vs, true
			filled++
		}
		if !complete || ps.snap == "" {
			// A shadow transaction sees a deleted row as absent, which
			// with deletes is not the unborn version it would stand for.
			if shadow != nil && dead == nil {
				use(shadow)
				r.shadow.used++
			} else {
				skipped++
			}
			continue
		}
		snap := parsed[ps.snap]
		if snap == nil {
			s, err := parsePGSnapshot(ps.snap)
			if err != nil {
				return filled, skipped, err
			}
			snap = &s
			parsed[ps.snap] = snap
		}
		// A declared table's version set is its own rows (history/schema.go);
		// an undeclared one's every key in the read's key region (see
		// keyRegions).
		pred := t.PredOf(&t.Ops[ps.op])
		ti := h.TableByName(pred.Table)
		member := tableMember(h, tableOf, ti)
		reg := rg.region(h, pred.Table, pred.Where)
		in := member
		if reg != nil {
			in = func(k int32) bool { return member(k) && reg.has(h, k) }
		}
		vs := make([]history.Row, 0, min(len(keys), rg.size(reg))+len(own))
		ok := true
		for _, k := range rg.keys(reg) {
			if !member(k) {
				continue
			}
			if v, mine := own[k]; mine {
				vs = append(vs, history.Row{Key: k, Value: v})
				continue
			}
			e := kv[k]
			if !e.exact {
				ok = false
				break
			}
			i := sort.Search(len(e.vals), func(i int) bool {
				return e.writers[i] == t.Index || !snap.visible(e.xids[i])
			}) - 1
			if i >= 0 {
				vs = append(vs, history.Row{Key: k, Value: e.vals[i]})
			}
		}
		if !ok {
			if shadow != nil && dead == nil {
				use(shadow)
				r.shadow.used++
			} else {
				skipped++
			}
			continue
		}
		if reg != nil {
			// keys(reg) lists the region's keys by integer value
			slices.SortFunc(vs, func(a, b history.Row) int { return int(a.Key) - int(b.Key) })
		}
		for _, k := range slices.Sorted(maps.Keys(own)) {
			if _, ordered := kv[k]; !ordered && in(k) {
				vs = append(vs, history.Row{Key: k, Value: own[k]})
			}
		}
		if shadow != nil {
			r.shadow.compared++
			if reg != nil {
				// the shadow transaction read the whole table
				shadow = slices.DeleteFunc(slices.Clone(shadow), func(x history.Row) bool { return !reg.has(h, x.Key) })
			}
			if d := diffRows(h, vs, shadow, dead); d != "" {
				r.shadow.mismatched++
				if r.shadow.example == "" {
					r.shadow.example = fmt.Sprintf("%s's predicate read (op %d): %s", h.TxnName(t.Index), ps.op, d)
				}
			}
		}
		use(vs)
	}
	if filled > 0 {
		h.Evidence.VersionSets = true
	}
	return filled, skipped, nil
}

// keepSnapshots remembers t's xid and the snapshot of each of its
// completed predicate reads, for versionSetsFromSnapshots.
func (r *recorder) keepSnapshots(t int32, raw *rawTxn) {
	if r.cfg.WL.NoCertificate {
		return
	}
	if raw.ev.XID != 0 && r.predReads {
		// A writer's xid (PostgreSQL gives one only to transactions that
		// changed a row); a read-only transaction's reads still get sets.
		// Only version sets of predicate reads use it, so runs without
		// predicate reads keep no map (the xid is in evidence.jsonl).
		if r.xids == nil {
			r.xids = map[int32]uint64{}
		}
		r.xids[t] = raw.ev.XID
	}
	if raw.status != history.Committed && raw.status != history.Unknown {
		return
	}
	for i := range raw.ops {
		o := &raw.ops[i]
		if o.Kind != history.PredRead || o.Pred == nil || !o.Done {
			continue
		}
		s := o.Pred.Snapshot
		if s == "" && r.txnSnap {
			s = raw.ev.Snapshot
		}
		if s == "" && !o.Pred.HasShadow {
			continue
		}
		ps := predSnap{txn: t, op: int32(i), snap: s, hasShadow: o.Pred.HasShadow}
		for _, row := range o.Pred.Shadow {
			hr := history.Row{Key: r.h.Keys.Int(row.Key), Value: history.NoValue}
			if row.HasValue {
				hr.Value = r.h.Values.Int(row.Value)
			}
			ps.shadow = append(ps.shadow, hr)
		}
		r.snaps = append(r.snaps, ps)
	}
}

// withOwn is a shadow transaction's rows with the reader's own earlier
// writes in place of (or added to) them, sorted by key id.
func withOwn(rows []history.Row, own map[int32]int32) []history.Row {
	out := make([]history.Row, 0, len(rows)+len(own))
	for _, r := range rows {
		if v, mine := own[r.Key]; mine {
			r.Value = v
		}
		out = append(out, r)
	}
	for k, v := range own {
		if !slices.ContainsFunc(rows, func(r history.Row) bool { return r.Key == k }) {
			out = append(out, history.Row{Key: k, Value: v})
		}
	}
	slices.SortFunc(out, func(a, b history.Row) int { return int(a.Key) - int(b.Key) })
	return out
}

// diffRows describes the first difference between two version sets ("" if
// they are equal as sets of rows; an unborn row and a deleted one (in dead)
// equal an absent one: a shadow transaction sees neither).
func diffRows(h *history.History, a, b []history.Row, dead map[uint64]bool) string {
	m := func(rs []history.Row) map[int32]int32 {
		x := make(map[int32]int32, len(rs))
		for _, r := range rs {
			if r.Value != history.NoValue && !dead[packKV(r.Key, r.Value)] {
				x[r.Key] = r.Value
			}
		}
		return x
	}
	ma, mb := m(a), m(b)
	for _, k := range slices.Sorted(maps.Keys(ma)) {
		if mb[k] != ma[k] {
			vb, ok := mb[k]
			if !ok {
				vb = history.NoValue
			}
			return fmt.Sprintf("key %s: from the snapshot %s, in the shadow transaction %s", h.KeyName(k), h.ValueName(ma[k]), h.ValueName(vb))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(mb)) {
		if _, ok := ma[k]; !ok {
			return fmt.Sprintf("key %s: from the snapshot nil, in the shadow transaction %s", h.KeyName(k), h.ValueName(mb[k]))
		}
	}
	return ""
}

// tableMember reports whether key k belongs to table ti (every key when
// ti < 0: an undeclared table's version set is every key), caching each
// key's table in tableOf (history/schema.go).
func tableMember(h *history.History, tableOf map[int32]int, ti int) func(k int32) bool {
	return func(k int32) bool {
		if ti < 0 {
			return true
		}
		x, ok := tableOf[k]
		if !ok {
			x = h.TableOf(k)
			tableOf[k] = x
		}
		return x == ti
	}
}

// Key regions. A predicate read on a table the history does not declare
// (columns k, v) can match only rows whose integer key lies in its WHERE
// clause's key region (sqlpred: TablePred.KeyRanges, over-approximated);
// rows outside it match at no version, so the version it evaluated there
// decides no dependency, and emme visits only the region's keys (check/
// emme, predRead). Its version set therefore lists the rows of its region
// (and every key that is not an integer), not every row of the table
// (history/certificate.go): for the predicate workload's ranges of a
// quarter of the keys, a quarter of the rows to derive and write. A
// clause that does not compile, and a declared table, keep every row.

// keyRegions caches each WHERE clause's region and indexes the keys with
// a version order by integer value.
type keyRegions struct {
	schema *sqlpred.Schema
	cache  map[[2]string]*keyRegion
	// all: the keys with a version order, by id; ints: those whose name
	// is an integer, by that integer; strs: the others, by id.
	all  []int32
	ints []intKey
	strs []int32
}

type intKey struct {
	v  int64
	id int32
}

// keyRegion is one clause's region: integer keys in rs, and every key
// whose name is not an integer.
type keyRegion struct {
	rs sqlpred.Ranges
	// keys: the keys with a version order in the region (ints by value,
	// then strs)
	keys []int32
}

func newKeyRegions(h *history.History, keys []int32) *keyRegions {
	g := &keyRegions{cache: map[[2]string]*keyRegion{}, all: keys}
	for _, k := range keys {
		if s := h.Keys.Get(k); s.IsStr {
			g.strs = append(g.strs, k)
		} else {
			g.ints = append(g.ints, intKey{s.I, k})
		}
	}
	slices.SortFunc(g.ints, func(a, b intKey) int { return cmp.Compare(a.v, b.v) })
	return g
}

// region returns the key region of where on table, or nil when the read's
// version set keeps every row of the table (a declared table, a clause
// that does not compile, or a region that is every integer).
func (g *keyRegions) region(h *history.History, table, where string) *keyRegion {
	ck := [2]string{table, where}
	if r, ok := g.cache[ck]; ok {
		return r
	}
	if g.schema == nil {
		g.schema = sqlpred.NewSchema(h)
	}
	var r *keyRegion
	tp := g.schema.Compile(table, where)
	if rs, ok := tp.KeyRanges(); ok && tp.Err == nil && !rs.IsFull() {
		r = &keyRegion{rs: rs}
		for _, iv := range rs {
			lo, _ := slices.BinarySearchFunc(g.ints, iv.Lo, func(a intKey, x int64) int { return cmp.Compare(a.v, x) })
			for x := lo; x < len(g.ints) && g.ints[x].v <= iv.Hi; x++ {
				r.keys = append(r.keys, g.ints[x].id)
			}
		}
		r.keys = append(r.keys, g.strs...)
	}
	g.cache[ck] = r
	return r
}

// keys returns the keys with a version order to visit for region r (nil:
// every one, by id).
func (g *keyRegions) keys(r *keyRegion) []int32 {
	if r == nil {
		return g.all
	}
	return r.keys
}

// size is len(g.keys(r)).
func (g *keyRegions) size(r *keyRegion) int { return len(g.keys(r)) }

// has reports whether key k (any key of h) is in region r.
func (r *keyRegion) has(h *history.History, k int32) bool {
	s := h.Keys.Get(k)
	return s.IsStr || r.rs.Contains(s.I)
}
