// Package elle implements Elle's black-box isolation checkers (Kingsbury &
// Alvaro, "Elle: Inferring Isolation Anomalies from Experimental
// Observations", VLDB 2020) on txray's history model:
//
//   - "list-append": transactions append unique elements to lists and read
//     whole lists, which reveals each key's version order (§3, §5.1);
//   - "rw-register": transactions write unique values to registers and read
//     them; version orders are partially inferred (§5.2, and jepsen-io/elle's
//     rw-register: initial state, writes-follow-reads, sequential-keys,
//     linearizable-keys).
//
// Both build a dependency graph (Adya 1999 §3: ww, wr, rw edges; Elle §4
// adds process and realtime edges when the model needs them) with package
// graph, search it for the cycle anomalies the model prohibits, and report
// the non-cycle anomalies Elle defines (G1a, G1b, internal, future-read,
// incompatible-order, duplicate-elements, dirty-update, lost-update,
// cyclic-versions, and for list-append garbage-versions). Every anomaly is
// explained edge by edge. Results are finished by check.Result.Finish, which
// sets the verdict and the models the anomalies rule out.
//
// Only the cycle types the model prohibits are searched (Elle's
// prohibited-anomaly-types); session and real-time edges are added only
// when a prohibited type needs them. If the search budget runs out, the
// result carries cycle-search-timeout and, where a strongly connected
// component proves a cycle exists, Elle's <model>-cycle-exists fallback.
// A graph with no dependency at all yields empty-transaction-graph (so the
// verdict is unknown unless something prohibited was found), as in Elle.
//
// Where txray differs from jepsen-io/elle (deliberately):
//
//   - A value appended (list-append) or written (rw-register) to one key by
//     two transactions makes the verdict unknown, naming the op, key and
//     value (Elle: :duplicate-appends; for registers Elle only fails when
//     such a value is read).
//   - rw-register: an unknown-outcome transaction's external writes count
//     as writers for wr/ww/rw edges (an observed write means it committed;
//     Elle indexes only :ok writes). A committed read of nil followed by a
//     read of a value in the same transaction is internal (Elle skips nil
//     expectations).
//   - rw-register: where the history carries the database's version order
//     (History.VersionOrder: version_order records from the recorder or the
//     simulator), it is a version source of the keys it covers, tried
//     first, so their ww and rw edges are Adya's over the actual order;
//     an order that contradicts the history is not used and makes the
//     verdict unknown unless invalid (recorded.go). Elle has no such input.
//   - rw-register: a version source that makes a key's version graph
//     cyclic is dropped for that key only (Elle drops it for all keys);
//     linearizable-keys relates each transaction to its minimal real-time
//     successors touching the key.
//   - rw-register: the order-free read checks of package regread run
//     first; a read of a value no transaction wrote to its key is a
//     thin-air-read (prohibited by every model) and a read of the
//     transaction's own later write a future-read. Elle accepts the former
//     (a possible initial state); txray takes only nil, the value of
//     Params "initial-value" (e.g. "0") when nobody writes it, and the
//     writes of an explicit initial transaction (regread's rule) as the
//     initial state, and infers versions on regread's initial-state view.
//   - list-append: an element no transaction appended is reported as
//     garbage-versions (Elle's dirty-update asserts instead); dirty-update
//     uses the version order from committed and unknown-outcome reads only.
//   - Both say valid only under the models their anomalies characterize
//     (Decides); under any other model (read-atomic, causal-cerone,
//     view-serializable, causal, PRAM, ...) a history with none of the
//     model's prohibited anomalies is unknown, not valid: Elle's lattice
//     gives those models few or no prohibited anomalies of its own, so
//     Elle calls a write skew view-serializable and a fractured read
//     read-atomic.
//
// Cost: linear in the history size plus the version-order elements read
// (list-append compares every read with the longest read of its key), all
// in dense arrays indexed by key and value id; the cycle search is bounded
// by Options.Budget.
//
// The checkers register themselves with package check from init.
package elle

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/graph"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

func init() {
	check.Register(ListAppend{})
	check.Register(RWRegister{})
}

// ListAppend is the list-append checker ("list-append").
type ListAppend struct{}

// Name implements check.Checker.
func (ListAppend) Name() string { return "list-append" }

