package sqlpred

import (
	"math"
	"slices"
)

// Interval is a closed range of integers [Lo, Hi].
type Interval struct{ Lo, Hi int64 }

// Ranges is a sorted list of disjoint, non-adjacent closed intervals.
type Ranges []Interval

// Full is every int64.
var Full = Ranges{{math.MinInt64, math.MaxInt64}}

// IsFull reports whether r covers every int64.
func (r Ranges) IsFull() bool {
	return len(r) == 1 && r[0].Lo == math.MinInt64 && r[0].Hi == math.MaxInt64
}

// Contains reports whether x lies in r.
func (r Ranges) Contains(x int64) bool {
	i, _ := slices.BinarySearchFunc(r, x, func(iv Interval, x int64) int {
		if iv.Hi < x {
			return -1
		}
		if iv.Lo > x {
			return 1
		}
		return 0
	})
	return i < len(r) && r[i].Lo <= x && x <= r[i].Hi
}

// IntRanges over-approximates the integer values of column c for which the
// predicate can evaluate to TRUE, whatever the other columns hold: a row
// whose column c is an integer outside the result never matches. It is
// exact for conjunctions and disjunctions of comparisons, BETWEEN and IN
// of c against integer literals (and their negations); any other condition
// on c contributes every integer. This is the predicate's region on c
// (used to index versions by key so that predicate dependencies are found
// without testing every write against every predicate read).
func (p *Pred) IntRanges(c int) Ranges { r, _ := ranges(p.root, c, false); return r }

// IntRangesExact is IntRanges plus whether the result is exact: the
// predicate uses only column c, and a row whose c is an integer matches if
// and only if it lies in the ranges (every condition is a comparison,
// BETWEEN, IN or IS [NOT] NULL of c against literals, combined by AND, OR
// and NOT). Leopard's predicate regions need exactness: a row in the region
// that was not returned was read as absent.
func (p *Pred) IntRangesExact(c int) (Ranges, bool) { return ranges(p.root, c, false) }

func ranges(n node, c int, neg bool) (Ranges, bool) {
	switch n := n.(type) {
	case *logic:
		l, le := ranges(n.l, c, neg)
		r, re := ranges(n.r, c, neg)
		if n.or != neg { // OR, or NOT AND (De Morgan)
			return union(l, r), le && re
		}
		return intersect(l, r), le && re
	case *notN:
		return ranges(n.x, c, !neg)
	case *lit:
		switch {
		case n.v.T == Bool && (n.v.I != 0) != neg:
			return Full, true
		case n.v.T == Bool:
			return nil, true
		case n.v.T == Null:
			return nil, true // NULL and NOT NULL are never TRUE
		}
		return Full, false
	case *isNull:
		if cl, ok := n.x.(*col); ok && cl.i == c {
			if n.neg != neg { // IS NOT NULL
				return Full, true
			}
			return nil, true // an integer is not NULL
		}
		return Full, false
	case *cmp:
		op := n.op
		var k Value
		if cl, ok := n.l.(*col); ok && cl.i == c {
			l, ok := n.r.(*lit)
			if !ok {
				return Full, false
			}
			k = l.v
		} else if cl, ok := n.r.(*col); ok && cl.i == c {
			l, ok := n.l.(*lit)
			if !ok {
				return Full, false
			}
			k = l.v
			op = mirror(op)
		} else {
			return Full, false
		}
		if neg {
			op = negate(op)
		}
		return cmpRange(op, k), true
	case *between:
		cl, ok := n.x.(*col)
		lo, ok1 := n.lo.(*lit)
		hi, ok2 := n.hi.(*lit)
		if !ok || cl.i != c || !ok1 || !ok2 {
			return Full, false
		}
		if n.neg != neg { // NOT BETWEEN: x < lo OR x > hi
			return union(cmpRange(opLt, lo.v), cmpRange(opGt, hi.v)), true
		}
		return intersect(cmpRange(opGe, lo.v), cmpRange(opLe, hi.v)), true
	case *in:
		cl, ok := n.x.(*col)
		if !ok || cl.i != c || n.neg != neg {
			return Full, false
		}
		r := make(Ranges, 0, len(n.list))
		for _, e := range n.list {
			l, ok := e.(*lit)
			if !ok {
				return Full, false
			}
			r = append(r, cmpRange(opEq, l.v)...)
		}
		return union(r, nil), true
	}
	return Full, false
}

