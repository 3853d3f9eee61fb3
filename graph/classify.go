package graph

// Cycle anomaly bases, strongest first (Adya 1999 §4.4: G0, G1c, G-single,
// G2; Elle §4.2 adds G-nonadjacent and the -item/-process/-realtime names).
const (
	baseG0 = iota
	baseG1c
	baseGSingle
	baseGNonadj
	baseG2
	numBases
)

// Variants: plain (data dependencies only), -process (also session order),
// -realtime (also real-time order).
const (
	varPlain = iota
	varProcess
	varRealtime
	numVariants
)

var baseNames = [numBases]string{"G0", "G1c", "G-single-item", "G-nonadjacent-item", "G2-item"}
var variantSuffix = [numVariants]string{"", "-process", "-realtime"}

// baseWhat describes what each base cycle consists of, for explanations.
var baseWhat = [numBases]string{
	"write dependencies (ww) only",
	"write and read dependencies (ww, wr), at least one wr",
	"exactly one anti-dependency (rw)",
	"several anti-dependencies (rw), no two adjacent",
	"several anti-dependencies (rw), two of them adjacent",
}

var variantWhat = [numVariants]string{"", ", closed by session (process) order", ", closed by real-time order"}

// CycleTypes lists every cycle anomaly name FindCycles can report, in
// search order (Elle's severity order: all plain types, then -process, then
// -realtime; within each, G0, G1c, G-single-item, G-nonadjacent-item,
// G2-item).
func CycleTypes() []string {
	var s []string
	for v := 0; v < numVariants; v++ {
		for b := 0; b < numBases; b++ {
			s = append(s, typeName(b, v))
		}
	}
	return s
}

func typeName(b, v int) string { return baseNames[b] + variantSuffix[v] }

// parseType maps a cycle anomaly name to (base, variant). It also accepts
// Elle's non-item spellings G-single, G-nonadjacent and G2 (txray's graph
// has only item dependencies, so these are searched as their -item forms).
func parseType(s string) (b, v int, ok bool) {
	for vi := numVariants - 1; vi >= 0; vi-- {
		suf := variantSuffix[vi]
		if len(s) > len(suf) && s[len(s)-len(suf):] == suf {
			stem := s[:len(s)-len(suf)]
			switch stem {
			case "G0":
				return baseG0, vi, true
			case "G1c":
				return baseG1c, vi, true
			case "G-single-item", "G-single":
				return baseGSingle, vi, true
			case "G-nonadjacent-item", "G-nonadjacent":
				return baseGNonadj, vi, true
			case "G2-item", "G2":
				return baseG2, vi, true
			}
			if vi != varPlain {
				continue
			}
		}
	}
	return 0, 0, false
}

// IsCycleType reports whether name is a cycle anomaly FindCycles searches
// for (including Elle's non-item aliases).
func IsCycleType(name string) bool {
	_, _, ok := parseType(name)
	return ok
}

// baseImplies reports whether a cycle of base a implies one of base b
// (Elle's implied-anomalies: G0 => G1c; G-single => G-nonadjacent => G2).
func baseImplies(a, b int) bool {
	if a == b {
		return true
	}
	switch a {
	case baseG0:
		return b == baseG1c
	case baseGSingle:
		return b == baseGNonadj || b == baseG2
	case baseGNonadj:
		return b == baseG2
	}
	return false
}

// implies: an anomaly (b1, v1) implies (b2, v2) when its base implies b2
// and its variant is no stronger (a plain cycle is trivially a -process and
// a -realtime one; Elle consistency-model implied-anomalies).
func implies(b1, v1, b2, v2 int) bool { return v1 <= v2 && baseImplies(b1, b2) }

// classify returns (base, variant) of a cycle, ok=false if it has no data
// dependency.
func classify(edges []Edge) (b, v int, ok bool) {
	var ww, wr, rw, proc, rt int
	adj := false
	for i, e := range edges {
		switch lowRel(e.Rel) {
		case WW:
			ww++
		case WR:
			wr++
		case RW:
			rw++
			prev := edges[(i+len(edges)-1)%len(edges)]
			if len(edges) > 1 && lowRel(prev.Rel) == RW {
				adj = true
			}
		case Process:
			proc++
		case Realtime:
			rt++
		}
	}
	if ww+wr+rw == 0 {
		return 0, 0, false
	}
	switch {
	case rw == 1:
		b = baseGSingle
	case rw > 1 && adj:
		b = baseG2
	case rw > 1:
		b = baseGNonadj
	case wr > 0:
		b = baseG1c
	default:
		b = baseG0
	}
	switch {
	case rt > 0:
		v = varRealtime
	case proc > 0:
		v = varProcess
	}
	return b, v, true
}

// lowRel picks the strongest single relation of a set (ww < wr < rw <
// process < realtime).
func lowRel(r Rel) Rel { return r & -r }

// Classify names a cycle (Elle §4.2's classification, after Adya §4.4):
// by data dependencies, exactly one rw => G-single-item; several rw, none
// adjacent (cyclically) => G-nonadjacent-item; several with two adjacent =>
// G2-item; no rw but some wr => G1c; only ww => G0. A cycle that uses any
// realtime edge gets the -realtime suffix, else any process edge the
// -process suffix. A cycle with no data dependency at all (only
// process/realtime edges, which only inconsistent client clocks produce)
// has no anomaly name: Classify returns "".
func Classify(edges []Edge) string {
	b, v, ok := classify(edges)
	if !ok {
		return ""
	}
	return typeName(b, v)
}
