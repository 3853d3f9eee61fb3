// Package weak decides the weak isolation levels that Biswas & Enea ("On the
// Complexity of Checking Transactional Consistency", OOPSLA 2019, §2.2)
// define axiomatically over a commit order: read committed
// (model.ReadCommittedBE), read atomic (model.ReadAtomic, Cerone et al.'s RA)
// and causal consistency (model.CausalCerone, Cerone et al.'s CC), on
// key-value register and list-append histories (lists: see lists.go).
//
// # Definition
//
// A history satisfies level L iff some strict total order co on its
// committed transactions contains session order so and write-read wr and
// satisfies L's axiom: for every read of key x by t3 from t2 and every other
// transaction t1 that writes x, t1 co t2 whenever
//
//	read committed: an earlier read (program order) of t3 reads from t1
//	read atomic:    t1 so t3, or t3 reads some key from t1
//	causal:         t1 (so ∪ wr)+ t3
//
// Reads preceded by a write of the same key in the same transaction are
// local and must return that write (checked by the read analysis, not by the
// axioms); reads of the initial state read from a virtual initial
// transaction that precedes every other.
//
// # Algorithm (AWDIT-class: Møldrup, Pavlogiannis et al., PLDI 2025)
//
// The premises of all three axioms mention only so, wr and program order,
// never co, so (Biswas & Enea, Theorem 3 and §4) L holds iff the relation
// so ∪ wr ∪ S_L is acyclic, where S_L is the set of edges t1 -> t2 the axiom
// forces. The checker
//
//  1. runs the order-free read analysis (thin-air, aborted, future,
//     own-write, intermediate reads; package check/regread) and derives wr;
//  2. checks so ∪ wr for cycles (cyclic-co) with one topological sort;
//  3. computes vector clocks of causal order hb = (so ∪ wr)+ in topological
//     order (k entries per transaction, k = number of sessions);
//  4. generates S_L, dropping every edge hb already implies (one vector-clock
//     lookup) and reporting at once every edge hb contradicts (t2 hb t1, the
//     "CO" patterns of Plume) or whose target is the initial state;
//     for causal consistency, t1 ranges only over the latest writer of x in
//     each session that hb-precedes t3 (earlier ones precede it in so): a
//     sweep per reader session advances one pointer per writer session
//     (vector-clock entries only grow along a session) and keeps the latest
//     writer per (key, session) in a key-major table, so each read compares
//     one contiguous row with its writer's clock;
//  5. finds the strongly connected components of so ∪ wr ∪ (remaining S_L)
//     and extracts one cycle per non-trivial component (the "CM" patterns).
//
// Complexity, for n transactions, m ops, k sessions and K keys: steps 1-3
// O(m + n·k) time, n·k vector-clock entries of memory; step 4 is O(m) for
// read committed, O(Σ_t r_t·w_t) for read atomic (r_t reads and w_t keys
// written by the transactions t reads from; O(m·c) for c ops per
// transaction) and O(k·(m + n)) for causal consistency, plus the edges kept;
// step 5 is linear in nodes and kept edges. Every level is thus O(n·k + m·c)
// with no search and no solver, matching AWDIT's O(n·k) for causal
// consistency; RC and RA reach O(m·c) with c bounded by the ops per
// transaction (AWDIT's O(n^1.5) bound handles unbounded transaction sizes).
//
// # Anomalies
//
// Violations are named with Plume's minimal patterns (Liu et al., OOPSLA
// 2024, Table 1): cyclic-co; non-monotonic-read (read committed axiom);
// non-repeatable-read and fractured-read (read atomic axiom); and
// commit-order-conflict and conflict (causal axiom). Each anomaly lists the
// transactions, the reads, and every edge of the contradiction: so and wr
// edges with the key, and co edges with the premise that forces them.
//
// Session order comes from Txn.Session/Seq when History.Evidence.Sessions
// is set; otherwise every transaction is its own session (a warning says
// so). The vector clocks have one entry per session, so n·k is bounded
// (maxVCEntries; beyond it the verdict is Unknown).
//
// Unknown-status transactions are treated as committed when some included
// transaction reads from them, and as aborted otherwise; the axioms are
// monotone in the set of transactions, so this is exact. Reads of a value
// two transactions wrote to the same key cannot be attributed: without a
// violation elsewhere the verdict is Unknown.
package weak

