package leopard

import (
	"math"
	"sort"
	"strconv"

	"github.com/txray/txray/history"
	"github.com/txray/txray/sqlpred"
)

// Record identification from predicates (Leopard ICDE 2023, appendix:
// identifying the records a statement accesses without explicit keys).
// A predicate read returns rows; the rows it did not return matter as much,
// since a row certainly committed before the snapshot that satisfies the
// predicate must be returned (a missed row is a stale read of that record:
// a phantom). Leopard identifies the records a predicate covers from its
// equality and range conditions on the record identifier: the predicate's
// region. txray does the same for predicates over the row key column k
// (txray's recorder tables: (k, v), PredRead rows are (k, v)): a
// predicate over k alone (comparisons, BETWEEN, IN, IS NULL against integer
// literals, combined by AND, OR and NOT; package sqlpred) whose integer keys
// form one finite interval identifies the integer keys of [lo, hi]. Every such key the history knows (an integer
// key of the key interner) that the read did not return is checked as a
// read of "no row", the initial (absent) version. Anything else cannot be
// decided from the text and is treated conservatively: only the returned
// rows are checked (counted as pred_regions_undecided): another column,
// arithmetic on k, NOT IN, a region of several intervals, string or
// non-integer constants, an unbounded or empty range, or a region wider
// than maxRegion keys. Nor is anything
// checked when initial values are unknown (traces of pre-loaded tables:
// an absent row is not known to be the initial state) or without a key
// interner (online without OnlineOptions.Keys).

// Declared tables (history.Header.Tables; history/schema.go): a
// predicate on a table the history declares is evaluated by package
// sqlpred over each row version's columns — key columns from the row key,
// row columns from the version's row image (the tpcc workload's
// "ol_w_id = 1 AND ol_o_id >= 3", "o_c_id = 5"). Its region is every row
// of the table (a key its key pattern matches) that some recorded version
// would satisfy. A row of the region the read did not return was read at
// a version that does not satisfy the clause: the unborn one, a deleted
// one (a tombstone), or one whose columns do not match. Consistent read
// then requires that such a version be visible at the snapshot: when
// every candidate version satisfies the clause, the read missed a row it
// had to return (a phantom; reported as a consistent-read violation, with
// each candidate's columns). Such a read names no one version, so it adds
// no dependency edges for the certifier. Offline only (the online checker
// has no history to evaluate versions on); a clause that does not compile
// leaves the read undecided.

// absentRead is the value of a region read of a declared table's row that
// the predicate read did not return: "some version that does not satisfy
// the clause" (never a value id).
const absentRead int32 = -1 << 30

// maxRegion bounds the keys a region may cover (a wider one is undecided).
const maxRegion = 1 << 16

// region is a closed interval of integer record keys.
type region struct{ lo, hi int64 }

// parseRegion extracts the region of a predicate over the key column k;
// ok is false when the text cannot be decided (see above). The predicate is
// interpreted by package sqlpred: the region is its exact integer range on
// k (sqlpred.Pred.IntRangesExact), which must be one finite interval of at
// most maxRegion keys.
func parseRegion(where string) (region, bool) {
	p, err := sqlpred.Compile(where, history.PredColumns)
	if err != nil {
		return region{}, false
	}
	rs, exact := p.IntRangesExact(0)
	if !exact || len(rs) != 1 || rs.IsFull() || rs[0].Lo == math.MinInt64 || rs[0].Hi == math.MaxInt64 ||
		rs[0].Hi-rs[0].Lo < 0 || rs[0].Hi-rs[0].Lo >= maxRegion {
		return region{}, false
	}
	return region{rs[0].Lo, rs[0].Hi}, true
}

// predRegion checks the keys of a predicate read's region that it did not
// return as reads of the absent (initial) version; it reports whether the
// region was identified.
func (e *engine) predRegion(t *txn, i int32, p *history.Predicate) bool {
	keys := e.rep.keys
	if keys == nil || e.m.initUnknown {
		return false
	}
	if h := e.rep.h; h != nil && len(h.Header.Tables) > 0 && h.TableByName(p.Table) >= 0 {
		return e.declaredRegion(t, i, p)
	}
	rg, ok := parseRegion(p.Where)
	if !ok {
		return false
	}
	for n := rg.lo; ; n++ {
		if id, ok := keys.LookupInt(n); ok {
			returned := false
			for _, row := range p.Result {
				if row.Key == id {
					returned = true
					break
				}
			}
			if !returned {
				e.stats.regionRows++
				e.read(t, i, id, history.NoValue)
			}
		} else if e.rc != nil && e.rc.released > 0 && e.rc.has(history.Scalar{I: n}) {
			// The key may have been forgotten and its id recycled
			// (recycle.go): its absence cannot be checked.
			if e.stats.forgottenReads == 0 {
				e.stats.forgottenFirst = strconv.FormatInt(n, 10)
			}
			e.stats.forgottenReads++
			e.stats.uncheckedOps++
		}
		if n == rg.hi {
			break
		}
	}
	return true
}

// regionIndex is what declared-table regions need from the history: its
// schema evaluator and the values written to each key.
type regionIndex struct {
	schema  *sqlpred.Schema
	written map[int32][]int32 // key -> distinct values written
	members map[int][]int32   // table -> its keys with writes, sorted
}

func (e *engine) regionIdx() *regionIndex {
	if e.regions != nil {
		return e.regions
	}
	h := e.rep.h
	x := &regionIndex{schema: sqlpred.NewSchema(h), written: map[int32][]int32{}, members: map[int][]int32{}}
	seen := map[uint64]bool{}
	for ti := range h.Txns {
		for _, o := range h.Txns[ti].Ops {
			if o.Kind != history.Write || o.Value == history.NoValue || o.Key < 0 {
				continue
			}
			if p := history.PackKV(o.Key, o.Value); !seen[p] {
				seen[p] = true
				x.written[o.Key] = append(x.written[o.Key], o.Value)
			}
		}
	}
	e.regions = x
	return x
}

// declaredRegion checks the rows of a declared table's predicate read that
// it did not return (see above); false when the clause does not compile.
func (e *engine) declaredRegion(t *txn, i int32, p *history.Predicate) bool {
	x := e.regionIdx()
	tp := x.schema.Compile(p.Table, p.Where)
	if tp.Err != nil {
		return false
	}
	ti := tp.Table()
	keys, ok := x.members[ti]
	if !ok {
		for k := range x.written {
			if tp.Member(k) {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
		x.members[ti] = keys
	}
	for _, k := range keys {
		returned := false
		for _, row := range p.Result {
			if row.Key == k {
				returned = true
				break
			}
		}
		if returned {
			continue
		}
		// Only rows some version of which satisfies the clause can be
		// missed; a version that cannot be evaluated counts as satisfying
		// it only for this filter (the read check treats it as possibly
		// seen, so it never causes a report).
		some := false
		for _, v := range x.written[k] {
			if m, err := tp.Matches(k, v); m || err != nil {
				some = true
				break
			}
		}
		if !some {
			continue
		}
		e.stats.regionRows++
		e.read(t, i, k, absentRead)
	}
	return true
}

// absentSees reports whether version v of key could be what a region read
// of a row that the predicate read (op i of t) did not return observed: a
// version that does not satisfy the clause. A version the clause cannot be
// evaluated on could be (no report rests on it).
func (e *engine) absentSees(t *txn, i, key, v int32) bool {
	pr := t.ref.PredOf(&t.ref.Ops[i])
	if pr == nil {
		return true
	}
	m, err := e.regionIdx().schema.Compile(pr.Table, pr.Where).Matches(key, v)
	return err != nil || !m
}
