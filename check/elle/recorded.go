package elle

import (
	"fmt"
	"slices"
	"strings"

	"github.com/txray/txray/history"
)

// Recorded version orders (History.VersionOrder, version_order records).
//
// A history may carry the version order of some keys, recovered from the
// database (record/certificate.go: chains of replaced versions or the
// commit order; the simulator's installed versions). Adya's dependency
// graph is defined over the database's version order (Adya 1999 §3.1.2),
// so where one is recorded rw-register uses it as evidence, like emme and
// polygraph do, instead of inferring: it is the version source "recorded
// version order", tried right after initial-state and before the optional
// inferred ones (wfr-keys, sequential-keys, linearizable-keys). Its version
// edges are the consecutive pairs of the listed versions, so every ww and
// rw edge they give is Adya's (ww between consecutive versions' writers, rw
// from each reader of a version to the writer of the next), and each such
// edge is explained as coming from the recorded order, with the listed
// neighbourhood, so that a person can check it by hand.
//
// The recorded order is first checked against the history; a key's order
// is used only if it is a version order of that history:
//
//   - every listed value was written to the key by a transaction that did
//     not abort, as its last write of the key (Adya: only committed
//     transactions' final writes are installed), and no value is listed
//     twice. A value written by an unknown-outcome transaction may be
//     listed: the database installed it, so that transaction committed;
//   - every committed transaction's last write of the key is listed (a
//     database's version order holds every committed version);
//   - the value an explicit initial transaction wrote (taken as the initial
//     state, package regread) may lead the list; it is the initial state.
//
// An order that fails is a contradiction between two pieces of evidence
// (a database that lost a committed write or installed an aborted one, or
// a recorder fault), and neither is silently preferred: the key is checked
// without the order (inference and completion, as for keys with no order),
// the contradiction is counted (stats version_order_rejected_keys), and
// the verdict cannot be valid: a valid result becomes unknown with the
// contradictions in the reason, and an invalid one (from anomalies found
// without the rejected orders) stays invalid with a warning. This is how
// emme treats the same certificate inconsistencies (reasons for unknown,
// never silently resolved); polygraph uses the listed versions it can
// place and ignores the rest.
//
// Unknown-outcome writes the order does not list are left unordered (the
// transaction may have aborted, or the recorder lists an unknown-outcome
// write only once a later write replaced it): inference and the version
// order completion (completion.go) place them, and the key counts as
// completed, not as ordered by the record.
//
// A contradiction between the recorded order and the history's reads is
// not a reason for unknown but what the order reveals: a transaction that
// read v and wrote v' where the order lists v' before v closes a G1c (the
// writer of v -wr-> T, T's v' -ww-> ... -> v's writer), found by the cycle
// search with each ww step explained by the recorded order. A
// contradiction with an inferred source (wfr-keys, sequential-keys,
// linearizable-keys: assumptions the caller declares about the database)
// makes that source's version graph cyclic, which is reported as
// cyclic-versions naming both sources, edge by edge; the recorded order is
// kept for the key and the inferred source dropped, as for any two
// sources that disagree.
//
// Params "use-version-order" = "false" ignores the recorded order (to
// compare with the inference alone).

// srcRecorded is the version source of recorded version order edges
// (graph.Why.Note of their ww/rw edges).
const srcRecorded uint8 = 4

// voState is the recorded version order as rw-register uses it.
type voState struct {
	order map[int32][]int32 // nil: none used
	// initVal: per key, the value the explicit initial transaction wrote
	// (the initial state; it may lead the key's list).
	initVal map[int32]int32
	// seen: per value id, 1 + key id whose list named it (scratch).
	seen []int32
	// counters
	used, rejected, unknownWriters int
	rejections                     []string // first few, for the reason
	// per key: the order was used (keyShape's caller classifies the key)
	byRecorded, byInference, byCompletion int
}

// maxRejections bounds the contradictions named in the reason.
const maxRejections = 4

