package emme

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sqlpred"
)

// Edge kinds: Adya's item dependencies (ww, wr, rw) and predicate
// dependencies (Adya 1999 §3.1.3–3.1.4: predicate-read-depends, pwr, and
// predicate-anti-depends, prw).
const (
	kWW uint8 = iota
	kWR
	kRW
	kPWR
	kPRW
)

var kindNames = [...]string{"ww", "wr", "rw", "predicate-wr", "predicate-rw"}

func isAnti(k uint8) bool { return k == kRW || k == kPRW }

// edge is one dependency, with its evidence: the key, the version read or
// overwritten (v1), the version installed (v2), and the reader's op index.
type edge struct {
	from, to int32
	kind     uint8
	op       int32
	key      int32
	v1, v2   int32
	// vs: for predicate edges, the version the read evaluated (NoValue:
	// unborn).
	vs int32
}

// writeRef is one write op.
type writeRef struct {
	txn, op int32
}

// keyVers is a key's version order with each version's writer, and which
// versions are deleted (nil when none is).
type keyVers struct {
	vals    []int32
	writers []int32
	dead    []bool
}

// deps holds everything the checker derived from the history and its
// certificate.
type deps struct {
	h     *history.History
	opts  check.Options
	edges []edge
	// anomalies found (non-cyclic), uncapped; reasons the certificate
	// cannot be used fully (make the verdict unknown when nothing is found).
	anoms   []check.Anomaly
	reasons []string
	// writes: (key, value) -> write ops of that value to that key.
	writes map[uint64][]writeRef
	// dead: (key, value) of every Delete op's tombstone (nil: no deletes).
	dead map[uint64]struct{}
	vers map[int32]*keyVers
	// keys: the keys of vers, sorted (edges are added in this order, so
	// the cycles found, and the report, do not depend on map order).
	keys []int32
	pos  map[uint64]int32 // (key, value) -> position in its key's order
	// committed: the transaction installed its writes (committed, or
	// unknown with its writes in the version order).
	committed []bool
	// predicate index: keys with versions, integer keys sorted by value.
	intKeys []intKey
	strKeys []int32
	// tableKeys: per declared table, its keys with versions (sorted ids),
	// built on first use.
	tableKeys map[int][]int32
	schema    *sqlpred.Schema
	preds     map[[2]string]*compiled
	stats     struct {
		predReads, predKeysVisited, ambiguous, predErrors, itemReads int
	}
}

type intKey struct {
	k  int64
	id int32
}

type compiled struct {
	tp  *sqlpred.TablePred
	err error
	// rs: for a table without a declared schema, the integer keys the
	// clause can match (the visit is limited to them); full otherwise.
	rs       sqlpred.Ranges
	declared bool
	// keyOnly: the clause uses key columns only, so every live version of
	// a row matches alike (only the unborn and deleted ones differ).
	keyOnly bool
}

func pack(k, v int32) uint64 { return uint64(uint32(k))<<32 | uint64(uint32(v)) }

func (d *deps) reason(f string, a ...any) {
	if len(d.reasons) < 64 {
		d.reasons = append(d.reasons, fmt.Sprintf(f, a...))
	} else if len(d.reasons) == 64 {
		d.reasons = append(d.reasons, "further reasons omitted")
	}
}

func (d *deps) add(from, to int32, kind uint8, op, key, v1, v2, vs int32) {
	if from == to || from < 0 || to < 0 {
		return
	}
	d.edges = append(d.edges, edge{from: from, to: to, kind: kind, op: op, key: key, v1: v1, v2: v2, vs: vs})
}

func (d *deps) anomaly(typ string, txns []int32, key int32, expl string) {
	a := check.Anomaly{Type: typ, Txns: txns, Explanation: expl, Ops: check.TxnOps(d.h, txns...)}
	if key >= 0 {
		a.Key = d.h.KeyName(key)
	}
	d.anoms = append(d.anoms, a)
}