// Doc implements check.Checker.
func (ListAppend) Doc() string {
	return "Elle list-append: version orders from list reads, dependency cycles and Elle's non-cycle anomalies"
}

// Applies implements check.Checker: rank 60 when h has append ops.
func (ListAppend) Applies(h *history.History, _ string) (int, string) {
	if h == nil {
		return 0, "no history"
	}
	if h.HasDeletes() {
		return 0, history.DeletesUnsupported("list-append")
	}
	if hasKind(h, history.Append) {
		return 60, ""
	}
	return 0, "the history has no append operations (list-append needs [:append k v] micro-ops)"
}

// Check implements check.Checker.
func (ListAppend) Check(ctx context.Context, h *history.History, opts check.Options) (*check.Result, error) {
	if r := deletesUnknown(h, "list-append", opts); r != nil {
		return r, nil
	}
	return undecided(checkListAppend(ctx, h, opts))
}

// RWRegister is the read-write register checker ("rw-register").
type RWRegister struct{}

// Name implements check.Checker.
func (RWRegister) Name() string { return "rw-register" }

// Doc implements check.Checker.
func (RWRegister) Doc() string {
	return "Elle rw-register: wr edges from unique writes, inferred version orders, dependency cycles"
}

// Applies implements check.Checker: rank 50 when h has write ops and no
// append ops.
func (RWRegister) Applies(h *history.History, _ string) (int, string) {
	if h == nil {
		return 0, "no history"
	}
	if hasKind(h, history.Append) {
		return 0, "the history has append operations (use list-append)"
	}
	if h.HasDeletes() {
		return 0, history.DeletesUnsupported("rw-register")
	}
	if hasKind(h, history.Write) {
		return 50, ""
	}
	return 0, "the history has no write operations (rw-register needs [:w k v] micro-ops)"
}

// Check implements check.Checker.
func (RWRegister) Check(ctx context.Context, h *history.History, opts check.Options) (*check.Result, error) {
	if r := deletesUnknown(h, "rw-register", opts); r != nil {
		return r, nil
	}
	return undecided(checkRWRegister(ctx, h, opts))
}

// decided are the models whose every violation shows as an anomaly these
// checkers report (dependency cycles of Adya's phenomena with session and
// real-time variants, and the non-cycle anomalies): read-uncommitted to
// strict-serializable, consistent-view (G-single) and the strong-session
// and strong (real-time) variants.
var decided = map[string]bool{
	model.ReadUncommitted: true, model.ReadCommitted: true, model.RepeatableRead: true,
	model.SnapshotIsolation: true, model.Serializable: true, model.StrictSerializable: true,
	model.ConsistentView:               true,
	model.StrongSessionReadUncommitted: true, model.StrongSessionReadCommitted: true,
	model.StrongReadUncommitted: true, model.StrongReadCommitted: true,
	model.StrongSessionSnapshotIsolation: true, model.StrongSnapshotIsolation: true,
	model.StrongSessionSerializable: true,
}

// Decides reports whether list-append and rw-register can say valid under
// m (a model or a DBMS profile, judged by its model). The others prohibit
// anomalies these checkers never look for: G-cursor, G-monotonic, G-MSR,
// G-update and G-SIb (cursor-stability, monotonic-view,
// monotonic-snapshot-read, update-serializable, forward-consistent-view),
// fractured and non-monotonic reads (read-committed-be, read-atomic,
// causal-cerone: package weak decides them), long forks and other
// visibility orders (prefix, parallel-snapshot-isolation, update-atomic,
// monotonic-atomic-view), view equivalence (view-serializable, 1SR,
// session-serializable), and the non-transactional session models
// (linearizable, sequential, causal, PRAM, ...). Finding one of their
// prohibited anomalies still makes the verdict invalid.
func Decides(m string) bool {
	if c, err := model.Canonical(m); err == nil {
		return decided[c]
	}
	if p, ok := model.LookupProfile(m); ok {
		return decided[p.Model]
	}
	return false
}

