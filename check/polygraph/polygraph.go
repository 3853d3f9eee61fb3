// Package polygraph decides serializability and snapshot isolation for
// register histories that carry no version order and no timestamps, by
// search: the history's polygraph (Papadimitriou, "The serializability of
// concurrent database updates", J. ACM 1979) — the dependencies the history
// fixes, plus one binary choice per pair of writers of a key — is encoded
// for a CDCL SAT solver with lazy acyclicity, after pruning, as Cobra (Tan
// et al., OSDI 2020), PolySI (Huang et al., VLDB 2023) and VeriStrong do.
//
// Models: serializable, strong-session-serializable (plus session order),
// strict-serializable (plus session and real-time order), snapshot-isolation and
// strong-session-snapshot-isolation; repeatable-read (Adya PL-2.99) as
// serializable, which it equals on histories without predicate reads.
//
//   - Nodes: committed transactions and unknown-outcome ones whose writes
//     were read (an observed write means the transaction committed); other
//     unknown-outcome transactions may have aborted and are left out, which
//     is the most permissive reading and so never causes a false reject.
//   - Known edges: wr from each register read to the transaction whose value
//     it read (values are unique per key; order-free read violations are
//     reported separately); write combining: a transaction that read key k
//     from T and wrote k directly follows T in k's version order (Cobra
//     §4.2), so ww T -> it and rw from T's other readers; two transactions
//     that read the same version and both overwrote it are a lost update;
//     rw from every reader of the initial state to every first writer;
//     the version order when the history carries one (History.VersionOrder,
//     possibly partial: consecutive listed versions are ordered); session
//     order for the strong-session models; real-time order for strict
//     serializability, in O(n) edges through time points.
//   - Constraints: for each key, each pair of write chains X, Y: either X
//     before Y (ww last(X) -> first(Y) and rw from every reader of last(X) to
//     first(Y)) or the reverse (Cobra's constraint, Biswas & Enea, OOPSLA
//     2019, Def. of commit order saturation).
//   - Acyclicity: serializability requires the graph (wr ∪ ww ∪ rw ∪ session
//     ∪ real-time) to be acyclic (Adya 1999, PL-3). Snapshot isolation
//     requires (D ; RW?) to be acyclic, D = wr ∪ ww (∪ session order for
//     strong-session SI) (Cerone & Gotsman, J. ACM 2018; PolySI §3), encoded
//     by splitting every node (see physEdges).
//   - Pruning: a cycle among the known edges rejects the history at once
//     (reported as the classified cycle); then Cobra's reachability pruning
//     to a fixpoint (prune); constraints before and after are in the stats.
//   - Solving: gini (github.com/go-air/gini) with lazy acyclicity (solve).
//     An unsatisfiable instance is explained by a small core of cycles.
//
// Budget (check.Options.Budget) bounds the cycle clauses learned; it and
// the context deadline turn into verdict unknown with the reason. Cost:
// building is linear in the history plus quadratic in the write chains per
// key; a pruning round is O(n·k + constraint edges) with a chain index
// (k chains) or O(n·m/64) with bitsets, whichever is smaller; solving is
// exponential in the worst case (the problem is NP-complete).
package polygraph