// build derives the dependency edges. It returns false when the history has
// no version order at all.
func build(h *history.History, opts check.Options) *deps {
	d := &deps{h: h, opts: opts, writes: map[uint64][]writeRef{}, vers: map[int32]*keyVers{},
		pos: map[uint64]int32{}, committed: make([]bool, len(h.Txns)), preds: map[[2]string]*compiled{},
		schema: sqlpred.NewSchema(h), tableKeys: map[int][]int32{}}
	for i := range h.Txns {
		t := &h.Txns[i]
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind.IsWrite() && o.Value != history.NoValue {
				k := pack(o.Key, o.Value)
				d.writes[k] = append(d.writes[k], writeRef{int32(i), int32(j)})
				if o.Kind == history.Delete {
					if d.dead == nil {
						d.dead = map[uint64]struct{}{}
					}
					d.dead[k] = struct{}{}
				}
			}
		}
		d.committed[i] = t.Status == history.Committed
	}
	nops := 0
	for i := range h.Txns {
		nops += len(h.Txns[i].Ops)
	}
	d.edges = make([]edge, 0, 2*nops)
	d.certificate()
	d.ww()
	for i := range h.Txns {
		if h.Txns[i].Status == history.Committed {
			d.reads(int32(i))
		}
	}
	return d
}