// undecided turns a valid verdict under a model the checkers do not decide
// into unknown, with the reason.
func undecided(r *check.Result, err error) (*check.Result, error) {
	if err != nil || r == nil || r.Verdict != check.Valid || Decides(r.Model) {
		return r, err
	}
	r.Verdict = check.Unknown
	why := fmt.Sprintf("%s found none of the anomalies it looks for that %s prohibits, but it does not decide %s: the model also prohibits anomalies it does not look for", r.Checker, r.Model, r.Model)
	if r.Reason == "" {
		r.Reason = why
	} else {
		r.Reason += "; " + why
	}
	return r, nil
}

// deletesUnknown is the unknown verdict on a history with delete ops: Elle's
// inference has no deleted versions (a nil read after a delete would look
// like a read of the initial state, and a delete is not a write of a value
// anyone can read), so it neither guesses nor drops them.
func deletesUnknown(h *history.History, name string, opts check.Options) *check.Result {
	if h == nil || !h.HasDeletes() {
		return nil
	}
	r := &check.Result{Checker: name, Model: opts.Model, Verdict: check.Unknown, Reason: history.DeletesUnsupported(name)}
	r.Finish()
	return r
}

func hasKind(h *history.History, k history.Kind) bool { return h.Shape().Has(k) }

// plan is what the model asks of the graph stage.
type plan struct {
	model    string   // canonical model (or the name given, if unknown)
	types    []string // cycle anomaly types to search
	process  bool     // add session order
	realtime bool     // add realtime order
}

// planFor derives the cycle types to search from the anomalies the model
// prohibits (Elle's prohibited-anomaly-types); process and realtime edges
// are only added when a prohibited type needs them (Elle's
// additional-graphs). An unknown model searches every type.
func planFor(m string) plan {
	if m == "" {
		m = check.DefaultModel
	}
	p := plan{model: m}
	if c, err := model.Canonical(m); err == nil {
		p.model = c
	}
	var want []string
	if pa := model.ProhibitedAnomalies(m); pa != nil {
		want = pa
	} else {
		want = graph.CycleTypes()
	}
	seen := map[string]bool{}
	for _, a := range want {
		if !graph.IsCycleType(a) || seen[a] {
			continue
		}
		seen[a] = true
		p.types = append(p.types, a)
		if strings.HasSuffix(a, "-realtime") {
			p.realtime = true
			p.process = true
		}
		if strings.HasSuffix(a, "-process") {
			p.process = true
		}
	}
	return p
}

// stats collects counters and per-phase timings for Result.Stats.
type stats struct {
	m     map[string]any
	t0    time.Time
	phase map[string]float64
}

func newStats() *stats {
	return &stats{m: map[string]any{}, t0: time.Now(), phase: map[string]float64{}}
}

// lap records the time since the previous lap under name (milliseconds).
func (s *stats) lap(name string) {
	now := time.Now()
	s.phase[name] = float64(now.Sub(s.t0).Microseconds()) / 1000
	s.t0 = now
}

func (s *stats) done() map[string]any {
	s.m["phase_ms"] = s.phase
	return s.m
}

func progress(opts check.Options, phase string, done, total int64) {
	if opts.Progress != nil {
		opts.Progress(phase, done, total)
	}
}

// included reports whether a transaction is a graph node: committed and
// unknown-outcome transactions are (Elle's h/possible); aborted ones are not.
func included(t *history.Txn) bool { return t.Status != history.Aborted }

