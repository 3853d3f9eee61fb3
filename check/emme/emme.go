// Package emme checks a history against a version certificate recovered
// from the database, after Emme ("Bringing Order to Practical Validation of
// Database Isolation Levels", the seed paper, §4): with a version order per
// key and a version set per predicate read, the direct serialization graph
// of Adya ("Weak Consistency", 1999, §3) is known exactly, and checking an
// isolation level is a cycle search in polynomial time — no inference, no
// search over orders.
//
// Edges (Adya §3.1): ww between consecutive versions of a key (the
// version order, history.VersionOrder); wr from the writer of the version
// an item read returned; rw from an item read to the writer of the next
// version; predicate-wr (Adya Def. 3.1.3, "predicate-read-depends") from
// the transaction that last changed whether a row matches a predicate
// read, at or before the version the read evaluated; predicate-rw (Def.
// 3.1.4, "overwrites a predicate read") from the read to the first later
// transaction that changes the matches. A version "changes the matches"
// when it matches the predicate (sqlpred.Schema: columns (k, v), or for a
// table the history declares its key columns, from the row key, and row
// columns, from the version's row image; history/schema.go) and the
// version before it does not, or vice versa; the unborn row (before the
// first version) and a deleted version (a tombstone) match nothing. A
// predicate on a declared table ranges over that table's rows only. Only the last earlier and the first
// later changer get an edge: the others reach them through ww edges, so
// the cycles (and the cycle types the stages below decide) are the same.
// The rows a predicate read returned are also item reads of those rows.
//
// Deletes (history.Delete) install deleted versions: they have a place in
// the version order like any write (ww edges, rw from readers of the
// version before), match no predicate (so a delete changes the matches of
// a predicate that matched the version before it: a predicate-rw target
// for a read that saw the row, a predicate-wr source for one that
// evaluated the deleted version), and are absent to item reads. An item
// read of nil on a key with deleted versions does not say which absent
// version (initial or which deleted one) it read: a reason for unknown,
// unless the history declares that reads name the deleted versions they
// saw (Evidence.TombstoneReads: nil is then the initial version).
//
// Version sets come from history.Predicate.VersionSet when the source
// recorded one (the recorder, from PostgreSQL snapshots and MariaDB
// snapshot markers and commit positions, docs/recorder.md). Otherwise they
// are inferred from the rows returned: a returned row's version is the one
// returned; a row not returned was read at a version that does not match.
// When those non-matching versions all lie between the same two changes of
// the matches (always so for key-range predicates over blind writes, where
// only the unborn row does not match), the edges are the same whichever it
// was; otherwise the read is ambiguous and the verdict can at best be
// unknown.
//
// Complexity: predicate dependencies are not computed by testing every
// write against every predicate read (the seed paper's O(P·W)): versions
// are indexed by key, and a predicate only visits the keys in its region
// on the key column (sqlpred.Pred.IntRanges: exact for comparisons,
// BETWEEN and IN on k), so a range read costs the versions of the keys in
// its range.
//
// Non-cyclic anomalies: aborted read (G1a), intermediate read (G1b),
// garbage read (garbage-versions: a value no transaction wrote), internal
// (a read that does not see the transaction's own last write),
// future-read, and result-set-mismatch (the rows returned differ from the
// predicate evaluated on the version set, or a returned row does not
// satisfy the WHERE clause). A duplicate write (two writes of one value to
// one key) makes the version and its reads ambiguous: it is a reason for
// an unknown verdict, never silently resolved. Certificate inconsistencies
// (a version nobody wrote, a committed write missing from the order) are
// also reasons for unknown, not anomalies of the database.
//
// Cycle checks, one stage per model (each stage finds one shortest cycle
// per strongly connected component, classified by its edges):
//   - read-uncommitted: ww cycles (G0);
//   - read-committed: cycles of ww, wr and predicate-wr (G0, G1c);
//   - snapshot isolation: cycles with no two adjacent anti-dependencies
//     (item or predicate). Adya's PL-SI adds start dependencies to the
//     graph; with a version order but no start timestamps the equivalent
//     characterization (Cerone & Gotsman, JACM 2018, Thm. 10: a history is
//     SI iff its dependency graph has no cycle without two adjacent
//     anti-dependencies) is checked by a search in the graph where a
//     transaction entered by an anti-dependency must leave by another edge;
//   - repeatable read (Adya PL-2.99): cycles without predicate
//     anti-dependencies (G1c, G-single-item, G2-item, ...), so a cycle that
//     needs a predicate anti-dependency is G2 (or G-single, G-nonadjacent)
//     but not G2-item, and repeatable read allows it;
//   - serializable (PL-3): any cycle.
//
// Applies needs a version order (Evidence.VersionOrder) and register
// operations (no appends). Strict and session variants are not judged
// (no real-time edges here).
package emme

