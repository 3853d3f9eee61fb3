// Package chronos is txray's offline timestamp-based checker, after Chronos
// (Lu et al., "Efficiently Checking Snapshot Isolation and Serializability
// Using Timestamps", ICDE 2024; reference implementation TimeKiller).
//
// When the database exposes every committed transaction's start timestamp
// (snapshot) and commit timestamp, snapshot isolation is checked in
// O(n log n) by replaying start and commit events in timestamp order and
// checking the four axioms of the paper's SI definition (§III, after Cerone
// et al.'s axiomatic SI with timestamps):
//
//   - Session ("session"): in each session a transaction starts no earlier
//     than its predecessor committed: prev.cts ≤ next.sts.
//   - Int ("internal"): a read of a key the transaction already accessed
//     returns the value of its last access (its own write, or what it read;
//     for lists, what it read plus its own appends since).
//   - Ext ("ext"): a transaction's first read of a key returns the value of
//     the last transaction that committed the key at or before its start
//     timestamp (cts ≤ sts; the initial value when none did).
//   - NoConflict ("noconflict"): two transactions writing the same key do
//     not overlap: no writer of a key commits in (T.sts, T.cts] of another
//     writer T.
//
// Ext failures are classified: the value was never written; it was written
// before the snapshot (an overwritten, stale version); it was written by a
// transaction that did not commit (aborted, or outcome unknown and no commit
// timestamp); it was written after the snapshot (a future version).
//
// Serializability replays commit events only, in commit-timestamp order: each
// transaction's reads must see the latest committed state at its commit
// point (the Ext axiom with sts replaced by cts; failures are typed "ext").
// Strict serializability additionally requires the commit order to respect
// real time (client intervals): if T1 completed before T2 was invoked then
// T1.cts < T2.cts (failures typed "realtime").
//
// Ordering of equal timestamps follows TimeKiller: a version committed at ts
// is visible to a transaction whose start timestamp is ts (cts ≤ sts); a
// transaction's own start precedes its own commit.
//
// Garbage collection (paper §IV-C): replay keeps per key only the frontier
// version plus the versions that committed after the start of the oldest
// still-running transaction (needed for NoConflict); older versions are no
// longer needed by any transaction that has started or will start, and are
// discarded every GC period. Verdicts and anomalies are identical with and
// without GC (Params "gc"="false" keeps everything).
//
// Data models: key-value (w/r) and list (append/r) ops are both handled,
// per op. Transactions that are not committed are not replayed, but their
// writes explain "uncommitted" Ext failures. A transaction with status
// unknown that carries both timestamps is treated as committed (the database
// assigned it a commit timestamp).
//
// Params:
//
//	initial-value  "null" (default, TimeKiller's default) or "0": the value
//	               of every key before any write. A read of null/absent
//	               (history.NoValue) always denotes the initial value.
//	gc             "true" (default) or "false".
//	gc-every       transactions between GC rounds (default 20000).
package chronos

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// Anomaly type names (design.md §5).
const (
	TypeSession    = "session"
	TypeInternal   = "internal"
	TypeExt        = "ext"
	TypeNoConflict = "noconflict"
	TypeRealtime   = "realtime"
)

// Canonical model names this checker judges.
const (
	ModelSI        = "snapshot-isolation"
	ModelSER       = "serializable"
	ModelStrictSER = "strict-serializable"
)

// Checker is the chronos checker; it is registered as "chronos".
type Checker struct{}

func init() { check.Register(Checker{}) }

// Name implements check.Checker.
func (Checker) Name() string { return "chronos" }

// Doc implements check.Checker.
func (Checker) Doc() string {
	return "Chronos: SI / serializability by replaying DB start and commit timestamps (ICDE 2024), near-linear"
}

// Canon maps a model name or alias to the model this checker judges, or ""
// when it cannot judge it. The empty model means snapshot isolation.
//
// Weaker models (read-committed, read-uncommitted, repeatable-read,
// read-atomic, causal, ...) are not applicable: the timestamp axioms decide
// SI and (strict) serializability; a history that violates them may still
// satisfy a weaker level, and one that satisfies them satisfies every level
// SI implies, but the weaker level's own definition is not what is checked.
func Canon(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, ':'); i >= 0 {
		// DBMS profiles whose level is snapshot isolation or serializable.
		switch m {
		case "postgres:repeatable-read", "postgresql:repeatable-read", "tidb:repeatable-read", "tidb:snapshot-isolation":
			return ModelSI
		case "postgres:serializable", "postgresql:serializable", "cockroachdb:serializable":
			return ModelSER
		}
		m = m[i+1:]
	}
	switch m {
	case "", "si", "snapshot-isolation", "snapshot", "strong-session-snapshot-isolation", "session-snapshot-isolation":
		return ModelSI
	case "ser", "serializable", "serializability":
		return ModelSER
	case "strict-serializable", "strong-serializable", "strict-ser", "strict-serializability", "linearizable":
		return ModelStrictSER
	}
	return ""
}

// Applies implements check.Checker: rank 90 when every committed
// transaction has start and commit timestamps and the model is SI,
// serializable or strict serializable.
func (Checker) Applies(h *history.History, model string) (int, string) {
	if !h.Evidence.Timestamps {
		return 0, "needs database start and commit timestamps on every committed transaction"
	}
	if Canon(model) == "" {
		return 0, fmt.Sprintf("judges snapshot-isolation, serializable and strict-serializable only, not %q", model)
	}
	return 90, "start and commit timestamps on every committed transaction"
}

// Check implements check.Checker.
func (Checker) Check(ctx context.Context, h *history.History, opts check.Options) (*check.Result, error) {
	m := Canon(opts.Model)
	r := &check.Result{Checker: "chronos", Model: opts.Model}
	if r.Model == "" {
		r.Model = ModelSI
	}
	if m == "" {
		r.Verdict = check.Unknown
		r.Reason = fmt.Sprintf("chronos judges snapshot-isolation, serializable and strict-serializable only, not %q", opts.Model)
		finish(r)
		return r, nil
	}
	init := opts.Param("initial-value", "null")
	if init != "null" && init != "0" {
		return nil, fmt.Errorf("chronos: parameter initial-value must be \"null\" or \"0\", not %q", init)
	}
	gc := opts.Param("gc", "true") != "false"
	gcEvery := 20000
	if s := opts.Param("gc-every", ""); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("chronos: parameter gc-every must be a positive integer, not %q", s)
		}
		gcEvery = n
	}
	c := newRun(h, opts, init == "0", gc, gcEvery)
	if err := c.prepare(); err != nil {
		return nil, err
	}
	var err error
	switch m {
	case ModelSI:
		err = c.replaySI(ctx)
	default:
		err = c.replaySER(ctx)
		if err == nil && m == ModelStrictSER {
			c.realtime()
		}
	}
	if err != nil {
		return nil, err
	}
	c.result(r, m)
	return r, nil
}

// finish fills AnomalyTypes and the verdict from the anomalies found. Every
// type this checker reports is one the judged model prohibits (Session, Int,
// Ext, NoConflict are SI's axioms; commit-order Ext and realtime are
// (strict) serializability's), so any anomaly makes the history invalid.
func finish(r *check.Result) {
	seen := map[string]bool{}
	r.AnomalyTypes = r.AnomalyTypes[:0]
	for _, a := range r.Anomalies {
		if !seen[a.Type] {
			seen[a.Type] = true
			r.AnomalyTypes = append(r.AnomalyTypes, a.Type)
		}
	}
	for t := range r.Truncated {
		if !seen[t] {
			seen[t] = true
			r.AnomalyTypes = append(r.AnomalyTypes, t)
		}
	}
	slices.Sort(r.AnomalyTypes)
	if r.AnomalyTypes == nil {
		r.AnomalyTypes = []string{}
	}
	if r.Anomalies == nil {
		r.Anomalies = []check.Anomaly{}
	}
	if len(r.AnomalyTypes) > 0 {
		r.Verdict = check.Invalid
		switch Canon(r.Model) {
		case ModelSI:
			r.Not = []string{ModelSI}
			r.AlsoNot = []string{ModelSER, ModelStrictSER}
		case ModelSER:
			r.Not = []string{ModelSER}
			r.AlsoNot = []string{ModelStrictSER}
		case ModelStrictSER:
			r.Not = []string{ModelStrictSER}
		}
	}
}
