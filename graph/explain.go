package graph

import (
	"strconv"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// Explain renders a cycle for people (Elle §4.3: every anomaly comes with
// the transactions and, for each edge, why it holds). steps has one
// check.Step per edge, Why from ex (ex may be nil: process and realtime
// edges then get OrderSentence, data edges a bare relation statement).
// text lists the transactions (h.TxnString), then each edge's sentence, and
// ends in the contradiction, e.g. "So T1 < T2 < T3 < T1: a cycle, which
// G-single-item forbids (exactly one anti-dependency (rw))."
func (g *Graph) Explain(c Cycle, h *history.History, ex Explainer) (steps []check.Step, text string) {
	typ := c.Type
	if typ == "" {
		typ = Classify(c.Edges)
	}
	var b strings.Builder
	b.WriteString("Let:\n")
	for _, e := range c.Edges {
		b.WriteString("  ")
		b.WriteString(txnString(h, e.From))
		b.WriteByte('\n')
	}
	b.WriteString("Then:\n")
	for _, e := range c.Edges {
		why := ""
		if ex != nil {
			why = ex.Explain(e.From, e.To, e.Rel, e.Why)
		}
		if why == "" {
			if e.Rel == Process || e.Rel == Realtime {
				why = OrderSentence(h, e.From, e.To, e.Rel)
			} else {
				why = txnName(h, e.From) + " < " + txnName(h, e.To) + " by a " + e.Rel.String() + " dependency"
			}
		}
		st := check.Step{From: e.From, To: e.To, Rel: e.Rel.String(), Why: why}
		if e.Rel&Item != 0 && e.Why.Key >= 0 && h != nil && h.Keys != nil && int(e.Why.Key) < h.Keys.Len() {
			st.Key = h.KeyName(e.Why.Key)
		}
		steps = append(steps, st)
		b.WriteString("  - ")
		b.WriteString(why)
		b.WriteString(".\n")
	}
	b.WriteString("So ")
	for i, e := range c.Edges {
		if i > 0 {
			b.WriteString(" < ")
		}
		b.WriteString(txnName(h, e.From))
	}
	if len(c.Edges) > 0 {
		b.WriteString(" < ")
		b.WriteString(txnName(h, c.Edges[0].From))
	}
	b.WriteString(": a cycle")
	if bi, vi, ok := parseType(typ); ok {
		b.WriteString(", which " + typ + " forbids (" + baseWhat[bi] + variantWhat[vi] + ")")
	}
	b.WriteString(".")
	return steps, b.String()
}

// OrderSentence explains a process or realtime edge from the history alone:
// "T1 completed at 105 before T2 was invoked at 110, so T1 < T2 (real-time
// order)". Explainers may delegate such edges to it.
func OrderSentence(h *history.History, from, to int32, rel Rel) string {
	a, b := txnName(h, from), txnName(h, to)
	switch rel {
	case Process:
		if t1, t2 := txn(h, from), txn(h, to); t1 != nil && t2 != nil {
			sess := strconv.Itoa(int(t1.Session))
			if h.Sessions != nil && t1.Session >= 0 && int(t1.Session) < h.Sessions.Len() {
				sess = h.Sessions.String(t1.Session)
			}
			return "session " + sess + " ran " + a + " (#" + strconv.Itoa(int(t1.Seq)) + ") before " + b +
				" (#" + strconv.Itoa(int(t2.Seq)) + "), so " + a + " < " + b + " (process order)"
		}
		return a + " precedes " + b + " in their session, so " + a + " < " + b + " (process order)"
	case Realtime:
		if t1, t2 := txn(h, from), txn(h, to); t1 != nil && t2 != nil && t1.HasTime && t2.HasTime {
			return a + " completed at " + strconv.FormatInt(max(t1.Complete, t1.Invoke), 10) + " before " + b +
				" was invoked at " + strconv.FormatInt(t2.Invoke, 10) + ", so " + a + " < " + b + " (real-time order)"
		}
		return a + " completed before " + b + " was invoked, so " + a + " < " + b + " (real-time order)"
	}
	return a + " < " + b + " (" + rel.String() + ")"
}

func txn(h *history.History, i int32) *history.Txn {
	if h == nil || i < 0 || int(i) >= len(h.Txns) {
		return nil
	}
	return &h.Txns[i]
}

func txnName(h *history.History, i int32) string {
	if txn(h, i) == nil {
		return "T" + strconv.Itoa(int(i))
	}
	return h.TxnName(i)
}

func txnString(h *history.History, i int32) string {
	if txn(h, i) == nil {
		return "T" + strconv.Itoa(int(i))
	}
	return h.TxnString(i)
}
