package polygraph

import (
	"strconv"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/graph"
)

// explainer renders edges for graph.Explain.
type explainer struct {
	p      *problem
	label  map[int32]string // constraint -> "C1" (a choice of the core)
	forced map[int32]string // constraint -> "F1" (fixed by pruning)
}

func (x *explainer) Explain(from, to int32, rel graph.Rel, why graph.Why) string {
	h := x.p.h
	a, b := h.TxnName(from), h.TxnName(to)
	k := "key " + h.KeyName(why.Key)
	switch rel {
	case graph.Realtime:
		if why.Note == noteTS {
			ta, tb := &h.Txns[from], &h.Txns[to]
			return a + " committed (commit_ts " + ta.CommitTS.String() + ") no later than " + b + " took its snapshot (start_ts " + tb.StartTS.String() +
				"), so " + a + " is in " + b + "'s snapshot: " + a + " < " + b + " (visibility, database timestamps)"
		}
	case graph.WR:
		if x.p.lists {
			return b + " read a list of " + k + " ending in " + h.ValueName(why.V1) + ", which " + a + " appended, so " + a + " < " + b + " (wr)"
		}
		return b + " read " + k + " = " + h.ValueName(why.V1) + ", which " + a + " wrote, so " + a + " < " + b + " (wr)"
	case graph.WW:
		switch why.Note {
		case noteRMW:
			return b + " read " + k + " = " + h.ValueName(why.V1) + " from " + a + " and overwrote it with " + h.ValueName(why.V2) +
				", so " + a + "'s version directly precedes " + b + "'s (write combining), so " + a + " < " + b + " (ww)"
		case noteVO:
			if x.p.lists {
				return "the longest read of " + k + " shows " + a + "'s appends (ending in " + h.ValueName(why.V1) + ") right before " + b + "'s (ending in " + h.ValueName(why.V2) + "), so " + a + " < " + b + " (ww)"
			}
			return "the given version order of " + k + " puts " + h.ValueName(why.V1) + " (" + a + ") before " + h.ValueName(why.V2) + " (" + b + "), so " + a + " < " + b + " (ww)"
		case noteGivenVO:
			return "the given version order of " + k + " puts " + a + "'s appends (ending in " + h.ValueName(why.V1) + ") before " + b + "'s (ending in " + h.ValueName(why.V2) + "), so " + a + " < " + b + " (ww)"
		case noteListTail:
			return "no read of " + k + " shows " + b + "'s append " + h.ValueName(why.V2) + ", so it comes after " + a + "'s " + h.ValueName(why.V1) + ", the last version the longest read shows, so " + a + " < " + b + " (ww)"
		case noteEvidence:
			return a + " and " + b + " both wrote " + k + " and " + a + " comes first in " + x.p.ev.rankOf + " (" + x.p.rankString(from) + " < " + x.p.rankString(to) + "), which is the version order here, so " + a + " < " + b + " (ww)"
		case noteChoice, noteChoiceB:
			return x.cond(why.Op2, why.Note) + a + "'s version " + k + " = " + h.ValueName(why.V1) + " precedes " + b + "'s " + h.ValueName(why.V2) + ", so " + a + " < " + b + " (ww)"
		}
	case graph.RW:
		read := a + " read " + k + " = " + h.ValueName(why.V1)
		if x.p.lists {
			read = a + " read a list of " + k + " ending in " + h.ValueName(why.V1)
		}
		if why.Op1 >= 0 {
			read += " (" + h.TxnName(why.Op1) + "'s version)"
		}
		tail := ", so " + a + " < " + b + " (rw)"
		switch why.Note {
		case noteInitial:
			if x.p.lists {
				return a + " read " + k + " empty, before " + b + "'s append of " + h.ValueName(why.V2) + tail
			}
			return a + " read the initial state of " + k + ", which " + b + "'s write of " + h.ValueName(why.V2) + " overwrites" + tail
		case noteRMW:
			return read + ", which " + b + " read and overwrote with " + h.ValueName(why.V2) + tail
		case noteVO:
			if x.p.lists {
				return read + ", and the longest read of " + k + " shows " + b + "'s appends right after it" + tail
			}
			return read + ", and the given version order of " + k + " puts " + b + "'s " + h.ValueName(why.V2) + " right after it" + tail
		case noteGivenVO:
			return read + ", and the given version order of " + k + " puts " + b + "'s appends after it" + tail
		case noteListTail:
			return read + ", and " + b + "'s append " + h.ValueName(why.V2) + ", which no read shows, comes after it" + tail
		case noteEvidence:
			return read + ", and " + b + "'s write of " + h.ValueName(why.V2) + " comes after that version in " + x.p.ev.rankOf + tail
		case noteChoice, noteChoiceB:
			return read + ", and " + x.cond(why.Op2, why.Note) + b + "'s " + h.ValueName(why.V2) + " comes after that version" + tail
		}
	}
	return ""
}

