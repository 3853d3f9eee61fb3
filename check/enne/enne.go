// Package enne checks serializability against an expected serialization
// order, after Enne ("Bringing Order to Practical Validation of Database
// Isolation Levels", the seed paper, §5): when the concurrency-control
// protocol promises the order transactions serialize in — commit order
// for two-phase locking and other commitment-ordering protocols (MariaDB
// and SQLite serializable), start/timestamp order for timestamp ordering —
// checking is a replay: execute the transactions serially in that order
// against an in-memory state and compare every item read and every
// predicate read with what the state gives. No graph, no search: O(total
// ops + keys in the predicate regions).
//
// The order comes from history.Evidence.SerialOrder ("commit": CommitTS,
// "start": StartTS; see history/certificate.go), from the parameter
// serial-order ("commit" or "start"), or, with an exact commit order
// (Evidence.CommitOrder), from chronos.CommitOrderSerializes (the database
// is known to serialize in commit order). Transactions with equal
// timestamps keep the history's order.
//
// Replay: a placed transaction (committed, or unknown outcome with the
// ordering timestamp: the database ordered it, so it committed) reads
// its own earlier writes, else the state left by the transactions before
// it; a predicate read must return exactly the rows of the current state
// (own writes included) that satisfy its WHERE clause (sqlpred.Schema:
// columns (k, v), evaluated only over the keys in the predicate's region
// on k (sqlpred.Pred.IntRanges); for a table the history declares, its
// key and row columns over its own rows, a deleted version matching
// nothing; history/schema.go). Its final writes then
// become the state. The order, the loop over it and the per-key state are
// those of chronos' commit-order replay (package check/internal/serial);
// enne adds predicate reads, floating transactions and its explanations.
//
// Deletes (history.Delete) install a deleted version: an item read must
// then return nil (or name the tombstone), and the row matches no
// predicate; a returned row at a deleted version is a result-set
// mismatch. A floating transaction's nil read of a key with deleted
// versions does not bound its place to one interval: a reason for unknown.
//
// Read-only transactions often leave no trace in a commit log (MariaDB
// assigns GTIDs to writers only): a committed transaction without the
// ordering timestamp and without writes is "floating". Under two-phase
// locking it still serializes at some point of the order, so it is
// checked for the existence of one: its item reads (and the rows its
// predicate reads returned) bound the point to an interval; its predicate
// reads are then evaluated at the interval's start and at every point in
// it where a key in their region changes. A committed writer without the
// timestamp cannot be placed: the verdict is unknown.
//
// When a read disagrees, the order is not a serialization order for that
// transaction: the first transaction that breaks it is reported first
// (then every other, capped), with the read, the rows or value the state
// gives (expected) and the ones seen. The type is Adya's where the read
// itself is impossible in any order (G1a aborted, G1b intermediate,
// garbage-versions, internal) and "ext" otherwise (the read is not the
// state at the transaction's place: Cerone et al.'s EXT axiom with the
// expected order as the commit order, as chronos reports it). A failing
// replay proves non-serializability because the order is the one the
// protocol promises; Not/AlsoNot are set to serializable and the models
// implying it (a commit-order failure says nothing about weaker levels).
//
// Enne judges serializable (and DBMS profiles whose model is
// serializable) only.
package enne