// cycleStage adds the process/realtime orders the plan needs, builds the
// graph, searches it and appends explained cycle anomalies to r. It returns
// the graph.
func cycleStage(ctx context.Context, h *history.History, b *graph.Builder, p plan, opts check.Options,
	ex graph.Explainer, col *collector, r *check.Result, st *stats) *graph.Graph {
	if p.process {
		b.AddProcessOrder(h, included)
	}
	if p.realtime {
		if h.Evidence.ClientTime || anyTime(h) {
			b.AddRealtimeOrder(h, included)
		} else {
			r.Warnings = append(r.Warnings, "the model "+p.model+" constrains real-time order, but the history has no client times: realtime anomalies were not checked")
		}
	}
	g := b.Build()
	st.lap("graph_build")
	st.m["edges"] = g.NumEdges()
	st.m["realtime"] = g.HasRealtime()
	st.m["cycle_types_searched"] = len(p.types)
	if g.NumEdges() == 0 && !(p.realtime && realtimePairExists(h)) {
		// Elle's empty-transaction-graph: no dependency at all could be
		// inferred, so the graph check proves nothing.
		col.add(model.EmptyTransactionGraph, func() check.Anomaly {
			return check.Anomaly{Explanation: "no dependency between transactions could be inferred (no transaction observed another's writes, and no session or real-time order applies), so no cycle check was possible"}
		})
		return g
	}
	progress(opts, "cycles", 0, 1)
	cycles, complete, reason := g.FindCycles(ctx, graph.SearchOptions{Types: p.types, MaxPerType: opts.MaxPerType(), Budget: opts.Budget})
	st.lap("cycle_search")
	progress(opts, "cycles", 1, 1)
	cycles, atLeast := countBeyondCap(ctx, g, p, opts, cycles, complete, st)
	for _, c := range cycles {
		c := c
		col.add(c.Type, func() check.Anomaly {
			steps, text := g.Explain(c, h, ex)
			txns := c.Txns()
			return check.Anomaly{Txns: txns, Cycle: steps, Explanation: text, Ops: check.TxnOps(h, txns...)}
		})
	}
	for t, n := range atLeast {
		for range n {
			col.add(t, nil) // beyond the cap: counted, never built
		}
		r.CountsAtLeast = append(r.CountsAtLeast, t)
	}
	sort.Strings(r.CountsAtLeast)
	if len(cycles) > 0 {
		mask := graph.WW | graph.WR | graph.RW
		if p.process {
			mask |= graph.Process
		}
		if p.realtime {
			mask |= graph.Realtime
		}
		sccs := g.SCCs(mask)
		sizes := make([]int, 0, min(len(sccs), 16))
		largest := 0
		for i, c := range sccs {
			if i < 16 {
				sizes = append(sizes, len(c))
			}
			largest = max(largest, len(c))
		}
		st.m["sccs"] = len(sccs)
		st.m["scc_sizes"] = sizes
		st.m["largest_scc"] = largest
		st.lap("scc_stats")
	} else {
		st.m["sccs"] = 0
	}
	if !complete {
		cycleExists(g, h, p, col, st)
		col.add(model.CycleSearchTimeout, func() check.Anomaly {
			return check.Anomaly{Explanation: "the cycle search did not finish: " + reason + "; anomalies that were not found may still exist"}
		})
		r.Reason = reason
	}
	return g
}

// countBeyondCap makes the per-type totals honest when the listing cap was
// reached. The capped search stops at opts.MaxPerType() cycles per type, so
// when some type reached the cap the search is run again without a cap
// (with its own budget of the same size): if that search completes, its
// cycles replace the capped ones, so both the listing (the first cap of
// each type, in search order) and the totals are independent of the cap.
// If it (or the capped search) does not complete, the capped cycles are kept and atLeast gives,
// for each type that reached the cap, how many more cycles the uncapped
// search found before it stopped: those types' totals are lower bounds.
// Totals follow the search's own economies (graph.FindCycles): a component
// in which a stronger type was found is not searched again for the weaker
// types it implies, and a component of more than 65536 edges yields one
// cycle per type.
func countBeyondCap(ctx context.Context, g *graph.Graph, p plan, opts check.Options, capped []graph.Cycle,
	cappedComplete bool, st *stats) (cycles []graph.Cycle, atLeast map[string]int) {
	limit := opts.MaxPerType()
	perType := map[string]int{}
	full := false
	for _, c := range capped {
		perType[c.Type]++
		full = full || perType[c.Type] >= limit
	}
	if !full || limit >= math.MaxInt32 {
		return capped, nil
	}
	complete := false
	var all []graph.Cycle
	if cappedComplete {
		all, complete, _ = g.FindCycles(ctx, graph.SearchOptions{Types: p.types, MaxPerType: math.MaxInt32, Budget: opts.Budget})
		st.lap("cycle_count")
	}
	if complete {
		return all, nil
	}
	counts := map[string]int{}
	for _, c := range all {
		counts[c.Type]++
	}
	atLeast = map[string]int{}
	for t, n := range perType {
		if n >= limit {
			atLeast[t] = max(counts[t]-n, 0)
		}
	}
	return capped, atLeast
}