// cond names the ordering assumption of a constraint edge.
func (x *explainer) cond(c int32, note uint8) string {
	if l, ok := x.label[c]; ok {
		return "if (choice " + l + ") "
	}
	if l, ok := x.forced[c]; ok {
		if fx := x.p.cons[c].fixed; (fx > 0) == (note == noteChoice) {
			return "as forced (" + l + ") "
		}
		return "if, against " + l + ", "
	}
	return "if "
}

// toGraphEdges turns a cycle of logical edges into history-level edges,
// collapsing real-time paths through time points into one realtime edge.
func (p *problem) toGraphEdges(cyc cycleRec) []graph.Edge {
	// rotate so the cycle starts at a transaction node
	start := 0
	for i, ei := range cyc {
		if p.edges[ei].from < p.nTxn {
			start = i
			break
		}
	}
	var out []graph.Edge
	for j := 0; j < len(cyc); j++ {
		e := &p.edges[cyc[(start+j)%len(cyc)]]
		if e.rel == graph.Realtime {
			from := e.from
			for e.to >= p.nTxn && j+1 < len(cyc) {
				j++
				e = &p.edges[cyc[(start+j)%len(cyc)]]
			}
			out = append(out, graph.Edge{From: p.txnOf[from], To: p.txnOf[e.to], Rel: graph.Realtime, Why: graph.Why{Key: -1, Op1: -1, Op2: -1, Note: e.why.Note}})
			continue
		}
		out = append(out, graph.Edge{From: p.txnOf[e.from], To: p.txnOf[e.to], Rel: e.rel, Why: e.why})
	}
	return out
}

func (p *problem) explainCycle(cyc cycleRec, x *explainer) (graph.Cycle, []check.Step, string) {
	edges := p.toGraphEdges(cyc)
	c := graph.Cycle{Edges: edges, Type: graph.Classify(edges)}
	var g *graph.Graph
	steps, text := g.Explain(c, p.disp, x)
	return c, steps, text
}

// knownCycleAnomalies reports cycles of the history's own dependency graph
// (no ordering choice involved), classified like every txray cycle.
func (p *problem) knownCycleAnomalies(core []cycleRec) []check.Anomaly {
	x := &explainer{p: p}
	var out []check.Anomaly
	for _, cyc := range core {
		c, steps, text := p.explainCycle(cyc, x)
		txns := c.Txns()
		out = append(out, check.Anomaly{Type: c.Type, Txns: txns, Cycle: steps, Explanation: text, Ops: check.TxnOps(p.disp, txns...)})
	}
	return out
}

// maxForced bounds the forced orders rendered in one explanation.
const maxForced = 12

