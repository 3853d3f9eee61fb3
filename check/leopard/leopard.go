// Package leopard is txray's interval-based black-box checker, after
// Leopard (Li, Cui et al., "Leopard: A Black-Box Approach for Efficiently
// Verifying Various Isolation Levels", ICDE 2023).
//
// Input is a history whose every operation carries its client-side
// interval [before, after] (history.Op.HasTime with Invoke/Complete); the
// transaction's own interval bounds its begin and its commit. The real
// point at which the database executed each operation lies somewhere in its
// interval. Leopard does not guess an order: it mirrors the four mechanisms
// real engines are built from (model.Mechanism) and checks, for each, that
// some placement of the points inside the intervals obeys it; when none
// does, it reports a violation with the operations and intervals that rule
// every placement out.
//
// Conventions. "x certainly precedes y" means x.after < y.before; "x may
// precede y" means x.before < y.after. The commit (or abort) of a
// transaction lies in [after of its last op, Txn.Complete]; its transaction
// snapshot in [Txn.Invoke, after of its first read] (engines that take the
// snapshot at the first statement or read); a statement snapshot in the
// read's own interval. Engines with a transaction snapshot and write locks
// but no first-updater check (InnoDB/MariaDB repeatable read, TiDB
// pessimistic, SQLite, CockroachDB profiles) create the read view at the
// first consistent read, which need not be the first read, and serve
// unmarked locking reads (SELECT ... FOR UPDATE) from the latest committed
// version: there each read's snapshot lies in [Txn.Invoke, after of that
// read], which covers both. A read after the transaction's own write sees
// that write (InnoDB applies it on the latest committed version, so the
// rest of such a read is not matched against the snapshot). A write's lock
// is acquired within the write's interval and released within the
// commit's or abort's.
//
// Versions of list-append keys: a list read returns the version its last
// element's writer installed; every earlier element (appended by an
// earlier version, or earlier by the same writer) must come from a
// transaction that did not abort and whose commit may precede the
// snapshot's latest point (checked as CR). Garbage collection keeps, per
// list key, the values its collected writers appended (whether a possibly
// committed one did, else the aborted appender), so an aborted element is
// rejected however long ago its writer was collected.
//
// Unknown outcomes: a transaction whose outcome the client never learnt
// may have committed; its commit has no upper bound, its nil read results
// are unknown (Jepsen :info), and its ops without intervals are widened to
// the neighbouring known bounds. One without any client interval (committed
// or unknown) is not verified, but its writes are possible versions of
// every read (never certainly committed, never holding a certain lock).
//
// Mechanisms (§IV):
//   - Consistent read (CR): a read returns a version of its minimal
//     candidate set: committed, not a future version (its commit began
//     after the snapshot's latest point), not a garbage version (certainly
//     followed by a version certainly committed before the snapshot's
//     earliest point). What remains is the pivot (the latest version
//     certainly committed before the snapshot), the versions that may be
//     ordered after it (pivot-overlap), and the overlap versions whose
//     commit overlaps the snapshot; this is exact for the intervals: each
//     remaining version is visible in some placement of the points. The
//     initial version is a candidate only while no version certainly
//     committed before the snapshot. A read after the transaction's own
//     write must return it. Under a transaction snapshot whose read view
//     never moves (no statement snapshots, no unmarked current reads:
//     the first-updater-wins and certifier profiles), two reads of one key
//     before the transaction's own write of it must return the same
//     version (same value, or same list), since one snapshot point shows
//     one version of each key. Reads of engines without CR (locking reads)
//     are checked with statement snapshots and reported as ME.
//     A predicate read is a read of each row it returned and, where its
//     equality/range conditions on the key column identify its records
//     (predicate region, Leopard's appendix; region.go), a read of "no
//     row" of each known key of the region it did not return; a region
//     that cannot be decided is treated conservatively (returned rows
//     only).
//   - Mutual exclusion (ME): write locks are held from the first write of a
//     key to commit/abort; two holds on one key whose intervals force an
//     overlap (each release began no earlier than the other's write ended)
//     are a violation.
//   - First-updater-wins (FUW): two committed writers of a key that are
//     certainly concurrent (each commit began no earlier than the other's
//     snapshot ended) are a violation.
//   - Serialization certifier (SC): a cycle of certain dependencies (ww,
//     wr, rw) among committed transactions (general cycle); for
//     PostgreSQL's SSI the dangerous structure T1 -rw-> T2 -rw-> T3 among
//     certainly concurrent committed transactions with T3 certainly
//     committing first; and for timestamp-ordering certifiers of strictly
//     serializable engines (FoundationDB: commit versions order the
//     transactions, a read whose range was written between its read
//     version and its commit version aborts) a certain T1 -rw-> T2 with T2
//     certainly committed before T1 began committing.
//
// Dependency deduction (§IV, Theorems 3-4): when only one order of two
// writes is compatible with a mechanism (ME: one lock release began after
// the other's write ended; FUW: one commit began after the other's snapshot
// ended) that order is used by every other check, so a contradiction
// between mechanisms surfaces as a violation. Deduction is only used for
// DBMS profiles, where the mechanisms are known; for a plain model only
// interval order is trusted.
//
// Pipeline (§V): each client's traces go to its local buffer; a global
// min-heap over the buffers dispatches traces in order of before-timestamp
// up to the watermark (the smallest latest before-timestamp over clients),
// in batches. A read is verified once every trace that began before its
// snapshot's latest point has been dispatched. Garbage collection
// (Definition 4) discards versions, lock holds, reads and transactions no
// transaction not yet ended can conflict with, so memory stays flat on an
// unbounded stream.
//
// Plain models. A consistency model prescribes no mechanism: serializable
// may be two-phase locking (no snapshot: a read sees versions committed
// after the transaction's first read), a serial scheduler that lets
// read-only transactions read a lagging snapshot (no consistent read within
// the interval), or SSI (no mutual exclusion); snapshot isolation may
// buffer writes and check at commit (first-committer-wins: no write locks);
// and a non-strict model does not even tie the version order to real time,
// so interval-derived orders prove nothing. Each mechanism check would flag
// correct histories of some correct implementation, so leopard does not
// apply to a plain model: Applies ranks it 0 and Check returns Unknown with
// that reason (use a DBMS profile, or a model checker such as elle).
package leopard