import (
	"context"
	"fmt"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// Name is the checker's --checker name.
const Name = "weak"

func init() { check.Register(Checker{}) }

// Checker decides read-committed-be, read-atomic and causal-cerone.
type Checker struct{}

// Name implements check.Checker.
func (Checker) Name() string { return Name }

// Doc implements check.Checker.
func (Checker) Doc() string {
	return "Biswas–Enea read committed, read atomic and causal consistency (Cerone RA/CC) on register histories: saturation + vector clocks + one cycle check (AWDIT-class, polynomial)"
}

// level is the level being decided.
type level uint8

const (
	levelRC level = iota
	levelRA
	levelCC
)

func levelOf(m string) (level, bool) {
	c, err := model.Canonical(m)
	if err != nil {
		return 0, false
	}
	switch c {
	case model.ReadCommittedBE:
		return levelRC, true
	case model.ReadAtomic:
		return levelRA, true
	case model.CausalCerone:
		return levelCC, true
	}
	return 0, false
}

func (l level) String() string {
	return [...]string{"read committed (Biswas–Enea)", "read atomic", "causal consistency"}[l]
}

// Applies implements check.Checker: rank 95 for read-committed-be,
// read-atomic and causal-cerone on register and list-append histories.
func (Checker) Applies(h *history.History, m string) (int, string) {
	if _, ok := levelOf(m); !ok {
		return 0, fmt.Sprintf("decides read-committed-be, read-atomic and causal-cerone only, not %q", m)
	}
	if why := unsupported(h); why != "" {
		return 0, why
	}
	return 95, "register/list history: the level's axioms decided exactly by saturation and one cycle check"
}

func hasAppends(h *history.History) bool { return h.Shape().Has(history.Append) }

func unsupported(h *history.History) string {
	if sh := h.Shape(); !sh.Has(history.PredRead) && !sh.Has(history.Increment) && !sh.Has(history.Delete) {
		return ""
	}
	// The first such op names the reason.
	for i := range h.Txns {
		for j := range h.Txns[i].Ops {
			o := &h.Txns[i].Ops[j]
			switch {
			case o.Kind == history.PredRead:
				return "predicate reads are not supported by the weak checker"
			case o.Kind == history.Increment:
				return "increments are not supported by the weak checker"
			case o.Kind == history.Delete:
				return history.DeletesUnsupported("the weak checker")
			}
		}
	}
	return ""
}

// Check implements check.Checker.
func (Checker) Check(ctx context.Context, h *history.History, opts check.Options) (*check.Result, error) {
	r := &check.Result{Checker: Name, Model: opts.Model}
	lv, ok := levelOf(opts.Model)
	if !ok {
		r.Verdict = check.Unknown
		r.Reason = fmt.Sprintf("the weak checker decides read-committed-be, read-atomic and causal-cerone only, not %q", opts.Model)
		r.Finish()
		return r, nil
	}
	if why := unsupported(h); why != "" {
		r.Verdict = check.Unknown
		r.Reason = why
		r.Finish()
		return r, nil
	}
	if !hasCommitted(h) {
		// "valid" would be a claim about nothing.
		r.Verdict = check.Unknown
		r.Reason = "no committed transaction in the history: nothing to check"
		r.Finish()
		return r, nil
	}
	res := Analyze(ctx, h, lv, opts)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if hasAppends(h) {
		as, trunc, ok, err := elleListAnomalies(ctx, h, opts)
		if err != nil {
			return nil, err
		}
		if !ok {
			res.Unknown = "list reads need the list-append checker (package check/elle) registered for their order-free checks"
		}
		for _, an := range as {
			res.Counts[an.Type]++
			if res.Counts[an.Type] <= opts.MaxPerType() {
				res.Anomalies = append(res.Anomalies, an)
			}
		}
		for t, n := range trunc {
			res.Counts[t] += n
		}
	}
	res.fill(r, opts.MaxPerType())
	if !h.Evidence.Sessions {
		r.Warnings = append(r.Warnings, "the history has no session order (Evidence.Sessions is false): the levels were decided with an empty session order, which read atomic and causal consistency otherwise include")
	}
	r.Finish()
	return r, nil
}

// hasCommitted reports whether some transaction committed (or may have).
func hasCommitted(h *history.History) bool {
	for i := range h.Txns {
		if h.Txns[i].Status != history.Aborted {
			return true
		}
	}
	return false
}
