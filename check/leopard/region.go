package leopard

import (
	"math"

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
		}
		if n == rg.hi {
			break
		}
	}
	return true
}
