package regread

import (
	"fmt"

	"github.com/txray/txray/history"
)

// DropInitialTxn removes h's explicit initial transaction, if Analyze
// recognises one (the rule in the package comment), and turns every read of
// a value it wrote into a read of the initial state (history.NoValue), so
// that every checker, not only those that consult Analysis.InitTxn, sees it
// as the initial state and not as one more concurrent writer. It renumbers
// Txn.Index, shifts Seq in the initial transaction's session, counts the
// transaction in h.Ignored["explicit initial transaction"] and adds a note.
// It reports whether a transaction was removed. Decoders of formats whose
// producers write such a transaction (PolySI/IsoVista text) call it.
//
// The rewrite is exact: the rule requires that no other transaction writes
// the initial transaction's value to any of its keys and that no committed
// transaction reads the state before it, so every read of that value is a
// read of the initial transaction's write.
func DropInitialTxn(h *history.History, opts Options) bool {
	a := Analyze(h, opts)
	if a.InitTxn != 0 {
		return false
	}
	t0 := h.Txns[0]
	val := t0.Ops[0].Value
	mine := make([]bool, h.Keys.Len())
	for _, o := range t0.Ops {
		mine[o.Key] = true
	}
	rewritten := 0
	h.Txns = h.Txns[1:]
	for i := range h.Txns {
		t := &h.Txns[i]
		t.Index = int32(i)
		if t0.Session >= 0 && t.Session == t0.Session {
			t.Seq--
		}
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind == history.Read && !o.IsList && o.Key >= 0 && int(o.Key) < len(mine) && mine[o.Key] && o.Value == val {
				o.Value = history.NoValue
				rewritten++
			}
		}
	}
	h.Ignore("explicit initial transaction", 1)
	h.Notes = append(h.Notes, fmt.Sprintf("the first transaction (%s) writes %s to all %d keys and nothing else, and nobody observed the state before it: it was taken as the initial state and removed; %d read(s) of its values became reads of the initial state",
		txnLabel(&t0), h.ValueName(val), len(t0.Ops), rewritten))
	return true
}

func txnLabel(t *history.Txn) string {
	if t.ID != "" {
		return "id " + t.ID
	}
	return "T0"
}
