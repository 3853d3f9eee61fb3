package findings

import (
	"context"
	"fmt"
	"slices"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"

	// The independent checker that confirms a cycle.
	_ "github.com/txray/txray/check/polygraph"
)

// PostgresSSIRace reports whether r, an invalid verdict on h (a history
// recorded from PostgreSQL at SERIALIZABLE), is explained by PostgreSQL's
// own SSI race (docs/findings.md: SERIALIZABLE sometimes commits a
// write skew through a pivot): every anomaly r reports is a G2-item, and
// polygraph, which shares no inference with the list-append and
// rw-register checkers (a SAT search over the possible version orders),
// rejects h under serializable as well. The text says what was seen.
//
// Tests of the recorder that assert "PostgreSQL serializable is valid" use
// it to tell that true finding from a txray fault; anything else (another
// anomaly type, or a cycle polygraph does not confirm) is not explained.
func PostgresSSIRace(ctx context.Context, h *history.History, r *check.Result) (bool, string) {
	if r == nil || r.Verdict != check.Invalid || len(r.AnomalyTypes) == 0 {
		return false, "not an invalid verdict"
	}
	if slices.ContainsFunc(r.AnomalyTypes, func(ty string) bool { return ty != "G2-item" }) {
		return false, fmt.Sprintf("anomalies other than G2-item: %v", r.AnomalyTypes)
	}
	pg, ok := check.Lookup("polygraph")
	if !ok {
		return false, "polygraph is not registered"
	}
	if a, why := pg.Applies(h, "serializable"); a <= 0 {
		return false, "polygraph does not apply: " + why
	}
	pr, err := pg.Check(ctx, h, check.Options{Model: "serializable"})
	if err != nil {
		return false, "polygraph: " + err.Error()
	}
	if pr.Verdict != check.Invalid {
		return false, fmt.Sprintf("polygraph does not confirm the cycle: %v %s", pr.Verdict, pr.Reason)
	}
	return true, fmt.Sprintf("PostgreSQL SERIALIZABLE committed %d G2-item (the known SSI race, docs/findings.md); polygraph confirms: %v",
		len(r.Anomalies), pr.AnomalyTypes)
}
