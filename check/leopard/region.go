package leopard

import (
	"strconv"
	"strings"

	"github.com/txray/txray/history"
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
// conjunction of k = N, k < N, k <= N, k > N, k >= N and k BETWEEN A AND B
// (either operand order, any case) with both bounds finite identifies the
// integer keys of [lo, hi]. Every such key the history knows (an integer
// key of the key interner) that the read did not return is checked as a
// read of "no row", the initial (absent) version. Anything else cannot be
// decided from the text and is treated conservatively: only the returned
// rows are checked (counted as pred_regions_undecided): another column,
// OR, NOT, functions, string or non-integer constants, an unbounded or
// empty range, or a region wider than maxRegion keys. Nor is anything
// checked when initial values are unknown (traces of pre-loaded tables:
// an absent row is not known to be the initial state) or without a key
// interner (online without OnlineOptions.Keys).

// maxRegion bounds the keys a region may cover (a wider one is undecided).
const maxRegion = 1 << 16

// region is a closed interval of integer record keys.
type region struct{ lo, hi int64 }

// parseRegion extracts the region of a predicate over the key column k;
// ok is false when the text cannot be decided (see above).
func parseRegion(where string) (region, bool) {
	// Parentheses only group here (OR and NOT are rejected below).
	sp := strings.NewReplacer("(", " ", ")", " ", ">=", " >= ", "<=", " <= ", "<>", " <> ", "!=", " != ", "=", " = ", "<", " < ", ">", " > ")
	f := strings.Fields(strings.ToLower(sp.Replace(where)))
	lo, hi := int64(-1<<63), int64(1<<63-1)
	hasLo, hasHi := false, false
	num := func(s string) (int64, bool) {
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	for i := 0; i < len(f); {
		if i > 0 {
			if f[i] != "and" {
				return region{}, false
			}
			i++
		}
		if i+2 >= len(f) {
			return region{}, false
		}
		if f[i] == "k" && f[i+1] == "between" {
			if i+4 >= len(f) || f[i+3] != "and" {
				return region{}, false
			}
			a, ok1 := num(f[i+2])
			b, ok2 := num(f[i+4])
			if !ok1 || !ok2 {
				return region{}, false
			}
			lo, hi, hasLo, hasHi = max(lo, a), min(hi, b), true, true
			i += 5
			continue
		}
		op, c := f[i+1], f[i+2]
		if f[i] != "k" {
			// N op k: mirror the operator.
			if c != "k" {
				return region{}, false
			}
			c = f[i]
			switch op {
			case "<":
				op = ">"
			case ">":
				op = "<"
			case "<=":
				op = ">="
			case ">=":
				op = "<="
			}
		}
		n, ok := num(c)
		if !ok {
			return region{}, false
		}
		switch op {
		case "=":
			lo, hi, hasLo, hasHi = max(lo, n), min(hi, n), true, true
		case ">=":
			lo, hasLo = max(lo, n), true
		case ">":
			if n == 1<<63-1 {
				return region{}, false
			}
			lo, hasLo = max(lo, n+1), true
		case "<=":
			hi, hasHi = min(hi, n), true
		case "<":
			if n == -1<<63 {
				return region{}, false
			}
			hi, hasHi = min(hi, n-1), true
		default:
			return region{}, false
		}
		i += 3
	}
	if !hasLo || !hasHi || lo > hi || hi-lo < 0 || hi-lo >= maxRegion {
		return region{}, false
	}
	return region{lo, hi}, true
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
