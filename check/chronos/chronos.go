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
// point (the Ext axiom with sts replaced by cts). Strict serializability
// additionally requires the commit order to respect real time (client
// intervals): if T1 completed before T2 was invoked then T1.cts < T2.cts
// ("realtime"); strong-session-serializable requires it to respect each
// session's order (prev.cts < next.cts, "session").
//
// A passing commit-order replay is a witness: the commit order is a serial
// order explaining every read, so Valid is always sound. A failing one
// proves non-serializability only when the database serializes in
// commit-timestamp order (timestamp-ordered engines: TiDB, CockroachDB,
// Spanner, FoundationDB; see CommitOrderSerializes for the evidence
// accepted). Under serializable snapshot isolation (PostgreSQL
// serializable) a transaction may precede, in every serial order, one that
// committed before it, so a correct history can fail the replay. Without the
// evidence such failures (and realtime / session contradictions) make the
// verdict Unknown with a reason suggesting graph inference (list-append,
// rw-register), and Applies ranks chronos below those checkers. Reads of an
// aborted transaction's write (typed "G1a", Adya) and of values nobody wrote
// ("garbage-versions") are violations whatever the serial order. With the
// evidence, other failures are typed "ext"; since model.RulesOut(["ext"])
// would also rule out snapshot isolation, the result's Not/AlsoNot are
// recomputed: "ext" rules out serializable and every model implying it
// (strict-serializable, strong-session-serializable), "session" rules out
// strong-session-serializable and up.
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
// Unknown outcome without timestamps (Jepsen :info): such a transaction may
// have committed at an unknown point, or not at all. Replaying it as aborted
// is one possible execution, so a Valid verdict stays sound as long as no
// read observes its writes. A register read of its value, or a list read
// containing its elements, is undecided (Unknown) — but for lists the rest
// is still checked: the true committed list at the snapshot, restricted to
// the replayed transactions' elements, is exactly the replayed list, so the
// read with the unknown transactions' elements left out must equal it; any
// other mismatch (a stale prefix, reordered or missing known elements) is an
// Ext violation whatever the unknown transactions did.
//
// Params:
//
//	initial-value  "null" (default, TimeKiller's default) or "0": the value
//	               of every key before any write. A read of null/absent
//	               (history.NoValue) always denotes the initial value.
//	gc             "true" (default) or "false".
//	gc-every       transactions between GC rounds (default 20000).
//	commit-order-serializes
//	               "true" or "false": whether the database serializes in
//	               commit-timestamp order (overrides the history header and
//	               the DBMS profile; see CommitOrderSerializes).
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
	ModelSI = "snapshot-isolation"
	// ModelSessionSI is snapshot isolation plus the Session axiom.
	ModelSessionSI = "strong-session-snapshot-isolation"
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
// The Session axiom is checked for strong-session-snapshot-isolation and
// strong-session-serializable only: plain snapshot isolation (Adya PL-SI,
// Elle's snapshot-isolation; generalized SI, Elnikety et al. SRDS 2005) lets
// a transaction read any snapshot older than its start, including one
// without its own session's previous transaction (a read-only transaction
// reading a lagging replica). Cerone et al. and Chronos build SESSION into
// their SI; txray's strong-session-snapshot-isolation is that definition. Weaker models (read-committed,
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
	case model.SnapshotIsolation:
		return ModelSI
	case model.StrongSessionSnapshotIsolation:
		return ModelSessionSI
	case model.Serializable:
		return ModelSER
	case model.StrongSessionSerializable:
		return ModelSessionSER
	case model.StrictSerializable:
		return ModelStrictSER
	}
	return ""
}