import (
	"context"
	"fmt"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// Checker is the Emme checker, registered as "emme".
type Checker struct{}

func init() { check.Register(Checker{}) }

// Name implements check.Checker.
func (Checker) Name() string { return "emme" }

// Doc implements check.Checker.
func (Checker) Doc() string {
	return "Emme: version certificate (version order + predicate version sets) -> item and predicate dependency cycles, polynomial"
}

// Canon maps a model or DBMS profile to the stage index deciding it, or
// -1 when emme does not judge it.
func Canon(name string) (string, int) {
	if strings.TrimSpace(name) == "" {
		name = model.Serializable
	}
	m, err := model.Canonical(name)
	if err != nil {
		p, ok := model.LookupProfile(name)
		if !ok {
			return "", -1
		}
		m = p.Model
	}
	switch m {
	case model.ReadUncommitted:
		return m, 0
	case model.ReadCommitted:
		return m, 1
	case model.SnapshotIsolation:
		return m, 2
	case model.RepeatableRead:
		return m, 3
	case model.Serializable:
		return m, 4
	}
	return m, -1
}

// Applies implements check.Checker: rank 95 with a version order and
// predicate reads (no other checker sees predicate dependencies), 70 with a
// version order alone (exact dependencies beat inference, ranks 50-60;
// database timestamps, chronos, rank 90).
func (Checker) Applies(h *history.History, m string) (int, string) {
	if h == nil {
		return 0, "no history"
	}
	if !h.Evidence.VersionOrder || h.VersionOrder == nil {
		return 0, "needs a version certificate: the version order of every key (version_order records)"
	}
	if hasAppend(h) {
		return 0, "emme checks register writes and predicate reads, not list appends"
	}
	if _, st := Canon(m); st < 0 {
		return 0, fmt.Sprintf("judges read-uncommitted, read-committed, repeatable-read, snapshot-isolation and serializable, not %q", m)
	}
	if h.Evidence.PredicateRead {
		return 95, "version order and predicate reads: item and predicate dependencies are exact"
	}
	return 70, "version order: item dependencies are exact"
}

func hasAppend(h *history.History) bool { return h.Shape().Has(history.Append) }

// Check implements check.Checker.
func (Checker) Check(ctx context.Context, h *history.History, opts check.Options) (*check.Result, error) {
	r := &check.Result{Checker: "emme", Model: opts.Model}
	if r.Model == "" {
		r.Model = model.Serializable
	}
	_, stop := Canon(r.Model)
	switch {
	case stop < 0:
		r.Verdict = check.Unknown
		r.Reason = fmt.Sprintf("emme judges read-uncommitted, read-committed, repeatable-read, snapshot-isolation and serializable, not %q", r.Model)
	case !h.Evidence.VersionOrder || h.VersionOrder == nil:
		r.Verdict = check.Unknown
		r.Reason = "no version certificate: the history has no version order"
	case hasAppend(h):
		r.Verdict = check.Unknown
		r.Reason = "emme checks register writes and predicate reads, not list appends"
	}
	if stop < 0 || r.Verdict == check.Unknown {
		finish(r)
		return r, nil
	}
	d := build(h, opts)
	if err := d.cycles(ctx, r, stop); err != nil {
		return nil, err
	}
	r.ListCapped(d.anoms, opts.MaxPerType())
	if len(d.reasons) > 0 {
		r.Verdict = check.Unknown
		r.Reason = "the certificate does not decide everything: " + strings.Join(d.reasons, "; ")
	}
	r.Stats = map[string]any{
		"edges":              len(d.edges),
		"item_reads":         d.stats.itemReads,
		"predicate_reads":    d.stats.predReads,
		"pred_keys_visited":  d.stats.predKeysVisited,
		"ambiguous_reads":    d.stats.ambiguous,
		"predicate_errors":   d.stats.predErrors,
		"version_order_keys": len(h.VersionOrder),
	}
	finish(r)
	return r, nil
}

func finish(r *check.Result) {
	if r.Anomalies == nil {
		r.Anomalies = []check.Anomaly{}
	}
	r.Finish()
	if r.AnomalyTypes == nil {
		r.AnomalyTypes = []string{}
	}
}
