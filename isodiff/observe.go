package isodiff

import (
	"fmt"
	"sort"
)

// HistoryAnomaly is a cycle anomaly a history checker found in a recorded
// history (txray check), its transactions named by the recorder's ids
// (history.Txn.ID, which txray run --sql-trace also writes into the trace
// as "-- txn: ID" lines).
type HistoryAnomaly struct {
	Type string
	// Txns are the cycle's transactions in cycle order: Rels[i] is the
	// dependency from Txns[i] to Txns[(i+1)%len].
	Txns []string
	Rels []string
}

// Observation records that a recorded history shows an anomaly of a Δ
// cycle's shape between its transaction classes.
type Observation struct {
	History string   `json:"history"`
	Type    string   `json:"type"`
	Txns    []string `json:"txns"` // history transaction ids, in the Δ cycle's order
	// Exact: the dependency types (ww, wr, rw) match the Δ cycle's edge
	// by edge; otherwise only the classes and the presence of an rw
	// dependency do.
	Exact bool `json:"exact"`
}

// ObserveSummary counts what the histories gave.
type ObserveSummary struct {
	Histories []string `json:"histories"`
	Checkers  []string `json:"checkers"`
	// Anomalies: cycle anomalies the checkers listed; Mapped: those whose
	// every transaction is an instance of an analysed class (found in the
	// trace by its id); Matched: those that match a listed Δ cycle.
	Anomalies int `json:"anomalies"`
	Mapped    int `json:"mapped"`
	Matched   int `json:"matched"`
	// Unmapped explains anomalies that could not be mapped (examples).
	Unmapped []string `json:"unmapped,omitempty"`
	// NotPredicted shows mapped anomalies that match no listed Δ cycle
	// (examples): the search keeps one representative cycle per dangerous
	// path, so another cycle of the same classes may stand for them, or
	// the report lists only the first Options.MaxReport cycles.
	NotPredicted []string `json:"not_predicted,omitempty"`
	// CyclesObserved counts the listed Δ cycles with at least one
	// observation.
	CyclesObserved int `json:"cycles_observed"`
	// Notes: limits of the evidence (a checker's listing cap, an unknown
	// verdict).
	Notes []string `json:"notes,omitempty"`
}

// Observe marks each listed Δ cycle of rep as observed when one of the
// anomalies, found in the history file name by a history checker, is a
// cycle of the same shape between the same transaction classes: the
// anomaly's transactions, mapped to their classes through the trace's
// transaction ids, form the Δ cycle's sequence of classes (up to rotation;
// replicas of a class are interchangeable), and the anomaly has an rw
// dependency (every Δ cycle has one; a cycle of ww/wr dependencies alone
// is not a Δ cycle). Exact is set when the dependency types also match
// edge by edge. Anomalies whose transactions are not all in the trace (a
// history from another run, a class removed by a hint) are counted as
// unmapped.
func Observe(rep *Report, app *App, name string, anomalies []HistoryAnomaly) {
	if rep.Observed == nil {
		rep.Observed = &ObserveSummary{}
	}
	sum := rep.Observed
	sum.Histories = append(sum.Histories, name)
	classOf := map[string]string{}
	for _, c := range app.Classes {
		for _, id := range c.TxnIDs {
			classOf[id] = c.ID
		}
	}
	analysed := map[string]bool{}
	for _, c := range rep.Classes {
		if !c.Removed {
			analysed[c.ID] = true
		}
	}
	type cyc struct {
		classes []string
		rels    []string
	}
	cycles := make([]cyc, len(rep.Cycles))
	for i, c := range rep.Cycles {
		for _, e := range c.Edges {
			cycles[i].classes = append(cycles[i].classes, e.FromID)
			cycles[i].rels = append(cycles[i].rels, e.Type)
		}
	}
	for _, a := range anomalies {
		sum.Anomalies++
		cls := make([]string, len(a.Txns))
		ok := len(a.Txns) > 0
		for i, id := range a.Txns {
			c, found := classOf[id]
			if !found || !analysed[c] {
				ok = false
				if len(sum.Unmapped) < 10 {
					why := "not in the trace"
					if found {
						why = "of a class removed by a hint"
					}
					sum.Unmapped = append(sum.Unmapped, fmt.Sprintf("%s %v: transaction %s is %s", a.Type, a.Txns, id, why))
				}
				break
			}
			cls[i] = c
		}
		if !ok {
			continue
		}
		sum.Mapped++
		hasRW := false
		for _, r := range a.Rels {
			hasRW = hasRW || r == RW
		}
		if !hasRW {
			continue
		}
		// An anomaly whose dependency types match some cycles edge by edge
		// is evidence for those only; otherwise for every cycle of its
		// class shape.
		type hit struct {
			ci, rot int
			exact   bool
		}
		var hits []hit
		for ci, c := range cycles {
			n := len(c.classes)
			if n != len(cls) {
				continue
			}
			for rot := 0; rot < n; rot++ {
				same, exact := true, true
				for k := 0; k < n; k++ {
					if c.classes[k] != cls[(k+rot)%n] {
						same = false
						break
					}
					if k < len(a.Rels) && c.rels[k] != a.Rels[(k+rot)%n] {
						exact = false
					}
				}
				if !same {
					continue
				}
				hits = append(hits, hit{ci, rot, exact})
				break
			}
		}
		anyEx := false
		for _, h := range hits {
			anyEx = anyEx || h.exact
		}
		for _, h := range hits {
			if anyEx && !h.exact {
				continue
			}
			n := len(cls)
			txns := make([]string, n)
			for k := range txns {
				txns[k] = a.Txns[(k+h.rot)%n]
			}
			ob := Observation{History: name, Type: a.Type, Txns: txns, Exact: h.exact}
			list := rep.Cycles[h.ci].Observed
			if len(list) < 5 {
				rep.Cycles[h.ci].Observed = append(list, ob)
			}
			rep.Cycles[h.ci].ObservedCount++
		}
		if len(hits) > 0 {
			sum.Matched++
		} else if len(sum.NotPredicted) < 10 {
			names := make([]string, len(cls))
			for i, c := range cls {
				names[i] = c
				for _, ci := range rep.Classes {
					if ci.ID == c && ci.Label != "" {
						names[i] = ci.Label + "/" + c
					}
				}
			}
			sum.NotPredicted = append(sum.NotPredicted, fmt.Sprintf("%s %v: classes %v, dependencies %v", a.Type, a.Txns, names, a.Rels))
		}
	}
	sum.CyclesObserved = 0
	for _, c := range rep.Cycles {
		if c.ObservedCount > 0 {
			sum.CyclesObserved++
		}
	}
	sort.Strings(sum.Checkers)
}