func mirror(op cmpOp) cmpOp {
	switch op {
	case opLt:
		return opGt
	case opLe:
		return opGe
	case opGt:
		return opLt
	case opGe:
		return opLe
	}
	return op
}

func negate(op cmpOp) cmpOp {
	switch op {
	case opEq:
		return opNe
	case opNe:
		return opEq
	case opLt:
		return opGe
	case opLe:
		return opGt
	case opGt:
		return opLe
	}
	return opLt // opGe
}

// cmpRange is the set of integers x with x op k TRUE.
func cmpRange(op cmpOp, k Value) Ranges {
	var lo, hi int64 // integer bounds: x >= lo is x >= ceil(k), x <= hi is x <= floor(k)
	exact := true
	switch k.T {
	case Null:
		return nil
	case Int:
		lo, hi = k.I, k.I
	case Float:
		if math.IsNaN(k.F) {
			// NaN is above every number (PostgreSQL order).
			switch op {
			case opLt, opLe, opNe:
				return Full
			}
			return nil
		}
		c, f := math.Ceil(k.F), math.Floor(k.F)
		exact = c == f
		lo, hi = clampF(c), clampF(f)
		if c > math.MaxInt64 {
			lo = math.MaxInt64
			if op == opGt || op == opGe {
				return nil
			}
		}
		if f < math.MinInt64 {
			hi = math.MinInt64
			if op == opLt || op == opLe {
				return nil
			}
		}
	default:
		// A string or boolean never compares TRUE with an integer (a type
		// error at evaluation).
		return nil
	}
	switch op {
	case opEq:
		if !exact {
			return nil
		}
		return Ranges{{lo, lo}}
	case opNe:
		if !exact {
			return Full
		}
		return union(below(lo), above(lo))
	case opLt:
		return below(lo) // x < k  <=>  x < ceil(k)
	case opLe:
		return Ranges{{math.MinInt64, hi}}
	case opGt:
		return above(hi) // x > k  <=>  x > floor(k)
	}
	return Ranges{{lo, math.MaxInt64}} // opGe
}

func clampF(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

func below(x int64) Ranges {
	if x == math.MinInt64 {
		return nil
	}
	return Ranges{{math.MinInt64, x - 1}}
}

func above(x int64) Ranges {
	if x == math.MaxInt64 {
		return nil
	}
	return Ranges{{x + 1, math.MaxInt64}}
}

func union(a, b Ranges) Ranges {
	all := make(Ranges, 0, len(a)+len(b))
	all = append(append(all, a...), b...)
	slices.SortFunc(all, func(x, y Interval) int { return cmp3(x.Lo < y.Lo, x.Lo > y.Lo) })
	var out Ranges
	for _, iv := range all {
		if n := len(out); n > 0 && (out[n-1].Hi == math.MaxInt64 || iv.Lo <= out[n-1].Hi+1) {
			out[n-1].Hi = max(out[n-1].Hi, iv.Hi)
			continue
		}
		out = append(out, iv)
	}
	return out
}

func intersect(a, b Ranges) Ranges {
	var out Ranges
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i].Lo, b[j].Lo), min(a[i].Hi, b[j].Hi)
		if lo <= hi {
			out = append(out, Interval{lo, hi})
		}
		if a[i].Hi < b[j].Hi {
			i++
		} else {
			j++
		}
	}
	return out
}