import (
	"context"
	"fmt"
	"sort"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// Name is the checker's --checker name.
const Name = "leopard"

// RankProfile is the rank in --checker auto for a DBMS profile (the
// mechanisms are known). A plain model ranks 0 (see PlainReason).
const RankProfile = 70

func init() { check.Register(Checker{}) }

// Checker is the registered offline checker.
type Checker struct{}

// Name implements check.Checker.
func (Checker) Name() string { return Name }

// Doc implements check.Checker.
func (Checker) Doc() string {
	return "Leopard: client-side operation intervals, verified by mirroring the engine's mechanisms (consistent read, mutual exclusion, first-updater-wins, serialization certifier)"
}

// Config is a resolved verification setup.
type Config struct {
	// Model is the profile or model name results are judged by.
	Model string
	// Mechanisms verified.
	Mechanisms []model.Mechanism
	// SnapshotPerStatement: consistent reads take a snapshot per statement.
	SnapshotPerStatement bool
	// Plain is set for a plain consistency model: no mechanism is
	// verified (PlainReason).
	Plain bool
	// SSI enables PostgreSQL's dangerous-structure rule for SC.
	SSI bool
	// TO enables the timestamp-ordering rule for SC: commit order is the
	// serialization order (see mechs.to).
	TO bool
}

// Resolve maps a DBMS profile or plain model name to the mechanisms to
// verify; ok is false when neither applies. A plain model resolves to a
// Config with Plain set and no mechanisms: nothing is verified and the
// verdict is unknown (PlainReason).
func Resolve(name string) (Config, bool) {
	if p, ok := model.LookupProfile(name); ok {
		return ProfileConfig(p), true
	}
	m, err := model.Canonical(name)
	if err != nil {
		return Config{}, false
	}
	switch m {
	case model.StrictSerializable, model.Serializable, model.SnapshotIsolation, model.RepeatableRead,
		model.ReadCommitted, model.ReadUncommitted:
		return Config{Model: m, Plain: true}, true
	}
	return Config{}, false
}

// PlainReason is why a plain model is not verified (see the package doc).
const PlainReason = "leopard verifies the mechanisms of a DBMS implementation; a plain consistency model prescribes none " +
	"(serializable may be 2PL without snapshots or read lagging snapshots, snapshot isolation may buffer writes without locks, " +
	"a non-strict model does not follow real time), so checking any mechanism could flag correct histories: " +
	"give a DBMS profile (e.g. postgres:serializable, mysql:repeatable-read) or use a model checker (elle)"

// ProfileConfig is the verification setup of a DBMS profile.
//
// Certifier rules per profile and their sources (the other mechanisms
// follow model.Profile's Doc):
//   - every profile with a certifier (postgres:serializable,
//     cockroachdb:serializable, foundationdb:serializable): a cycle of
//     certain dependencies among committed transactions, which no
//     serializable engine may commit (Adya 1999, G1c/G2);
//   - postgres:serializable adds the SSI dangerous structure (Ports &
//     Grittner, VLDB 2012 §3.2-3.3 and §4.1; README-SSI in
//     src/backend/storage/lmgr; predicate.c,
//     OnConflict_CheckForSerializationFailure): T_out must commit first,
//     a read-only T_in only counts when T_out committed before its
//     snapshot, and the structure is reported only when certain
//     dependencies close it into a cycle (see engine.pivot);
//   - foundationdb:serializable adds timestamp ordering (Zhou et al.,
//     "FoundationDB: A Distributed Unbundled Transactional Key Value
//     Store", SIGMOD 2021 §2.4: the resolvers abort a transaction when a
//     key range it read was written by a transaction committed between
//     its read version and its commit version; read-only transactions
//     commit at their read version without the resolvers);
//   - cockroachdb:serializable has no rule beyond the cycle: CockroachDB
//     serializes at transaction timestamps that read refreshes may push
//     (Taft et al., "CockroachDB: The Resilient Geo-Distributed SQL
//     Database", SIGMOD 2020 §3.3-3.4; docs "Transaction Layer"), so
//     neither commit order nor SSI structures bind it.
func ProfileConfig(p model.Profile) Config {
	c := Config{Model: p.Name, Mechanisms: p.Mechanisms, SnapshotPerStatement: p.SnapshotPerStatement}
	for _, m := range p.Mechanisms {
		if m == model.SerializationCertifier && p.DB == "postgres" {
			c.SSI = true
		}
		if m == model.SerializationCertifier && p.Model == model.StrictSerializable {
			c.TO = true
		}
	}
	return c
}

func (c Config) mechs(initUnknown bool) mechs {
	var m mechs
	for _, x := range c.Mechanisms {
		switch x {
		case model.ConsistentRead:
			m.cr = true
		case model.MutualExclusion:
			m.me = true
		case model.FirstUpdaterWins:
			m.fuw = true
		case model.SerializationCertifier:
			m.sc = true
		}
	}
	m.ssi = c.SSI && m.sc
	m.to = c.TO && m.sc
	m.stmt = c.SnapshotPerStatement || !m.cr
	m.curRead = m.cr && !m.stmt && m.me && !m.fuw
	ru := false
	if p, ok := model.LookupProfile(c.Model); ok {
		ru = p.Model == model.ReadUncommitted
	} else {
		ru = c.Model == model.ReadUncommitted
	}
	m.reads = !ru && !c.Plain
	m.initUnknown = initUnknown
	m.deduce = !c.Plain
	return m
}

// Applies implements check.Checker.
func (Checker) Applies(h *history.History, name string) (int, string) {
	if h == nil {
		return 0, "no history"
	}
	if !h.Evidence.OpTime {
		return 0, "needs client intervals (invoke/complete) on every operation of committed transactions"
	}
	if h.HasDeletes() {
		return 0, history.DeletesUnsupported("leopard")
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Status == history.Committed && !t.HasTime {
			return 0, "committed transaction " + h.TxnName(t.Index) + " has no client interval"
		}
	}
	if name == "" {
		name = check.DefaultModel
	}
	if _, ok := model.LookupProfile(name); ok {
		return RankProfile, "client intervals; mechanisms of profile " + name
	}
	if c, ok := Resolve(name); ok {
		return 0, "plain model " + c.Model + ": " + PlainReason
	}
	return 0, fmt.Sprintf("no mechanism decomposition for %q (give a DBMS profile such as postgres:serializable)", name)
}

// initialUnknown reports whether a history's keys start with unknown values
// (Leopard traces of pre-loaded tables; header extra "initial": "unknown").
func initialUnknown(h *history.History, opts check.Options) bool {
	if v := opts.Param("initial", ""); v != "" {
		return v == "unknown"
	}
	return h.Header.Extra["initial"] == "unknown"
}

// Check implements check.Checker: the whole history through the pipeline.
func (Checker) Check(ctx context.Context, h *history.History, opts check.Options) (*check.Result, error) {
	name := opts.Model
	if name == "" {
		name = check.DefaultModel
	}
	cfg, ok := Resolve(name)
	if !ok {
		r := &check.Result{Checker: Name, Model: name, Verdict: check.Unknown,
			Reason: fmt.Sprintf("leopard: no mechanism decomposition for %q", name)}
		r.Finish()
		return r, nil
	}
	if cfg.Plain {
		r := &check.Result{Checker: Name, Model: cfg.Model, Verdict: check.Unknown, Reason: PlainReason}
		r.Finish()
		return r, nil
	}
	if h.HasDeletes() {
		// Deleted versions are not modelled: a read of a deleted row
		// would be checked as a read of the initial version.
		r := &check.Result{Checker: Name, Model: name, Verdict: check.Unknown, Reason: history.DeletesUnsupported("leopard")}
		r.Finish()
		return r, nil
	}
	rep := newReporter(h.Keys, h.Values, h, opts.MaxPerType(), cfg.Plain)
	e := newEngine(cfg.mechs(initialUnknown(h, opts)), rep)
	// Periodic draining keeps memory flat; it needs sessions (a transaction
	// without one could begin before the watermark).
	sessions := true
	for i := range h.Txns {
		if h.Txns[i].Session < 0 {
			sessions = false
			break
		}
	}
	// Every session is declared before the first transaction, and closed
	// after its last one: a session whose first transaction comes late in
	// the file still holds the watermark back until it appears (else its
	// traces would arrive behind the frontier), and a finished session
	// stops holding it.
	order := feedOrder(h)
	lastOf := map[int32]int32{}
	if sessions {
		for _, i := range order {
			if t := &h.Txns[i]; t.HasTime {
				e.declare(t.Session)
				lastOf[t.Session] = i
			}
		}
	}
	untimed := 0
	// Transactions without a client interval first: their writes are
	// possible versions of every read (addFloating).
	for i := range h.Txns {
		if t := &h.Txns[i]; !t.HasTime {
			untimed++
			e.addFloating(t)
		}
	}
	for n, i := range order {
		t := &h.Txns[i]
		if !t.HasTime {
			continue
		}
		e.addTxn(t.Session, t)
		if sessions && lastOf[t.Session] == i {
			e.endSession(t.Session)
		}
		if n&4095 == 4095 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if sessions {
				e.drain(e.watermark())
			}
		}
	}
	e.finish()
	r := e.result(cfg)
	if untimed > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d transactions without client intervals were not verified (their writes count as possible versions of every read)", untimed))
		r.Stats["untimed_txns"] = untimed
	}
	return r, nil
}