// recordedEdges checks key k's recorded order against the history and
// returns its version edges (consecutive listed versions, node ids of g),
// or ok=false when the key has no recorded order or it contradicts the
// history (counted and described in p.vo). writes are the key's writes
// (every transaction), with p.writerOf filled for them; touches its
// touches. It never adds nodes to g: every listed version it accepts is
// the external write of a touch.
func (p *rwKeys) recordedEdges(k int32, writes []opRef, touches []touch) (edges []vEdge, ok bool) {
	vo := &p.vo
	if vo.order == nil {
		return nil, false
	}
	ord, has := vo.order[k]
	if !has {
		return nil, false
	}
	x, h := p.x, p.x.h
	stamp := k + 1
	var why string
	unknown := 0
	writer := make([]int32, 0, len(ord)) // txn per kept entry
	vals := make([]int32, 0, len(ord))
	for i, v := range ord {
		if v < 0 || int(v) >= x.nv {
			why = fmt.Sprintf("key %s lists a value nobody wrote to it", h.KeyName(k))
			break
		}
		if vo.seen[v] == stamp {
			why = fmt.Sprintf("key %s lists %s twice", h.KeyName(k), h.ValueName(v))
			break
		}
		vo.seen[v] = stamp
		f := p.writerOf[v]
		if f == 0 {
			if iv, isInit := vo.initVal[k]; isInit && iv == v {
				if i == 0 {
					continue // the initial state
				}
				why = fmt.Sprintf("key %s lists %s, the initial value (the initial transaction's), after other versions", h.KeyName(k), h.ValueName(v))
				break
			}
			why = fmt.Sprintf("key %s lists %s, which no transaction wrote to key %s", h.KeyName(k), h.ValueName(v), h.KeyName(k))
			break
		}
		w := writes[f-1]
		switch st := h.Txns[w.t].Status; {
		case st == history.Aborted:
			why = fmt.Sprintf("key %s lists %s, written by %s, which aborted", h.KeyName(k), h.ValueName(v), h.TxnName(w.t))
		case x.interm.has(x.opBase[w.t] + w.o):
			why = fmt.Sprintf("key %s lists %s, an intermediate write of %s", h.KeyName(k), h.ValueName(v), h.TxnName(w.t))
		case p.vnode[v] == 0:
			// not a version node: cannot happen for a final write of a
			// transaction that did not abort
			why = fmt.Sprintf("key %s lists %s, which is not a version of the key", h.KeyName(k), h.ValueName(v))
		case st == history.Unknown:
			unknown++
		}
		if why != "" {
			break
		}
		writer = append(writer, w.t)
		vals = append(vals, v)
	}
	if why == "" {
		for i := range touches {
			tc := &touches[i]
			if tc.wOp < 0 || h.Txns[tc.t].Status != history.Committed {
				continue
			}
			if v := x.writeVal(tc); vo.seen[v] != stamp {
				why = fmt.Sprintf("key %s omits %s, which committed %s wrote", h.KeyName(k), h.ValueName(v), h.TxnName(tc.t))
				break
			}
		}
	}
	if why != "" {
		vo.rejected++
		if len(vo.rejections) < maxRejections {
			vo.rejections = append(vo.rejections, why)
		}
		return nil, false
	}
	vo.used++
	vo.unknownWriters += unknown
	for i := 1; i < len(vals); i++ {
		edges = append(edges, vEdge{k: k, from: p.vnode[vals[i-1]] - 1, to: p.vnode[vals[i]] - 1, src: srcRecorded, a: writer[i-1], b: writer[i]})
	}
	return edges, true
}

// recordedWhy explains a recorded version edge v1 -> v2 of key k (values),
// showing where the record lists them.
func (p *rwKeys) recordedWhy(k, v1, v2 int32) string {
	h := p.x.h
	ord := p.vo.order[k]
	i := slices.Index(ord, v1)
	where := ""
	if i >= 0 {
		where = ": " + listWindow(h, ord, i, i+1)
	}
	return fmt.Sprintf("%s precedes %s: the recorded version order of key %s (version_order record) lists %s right before %s%s",
		h.ValueName(v1), h.ValueName(v2), h.KeyName(k), h.ValueName(v1), h.ValueName(v2), where)
}

// rejectionText summarizes the rejected orders for a reason or warning.
func (vo *voState) rejectionText() string {
	s := strings.Join(vo.rejections, "; ")
	if vo.rejected > len(vo.rejections) {
		s += fmt.Sprintf("; ... (%d keys in all)", vo.rejected)
	}
	return fmt.Sprintf("the recorded version order contradicts the history on %d key(s) (a key's version order lists each committed transaction's last write of the key once, may list unknown-outcome ones', and lists nothing else): %s. Those keys were checked without it (inference and completion), and a valid verdict cannot rest on evidence that contradicts itself (emme reports the same certificate inconsistencies)",
		vo.rejected, s)
}