import (
	"context"
	"fmt"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/regread"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

func init() {
	check.Register(Checker{})
	check.RegisterParams("polygraph",
		check.Param{Key: "initial-value", Values: "null|0", Doc: "0: a read of 0 is a read of the initial state when nobody writes 0 to the key (dbcop, PolySI, Cobra)"},
		check.Param{Key: "inference", Values: "true|false", Doc: "false: skip running the rw-register inference checker first"},
		check.Param{Key: "use-version-order", Values: "true|false", Doc: "false: ignore the history's version order (to measure the search without it)"},
		check.Param{Key: "evidence", Values: "true|false", Doc: "false: ignore commit order and database timestamps (see docs/polygraph.md for what each model uses)"},
		check.Param{Key: "commit-version-order", Values: "true|false", Doc: "true: the database installs each key's versions in commit order (used for serializable; default: as the history declares)"})
}

// DefaultBudget bounds the cycle clauses the solver may learn when
// Options.Budget is 0.
const DefaultBudget = 2_000_000

// Checker is the polygraph checker ("polygraph").
type Checker struct{}

// Name implements check.Checker.
func (Checker) Name() string { return "polygraph" }

// Doc implements check.Checker.
func (Checker) Doc() string {
	return "polygraph + SAT (Cobra/PolySI): SER, SI, strong-session SER/SI, strict SER for register histories without version order"
}

// plan is what a model asks of the polygraph.
type plan struct {
	model       string
	si          bool
	session     bool
	realtime    bool
	cycleExists string // anomaly for a proof that every order has a cycle
}

func planFor(m string) (plan, bool) {
	if m == "" {
		m = check.DefaultModel
	}
	c, err := model.Canonical(m)
	if err != nil {
		return plan{model: m}, false
	}
	switch c {
	case model.Serializable:
		return plan{model: c, cycleExists: model.PL3CycleExists}, true
	case model.RepeatableRead:
		// Adya's PL-2.99 prohibits G1 and G2-item; G2 differs from G2-item
		// only by predicate anti-dependencies, and a history this checker
		// applies to has none (register and list ops only, Applies), so
		// every cycle is a G0, G1c or G2-item and PL-2.99 is PL-3 here
		// (Adya 1999 §4.3, §5.2): decided as serializable, with the
		// anomalies named and judged under repeatable-read.
		return plan{model: c, cycleExists: model.PL299CycleExists}, true
	case model.StrongSessionSerializable:
		return plan{model: c, session: true, cycleExists: model.StrongSessionSerializableCycleEx}, true
	case model.StrictSerializable:
		// strict-serializable implies strong-session-serializable in txray's lattice (Elle's):
		// session order counts as well as real-time order.
		return plan{model: c, session: true, realtime: true, cycleExists: model.PLSSCycleExists}, true
	case model.SnapshotIsolation:
		return plan{model: c, si: true, cycleExists: model.PLSICycleExists}, true
	case model.StrongSessionSnapshotIsolation:
		return plan{model: c, si: true, session: true, cycleExists: model.StrongSessionSICycleExists}, true
	}
	return plan{model: c}, false
}

// Applies implements check.Checker: rank 55 (above rw-register inference,
// below timestamps) for register histories under the models it decides.
func (Checker) Applies(h *history.History, m string) (int, string) {
	if h == nil {
		return 0, "no history"
	}
	if _, ok := planFor(m); !ok {
		return 0, "polygraph decides serializable, strict-serializable, strong-session-serializable, repeatable-read (as serializable: no predicate reads), snapshot-isolation and strong-session-snapshot-isolation only"
	}
	list, reg, other := listShape(h)
	switch {
	case h.HasDeletes():
		return 0, history.DeletesUnsupported("polygraph")
	case other:
		return 0, "the history has operations other than register reads and writes or list appends and reads"
	case list && reg:
		return 0, "the history mixes register and list operations"
	case list:
		// A cross-check of the list-append inference checker (rank 60), which
		// recovers the version order itself: never preferred over it.
		return 40, ""
	}
	for i := range h.Txns {
		if len(h.Txns[i].Ops) > 0 {
			return 55, ""
		}
	}
	return 0, "the history has no register reads or writes"
}

// Check implements check.Checker. Params: "initial-value" ("0": a read of 0
// is a read of the initial state when nobody writes 0; default: only nil
// reads are), "inference" ("false" skips running the rw-register inference
// checker first), "use-version-order" ("false" ignores History.VersionOrder,
// to measure the search without it).
func (Checker) Check(ctx context.Context, h *history.History, opts check.Options) (*check.Result, error) {
	pl, ok := planFor(opts.Model)
	r := &check.Result{Checker: "polygraph", Model: pl.model}
	st := map[string]any{}
	r.Stats = st
	t0 := time.Now()
	lap := func(name string) {
		st[name+"_ms"] = float64(time.Since(t0).Microseconds()) / 1000
		t0 = time.Now()
	}
	if !ok {
		r.Verdict = check.Unknown
		r.Reason = "the polygraph checker does not decide model " + pl.model
		r.Finish()
		return r, nil
	}
	if h == nil {
		return nil, fmt.Errorf("polygraph: no history")
	}
	if h.HasDeletes() {
		r.Verdict = check.Unknown
		r.Reason = history.DeletesUnsupported("polygraph")
		r.Finish()
		return r, nil
	}
	if err := validIDs(h); err != nil {
		return nil, err
	}
	if rank, why := (Checker{}).Applies(h, pl.model); rank == 0 {
		r.Verdict = check.Unknown
		r.Reason = why
		r.Finish()
		return r, nil
	}
	if pl.realtime && !hasTimes(h) {
		r.Warnings = append(r.Warnings, "strict-serializable constrains real-time order, but the history has no client times: only serializability was checked")
	}
	max := opts.MaxPerType()
	var found []check.Anomaly
	disp := h
	lists, _, _ := listShape(h)
	var listAs []check.Anomaly
	var counted []bool
	var givenVO map[int32][]int32
	if lists {
		// Decided on its register view (lists.go), independently of check/elle.
		h, listAs, counted, givenVO = listView(h)
		if givenVO != nil && opts.Param("use-version-order", "true") == "false" {
			givenVO = nil
			st["version_order"] = "ignored (use-version-order=false)"
		}
		st["list_append"] = "register view of the list-append history (version order from the longest reads)"
	}
	// The cheap inference checker first: its definite anomalies stand.
	if opts.Param("inference", "true") != "false" && !lists {
		if inf, ok := check.Lookup("rw-register"); ok {
			// The source's initial-value convention applies to the inference step too:
			// without it, reads of the initial 0 were thin-air reads there (a false
			// reject of TimeKiller's format-kv.json under -p initial-value=0).
			ip := map[string]string{}
			if iv := opts.Param("initial-value", ""); iv != "" {
				ip["initial-value"] = iv
			}
			if opts.Param("use-version-order", "true") == "false" {
				// the inference step uses the recorded order too, unless told not to
				ip["use-version-order"] = "false"
			}
			ir, err := inf.Check(ctx, h, check.Options{Model: pl.model, MaxAnomalies: max, Budget: opts.Budget, Params: ip})
			if err != nil {
				return nil, err
			}
			if ir.Verdict == check.Invalid {
				for _, a := range ir.Anomalies {
					if !a.Allowed && !model.IsUnknownType(a.Type) {
						found = append(found, a)
					}
				}
				st["inference"] = "rw-register found " + fmt.Sprint(ir.AnomalyTypes)
			}
		}
		lap("inference")
	}
	var ra *regread.Analysis
	if lists {
		ra = regread.Analyze(h, regread.Options{InitialValue: noInitialTxn})
		found = addNew(found, listAs)
		for _, a := range ra.Anomalies {
			switch a.Type {
			case model.ThinAirRead, model.AbortedRead, model.IntermediateRead, model.DuplicateWrite,
				model.NotMyOwnWrite, model.NotMyLastWrite, model.Internal:
				// the list checks judge every element, not only the last
			default:
				a.Ops = check.TxnOps(disp, a.Txns...)
				found = addNew(found, []check.Anomaly{a})
			}
		}
	} else {
		ra = regread.Analyze(h, regread.Options{InitialValue: initialValue(opts.Param("initial-value", ""))})
		found = addNew(found, ra.Anomalies)
		if h.VersionOrder != nil && opts.Param("use-version-order", "true") == "false" {
			hv := *h
			hv.VersionOrder = nil
			h = &hv
			st["version_order"] = "ignored (use-version-order=false)"
		}
	}
	ev := evidenceFor(h, pl, opts)
	p := build(h, ra, pl.si, pl.session, pl.realtime && hasTimes(h), ev, counted, givenVO)
	p.disp = disp
	found = addNew(found, p.anomalies)
	lap("build")
	for k, v := range p.stats {
		st[k] = v
	}
	finish := func() (*check.Result, error) {
		for k, v := range p.stats {
			st[k] = v
		}
		r.Warnings = append(r.Warnings, p.warnings...)
		r.ListCapped(found, max)
		r.Finish()
		return r, nil
	}
	if definite(found, pl.model) {
		st["search"] = "skipped: order-free anomalies already decide the verdict"
		return finish()
	}
	out, rounds, err := p.prune(ctx)
	lap("prune")
	st["pruning_rounds"] = rounds
	remaining := 0
	for i := range p.cons {
		if p.cons[i].fixed == 0 {
			remaining++
		}
	}
	st["constraints_after_pruning"] = remaining
	if n, ok := p.stats["constraints"]; ok {
		st["constraints_before_pruning"] = n
	} else {
		st["constraints_before_pruning"] = 0 // not generated: the known graph is already cyclic
	}
	if err != nil {
		r.Verdict, r.Reason = check.Unknown, "search stopped: "+err.Error()
		return finish()
	}
	if !out.unsat {
		budget := opts.Budget
		if budget <= 0 {
			budget = DefaultBudget
		}
		out, err = p.solve(ctx, budget)
		lap("solve")
		if err != nil {
			r.Verdict, r.Reason = check.Unknown, "search stopped: "+err.Error()
			return finish()
		}
	}
	switch {
	case out.unsat && out.known:
		as := p.knownCycleAnomalies(out.core)
		found = append(found, as...)
		if !definite(as, pl.model) {
			// A cycle whose Adya/Elle name the model's table does not list: the
			// proof still stands (every order contains it), so report it as such.
			found = append(found, p.coreAnomaly(pl.cycleExists, out.core))
		}
	case out.unsat:
		found = append(found, p.coreAnomaly(pl.cycleExists, out.core))
		lap("explain")
	case out.sat:
		// Finish decides from what was found (possibly anomalies the model allows).
	default:
		r.Verdict, r.Reason = check.Unknown, out.reason
	}
	return finish()
}

// validIDs rejects a history (built in memory, not decoded) whose key,
// value or list element ids are outside its interners: an input error
// naming the transaction, op and field, never a panic.
func validIDs(h *history.History) error {
	nk, nv := int32(h.Keys.Len()), int32(h.Values.Len())
	for ti := range h.Txns {
		for j := range h.Txns[ti].Ops {
			o := &h.Txns[ti].Ops[j]
			field := func(f string) string { return fmt.Sprintf("txns[%d].ops[%d].%s", ti, j, f) }
			if o.Kind == history.PredRead {
				continue
			}
			if o.Key < 0 || o.Key >= nk {
				return history.Errorf("", 0, field("k"), "key id %d out of range (history has %d keys)", o.Key, nk)
			}
			if o.Value != history.NoValue && (o.Value < 0 || o.Value >= nv) {
				return history.Errorf("", 0, field("v"), "value id %d out of range (history has %d values)", o.Value, nv)
			}
			if off, n := o.ListSpan(); off+n > len(h.Txns[ti].Lists) {
				return history.Errorf("", 0, field("v"), "list elements %d..%d out of range (the transaction holds %d)", off, off+n, len(h.Txns[ti].Lists))
			}
			for i, e := range h.Txns[ti].ListOf(o) {
				if e < 0 || e >= nv {
					return history.Errorf("", 0, field(fmt.Sprintf("v[%d]", i)), "value id %d out of range (history has %d values)", e, nv)
				}
			}
		}
	}
	return nil
}

// addNew appends the anomalies of as that found does not already report
// (same type and key, with transactions a subset of the new one's).
func addNew(found, as []check.Anomaly) []check.Anomaly {
	n := len(found)
next:
	for _, a := range as {
		for _, f := range found[:n] {
			if f.Type == a.Type && f.Key == a.Key && subset(f.Txns, a.Txns) {
				continue next
			}
		}
		found = append(found, a)
	}
	return found
}

func subset(a, b []int32) bool {
	for _, x := range a {
		in := false
		for _, y := range b {
			in = in || x == y
		}
		if !in {
			return false
		}
	}
	return true
}

// definite reports whether some anomaly already makes the verdict invalid.
func definite(as []check.Anomaly, m string) bool {
	for _, a := range as {
		if model.Prohibits(m, a.Type) {
			return true
		}
	}
	return false
}

func hasTimes(h *history.History) bool {
	for i := range h.Txns {
		if h.Txns[i].HasTime {
			return true
		}
	}
	return false
}

// initialValue maps the "initial-value" parameter to regread's convention
// ("null" and "" mean only nil reads are initial).
func initialValue(s string) string {
	if s == "null" {
		return ""
	}
	return s
}