// realtimePairExists reports whether some included transaction completed
// before another was invoked (a committed one first: unknown outcomes never
// precede), i.e. whether the realtime order has any edge.
func realtimePairExists(h *history.History) bool {
	minComp, maxInv := int64(1<<63-1), int64(-1<<63)
	for i := range h.Txns {
		t := &h.Txns[i]
		if !t.HasTime || !included(t) {
			continue
		}
		maxInv = max(maxInv, t.Invoke)
		if t.Status == history.Committed {
			minComp = min(minComp, max(t.Complete, t.Invoke))
		}
	}
	return minComp < maxInv
}

// cycleExistsSpecs are Elle's cycle-exists fallbacks whose subgraph is a
// plain union of relations (elle.txn/cycle-exists-specs; the snapshot
// isolation ones use sequential extension and are not computed here).
var cycleExistsSpecs = []struct {
	anomaly string
	rels    graph.Rel
}{
	{model.PL1CycleExists, graph.WW},
	{model.PL2CycleExists, graph.WW | graph.WR},
	{model.PL3CycleExists, graph.WW | graph.WR | graph.RW},
	{model.StrongSessionPL1CycleExists, graph.WW | graph.Process},
	{model.StrongSessionPL2CycleExists, graph.WW | graph.WR | graph.Process},
	{model.StrongSessionSerializableCycleEx, graph.WW | graph.WR | graph.RW | graph.Process},
	{model.StrongPL1CycleExists, graph.WW | graph.Realtime},
	{model.StrongPL2CycleExists, graph.WW | graph.WR | graph.Realtime},
	{model.PLSSCycleExists, graph.WW | graph.WR | graph.RW | graph.Realtime},
}

// cycleExists reports, when the typed search ran out of budget, every
// prohibited cycle-exists anomaly whose subgraph has a strongly connected
// component: a cycle certainly exists there even though none was
// extracted (Elle's cycle-exists-cases). Only the weakest such subgraph is
// reported.
func cycleExists(g *graph.Graph, h *history.History, p plan, col *collector, st *stats) {
	for _, spec := range cycleExistsSpecs {
		if !model.Prohibits(p.model, spec.anomaly) {
			continue
		}
		if spec.rels&graph.Process != 0 && !p.process || spec.rels&graph.Realtime != 0 && !p.realtime {
			continue
		}
		sccs := g.SCCs(spec.rels)
		if len(sccs) == 0 {
			continue
		}
		smallest := sccs[0]
		for _, c := range sccs {
			if len(c) < len(smallest) {
				smallest = c
			}
		}
		sub := spec.rels.String()
		a, n := spec.anomaly, len(sccs)
		col.add(a, func() check.Anomaly {
			shown := smallest
			if len(shown) > 16 {
				shown = shown[:16]
			}
			var b strings.Builder
			fmt.Fprintf(&b, "the subgraph of %s edges has %d strongly connected component(s); the smallest has %d transactions, so a dependency cycle of those relations exists among them (found without extracting it, because the cycle search ran out of budget)", sub, n, len(smallest))
			return check.Anomaly{Txns: append([]int32(nil), shown...), Explanation: b.String()}
		})
		st.m["cycle_exists"] = a
		return
	}
}

func anyTime(h *history.History) bool {
	for i := range h.Txns {
		if h.Txns[i].HasTime {
			return true
		}
	}
	return false
}

// newResult starts a result for checker name.
func newResult(name string, p plan) *check.Result {
	return &check.Result{Checker: name, Model: p.model}
}

// unknownResult finishes r as Unknown with reason (the check could not be
// carried out on this history).
func unknownResult(r *check.Result, reason string, st *stats) *check.Result {
	r.Verdict = check.Unknown
	r.Reason = reason
	r.Stats = st.done()
	r.Finish()
	return r
}

// cancelled reports a context cancellation as an Unknown verdict.
func cancelled(ctx context.Context, r *check.Result, st *stats) (*check.Result, bool) {
	if err := ctx.Err(); err != nil {
		return unknownResult(r, "check cancelled: "+err.Error(), st), true
	}
	return nil, false
}

func unsupportedReason(h *history.History, what string, txns []int32, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the history has %d transaction(s) with operations other than %s, which this checker cannot interpret; e.g. ", n, what)
	for i, t := range txns {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(h.TxnString(t))
		if i == 2 {
			break
		}
	}
	return b.String()
}
