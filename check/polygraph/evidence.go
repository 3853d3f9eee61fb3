package polygraph

import (
	"slices"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/chronos"
	"github.com/txray/txray/graph"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// Ordering evidence beyond reads-from (King Cobra's point: every partial
// order the history carries shrinks the search). Which evidence is used
// depends on the model, because an order the database produced implies a
// version order only under assumptions that the model (or the history)
// states:
//
//   - Version order records (History.VersionOrder, --version-order):
//     every model. Adya's dependency graph is defined over the database's
//     version order (Adya, "Weak Consistency", MIT 1999, §3.1.1); a partial
//     one gives known ww edges between consecutive listed versions (King
//     Cobra).
//
//   - Snapshot isolation (and strong-session SI), with an exact commit order
//     (Evidence.CommitOrder: PostgreSQL commit LSN, MariaDB GTID) or database
//     commit timestamps (Evidence.Timestamps): the version order of every key
//     is its committed writers' commit order. In SI every two writers of a
//     key are ordered by visibility (NoConflict) and the arbitration order
//     extends visibility (Cerone, Bernardi & Gotsman, "A Framework for
//     Transactional Consistency Models with Atomic Visibility", CONCUR 2015,
//     §4, SI = PREFIX ∧ NOCONFLICT ∧ ...); in an implementation arbitration
//     is the commit order, and first-committer(updater)-wins aborts a writer
//     that did not see an earlier committed writer of the key, so versions
//     are installed in commit order (Adya §4.3, PL-SI's start-ordered
//     serialization graph orders versions by commit). Known ww edges
//     between consecutive committed writers of each key, plus rw from the
//     earlier version's readers.
//
//   - Snapshot isolation, with database start and commit timestamps
//     (Evidence.Timestamps: start_ts is the snapshot): a transaction whose
//     commit timestamp is at most another's start timestamp is in that
//     transaction's snapshot (Chronos's Ext axiom, ICDE 2024; Adya's
//     start(T2) after commit(T1) rule for PL-SI), i.e. T1 ∈ VIS(T2).
//     Visibility may be added to D in the (D ; RW?) acyclicity test: every
//     SI execution has VIS ; RW ⊆ AR (if T1 is visible to T2 and T3
//     overwrote what T2 read, T3 is not in T2's snapshot, so T1 precedes T3
//     by the prefix property), exactly as session order is added for
//     strong-session SI (Cerone & Gotsman, J. ACM 2018, §5). Encoded in
//     O(n) edges through time points on the timestamp line (relation
//     realtime, note noteTS).
//
//   - Serializability (and its strong-session and strict forms): commit order
//     is not a serialization order in general (PostgreSQL SSI serializes a
//     transaction before one that committed earlier), and neither are start
//     timestamps. A commit order (exact, or commit timestamps) gives the
//     version order of each key only when the history declares that the
//     database installs versions in commit order:
//     Evidence.SerialOrder = "commit" or chronos.CommitOrderSerializes (the
//     database serializes in commit order, so a serial execution in it
//     installs versions in it: the seed paper's expected serialization
//     order, §5); the DBMS profile of the header's db and level uses mutual
//     exclusion or first-updater-wins (write locks held to commit, so the
//     later writer of a key waits for the earlier one's commit:
//     record/certificate.go's certificate argument); the header
//     Extra["commit-version-order"] = "true"; or the parameter
//     commit-version-order=true. Evidence.SerialOrder = "start" (timestamp
//     ordering) gives the version order by start timestamp in the same way.
//     Start timestamps are otherwise not used: a serializable execution's
//     serialization point is not its start.
//
// Only included nodes (committed, or observed unknown-outcome ones) carry
// evidence; writers without the timestamp are left to the search (a partial
// order). Ties give no edge.

// evidence is the ordering evidence used for one check.
type evidence struct {
	// rank orders writers of a key (the version order), nil if none.
	rank   func(t *history.Txn) (history.Timestamp, bool)
	rankOf string // what rank is, for explanations ("commit order", "start_ts")
	vis    bool   // SI: cts(T1) <= sts(T2) gives T1 ∈ VIS(T2)
	used   []string
}

// commitVersionOrder reports whether the history declares that its
// database installs each key's versions in commit order (see above).
func commitVersionOrder(h *history.History, opts check.Options) (bool, string) {
	switch opts.Param("commit-version-order", "") {
	case "true":
		return true, "parameter commit-version-order=true"
	case "false":
		return false, ""
	}
	if h.Evidence.SerialOrder == history.SerialCommit {
		return true, "the history declares serial_order=commit (the database serializes, so installs versions, in commit order)"
	}
	if h.Header.Extra["commit-version-order"] == "true" {
		return true, "history header commit-version-order=true"
	}
	if ok, why := chronos.CommitOrderSerializes(h, opts); ok {
		return true, why + " (so it installs versions in commit order)"
	}
	if p, ok := model.LookupProfile(h.Header.DB + ":" + h.Header.Level); ok && h.Header.DB != "" {
		if slices.Contains(p.Mechanisms, model.MutualExclusion) || slices.Contains(p.Mechanisms, model.FirstUpdaterWins) {
			return true, "profile " + p.Name + " holds write locks to commit (a later writer of a key waits for the earlier one's commit)"
		}
	}
	return false, ""
}

func commitTS(t *history.Txn) (history.Timestamp, bool) { return t.CommitTS, t.CommitTS.Set }
func startTS(t *history.Txn) (history.Timestamp, bool)  { return t.StartTS, t.StartTS.Set }

// evidenceFor decides which ordering evidence of h the check under plan pl
// may use ("evidence=false" disables it all).
func evidenceFor(h *history.History, pl plan, opts check.Options) evidence {
	var ev evidence
	if opts.Param("evidence", "true") == "false" {
		return ev
	}
	commits := h.Evidence.CommitOrder || h.Evidence.Timestamps
	what := "commit timestamps"
	if h.Evidence.CommitOrder {
		what = "the exact commit order"
	}
	if pl.si {
		if commits {
			ev.rank, ev.rankOf = commitTS, "commit order"
			ev.used = append(ev.used, "version order of each key from "+what+" (SI: versions are installed in commit order)")
		}
		if h.Evidence.Timestamps {
			ev.vis = true
			ev.used = append(ev.used, "snapshot visibility from start/commit timestamps (commit_ts(T1) <= start_ts(T2): T1 in T2's snapshot)")
		}
		return ev
	}
	if pl.model == model.RepeatableRead {
		// The commit-order rules below are serializable's (a database that
		// serializes in commit order); nothing says a repeatable-read
		// database does, so its versions are searched.
		return ev
	}
	if h.Evidence.SerialOrder == history.SerialStart && h.Evidence.Timestamps && opts.Param("commit-version-order", "") != "false" {
		ev.rank, ev.rankOf = startTS, "start-timestamp order"
		ev.used = append(ev.used, "version order of each key from start timestamps (serial_order=start: timestamp ordering installs versions in start order)")
		return ev
	}
	if commits {
		if ok, why := commitVersionOrder(h, opts); ok {
			ev.rank, ev.rankOf = commitTS, "commit order"
			ev.used = append(ev.used, "version order of each key from "+what+": "+why)
		}
	}
	return ev
}

// addEvidenceOrder adds the version order evidence gives for one key:
// writers (nodes) sorted by rank, known ww between consecutive distinct
// ranks (every writer of one rank to every writer of the next), and rw from
// the earlier version's readers.
func (p *problem) addEvidenceOrder(k int32, ws []int32, valOf map[int32]int32, opOf map[int32]int32, readersOf map[int32][]extRead) {
	type rw struct {
		node int32
		ts   history.Timestamp
	}
	var rs []rw
	for _, w := range ws {
		if ts, ok := p.ev.rank(&p.h.Txns[p.txnOf[w]]); ok {
			rs = append(rs, rw{w, ts})
		}
	}
	if len(rs) < 2 {
		return
	}
	slices.SortStableFunc(rs, func(a, b rw) int { return a.ts.Compare(b.ts) })
	start := 0 // first index of the current rank group
	prevStart, prevEnd := -1, -1
	for i := 1; i <= len(rs); i++ {
		if i < len(rs) && rs[i].ts.Compare(rs[start].ts) == 0 {
			continue
		}
		// group rs[start:i]
		if prevStart >= 0 {
			for _, a := range rs[prevStart:prevEnd] {
				for _, b := range rs[start:i] {
					p.addEdge(a.node, b.node, 0, graph.WW, graph.Why{Key: k, V1: valOf[a.node], V2: valOf[b.node], Op1: opOf[a.node], Op2: opOf[b.node], Note: noteEvidence})
					p.evWW++
					for _, r := range readersOf[a.node] {
						if r.node != b.node {
							p.addEdge(r.node, b.node, 0, graph.RW, graph.Why{Key: k, V1: r.val, V2: valOf[b.node], Op1: p.txnOf[a.node], Op2: -1, Note: noteEvidence})
							p.evRW++
						}
					}
				}
			}
		}
		prevStart, prevEnd = start, i
		start = i
	}
}