import (
	"context"
	"fmt"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/chronos"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// Checker is Enne, registered as "enne".
type Checker struct{}

func init() { check.Register(Checker{}) }

// Name implements check.Checker.
func (Checker) Name() string { return "enne" }

// Doc implements check.Checker.
func (Checker) Doc() string {
	return "Enne: serializability by replaying the expected serialization order (commit order for 2PL, start order for TO), linear"
}

// SerialOrder returns which timestamp gives h's expected serialization
// order ("commit" or "start") and the evidence, or "" when none is known.
func SerialOrder(h *history.History, opts check.Options) (string, string) {
	switch p := opts.Param("serial-order", ""); p {
	case history.SerialCommit, history.SerialStart:
		return p, "parameter serial-order=" + p
	}
	switch h.Evidence.SerialOrder {
	case history.SerialCommit, history.SerialStart:
		return h.Evidence.SerialOrder, "the history declares serial_order=" + h.Evidence.SerialOrder
	}
	if h.Evidence.CommitOrder {
		if ok, why := chronos.CommitOrderSerializes(h, opts); ok {
			return history.SerialCommit, why
		}
	}
	return "", ""
}

func serializable(m string) bool {
	if strings.TrimSpace(m) == "" {
		return true
	}
	c, err := model.Canonical(m)
	if err != nil {
		p, ok := model.LookupProfile(m)
		if !ok {
			return false
		}
		c = p.Model
	}
	return c == model.Serializable
}

// Applies implements check.Checker: rank 93 when an expected serialization
// order is known and the model is serializable.
func (Checker) Applies(h *history.History, m string) (int, string) {
	if h == nil {
		return 0, "no history"
	}
	if !serializable(m) {
		return 0, fmt.Sprintf("judges serializable only, not %q", m)
	}
	if hasAppend(h) {
		return 0, "enne replays register writes and predicate reads, not list appends"
	}
	o, why := SerialOrder(h, check.Options{Model: m})
	if o == "" {
		return 0, "needs an expected serialization order (serial_order evidence, or a commit order the database is known to serialize in)"
	}
	return 93, why
}

func hasAppend(h *history.History) bool { return h.Shape().Has(history.Append) }

// Check implements check.Checker.
func (Checker) Check(ctx context.Context, h *history.History, opts check.Options) (*check.Result, error) {
	r := &check.Result{Checker: "enne", Model: opts.Model}
	if r.Model == "" {
		r.Model = model.Serializable
	}
	if p := opts.Param("serial-order", ""); p != "" && p != history.SerialCommit && p != history.SerialStart {
		return nil, fmt.Errorf("enne: parameter serial-order must be %q or %q, not %q", history.SerialCommit, history.SerialStart, p)
	}
	order, why := SerialOrder(h, opts)
	switch {
	case !serializable(r.Model):
		r.Verdict = check.Unknown
		r.Reason = fmt.Sprintf("enne judges serializable only, not %q", r.Model)
	case hasAppend(h):
		r.Verdict = check.Unknown
		r.Reason = "enne replays register writes and predicate reads, not list appends"
	case order == "":
		r.Verdict = check.Unknown
		r.Reason = "no expected serialization order is known (serial_order evidence, parameter serial-order, or a commit order the database serializes in)"
	}
	if r.Verdict == check.Unknown {
		finish(r)
		return r, nil
	}
	s := NewReplay(h, order)
	if err := s.Run(ctx); err != nil {
		return nil, err
	}
	r.ListCapped(s.Anomalies, opts.MaxPerType())
	if len(s.Reasons) > 0 {
		r.Verdict = check.Unknown
		r.Reason = strings.Join(s.Reasons, "; ")
	}
	r.Stats = map[string]any{
		"order":           order + " (" + why + ")",
		"placed":          s.Stats.Placed,
		"floating":        s.Stats.Floating,
		"item_reads":      s.Stats.ItemReads,
		"predicate_reads": s.Stats.PredReads,
		"pred_keys":       s.Stats.PredKeys,
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
	var rest []string
	ext := false
	for _, t := range r.AnomalyTypes {
		if t == model.Ext {
			ext = true
		} else {
			rest = append(rest, t)
		}
	}
	if !ext {
		return
	}
	// An expected-order failure rules out serializable and what implies it,
	// nothing weaker (model.RulesOut(["ext"]) would include SI).
	n, a := model.RulesOut(rest)
	not := map[string]bool{model.Serializable: true}
	for _, x := range append(n, a...) {
		not[x] = true
	}
	for _, m := range model.Names() {
		if model.Implies(m, model.Serializable) {
			not[m] = true
		}
	}
	r.Not, r.AlsoNot = model.SplitWeakest(not)
}