// certificate validates the version order against the writes: every
// version must be the final write of one transaction that did not abort,
// and every committed transaction's final writes must be in it. What does
// not hold is a reason the certificate is incomplete (verdict unknown when
// nothing else is found), not an anomaly of the database.
func (d *deps) certificate() {
	h := d.h
	keys := make([]int32, 0, len(h.VersionOrder))
	for k := range h.VersionOrder {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	d.keys = keys
	for _, k := range keys {
		ord := h.VersionOrder[k]
		kv := &keyVers{vals: ord, writers: make([]int32, len(ord))}
		d.vers[k] = kv
		for p, v := range ord {
			kv.writers[p] = -1
			if _, dup := d.pos[pack(k, v)]; dup {
				d.reason("the version order of key %s lists %s twice", h.KeyName(k), h.ValueName(v))
				continue
			}
			d.pos[pack(k, v)] = int32(p)
			ws := d.writes[pack(k, v)]
			switch {
			case len(ws) == 0:
				d.reason("the version order of key %s lists %s, which no transaction wrote", h.KeyName(k), h.ValueName(v))
			case len(ws) > 1:
				d.reason("%s and %s both wrote %s to key %s (duplicate write): the version and the reads of it are ambiguous",
					h.TxnName(ws[0].txn), h.TxnName(ws[1].txn), h.ValueName(v), h.KeyName(k))
			case h.Txns[ws[0].txn].Status == history.Aborted:
				d.reason("the version order of key %s lists %s, written by aborted %s", h.KeyName(k), h.ValueName(v), h.TxnName(ws[0].txn))
			case !h.Txns[ws[0].txn].FinalWrite(int(ws[0].op)):
				d.reason("the version order of key %s lists %s, an intermediate write of %s", h.KeyName(k), h.ValueName(v), h.TxnName(ws[0].txn))
			default:
				kv.writers[p] = ws[0].txn
				d.committed[ws[0].txn] = true
			}
			if d.isDead(k, v) {
				if kv.dead == nil {
					kv.dead = make([]bool, len(ord))
				}
				kv.dead[p] = true
			}
		}
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Status != history.Committed {
			continue
		}
		for j := range t.Ops {
			o := &t.Ops[j]
			if !o.Kind.IsWrite() || o.Value == history.NoValue || !t.FinalWrite(j) {
				continue
			}
			if _, ok := d.pos[pack(o.Key, o.Value)]; !ok {
				d.reason("committed %s's %s of %s to key %s is not in the version order", h.TxnName(int32(i)), writeWord(o.Kind), h.ValueName(o.Value), h.KeyName(o.Key))
			}
		}
	}
	for _, k := range d.keys {
		s := h.Keys.Get(k)
		if s.IsStr {
			d.strKeys = append(d.strKeys, k)
		} else {
			d.intKeys = append(d.intKeys, intKey{s.I, k})
		}
	}
	slices.SortFunc(d.intKeys, func(a, b intKey) int { return cmp.Compare(a.k, b.k) })
	slices.Sort(d.strKeys)
}

// isDead reports whether (k, v) is a deleted version (a Delete's tombstone).
func (d *deps) isDead(k, v int32) bool {
	if d.dead == nil || v == history.NoValue {
		return false
	}
	_, ok := d.dead[pack(k, v)]
	return ok
}

func writeWord(k history.Kind) string {
	if k == history.Delete {
		return "delete (deleted version)"
	}
	return "write"
}

// versionName renders version v of k for explanations: "nil" for the
// unborn version, "5 (deleted)" for a tombstone.
func (d *deps) versionName(k, v int32) string {
	if d.isDead(k, v) {
		return d.h.ValueName(v) + " (deleted)"
	}
	return d.h.ValueName(v)
}

// ww adds a write dependency between consecutive versions of every key.
func (d *deps) ww() {
	for _, k := range d.keys {
		kv := d.vers[k]
		for p := 1; p < len(kv.vals); p++ {
			d.add(kv.writers[p-1], kv.writers[p], kWW, -1, k, kv.vals[p-1], kv.vals[p], history.NoValue)
		}
	}
}

// versionAt returns the position of (k, v) in k's order: -1 for the
// initial (unborn) version, ok=false when v is not a version of k.
func (d *deps) versionAt(k, v int32) (int32, bool) {
	if v == history.NoValue {
		return -1, true
	}
	p, ok := d.pos[pack(k, v)]
	return p, ok
}

// nextWriter is the transaction installing the version after position p of
// k (-1 if none).
func (d *deps) nextWriter(k, p int32) (int32, int32) {
	kv := d.vers[k]
	if kv == nil || int(p+1) >= len(kv.vals) {
		return -1, history.NoValue
	}
	return kv.writers[p+1], kv.vals[p+1]
}

// classifyRead checks a read by t (op j) of version v of key k against the
// writes: garbage, aborted (G1a), intermediate (G1b) and the transaction's
// own writes (internal, future-read). It returns the version's position
// and whether the read can be used for dependencies.
func (d *deps) classifyRead(t int32, j int, k, v int32, what string) (int32, bool) {
	h := d.h
	tx := &h.Txns[t]
	// The transaction's own earlier write of k.
	own := history.NoValue
	hasOwn, ownDel := false, false
	for x := 0; x < j; x++ {
		o := &tx.Ops[x]
		if o.Kind.IsWrite() && o.Key == k {
			own, hasOwn, ownDel = o.Value, true, o.Kind == history.Delete
		}
	}
	if hasOwn {
		// after its own delete, the transaction sees the row absent
		if v != own && !(ownDel && v == history.NoValue) {
			d.anomaly(model.Internal, []int32{t}, k, fmt.Sprintf("%s %s %s of key %s = %s, but it wrote %s to %s earlier: a transaction must see its own last write",
				h.TxnName(t), what, opRef(j), h.KeyName(k), h.ValueName(v), h.ValueName(own), h.KeyName(k)))
		}
		return 0, false
	}
	if v == history.NoValue {
		return -1, true
	}
	ws := d.writes[pack(k, v)]
	if len(ws) == 0 {
		d.anomaly(model.GarbageVersions, []int32{t}, k, fmt.Sprintf("%s %s %s of key %s = %s, a value no transaction wrote to %s",
			h.TxnName(t), what, opRef(j), h.KeyName(k), h.ValueName(v), h.KeyName(k)))
		return 0, false
	}
	if len(ws) > 1 {
		d.stats.ambiguous++
		d.reason("%s %s %s of key %s = %s, which %d transactions wrote (duplicate write): its writer is ambiguous",
			h.TxnName(t), what, opRef(j), h.KeyName(k), h.ValueName(v), len(ws))
		return 0, false
	}
	w := ws[0]
	if w.txn == t {
		d.anomaly(model.FutureRead, []int32{t}, k, fmt.Sprintf("%s %s %s of key %s = %s, which it only writes later (op %d)",
			h.TxnName(t), what, opRef(j), h.KeyName(k), h.ValueName(v), w.op))
		return 0, false
	}
	wt := &h.Txns[w.txn]
	if wt.Status == history.Aborted {
		d.anomaly(model.G1a, []int32{t, w.txn}, k, fmt.Sprintf("%s %s %s of key %s = %s, written by %s, which aborted (aborted read, Adya G1a)",
			h.TxnName(t), what, opRef(j), h.KeyName(k), h.ValueName(v), h.TxnName(w.txn)))
		return 0, false
	}
	if !wt.FinalWrite(int(w.op)) {
		d.anomaly(model.G1b, []int32{t, w.txn}, k, fmt.Sprintf("%s %s %s of key %s = %s, an intermediate write of %s, which later wrote key %s again (intermediate read, Adya G1b)",
			h.TxnName(t), what, opRef(j), h.KeyName(k), h.ValueName(v), h.TxnName(w.txn), h.KeyName(k)))
		return 0, false
	}
	p, ok := d.pos[pack(k, v)]
	if !ok {
		// committed writers are all in the order (else reasons has it); an
		// unknown-status writer that is not was not installed.
		if wt.Status == history.Unknown {
			d.reason("%s %s %s of key %s = %s, written by %s whose outcome is unknown and whose write is not in the version order",
				h.TxnName(t), what, opRef(j), h.KeyName(k), h.ValueName(v), h.TxnName(w.txn))
		}
		return 0, false
	}
	return p, true
}

func opRef(j int) string { return "(op " + strconv.Itoa(j) + ")" }

// reads adds the item and predicate dependencies of committed t's reads.
func (d *deps) reads(t int32) {
	tx := &d.h.Txns[t]
	for j := range tx.Ops {
		o := &tx.Ops[j]
		switch o.Kind {
		case history.Read:
			if o.IsList {
				continue
			}
			d.stats.itemReads++
			d.itemRead(t, j, o.Key, o.Value, "read")
		case history.PredRead:
			if p := tx.PredOf(o); p != nil {
				d.predRead(t, j, p)
			}
		}
	}
}

// itemRead adds wr from the version's writer and rw to the next version's.
func (d *deps) itemRead(t int32, j int, k, v int32, what string) {
	p, ok := d.classifyRead(t, j, k, v, what)
	if !ok {
		return
	}
	if p < 0 && d.dead != nil && !d.h.Evidence.TombstoneReads {
		if kv := d.vers[k]; kv != nil && kv.dead != nil {
			// nil: the initial version or one of the deleted ones
			d.stats.ambiguous++
			d.reason("%s %s %s of key %s = nil, which has deleted versions: which absent version it read (initial or deleted) is not given",
				d.h.TxnName(t), what, opRef(j), d.h.KeyName(k))
			return
		}
	}
	if p >= 0 {
		kv := d.vers[k]
		d.add(kv.writers[p], t, kWR, int32(j), k, v, v, history.NoValue)
	}
	if nw, nv := d.nextWriter(k, p); nw >= 0 {
		d.add(t, nw, kRW, int32(j), k, v, nv, history.NoValue)
	}
}

func (d *deps) compile(table, where string) *compiled {
	ck := [2]string{table, where}
	if c, ok := d.preds[ck]; ok {
		return c
	}
	c := &compiled{tp: d.schema.Compile(table, where)}
	c.err = c.tp.Err
	c.declared = c.tp.Declared()
	c.keyOnly = c.err == nil && c.tp.KeyOnly()
	if c.err == nil && !c.declared {
		c.rs, _ = c.tp.KeyRanges()
	}
	d.preds[ck] = c
	return c
}

// Scalar converts an interned key or value to a SQL value.
func Scalar(s history.Scalar) sqlpred.Value { return sqlpred.ScalarValue(s) }

// matches evaluates the predicate on version v of row k (sqlpred.Schema:
// columns (k, v), or a declared table's key, row and value columns); the
// unborn row (NoValue) and a deleted version match nothing.
func (d *deps) matches(c *compiled, k, v int32) (bool, error) {
	if v == history.NoValue || d.deleted(k, v) {
		return false, nil
	}
	return c.tp.Matches(k, v)
}

// deleted reports whether version v of k is a deleted row: a Delete op's
// tombstone, or a write whose row image says deleted (row schemas).
func (d *deps) deleted(k, v int32) bool {
	if d.isDead(k, v) {
		return true
	}
	if d.h.RowImages == nil {
		return false
	}
	img, ok := d.h.RowImage(k, v)
	return ok && img.Deleted
}

// rowText renders version v of row k for explanations.
func (d *deps) rowText(c *compiled, k, v int32) string {
	if c.declared {
		return fmt.Sprintf("%s at version %s (%s)", d.h.KeyName(k), d.h.ValueName(v), c.tp.Describe(k, v))
	}
	return fmt.Sprintf("(k=%s, v=%s)", d.h.KeyName(k), d.h.ValueName(v))
}

// keysOf returns the keys with versions that are rows of declared table
// ti, sorted by id.
func (d *deps) keysOf(c *compiled) []int32 {
	ti := c.tp.Table()
	if ks, ok := d.tableKeys[ti]; ok {
		return ks
	}
	ks := []int32{}
	for k := range d.vers {
		if c.tp.Member(k) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	d.tableKeys[ti] = ks
	return ks
}

// predRead handles predicate read op j of committed t (Adya §3.1.3–3.1.4,
// placed by the version order as in the seed paper §4): the returned rows
// are item reads; the result must be the matching part of the version set
// (result-set mismatch otherwise); and for every key whose versions change
// the matches of the predicate, a predicate-wr edge from the last version
// at or before the one read that changed the matches, and a predicate-rw
// edge to the first one after it that does.
func (d *deps) predRead(t int32, j int, p *history.Predicate) {
	h := d.h
	d.stats.predReads++
	c := d.compile(p.Table, p.Where)
	where := fmt.Sprintf("predicate read %s %q", opRef(j), p.Where)
	returned := make(map[int32]int32, len(p.Result))
	for _, r := range p.Result {
		if _, dup := returned[r.Key]; dup {
			d.anomaly(model.ResultSetMismatch, []int32{t}, r.Key, fmt.Sprintf("%s's %s returned key %s twice, but a table has one row per key",
				h.TxnName(t), where, h.KeyName(r.Key)))
			continue
		}
		returned[r.Key] = r.Value
		d.itemRead(t, j, r.Key, r.Value, "predicate read returned")
		if c.err != nil || r.Value == history.NoValue {
			continue
		}
		if d.isDead(r.Key, r.Value) {
			d.anomaly(model.ResultSetMismatch, []int32{t}, r.Key, fmt.Sprintf("%s's %s returned row (k=%s, v=%s), a deleted version, which no predicate matches",
				h.TxnName(t), where, h.KeyName(r.Key), h.ValueName(r.Value)))
		} else if m, err := d.matches(c, r.Key, r.Value); err != nil {
			d.stats.predErrors++
			d.reason("%s's %s cannot be evaluated on row (%s, %s): %v", h.TxnName(t), where, h.KeyName(r.Key), h.ValueName(r.Value), err)
		} else if !m {
			d.anomaly(model.ResultSetMismatch, []int32{t}, r.Key, fmt.Sprintf("%s's %s returned row %s, which does not satisfy the WHERE clause",
				h.TxnName(t), where, d.rowText(c, r.Key, r.Value)))
		}
	}
	if c.err != nil {
		d.stats.predErrors++
		d.reason("%s's %s cannot be evaluated: %v (only its returned rows were checked, as item reads)", h.TxnName(t), where, c.err)
		return
	}
	var vs map[int32]int32
	if p.HasVersionSet {
		vs = make(map[int32]int32, len(p.VersionSet))
		for _, r := range p.VersionSet {
			if c.declared && !c.tp.Member(r.Key) {
				d.reason("%s's %s has key %s in its version set, which is not a row of table %s (its key pattern)", h.TxnName(t), where, h.KeyName(r.Key), p.Table)
				continue
			}
			vs[r.Key] = r.Value
			rv, ret := returned[r.Key]
			if !ret || rv != r.Value {
				// not checked as a returned row: check the version itself
				d.classifyRead(t, j, r.Key, r.Value, "predicate read evaluated")
			}
			m, err := d.matches(c, r.Key, r.Value)
			if err != nil {
				d.stats.predErrors++
				d.reason("%s's %s cannot be evaluated on row (%s, %s): %v", h.TxnName(t), where, h.KeyName(r.Key), h.ValueName(r.Value), err)
				continue
			}
			switch {
			case m && !ret:
				d.anomaly(model.ResultSetMismatch, []int32{t}, r.Key, fmt.Sprintf("%s's %s evaluated row %s, which satisfies the WHERE clause, but did not return it",
					h.TxnName(t), where, d.rowText(c, r.Key, r.Value)))
			case ret && rv != r.Value:
				d.anomaly(model.ResultSetMismatch, []int32{t}, r.Key, fmt.Sprintf("%s's %s returned row (k=%s, v=%s), but the version it evaluated is v=%s",
					h.TxnName(t), where, h.KeyName(r.Key), h.ValueName(rv), d.versionName(r.Key, r.Value)))
			}
		}
		for k, v := range returned {
			if _, ok := vs[k]; !ok {
				d.anomaly(model.ResultSetMismatch, []int32{t}, k, fmt.Sprintf("%s's %s returned row (k=%s, v=%s), which is not in its version set",
					h.TxnName(t), where, h.KeyName(k), h.ValueName(v)))
			}
		}
	}
	tx := &h.Txns[t]
	ownBefore := func(k int32) bool {
		for x := 0; x < j; x++ {
			if tx.Ops[x].Kind.IsWrite() && tx.Ops[x].Key == k {
				return true
			}
		}
		return false
	}
	var mbuf []bool
	visit := func(k int32) {
		kv := d.vers[k]
		if kv == nil || ownBefore(k) {
			return
		}
		d.stats.predKeysVisited++
		n := len(kv.vals)
		if cap(mbuf) < n {
			mbuf = make([]bool, n)
		}
		m := mbuf[:n]
		live := -1 // keyOnly: the first live version, whose match all live ones share
		for q, v := range kv.vals {
			if (kv.dead != nil && kv.dead[q]) || d.deleted(k, v) {
				m[q] = false // a deleted version matches nothing
				continue
			}
			if c.keyOnly && live >= 0 {
				m[q] = m[live] // v is not used: every live version matches alike
				continue
			}
			ok, err := d.matches(c, k, v)
			if err != nil {
				d.stats.predErrors++
				d.reason("%s's %s cannot be evaluated on row (%s, %s): %v", h.TxnName(t), where, h.KeyName(k), h.ValueName(v), err)
				return
			}
			m[q], live = ok, q
		}
		at := func(q int) bool { return q >= 0 && m[q] }
		changes := func(q int) bool { return at(q) != at(q-1) }
		s := -2
		var seen int32 = history.NoValue
		switch {
		case vs != nil:
			seen = history.NoValue
			if v, ok := vs[k]; ok {
				seen = v
			}
		case hasKey(returned, k):
			seen = returned[k]
		default:
			// Not returned and no version set: the read saw a version
			// that does not match (or the unborn row). Every candidate in
			// one run of equal matches gives the same edges.
			first, fr, run := -2, 0, -1
			for q := -1; q < n; q++ {
				if q >= 0 && changes(q) {
					run++
				}
				if at(q) {
					continue
				}
				if first == -2 {
					first, fr = q, run
				} else if run != fr {
					d.stats.ambiguous++
					d.reason("%s's %s did not return key %s, whose non-matching versions lie on both sides of a change of the matches: the version it read is ambiguous",
						h.TxnName(t), where, h.KeyName(k))
					return
				}
			}
			s = first // >= -1: the unborn row never matches
		}
		if s == -2 {
			pp, ok := d.versionAt(k, seen)
			if !ok {
				return // not a version of k: reported by classifyRead
			}
			s = int(pp)
		}
		vsv := history.NoValue
		if s >= 0 {
			vsv = kv.vals[s]
		}
		for q := s; q >= 0; q-- {
			if changes(q) {
				d.add(kv.writers[q], t, kPWR, int32(j), k, prevVal(kv, q), kv.vals[q], vsv)
				break
			}
		}
		for q := s + 1; q < n; q++ {
			if changes(q) && kv.writers[q] != t {
				d.add(t, kv.writers[q], kPRW, int32(j), k, prevVal(kv, q), kv.vals[q], vsv)
				break
			}
		}
	}
	if c.declared {
		for _, k := range d.keysOf(c) {
			visit(k)
		}
		return
	}
	for _, iv := range c.rs {
		lo, _ := slices.BinarySearchFunc(d.intKeys, iv.Lo, func(a intKey, x int64) int { return cmp.Compare(a.k, x) })
		for x := lo; x < len(d.intKeys) && d.intKeys[x].k <= iv.Hi; x++ {
			visit(d.intKeys[x].id)
		}
	}
	for _, k := range d.strKeys {
		visit(k)
	}
}

func hasKey(m map[int32]int32, k int32) bool { _, ok := m[k]; return ok }

func prevVal(kv *keyVers, q int) int32 {
	if q == 0 {
		return history.NoValue
	}
	return kv.vals[q-1]
}
