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
	// A session that held only the initial transaction is gone: rebuild
	// the session interner so session counts stay honest.
	if t0.Session >= 0 {
		alone := true
		for i := range h.Txns {
			if h.Txns[i].Session == t0.Session {
				alone = false
				break
			}
		}
		if alone {
			old := h.Sessions
			h.Sessions = history.NewInterner()
			remap := make([]int32, old.Len())
			for i := range remap {
				remap[i] = -1
			}
			for i := range h.Txns {
				t := &h.Txns[i]
				if t.Session < 0 || int(t.Session) >= len(remap) {
					continue
				}
				if remap[t.Session] < 0 {
					remap[t.Session] = h.Sessions.Scalar(old.Get(t.Session))
				}
				t.Session = remap[t.Session]
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

// InitialStateView returns h as checkers that know only nil as the initial
// state should see it: every read Analyze resolved to the initial state
// (WriterOf = Initial) reads nil, and the explicit initial transaction, if
// any, keeps its place (so transaction indices are unchanged) but loses its
// ops. It copies only what it changes (the Txns slice and the ops of the
// transactions it rewrites) and returns h itself when nothing changes; h is
// never modified. n is the number of reads rewritten.
func (a *Analysis) InitialStateView(h *history.History) (view *history.History, n int) {
	var txns []history.Txn
	for ti := range h.Txns {
		t := &h.Txns[ti]
		var ops []history.Op
		for j := range t.Ops {
			o := &t.Ops[j]
			if o.Kind != history.Read || o.IsList || o.Value == history.NoValue || a.WriterOf(int32(ti), j) != Initial {
				continue
			}
			if ops == nil {
				ops = append([]history.Op(nil), t.Ops...)
			}
			ops[j].Value = history.NoValue
			n++
		}
		if ops == nil && int32(ti) != a.InitTxn {
			continue
		}
		if txns == nil {
			txns = append([]history.Txn(nil), h.Txns...)
		}
		if int32(ti) == a.InitTxn {
			ops = []history.Op{}
		}
		txns[ti].Ops = ops
	}
	if txns == nil {
		return h, 0
	}
	v := *h
	v.Txns = txns
	return &v, n
}
