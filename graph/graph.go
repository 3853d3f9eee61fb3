// Package graph is txray's transaction dependency graph (Adya, "Weak
// Consistency", 1999, §3: direct serialization graph) with the process
// (session) and realtime orders Elle adds (Kingsbury & Alvaro, "Elle", VLDB
// 2020, §4), strongly connected components, and a bounded typed cycle search
// that classifies cycles into Adya/Elle anomaly names.
//
// Nodes are transaction indices 0..N-1 (history.Txn.Index). Edges carry a
// relation (Rel) and a Why: a compact record of the evidence, which the
// caller's Explainer turns into a sentence a person can check by hand.
package graph

// Rel is a dependency relation; edge sets are bitmasks of Rel.
type Rel uint8

const (
	// WW: write-write dependency (T1 installs a version, T2 installs the next).
	WW Rel = 1 << iota
	// WR: write-read dependency (T2 reads a version T1 installed).
	WR
	// RW: read-write anti-dependency (T1 reads a version, T2 installs the next).
	RW
	// Process: T1 precedes T2 in the same session (process).
	Process
	// Realtime: T1 completed before T2 was invoked.
	Realtime
)

// Item is every data dependency.
const Item = WW | WR | RW

// All is every relation.
const All = WW | WR | RW | Process | Realtime

var relNames = map[Rel]string{WW: "ww", WR: "wr", RW: "rw", Process: "process", Realtime: "realtime"}

// String renders a single relation ("ww") or a set ("ww|rw").
func (r Rel) String() string {
	if n, ok := relNames[r]; ok {
		return n
	}
	s := ""
	for b := WW; b <= Realtime; b <<= 1 {
		if r&b != 0 {
			if s != "" {
				s += "|"
			}
			s += relNames[b]
		}
	}
	if s == "" {
		return "none"
	}
	return s
}

// Why is the evidence for one edge: the key and the values involved, and
// the indices of the ops in each transaction (-1 if not applicable). Its
// meaning is the caller's; the Explainer renders it.
type Why struct {
	Key    int32
	V1, V2 int32
	Op1    int32
	Op2    int32
	// Note distinguishes the inference rule that produced the edge when a
	// checker has several (e.g. 0 = from a read, 1 = from version order).
	Note uint8
}

// Explainer turns an edge into a sentence, e.g. "T2 read key 3 = [1 2],
// which includes T1's append of 2, so T1 < T2".
type Explainer interface {
	Explain(from, to int32, rel Rel, why Why) string
}

// Edge is one stored edge.
type Edge struct {
	From, To int32
	Rel      Rel
	Why      Why
}
