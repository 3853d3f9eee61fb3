package polygraph

import (
	"slices"
	"sort"
	"strconv"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/regread"
	"github.com/txray/txray/graph"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// Provenance notes (graph.Why.Note) of ww and rw edges: where the order of
// two versions of a key comes from.
const (
	noteRead     uint8 = iota // wr: the reader read the writer's value
	noteInitial               // rw: the reader read the initial state
	noteRMW                   // ww/rw: write combining (the later writer read the earlier one's value and overwrote it)
	noteVO                    // ww/rw: the version order given as evidence
	noteChoice                // ww/rw: option A of a writer pair (a constraint); Why.Op2 = constraint id
	noteChoiceB               // ww/rw: option B of that pair
	noteEvidence              // ww/rw: the version order from commit order / timestamps (evidence.go)
	noteListTail              // ww/rw: an append no read shows follows the last version the longest read shows
	noteTS                    // realtime: snapshot visibility from database timestamps (SI; evidence.go)
	noteGivenVO               // ww/rw: a list key's version order given as evidence (lists.go)
)

// ledge is a logical edge of the polygraph: between transaction nodes, or
// (realtime only) through a time point. lit is 0 for a known edge, +c+1 when
// it belongs to option A of constraint c, -(c+1) for option B.
type ledge struct {
	from, to int32
	lit      int32
	rel      graph.Rel
	why      graph.Why
}

// constraint is one Cobra choice: for two write chains X and Y of one key,
// X entirely before Y (option A) or Y entirely before X (option B). Each
// option is a set of edges: the ww edge from one chain's last writer to the
// other's first, and an rw edge from every reader of that last writer.
type constraint struct {
	key      int32
	x, y     int32       // first writer (node) of each chain, for rendering
	opt      [2][2]int32 // edge index ranges [start, end) of option A, B
	fixed    int8        // 0 unresolved, +1 A, -1 B (fixed by pruning)
	round    int32       // pruning round that fixed it
	reason   int32       // edge of the rejected option that closed a cycle
	variable int32       // SAT variable (1-based), 0 if not in the SAT problem
}

// problem is the polygraph of one history under one model.
type problem struct {
	h       *history.History
	si      bool // SI encoding: acyclicity of (D ; RW?) (see graph.go)
	session bool
	rt      bool
	nTxn    int32
	nPoints int32
	txnOf   []int32 // node -> history txn index
	nodeOf  []int32 // history txn -> node, -1 if not included
	edges   []ledge
	cons    []constraint
	// knownEnd: edges[:knownEnd] are known (lit 0); constraint options follow.
	knownEnd int32
	// collected order-free anomalies (lost updates)
	anomalies []check.Anomaly
	stats     map[string]any
	warnings  []string
	deferCons []keyChains
	pointTxn  []int32 // realtime point -> node of the completion it stands for
	pointTS   []history.Timestamp
	ev        evidence
	lists     bool              // the history is the register view of a list-append history (lists.go)
	listVO    map[int32][]int32 // list keys' version orders given as evidence, as writers' last values
	disp      *history.History  // the history as given, for rendering transactions (h, or the list history)
	evWW      int               // ww edges from evidence
	evRW      int               // rw edges from evidence
	visSkip   int               // transactions left out of visibility (start_ts >= own commit_ts)
}

// nodeKey orders physical nodes for heuristics by the history's completion
// order (a node, its SI copy and its real-time point come together).
func (p *problem) nodeKey(v int32) int64 {
	switch {
	case v < p.nTxn:
		return int64(v) * 2
	case p.si && v < 2*p.nTxn:
		return int64(v-p.nTxn)*2 + 1
	case p.si:
		return int64(p.pointTxn[v-2*p.nTxn])*2 + 1
	}
	return int64(p.pointTxn[v-p.nTxn])*2 + 1
}

// extRead is one transaction's external read of one key.
type extRead struct {
	node   int32
	writer int32 // node, or regread.Initial
	op     int32
	val    int32
}

func (p *problem) addEdge(from, to int32, lit int32, rel graph.Rel, why graph.Why) {
	if from == to {
		return
	}
	p.edges = append(p.edges, ledge{from, to, lit, rel, why})
}

// build constructs the polygraph: nodes, known edges (wr, write-combined
// ww chains, initial-state rw, version-order evidence, session order,
// real-time order) and one constraint per pair of write chains of a key.
//
// counted is non-nil for the register view of a list-append history: the
// transactions the list checks count as committed (lists.go).
func build(h *history.History, ra *regread.Analysis, si, session, rt bool, ev evidence, counted []bool, listVO map[int32][]int32) *problem {
	lists := counted != nil
	p := &problem{h: h, disp: h, si: si, session: session, rt: rt, stats: map[string]any{}, ev: ev, lists: lists, listVO: listVO}
	n := len(h.Txns)
	p.nodeOf = make([]int32, n)
	for i := range p.nodeOf {
		p.nodeOf[i] = -1
	}
	// Nodes: committed transactions, plus unknown-outcome ones some
	// included read observed (an observed write means it committed).
	include := make([]bool, n)
	var work []int32
	for i := range h.Txns {
		if h.Txns[i].Status == history.Committed && int32(i) != ra.InitTxn || lists && counted[i] {
			include[i] = true
			work = append(work, int32(i))
		}
	}
	for len(work) > 0 {
		t := work[len(work)-1]
		work = work[:len(work)-1]
		for j := range h.Txns[t].Ops {
			if h.Txns[t].Ops[j].Kind != history.Read {
				continue
			}
			if w := ra.WriterOf(t, j); w >= 0 && !include[w] && w != ra.InitTxn && h.Txns[w].Status == history.Unknown {
				include[w] = true
				work = append(work, w)
			}
		}
	}
	for i := range h.Txns {
		if include[i] {
			p.nodeOf[i] = int32(len(p.txnOf))
			p.txnOf = append(p.txnOf, int32(i))
		}
	}
	p.nTxn = int32(len(p.txnOf))

	// Per key: final writes (writer node, value, op) and external reads.
	nk := h.Keys.Len()
	type wr struct{ node, val, op int32 }
	writes := make([][]wr, nk)
	reads := make([][]extRead, nk)
	for node, ti := range p.txnOf {
		t := &h.Txns[ti]
		for j := range t.Ops {
			o := &t.Ops[j]
			switch o.Kind {
			case history.Write:
				if o.Value == history.NoValue || lastWrite(t, j) != j {
					continue
				}
				writes[o.Key] = append(writes[o.Key], wr{int32(node), o.Value, int32(j)})
			case history.Read:
				if o.IsList || !lists && unknownResult(t, j) {
					continue
				}
				if wroteBefore(t, j) {
					if t.Status == history.Unknown && !ra.Judged(ti) && !lists {
						p.ownWrite(ti, j)
					}
					continue
				}
				if f := firstReadOf(t, j, !lists); f != j {
					if t.Ops[f].Value != o.Value && !lists {
						p.internal(ti, f, j)
					}
					continue
				}
				w := ra.WriterOf(ti, j)
				if t.Status == history.Unknown && o.Value != history.NoValue &&
					(w == regread.NoWriter || w >= 0 && w != ti && readsIntermediate(ra, h, w, o.Key, o.Value)) {
					// The read checks judge committed transactions only; this one's write was
					// observed, so it committed, and its read must have a writer too.
					if !ra.Judged(ti) && !lists { // else regread (or the list checks) reported it
						p.unjustified(ra, ti, j)
					}
					continue
				}
				switch {
				case w == regread.Initial || w == ra.InitTxn && w >= 0:
					reads[o.Key] = append(reads[o.Key], extRead{int32(node), regread.Initial, int32(j), o.Value})
				case w >= 0 && p.nodeOf[w] >= 0 && w != ti:
					reads[o.Key] = append(reads[o.Key], extRead{int32(node), p.nodeOf[w], int32(j), o.Value})
				}
			}
		}
	}

	// Known edges.
	lostUpdates := 0
	var chains [][]int32
	for k := int32(0); k < int32(nk); k++ {
		ws, rs := writes[k], reads[k]
		if len(ws) == 0 && len(rs) == 0 {
			continue
		}
		valOf := map[int32]int32{} // writer node -> value
		opOf := map[int32]int32{}
		for _, w := range ws {
			valOf[w.node] = w.val
			opOf[w.node] = w.op
		}
		readersOf := map[int32][]extRead{}
		var initReaders []extRead
		next := map[int32]int32{} // write combining: writer -> the RMW txn that overwrote what it read
		hasPrev := map[int32]bool{}
		var initRMW []int32
		for _, r := range rs {
			if r.writer == regread.Initial {
				initReaders = append(initReaders, r)
			} else {
				readersOf[r.writer] = append(readersOf[r.writer], r)
				p.addEdge(r.writer, r.node, 0, graph.WR, graph.Why{Key: k, V1: r.val, V2: r.val, Op1: opOf[r.writer], Op2: r.op, Note: noteRead})
			}
			if _, writes := valOf[r.node]; !writes {
				continue
			}
			// r read k and overwrote it: its version directly follows the one it read (under
			// serializability and SI, any version in between would make its read stale or
			// its write conflict). Two such on one version are a lost update.
			if r.writer == regread.Initial {
				for _, o := range initRMW {
					p.lostUpdate(k, -1, o, r.node, valOf)
					lostUpdates++
				}
				initRMW = append(initRMW, r.node)
				continue
			}
			if o, dup := next[r.writer]; dup {
				p.lostUpdate(k, r.writer, o, r.node, valOf)
				lostUpdates++
				continue
			}
			next[r.writer] = r.node
			hasPrev[r.node] = true
		}
		// Chains of write combining, from each writer nobody's RMW overwrote into.
		chains = chains[:0]
		for _, w := range ws {
			if hasPrev[w.node] {
				continue
			}
			c := []int32{w.node}
			seen := map[int32]bool{w.node: true}
			for x, ok := next[w.node]; ok && !seen[x]; x, ok = next[x] {
				c = append(c, x)
				seen[x] = true
			}
			chains = append(chains, c)
		}
		// A cycle of RMWs (T1 read T2's value, T2 read T1's) has no head: its wr edges already
		// form a cycle in the known graph.
		for _, c := range chains {
			for i := 0; i+1 < len(c); i++ {
				a, b := c[i], c[i+1]
				p.addEdge(a, b, 0, graph.WW, graph.Why{Key: k, V1: valOf[a], V2: valOf[b], Op1: opOf[a], Op2: opOf[b], Note: noteRMW})
				for _, r := range readersOf[a] {
					p.addEdge(r.node, b, 0, graph.RW, graph.Why{Key: k, V1: r.val, V2: valOf[b], Op1: p.txnOf[a], Op2: -1, Note: noteRMW})
				}
			}
		}
		// Initial-state readers precede every writer (first writer of every chain suffices).
		for _, r := range initReaders {
			for _, c := range chains {
				p.addEdge(r.node, c[0], 0, graph.RW, graph.Why{Key: k, V1: r.val, V2: valOf[c[0]], Op1: -1, Op2: -1, Note: noteInitial})
			}
		}
		// orderVersions adds ww edges between consecutive versions of vo
		// that ws wrote (and rw edges from each one's readers), and returns
		// byVal (value -> writer node) and the last writer ordered (-1: none).
		orderVersions := func(vo []int32, note uint8) (byVal map[int32]int32, prev int32) {
			byVal = map[int32]int32{}
			for _, w := range ws {
				byVal[w.val] = w.node
			}
			prev = -1
			for _, v := range vo {
				b, ok := byVal[v]
				if !ok {
					continue
				}
				if prev >= 0 {
					p.addEdge(prev, b, 0, graph.WW, graph.Why{Key: k, V1: valOf[prev], V2: v, Op1: opOf[prev], Op2: opOf[b], Note: note})
					for _, r := range readersOf[prev] {
						p.addEdge(r.node, b, 0, graph.RW, graph.Why{Key: k, V1: r.val, V2: v, Op1: p.txnOf[prev], Op2: -1, Note: note})
					}
				}
				prev = b
			}
			return byVal, prev
		}
		// Version order evidence: consecutive listed versions.
		if vo := h.VersionOrder[k]; len(vo) > 1 || lists && len(vo) > 0 {
			byVal, prev := orderVersions(vo, noteVO)
			if lists && prev >= 0 {
				// An append no read shows comes after every version the longest read shows.
				inVO := map[int32]bool{}
				for _, v := range vo {
					if b, ok := byVal[v]; ok {
						inVO[b] = true
					}
				}
				for _, w := range ws {
					if inVO[w.node] {
						continue
					}
					p.addEdge(prev, w.node, 0, graph.WW, graph.Why{Key: k, V1: valOf[prev], V2: w.val, Op1: opOf[prev], Op2: w.op, Note: noteListTail})
					for _, r := range readersOf[prev] {
						p.addEdge(r.node, w.node, 0, graph.RW, graph.Why{Key: k, V1: r.val, V2: w.val, Op1: p.txnOf[prev], Op2: -1, Note: noteListTail})
					}
				}
			}
		}
		if vo := p.listVO[k]; len(vo) > 1 {
			// a list key's version order given as evidence (elements, as writers' last values)
			orderVersions(vo, noteGivenVO)
		}
		if ev.rank != nil && len(ws) > 1 {
			nodes := make([]int32, len(ws))
			for i, w := range ws {
				nodes[i] = w.node
			}
			p.addEvidenceOrder(k, nodes, valOf, opOf, readersOf)
		}
		// Constraints: one per pair of chains.
		p.deferCons = append(p.deferCons, keyChains{k, slices.Clone(chains), readersOf, valOf, opOf})
	}
	if session {
		p.addSessionOrder()
	}
	if rt {
		p.addRealtime()
	}
	if ev.vis {
		p.addVisibility()
	}
	p.knownEnd = int32(len(p.edges))
	if ev.used != nil {
		p.stats["evidence"] = ev.used
		p.stats["evidence_ww_edges"] = p.evWW
		p.stats["evidence_rw_edges"] = p.evRW
		if ev.vis {
			p.stats["evidence_vis_points"] = p.nPoints
			p.stats["evidence_vis_skipped"] = p.visSkip
		}
	}
	p.stats["nodes"] = p.nTxn
	p.stats["known_edges"] = p.knownEnd
	p.stats["lost_updates"] = lostUpdates
	return p
}

// genConstraints creates one constraint per pair of write chains of a key
// (Cobra's constraint). With r, the closure of the known graph, an option
// that would close a cycle is rejected on the spot (pruning round 0): only
// its first closing edge is kept (to explain the rejection), and the other
// option is fixed. It returns the number of pairs and, if both options of
// some pair are impossible, that constraint's index (else -1).
func (p *problem) genConstraints(r reach) (pairs int, conflict int32) {
	conflict = -1
	dropped := 0
	defer func() { p.stats["constraints_unread_dropped"] = dropped }()
	// Reserve: at most 2 ww edges plus the readers of both tails per pair.
	var nPairs, nEdges int
	for _, kc := range p.deferCons {
		reads := 0
		for _, c := range kc.chains {
			reads += len(kc.readersOf[c[len(c)-1]])
		}
		l := len(kc.chains)
		nPairs += l * (l - 1) / 2
		nEdges += l*(l-1) + max(l-1, 0)*reads
	}
	p.cons = slices.Grow(p.cons, nPairs)
	p.edges = slices.Grow(p.edges, nEdges)
	for _, kc := range p.deferCons {
		cs := kc.chains
		for i := 0; i < len(cs); i++ {
			for j := i + 1; j < len(cs); j++ {
				pairs++
				if !p.si && len(cs[i]) == 1 && len(cs[j]) == 1 && len(kc.readersOf[cs[i][0]]) == 0 && len(kc.readersOf[cs[j][0]]) == 0 {
					// Two single writers nobody read: each option is one ww edge. Under
					// serializability any acyclic solution of the rest has a topological
					// order, and ordering the two writers by it keeps the graph acyclic and
					// the key's version order total, so the pair never matters.
					dropped++
					continue
				}
				c := int32(len(p.cons))
				con := constraint{key: kc.k, x: cs[i][0], y: cs[j][0], reason: -1}
				var imp [2]int32
				for o, pair := range [2][2][]int32{{cs[i], cs[j]}, {cs[j], cs[i]}} {
					imp[o] = -1
					if r == nil {
						continue
					}
					a, b := pair[0][len(pair[0])-1], pair[1][0]
					if p.closesPair(r, a, b, graph.WW) {
						imp[o] = 0
						continue
					}
					for k, rd := range kc.readersOf[a] {
						if rd.node != b && p.closesPair(r, rd.node, b, graph.RW) {
							imp[o] = int32(k) + 1
							break
						}
					}
				}
				for o, pair := range [2][2][]int32{{cs[i], cs[j]}, {cs[j], cs[i]}} {
					lit := c + 1
					if o == 1 {
						lit = -lit
					}
					start := int32(len(p.edges))
					a, b := pair[0][len(pair[0])-1], pair[1][0]
					note := noteChoice + uint8(o)
					ww := ledge{a, b, lit, graph.WW, graph.Why{Key: kc.k, V1: kc.valOf[a], V2: kc.valOf[b], Op1: kc.opOf[a], Op2: c, Note: note}}
					rw := func(rd extRead) ledge {
						return ledge{rd.node, b, lit, graph.RW, graph.Why{Key: kc.k, V1: rd.val, V2: kc.valOf[b], Op1: p.txnOf[a], Op2: c, Note: note}}
					}
					switch {
					case imp[o] == 0 && imp[1-o] < 0:
						p.edges = append(p.edges, ww)
					case imp[o] > 0 && imp[1-o] < 0:
						p.edges = append(p.edges, rw(kc.readersOf[a][imp[o]-1]))
					default:
						p.edges = append(p.edges, ww)
						for _, rd := range kc.readersOf[a] {
							if rd.node != b {
								p.edges = append(p.edges, rw(rd))
							}
						}
					}
					con.opt[o] = [2]int32{start, int32(len(p.edges))}
				}
				switch {
				case imp[0] >= 0 && imp[1] >= 0:
					if conflict < 0 {
						conflict = c
					}
				case imp[0] >= 0:
					con.fixed, con.reason = -1, con.opt[0][0]
				case imp[1] >= 0:
					con.fixed, con.reason = 1, con.opt[1][0]
				}
				p.cons = append(p.cons, con)
				if conflict >= 0 {
					return pairs, conflict
				}
			}
		}
	}
	p.deferCons = nil
	return pairs, -1
}

// closesPair reports whether a logical edge from -> to of relation rel
// would close a cycle with reachability r.
func (p *problem) closesPair(r reach, from, to int32, rel graph.Rel) bool {
	e := ledge{from: from, to: to, rel: rel}
	ok := false
	p.physEdges(&e, func(a, b int32) {
		if !ok && r.reaches(b, a) {
			ok = true
		}
	})
	return ok
}

type keyChains struct {
	k         int32
	chains    [][]int32
	readersOf map[int32][]extRead
	valOf     map[int32]int32
	opOf      map[int32]int32
}

func lastWrite(t *history.Txn, j int) int {
	k := t.Ops[j].Key
	last := j
	for i := j + 1; i < len(t.Ops); i++ {
		if t.Ops[i].Kind == history.Write && t.Ops[i].Key == k {
			last = i
		}
	}
	return last
}

// readsIntermediate reports whether value v of key k is one of writer w's
// non-final writes of k: regread resolves such a read to w but judges
// (G1b) committed readers only, so an unknown-outcome reader that committed
// needs this check here.
func readsIntermediate(ra *regread.Analysis, h *history.History, w, k, v int32) bool {
	for _, x := range ra.Writes(k) {
		if x.T == w && h.Txns[w].Ops[x.I].Value == v {
			return lastWrite(&h.Txns[w], int(x.I)) != int(x.I)
		}
	}
	return false
}

func wroteBefore(t *history.Txn, j int) bool {
	k := t.Ops[j].Key
	for i := 0; i < j; i++ {
		if t.Ops[i].Kind == history.Write && t.Ops[i].Key == k {
			return true
		}
	}
	return false
}

// unknownResult reports whether op j of t is a read whose result is
// unknown: a nil register read of an unknown-outcome transaction
// (docs/recorder.md, Outcomes: such a transaction's reads are recorded as
// unknown, nil for a register read; Jepsen's :info convention, as in
// regread). It is neither a read of the initial state nor evidence of any
// dependency, even when the transaction was observed to commit. Not used on
// the list-append register view (lists), which encodes an unknown list read
// as IsList+ListUnknown and a known empty list as a nil register read.
func unknownResult(t *history.Txn, j int) bool {
	o := &t.Ops[j]
	return t.Status == history.Unknown && o.Kind == history.Read && !o.IsList && o.Value == history.NoValue
}

// firstReadOf returns the index of the transaction's first read of the
// key op j reads: only that read is external (a later read that differs,
// with no write of the key in between, is an internal anomaly).
func firstReadOf(t *history.Txn, j int, skipUnknown bool) int {
	k := t.Ops[j].Key
	for i := 0; i < j; i++ {
		if t.Ops[i].Kind == history.Read && t.Ops[i].Key == k && !t.Ops[i].IsList && !(skipUnknown && unknownResult(t, i)) {
			return i
		}
	}
	return j
}

// unjustified reports a read of an unknown-outcome transaction that others
// observed (so it committed) whose value has no usable writer: written only
// by aborted transactions (aborted read) or by nobody (thin-air read).
func (p *problem) unjustified(ra *regread.Analysis, t int32, j int) {
	h := p.h
	o := &h.Txns[t].Ops[j]
	typ, what := model.ThinAirRead, "a value no transaction wrote to it"
	for _, w := range ra.Writes(o.Key) {
		switch {
		case h.Txns[w.T].Ops[w.I].Value != o.Value:
		case w.T == t:
			typ, what = model.FutureRead, "a value it writes itself only later"
		case h.Txns[w.T].Status == history.Aborted:
			typ, what = model.AbortedRead, "a value only aborted "+h.TxnName(w.T)+" wrote"
		default:
			typ, what = model.IntermediateRead, "an intermediate value of "+h.TxnName(w.T)+", which overwrote it"
		}
	}
	p.anomalies = append(p.anomalies, check.Anomaly{Type: typ, Txns: []int32{t}, Key: h.KeyName(o.Key),
		Ops: map[int32]string{t: p.disp.TxnString(t)},
		Explanation: h.TxnName(t) + " (outcome unknown, but another transaction read its write, so it committed) read key " +
			h.KeyName(o.Key) + " = " + h.ValueName(o.Value) + ", " + what + "."})
}

// ownWrite checks a read that follows the transaction's own write of the
// key, for an unknown-outcome transaction that committed (the read checks
// judge committed ones only): it must return the last value written.
func (p *problem) ownWrite(t int32, j int) {
	h := p.h
	tx := &h.Txns[t]
	o := &tx.Ops[j]
	last, earlier := history.NoValue, false
	for i := 0; i < j; i++ {
		if w := &tx.Ops[i]; w.Kind == history.Write && w.Key == o.Key {
			if w.Value == o.Value {
				earlier = true
			}
			last = w.Value
		}
	}
	if o.Value == last {
		return
	}
	typ := model.NotMyOwnWrite
	if earlier {
		typ = model.NotMyLastWrite
	}
	p.anomalies = append(p.anomalies, check.Anomaly{Type: typ, Txns: []int32{t}, Key: h.KeyName(o.Key),
		Ops: map[int32]string{t: p.disp.TxnString(t)},
		Explanation: h.TxnName(t) + " (outcome unknown, but another transaction read its write, so it committed) wrote key " +
			h.KeyName(o.Key) + " = " + h.ValueName(last) + " and then read " + h.ValueName(o.Value) + " from it."})
}

// internal reports a transaction whose two reads of a key, with no write of
// it in between, returned different values: no order of other transactions
// explains that (Elle's internal anomaly; Adya's item read stability).
func (p *problem) internal(t int32, a, b int) {
	h := p.h
	o1, o2 := &h.Txns[t].Ops[a], &h.Txns[t].Ops[b]
	p.anomalies = append(p.anomalies, check.Anomaly{Type: model.Internal, Txns: []int32{t}, Key: h.KeyName(o1.Key),
		Ops: map[int32]string{t: p.disp.TxnString(t)},
		Explanation: h.TxnName(t) + " read key " + h.KeyName(o1.Key) + " twice without writing it in between and got " +
			h.ValueName(o1.Value) + " (op " + strconv.Itoa(a+1) + "), then " + h.ValueName(o2.Value) + " (op " + strconv.Itoa(b+1) +
			"): a transaction reads one snapshot, so the second read contradicts the first."})
}

// lostUpdate records two transactions that read the same version of key k
// (written by node w, or the initial state when w < 0) and both overwrote
// it: neither can directly follow the version it read in k's version order,
// which serializability and snapshot isolation both require.
func (p *problem) lostUpdate(k, w, a, b int32, valOf map[int32]int32) {
	h := p.h
	ta, tb := p.txnOf[a], p.txnOf[b]
	read := "the initial state of key " + h.KeyName(k)
	txns := []int32{ta, tb}
	if w >= 0 {
		read = "key " + h.KeyName(k) + " = " + h.ValueName(valOf[w]) + " (written by " + h.TxnName(p.txnOf[w]) + ")"
		txns = append(txns, p.txnOf[w])
	}
	p.anomalies = append(p.anomalies, check.Anomaly{Type: model.LostUpdate, Txns: txns, Key: h.KeyName(k), Ops: check.TxnOps(p.disp, txns...),
		Explanation: "Let:\n  " + p.disp.TxnString(ta) + "\n  " + p.disp.TxnString(tb) + "\nThen:\n  - " + h.TxnName(ta) + " and " + h.TxnName(tb) +
			" both read " + read + " and both wrote key " + h.KeyName(k) + " (" + h.ValueName(valOf[a]) + " and " + h.ValueName(valOf[b]) + ").\n" +
			"So whichever of the two writes comes second in the version order of key " + h.KeyName(k) +
			" overwrote a version its writer never read: a lost update, which serializability and snapshot isolation forbid."})
}

// addSessionOrder links each included transaction to the next included one
// of its session; a transaction with unknown outcome is a successor but never
// a predecessor (its commit could come arbitrarily late), as in package graph.
func (p *problem) addSessionOrder() {
	h := p.h
	bySess := map[int32][]int32{}
	for _, ti := range p.txnOf {
		if s := h.Txns[ti].Session; s >= 0 {
			bySess[s] = append(bySess[s], ti)
		}
	}
	sess := make([]int32, 0, len(bySess))
	for s := range bySess {
		sess = append(sess, s)
	}
	slices.Sort(sess)
	for _, s := range sess {
		ts := bySess[s]
		sort.SliceStable(ts, func(i, j int) bool { return h.Txns[ts[i]].Seq < h.Txns[ts[j]].Seq })
		last := int32(-1)
		for _, ti := range ts {
			if last >= 0 {
				p.addEdge(p.nodeOf[last], p.nodeOf[ti], 0, graph.Process, graph.Why{Key: -1, Op1: -1, Op2: -1})
			}
			if h.Txns[ti].Status == history.Committed {
				last = ti
			}
		}
	}
}

// addRealtime adds the real-time order (T1 completed before T2 was invoked)
// in O(n) edges through time points, as package graph stores it: T1 ->
// point(T1) -> point(next completion) -> ... -> point(k) -> T2 where point(k)
// is the last completion strictly before T2's invocation. Unknown-outcome
// transactions are never real-time predecessors.
func (p *problem) addRealtime() {
	h := p.h
	var preds, succs []tv
	for node, ti := range p.txnOf {
		t := &h.Txns[ti]
		if !t.HasTime {
			continue
		}
		succs = append(succs, tv{history.Timestamp{P: t.Invoke, Set: true}, int32(node)})
		if t.Status == history.Committed {
			preds = append(preds, tv{history.Timestamp{P: max(t.Complete, t.Invoke), Set: true}, int32(node)})
		}
	}
	p.addPoints(preds, succs, true, 0)
}

// addVisibility adds snapshot visibility from database timestamps (SI, see
// evidence.go): T1 -> point(T1) -> ... -> point(k) -> T2 where point(k) is
// the last commit with commit_ts <= start_ts(T2) (a version committed at ts
// is visible to a snapshot taken at ts, as in Chronos). A transaction whose
// start_ts is not below its own commit_ts is left out as a successor (its
// own commit would precede its snapshot; counted in evidence_vis_skipped).
func (p *problem) addVisibility() {
	h := p.h
	var preds, succs []tv
	for node, ti := range p.txnOf {
		t := &h.Txns[ti]
		if t.CommitTS.Set {
			preds = append(preds, tv{t.CommitTS, int32(node)})
		}
		if t.StartTS.Set {
			if t.CommitTS.Set && !t.StartTS.Less(t.CommitTS) {
				p.visSkip++
				continue
			}
			succs = append(succs, tv{t.StartTS, int32(node)})
		}
	}
	p.addPoints(preds, succs, false, noteTS)
}

type tv struct {
	t    history.Timestamp
	node int32
}

// addPoints links every pred to every succ whose time is after it (strictly
// if strict) through one chain of time points, one per pred, in O(n) edges
// of relation realtime with the given note.
func (p *problem) addPoints(preds, succs []tv, strict bool, note uint8) {
	if len(preds) == 0 {
		return
	}
	sort.SliceStable(preds, func(i, j int) bool { return preds[i].t.Less(preds[j].t) })
	sort.SliceStable(succs, func(i, j int) bool { return succs[i].t.Less(succs[j].t) })
	base := p.nTxn
	p.nPoints = int32(len(preds))
	why := graph.Why{Key: -1, Op1: -1, Op2: -1, Note: note}
	for k, pr := range preds {
		p.pointTxn = append(p.pointTxn, pr.node)
		p.pointTS = append(p.pointTS, pr.t)
		p.addEdge(pr.node, base+int32(k), 0, graph.Realtime, why)
		if k > 0 {
			p.addEdge(base+int32(k-1), base+int32(k), 0, graph.Realtime, why)
		}
	}
	k := -1
	for _, sc := range succs {
		for k+1 < len(preds) && (preds[k+1].t.Less(sc.t) || !strict && preds[k+1].t.Compare(sc.t) == 0) {
			k++
		}
		if k >= 0 {
			p.addEdge(base+int32(k), sc.node, 0, graph.Realtime, why)
		}
	}
}

// numPhys is the number of physical nodes: transactions, time points, and
// for SI a second copy of every transaction (see physEdges).
func (p *problem) numPhys() int32 {
	if p.si {
		return 2*p.nTxn + p.nPoints
	}
	return p.nTxn + p.nPoints
}

// physEdges calls emit for the physical edges of logical edge e. Under
// serializability the graph to keep acyclic is the logical one (Adya's DSG,
// with session/real-time order where the model has them). Under snapshot
// isolation it is (D ; RW?) with D = WR ∪ WW (∪ SO for strong session SI)
// (Cerone & Gotsman, "Analysing Snapshot Isolation", J. ACM 2018, the
// dependency-graph characterisation; PolySI, Huang et al., VLDB 2023, §3):
// every node v gets a copy v' meaning "reached v by a D edge, may take one
// RW edge now"; a D edge u->v becomes u->v and u->v', an RW edge v->w becomes
// v'->w. A cycle of the physical graph is exactly a cycle of D;RW?.
func (p *problem) physEdges(e *ledge, emit func(from, to int32)) {
	if !p.si {
		emit(e.from, e.to)
		return
	}
	if e.rel == graph.RW {
		emit(e.from+p.nTxn, e.to)
		return
	}
	// time points (visibility) follow the two copies; they take no RW edge
	f, t := e.from, e.to
	if f >= p.nTxn {
		f += p.nTxn
	}
	if t >= p.nTxn {
		emit(f, t+p.nTxn)
		return
	}
	emit(f, t)
	emit(f, t+p.nTxn)
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }
