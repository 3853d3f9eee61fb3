// Package chronos is txray's offline timestamp-based checker, after Chronos
// ("Chronos: Efficiently Checking Snapshot Isolation ... by replaying"
// timestamps, ICDE 2024; reference implementation TimeKiller,
// github.com/FertileFragrance/TimeKiller).
//
// When the database exposes every committed transaction's start timestamp
// (snapshot) and commit timestamp, snapshot isolation is checked in
// O(n log n) by replaying start and commit events in timestamp order and
// checking the four axioms of the paper's SI definition (after Cerone
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
// Garbage collection (as in the paper): replay keeps per key only the frontier
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
	"strconv"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
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
	// ModelSessionSER is serializable plus the Session axiom.
	ModelSessionSER = "strong-session-serializable"
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

// Canon maps a model name, alias or DBMS profile (package model) to the
// model this checker judges, or "" when it cannot judge it. The empty model
// means snapshot isolation (the model Chronos is about).
//
// strong-session-snapshot-isolation is judged as snapshot-isolation (the
// Session axiom is always checked); strong-session-serializable as
// serializable plus the Session axiom. Weaker models (read-committed,
// read-uncommitted, repeatable-read, read-atomic, causal, ...) are not
// applicable: the timestamp axioms decide SI and (strict) serializability; a
// history that violates them may still satisfy a weaker level, so their
// failures say nothing about it, and the weaker level's own definition is
// not what is checked.
func Canon(name string) string {
	if strings.TrimSpace(name) == "" {
		return ModelSI
	}
	m, err := model.Canonical(name)
	if err != nil {
		p, ok := model.LookupProfile(name)
		if !ok {
			return ""
		}
		m = p.Model
	}
	switch m {
	case model.SnapshotIsolation, model.StrongSessionSnapshotIsolation:
		return ModelSI
	case model.Serializable:
		return ModelSER
	case model.StrongSessionSerializable:
		return ModelSessionSER
	case model.StrictSerializable:
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
		finish(r, m)
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
		if em, ok := err.(errMissing); ok {
			r.Verdict = check.Unknown
			r.Reason = em.Error()
			finish(r, m)
			return r, nil
		}
		return nil, err
	}
	var err error
	switch m {
	case ModelSI:
		err = c.replaySI(ctx)
	default:
		if m == ModelSessionSER {
			c.session()
		}
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

// finish completes r with check.Result.Finish (verdict, anomaly types,
// Not/AlsoNot from package model). For the commit-order replay the "ext"
// failures mean "the commit order is not a serialization order", which says
// nothing about snapshot isolation, so the ruled-out models are narrowed to
// the serializable ones.
func finish(r *check.Result, m string) {
	if r.Anomalies == nil {
		r.Anomalies = []check.Anomaly{}
	}
	r.Finish()
	if r.AnomalyTypes == nil {
		r.AnomalyTypes = []string{}
	}
	if m != ModelSI && len(r.AnomalyTypes) > 0 {
		rt := len(r.AnomalyTypes) == 1 && r.AnomalyTypes[0] == TypeRealtime
		if rt {
			r.Not, r.AlsoNot = []string{model.StrictSerializable}, nil
		} else {
			r.Not, r.AlsoNot = []string{model.Serializable}, []string{model.StrictSerializable}
		}
	}
}