// feedOrder is the order transactions enter the pipeline: the history's
// order when each session's transactions appear in Seq order (the
// recorder's completion order), else by invoke time.
func feedOrder(h *history.History) []int32 {
	order := make([]int32, len(h.Txns))
	for i := range order {
		order[i] = int32(i)
	}
	ns := int32(0)
	for i := range h.Txns {
		ns = max(ns, h.Txns[i].Session+1)
	}
	last := make([]int32, ns)
	for i := range last {
		last[i] = -1
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Session < 0 {
			continue
		}
		if t.Seq < last[t.Session] {
			sort.SliceStable(order, func(a, b int) bool { return h.Txns[order[a]].Invoke < h.Txns[order[b]].Invoke })
			return order
		}
		last[t.Session] = t.Seq
	}
	return order
}

// result builds the check.Result (calls Finish).
func (e *engine) result(cfg Config) *check.Result {
	rep := e.rep
	r := &check.Result{Checker: Name, Model: cfg.Model, Anomalies: rep.anomalies}
	if r.Anomalies == nil {
		r.Anomalies = []check.Anomaly{}
	}
	for t, n := range rep.truncated {
		if n > 0 {
			if r.Truncated == nil {
				r.Truncated = map[string]int{}
			}
			r.Truncated[t] = n
		}
	}
	ms := make([]string, len(cfg.Mechanisms))
	for i, m := range cfg.Mechanisms {
		ms[i] = string(m)
	}
	ratio := 0.0
	if e.stats.deps > 0 {
		ratio = float64(e.stats.uncertain) / float64(e.stats.deps)
	}
	snap := "transaction"
	if e.m.stmt {
		snap = "statement"
	}
	r.Stats = map[string]any{
		"mechanisms":             ms,
		"snapshot":               snap,
		"traces":                 e.stats.traces,
		"txns":                   e.stats.txns,
		"reads":                  e.stats.reads,
		"reads_checked":          e.stats.readsChecked,
		"predicate_reads":        e.stats.predReads,
		"writes":                 e.stats.writes,
		"unchecked_ops":          e.stats.uncheckedOps,
		"dependencies":           e.stats.deps,
		"uncertain_dependencies": e.stats.uncertain,
		"uncertain_ratio":        ratio,
		"uncertain_reads":        e.stats.readUncertain,
		"gc_versions":            e.stats.gcVersions,
		"gc_txns":                e.stats.gcTxns,
		"gc_reads":               e.stats.gcReads,
		"peak_live_txns":         e.stats.peakLive,
	}
	if e.stats.regions+e.stats.regionsUndecided > 0 {
		r.Stats["pred_regions"] = e.stats.regions
		r.Stats["pred_regions_undecided"] = e.stats.regionsUndecided
		r.Stats["pred_region_absent_rows"] = e.stats.regionRows
	}
	if e.stats.cycleBudget > 0 {
		r.Stats["cycle_search_budget_exhausted"] = e.stats.cycleBudget
		r.Warnings = append(r.Warnings, fmt.Sprintf("the bounded cycle search (depth %d, %d nodes) was exhausted %d times; longer certifier cycles may be missed",
			maxCycleDepth, cycleBudget, e.stats.cycleBudget))
	}
	if sp := e.spill; sp != nil && sp.err != nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the spill file for collected transactions could not be written (%v); their records were kept in memory", sp.err))
	}
	if n := rep.spillErrs; n > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d spilled transaction records could not be read back; explanations name them by index only", n))
	}
	r.Finish()
	if cfg.Plain {
		r.Verdict, r.Reason = check.Unknown, PlainReason
	}
	if e.stats.ssiOpen > 0 {
		r.Stats["ssi_open_structures"] = e.stats.ssiOpen
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d committed SSI dangerous structures (first: %s) that PostgreSQL's certifier rule says one of must abort; "+
			"certain dependencies close none of them into a cycle, so they are not anomalies", e.stats.ssiOpen, e.stats.ssiOpenFirst))
	}
	if e.stats.txns == 0 && r.Verdict == check.Valid {
		r.Verdict, r.Reason = check.Unknown, "no transaction was verified"
	} else if e.stats.mayCommit == 0 && r.Verdict == check.Valid {
		// Online (txray watch) too: aborted transactions' reads were
		// verified, but no committed transaction was seen.
		r.Verdict, r.Reason = check.Unknown, "no committed transaction was verified (every transaction aborted)"
	}
	if e.stats.lateTxns > 0 {
		r.Stats["late_txns"] = e.stats.lateTxns
		if r.Verdict != check.Unknown {
			lf := e.stats.lateFirst
			r.Reason = fmt.Sprintf("%d transactions (the first %s, session %d, beginning at %d) arrived after the verifier had dispatched traces that began later "+
				"(a session first seen late, a transaction without a session, arrival beyond the window, or, with skewed clocks, a write that acquired its lock before a collected lock was released), so reads verified before they arrived missed their versions "+
				"and their own checks used collected state; without them the verdict would be %s", e.stats.lateTxns, txnLabel(lf), lf.Session, lf.Invoke, r.Verdict)
			r.Verdict = check.Unknown
		}
	}
	if e.stats.forgottenKeys > 0 {
		r.Stats["forgotten_keys"] = e.stats.forgottenKeys
	}
	if e.rc != nil && e.rc.released > 0 {
		r.Stats["recycled_key_chunks"] = e.rc.released
	}
	if e.stats.suspectKeys > 0 {
		r.Stats["suspect_keys"] = e.stats.suspectKeys
	}
	if e.stats.forgottenSessions > 0 {
		r.Stats["forgotten_sessions"] = e.stats.forgottenSessions
	}
	if sp := e.spill; sp != nil && sp.records > 0 {
		r.Stats["spill_bytes_peak"] = sp.peak
		if sp.dropped > 0 {
			r.Stats["spill_dropped_records"] = sp.dropped
		}
	}
	if n := rep.spillDropped; n > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d explanations name collected transactions whose records were dropped to keep the spill file within its limit (--spill-limit); they name them by index only", n))
	}
	if n := e.stats.forgottenReads; n > 0 {
		r.Stats["forgotten_reads"] = n
		why := fmt.Sprintf("%d reads (the first of key %s) were not checked: the state of %d keys was discarded to stay within the key bound (%d keys; txray watch: half of --memory-limit)",
			n, e.stats.forgottenFirst, e.stats.forgottenKeys, e.maxChunks*keyChunk)
		if e.stats.suspectKeys > 0 {
			why += fmt.Sprintf("; %d keys first seen after key ids were recycled may be forgotten keys coming back (a filter of forgotten names, which may also hold new keys' names, says so), so their reads count too", e.stats.suspectKeys)
		}
		if r.Verdict == check.Valid {
			r.Verdict, r.Reason = check.Unknown, why
		} else {
			r.Warnings = append(r.Warnings, why)
		}
	}
	if e.stats.lateFloating > 0 {
		r.Stats["late_untimed_txns"] = e.stats.lateFloating
		if r.Verdict == check.Invalid {
			r.Verdict = check.Unknown
			r.Reason = fmt.Sprintf("%d transactions without client intervals arrived after reads had been verified; their writes may explain the violations found", e.stats.lateFloating)
		}
	}
	return r
}

// txnLabel names a transaction by id, else by index.
func txnLabel(t *history.Txn) string {
	if t.ID != "" {
		return t.ID
	}
	return fmt.Sprintf("T%d", t.Index)
}
