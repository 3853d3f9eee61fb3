package check

import (
	"context"
	"fmt"

	"github.com/txray/txray/history"
)

// NothingCommitted reports whether no transaction of h committed or may
// have committed (every one aborted, or there is none): no isolation level
// constrains such a history, so a verdict of valid on it would be a claim
// about nothing (docs/design.md §6, "never valid after checking nothing").
// Transactions of unknown outcome count as possibly committed, as every
// checker treats them.
func NothingCommitted(h *history.History) bool {
	if h == nil {
		return true
	}
	for i := range h.Txns {
		if h.Txns[i].Status != history.Aborted {
			return false
		}
	}
	return true
}

// VacuousReason is the Reason of a verdict made unknown because nothing
// committed.
func VacuousReason(h *history.History) string {
	n := 0
	if h != nil {
		n = len(h.Txns)
	}
	if n == 0 {
		return "the history has no transaction: nothing was checked"
	}
	return fmt.Sprintf("no transaction committed (all %d aborted): nothing was checked", n)
}

// vacuousGuard wraps every registered checker: a valid verdict on a history
// in which nothing committed becomes unknown with VacuousReason. Invalid
// verdicts stand (an aborted transaction's read can still show a violation,
// e.g. Leopard's consistent-read check), and so do unknown ones.
type vacuousGuard struct{ Checker }

// Check implements Checker.
func (g vacuousGuard) Check(ctx context.Context, h *history.History, opts Options) (*Result, error) {
	r, err := g.Checker.Check(ctx, h, opts)
	if err != nil || r == nil {
		return r, err
	}
	if r.Verdict == Valid && NothingCommitted(h) {
		r.Verdict = Unknown
		r.addReason(VacuousReason(h))
	}
	return r, nil
}
