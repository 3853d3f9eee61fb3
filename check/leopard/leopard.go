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
// snapshot in [Txn.Invoke, after of its first read] (the first statement
// for engines that take the snapshot there, the first consistent read for
// InnoDB: the wider interval covers both); a statement snapshot in the
// read's own interval. A write's lock is acquired within the write's
// interval and released within the commit's or abort's.
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
//     write must return it. Reads of engines without CR (locking reads)
//     are checked with statement snapshots and reported as ME.
//   - Mutual exclusion (ME): write locks are held from the first write of a
//     key to commit/abort; two holds on one key whose intervals force an
//     overlap (each release began no earlier than the other's write ended)
//     are a violation.
//   - First-updater-wins (FUW): two committed writers of a key that are
//     certainly concurrent (each commit began no earlier than the other's
//     snapshot ended) are a violation.
//   - Serialization certifier (SC): a cycle of certain dependencies (ww,
//     wr, rw) among committed transactions, and for PostgreSQL's SSI the
//     dangerous structure T1 -rw-> T2 -rw-> T3 among certainly concurrent
//     committed transactions with T3 certainly committing first.
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
// Plain models map to the mechanisms their textbook implementation uses:
// strict-serializable and serializable → CR (transaction snapshot) + ME +
// SC; snapshot-isolation → CR (transaction snapshot) + ME + FUW;
// repeatable-read and read-committed → CR (statement snapshot) + ME;
// read-uncommitted → ME. A plain model does not itself prohibit mechanism
// violations, so they are reported (Allowed) and make the verdict unknown;
// certifier cycles are reported under their Adya names (G0, G1c,
// G-single-item, G2-item), which the model does prohibit.
package leopard

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// Name is the checker's --checker name.
const Name = "leopard"

// Rank in --checker auto: 70 for a DBMS profile (the mechanisms are known),
// 45 for a plain model (below Elle's inference, which judges the model
// itself rather than an implementation's mechanisms).
const (
	RankProfile = 70
	RankPlain   = 45
)

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
	// Plain is set for a plain consistency model (no deduction; mechanism
	// violations are informational).
	Plain bool
	// SSI enables PostgreSQL's dangerous-structure rule for SC.
	SSI bool
}

// Resolve maps a DBMS profile or plain model name to the mechanisms to
// verify; ok is false when neither applies.
func Resolve(name string) (Config, bool) {
	if p, ok := model.LookupProfile(name); ok {
		return ProfileConfig(p), true
	}
	m, err := model.Canonical(name)
	if err != nil {
		return Config{}, false
	}
	c := Config{Model: m, Plain: true}
	cr, me, fuw, sc := model.ConsistentRead, model.MutualExclusion, model.FirstUpdaterWins, model.SerializationCertifier
	switch m {
	case model.StrictSerializable, model.Serializable:
		c.Mechanisms = []model.Mechanism{cr, me, sc}
	case model.SnapshotIsolation:
		c.Mechanisms = []model.Mechanism{cr, me, fuw}
	case model.RepeatableRead, model.ReadCommitted:
		c.Mechanisms = []model.Mechanism{cr, me}
		c.SnapshotPerStatement = true
	case model.ReadUncommitted:
		c.Mechanisms = []model.Mechanism{me}
	default:
		return Config{}, false
	}
	return c, true
}

// ProfileConfig is the verification setup of a DBMS profile.
func ProfileConfig(p model.Profile) Config {
	c := Config{Model: p.Name, Mechanisms: p.Mechanisms, SnapshotPerStatement: p.SnapshotPerStatement}
	for _, m := range p.Mechanisms {
		if m == model.SerializationCertifier && p.DB == "postgres" {
			c.SSI = true
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
	m.stmt = c.SnapshotPerStatement || !m.cr
	ru := false
	if p, ok := model.LookupProfile(c.Model); ok {
		ru = p.Model == model.ReadUncommitted
	} else {
		ru = c.Model == model.ReadUncommitted
	}
	m.reads = !ru
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
		return RankPlain, fmt.Sprintf("client intervals; plain model %s verified through the mechanisms %v", c.Model, c.Mechanisms)
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
	untimed := 0
	order := feedOrder(h)
	for n, i := range order {
		t := &h.Txns[i]
		if !t.HasTime {
			untimed++
			continue
		}
		e.addTxn(t.Session, t)
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
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d transactions without client intervals were not verified", untimed))
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
	if e.stats.cycleBudget > 0 {
		r.Stats["cycle_search_budget_exhausted"] = e.stats.cycleBudget
		r.Warnings = append(r.Warnings, fmt.Sprintf("the bounded cycle search (depth %d, %d nodes) was exhausted %d times; longer certifier cycles may be missed",
			maxCycleDepth, cycleBudget, e.stats.cycleBudget))
	}
	r.Finish()
	if cfg.Plain && r.Verdict == check.Valid {
		var mech []string
		for _, a := range r.Anomalies {
			switch a.Type {
			case model.CR, model.ME, model.FUW, model.SC:
				mech = append(mech, a.Type)
			}
		}
		for t := range r.Truncated {
			switch t {
			case model.CR, model.ME, model.FUW, model.SC:
				mech = append(mech, t)
			}
		}
		if len(mech) > 0 {
			r.Verdict = check.Unknown
			r.Reason = "the history violates mechanisms (" + strings.Join(dedupe(mech), ", ") + ") a typical implementation of " + cfg.Model +
				" uses, but the plain model does not itself prohibit mechanism violations; give a DBMS profile (e.g. postgres:serializable) to judge them"
		}
	}
	return r
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