// coreAnomaly renders an unsatisfiable core: the choices involved, every
// cycle (each closed by some combination of them), and the orders pruning
// forced, each with the cycle its opposite would close.
func (p *problem) coreAnomaly(typ string, core []cycleRec) check.Anomaly {
	h := p.h
	x := &explainer{p: p, label: map[int32]string{}, forced: map[int32]string{}}
	var choices []int32
	keys := map[string]bool{}
	var keyList []string
	var forcedQ []int32
	note := func(ei int32) {
		e := &p.edges[ei]
		if e.lit == 0 {
			return
		}
		c := abs32(e.lit) - 1
		if p.cons[c].fixed == 0 || p.cons[c].variable != 0 {
			if _, ok := x.label[c]; !ok {
				x.label[c] = "C" + strconv.Itoa(len(choices)+1)
				choices = append(choices, c)
			}
		} else if _, ok := x.forced[c]; !ok {
			x.forced[c] = "F" + strconv.Itoa(len(x.forced)+1)
			forcedQ = append(forcedQ, c)
		}
		if kn := h.KeyName(p.cons[c].key); !keys[kn] {
			keys[kn] = true
			keyList = append(keyList, kn)
		}
	}
	for _, cyc := range core {
		for _, ei := range cyc {
			note(ei)
		}
	}
	var b strings.Builder
	txnSet := map[int32]bool{}
	var txns []int32
	addTxn := func(t int32) {
		if !txnSet[t] {
			txnSet[t] = true
			txns = append(txns, t)
		}
	}
	var steps []check.Step
	if len(choices) > 0 {
		b.WriteString("Every order of the writers of " + plural("key", len(keyList)) + " " + strings.Join(keyList, ", ") + " leads to one of the cycles below. The choices:\n")
		for _, c := range choices {
			cn := &p.cons[c]
			b.WriteString("  " + x.label[c] + ": on key " + h.KeyName(cn.key) + ", does " + h.TxnName(p.txnOf[cn.x]) + "'s write come before or after " + h.TxnName(p.txnOf[cn.y]) + "'s?\n")
		}
	} else {
		b.WriteString("The orders below are forced (each opposite order closes a cycle), and together they close a cycle, so no order of the writers works.\n")
	}
	for i, cyc := range core {
		c, st, text := p.explainCycle(cyc, x)
		for _, t := range c.Txns() {
			addTxn(t)
		}
		if i == 0 {
			steps = st
		}
		b.WriteString("Cycle " + strconv.Itoa(i+1) + ":\n" + indent(text) + "\n")
	}
	for i := 0; i < len(forcedQ) && i < maxForced; i++ {
		c := forcedQ[i]
		cn := &p.cons[c]
		g := p.physGraph(p.fixedSel(cn.round))
		cyc := p.closingCycle(g, cn.reason, cn.round)
		for _, ei := range cyc[1:] {
			note(ei)
		}
		first, second := cn.x, cn.y
		if cn.fixed < 0 {
			first, second = second, first
		}
		b.WriteString(x.forced[c] + ": on key " + h.KeyName(cn.key) + ", the writes of " + h.TxnName(p.txnOf[first]) + "'s chain come before " +
			h.TxnName(p.txnOf[second]) + "'s, because the opposite order closes this cycle:\n")
		_, _, text := p.explainCycle(cyc, x)
		b.WriteString(indent(text) + "\n")
	}
	if len(forcedQ) > maxForced {
		b.WriteString("(" + strconv.Itoa(len(forcedQ)-maxForced) + " more forced orders not shown.)\n")
	}
	b.WriteString("So no version order of " + strings.Join(keyList, ", ") + " gives an acyclic dependency graph: the history violates the model.")
	return check.Anomaly{Type: typ, Txns: txns, Cycle: steps, Explanation: b.String(), Ops: check.TxnOps(p.disp, txns...)}
}

func plural(s string, n int) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// rankString renders the evidence timestamp that orders history txn t.
func (p *problem) rankString(t int32) string {
	if p.ev.rank == nil {
		return "-"
	}
	ts, _ := p.ev.rank(&p.h.Txns[t])
	return ts.String()
}