// Applies implements check.Checker. Rank 90 when every committed
// transaction has start and commit timestamps and the model is snapshot
// isolation, or (strict) serializability on a database known to serialize
// in commit-timestamp order (see CommitOrderSerializes). For
// (strict) serializability without that knowledge the rank is 40, below the
// graph-inference checkers (list-append 60, rw-register 50): the
// commit-order replay can then only prove a history valid, never invalid.
func (Checker) Applies(h *history.History, model string) (int, string) {
	if h.HasDeletes() {
		return 0, history.DeletesUnsupported("chronos")
	}
	if !h.Evidence.Timestamps {
		return 0, "needs database start and commit timestamps on every committed transaction"
	}
	m := Canon(model)
	if m == "" {
		return 0, fmt.Sprintf("judges snapshot-isolation, serializable and strict-serializable only, not %q", model)
	}
	if isSI(m) {
		return 90, "start and commit timestamps on every committed transaction"
	}
	if ok, why := CommitOrderSerializes(h, check.Options{Model: model}); ok {
		return 90, "start and commit timestamps; commit order serializes (" + why + ")"
	}
	return 40, "commit order is not known to be the serialization order: a failing replay is inconclusive (prefer graph inference)"
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
	sc := scanOps(h)
	if sc.deletes {
		// The replay has no deleted versions: a nil read after a delete
		// would be judged a read of the initial state.
		r.Verdict = check.Unknown
		r.Reason = history.DeletesUnsupported("chronos")
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
	if !isSI(m) {
		if v := opts.Param("commit-order-serializes", ""); v != "" && v != "true" && v != "false" {
			return nil, fmt.Errorf("chronos: parameter commit-order-serializes must be \"true\" or \"false\", not %q", v)
		}
		c.ser = true
		c.coKnown, c.coWhy = CommitOrderSerializes(h, opts)
	}
	if err := c.prepare(sc); err != nil {
		if em, ok := err.(errMissing); ok {
			r.Verdict = check.Unknown
			r.Reason = em.Error()
			finish(r, m)
			return r, nil
		}
		return nil, err
	}
	var err error
	switch {
	case isSI(m):
		err = c.replaySI(ctx, m == ModelSessionSI)
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
// Not/AlsoNot from package model). In the commit-order replay (m is not
// snapshot-isolation) "ext" means "the commit order, which is the
// serialization order, does not explain a read" and "session" means "the
// serialization order contradicts the session order": they rule out
// serializable (resp. strong-session-serializable) and every model implying
// it, but say nothing about snapshot isolation, which model.RulesOut would
// conclude from those names. The boundary is therefore recomputed: every
// other type (internal, G1a, garbage-versions, realtime) is taken from
// model.RulesOut as usual. For strong-session-snapshot-isolation "session"
// rules out that model and the models implying it (model.RulesOut would say
// snapshot-isolation, which does not include the Session axiom here).
func finish(r *check.Result, m string) {
	if r.Anomalies == nil {
		r.Anomalies = []check.Anomaly{}
	}
	r.Finish()
	if r.AnomalyTypes == nil {
		r.AnomalyTypes = []string{}
	}
	if len(r.AnomalyTypes) == 0 {
		return
	}
	if m == ModelSI {
		return
	}
	out := map[string]bool{}
	var rest []string
	for _, t := range r.AnomalyTypes {
		switch t {
		case TypeExt:
			if isSI(m) {
				rest = append(rest, t)
			} else {
				upwardOf(model.Serializable, out)
			}
		case TypeSession:
			if isSI(m) {
				upwardOf(model.StrongSessionSnapshotIsolation, out)
			} else {
				upwardOf(model.StrongSessionSerializable, out)
			}
		default:
			rest = append(rest, t)
		}
	}
	n, a := model.RulesOut(rest)
	for _, x := range append(n, a...) {
		out[x] = true
	}
	r.Not, r.AlsoNot = model.SplitWeakest(out)
}

// isSI reports whether m is judged by the start/commit (snapshot) replay.
func isSI(m string) bool { return m == ModelSI || m == ModelSessionSI }

// upwardOf adds m and every model that implies it to out.
func upwardOf(m string, out map[string]bool) {
	for _, x := range model.Names() {
		if model.Implies(x, m) {
			out[x] = true
		}
	}
}

// tsOrderedDBs are databases whose serializable (or only) level serializes
// transactions in commit-timestamp order: a transaction's reads are those of
// the state committed just before its commit timestamp. TiDB (Percolator:
// reads at start_ts, write conflicts abort, and TimeKiller's serializability
// check assumes commit order), CockroachDB (serializable timestamp ordering;
// reads are refreshed or the transaction restarts at a higher timestamp),
// Spanner (TrueTime commit timestamps are the serialization order, Corbett
// et al. OSDI 2012 §4), FoundationDB (commit versions are the serial order).
// PostgreSQL SSI, MySQL/SQL Server locking and SQLite are not listed: their
// serial order need not be commit order (for 2PL it is, but their
// "commit timestamps" are rarely recorded; give the parameter).
var tsOrderedDBs = map[string]bool{"tidb": true, "cockroachdb": true, "spanner": true, "foundationdb": true}

// CommitOrderSerializes reports whether the commit-timestamp order of h is
// known to be a serialization order, and the evidence: the parameter
// commit-order-serializes ("true"/"false", which wins), the header's
// Extra["commit-order-serializes"] or Extra["sim.commit-order-serializes"]
// (set by the reference simulator per level and by the TimeKiller decoder),
// or a DBMS profile (opts.Model such as "cockroachdb:serializable", or the
// header's database) of a timestamp-ordered database (tsOrderedDBs).
//
// Only then does a failing commit-order replay prove non-serializability:
// under serializable snapshot isolation (PostgreSQL serializable) a
// transaction T1 that commits after T2 may precede it in every serial order
// (T2 read what T1 overwrote), so the replay fails on a serializable history.
// A passing replay is always a witness (the commit order is then a serial
// order explaining every read).
func CommitOrderSerializes(h *history.History, opts check.Options) (bool, string) {
	switch opts.Param("commit-order-serializes", "") {
	case "true":
		return true, "parameter commit-order-serializes=true"
	case "false":
		return false, ""
	}
	for _, k := range []string{"commit-order-serializes", "sim.commit-order-serializes"} {
		if h.Header.Extra[k] == "true" {
			return true, "history header " + k + "=true"
		}
	}
	if p, ok := model.LookupProfile(opts.Model); ok && tsOrderedDBs[p.DB] {
		return true, "profile " + p.Name + " serializes in commit-timestamp order"
	}
	if db := strings.TrimSpace(h.Header.DB); db != "" {
		for _, lvl := range []string{h.Header.Level, "serializable", "snapshot-isolation", "read-committed"} {
			if p, ok := model.LookupProfile(db + ":" + lvl); ok {
				if tsOrderedDBs[p.DB] {
					return true, "database " + p.DB + " serializes in commit-timestamp order"
				}
				break
			}
		}
	}
	return false, ""
}
