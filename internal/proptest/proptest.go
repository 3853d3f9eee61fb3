// Package proptest holds txray's cross-checker tests, driven by the
// reference simulator (package sim) and its ground truth (design.md §7):
//
//   - TestProperty: fault-free histories of every sim level are valid under
//     every model the level implies, for every checker that can judge them;
//   - TestDetection (+ TestDetectionUnknownOutcomes): with a fault the level
//     forbids, a checker reports a matching anomaly whenever the fault is
//     visible in its evidence (Visible; docs/detection.md has the rates);
//   - TestDifferential*: list-append vs chronos, and rw-register on the
//     register view of a list-append history (AsRegisters) vs list-append;
//   - TestBar*: the bars; TestRegressions: testdata/regressions.
//
// The non-test helpers describe a simulated case (Case), the checkers and
// models that can soundly judge its histories (Targets), and the explicit
// visibility predicates (Visible, oracle.go, oracle_graph.go). decode.go
// holds the comparison the decoders' fast-vs-general and
// parallel-vs-sequential differential tests share (SameDecode,
// DiffHistories; history/edn, history/ellejson, history/timekiller).
//
// Every failure prints the case and two one-line reproductions, e.g.
//
//	go test ./internal/proptest -run 'TestDetection' -seed=N -level=L -workload=W -fault=F -prob=P -v
//	txray gen -q --level L ... --seed N --fault F:P | txray check --checker C --model M -
//
// To keep a failing case, add it to the regressions table in
// regression_test.go and run `go test ./internal/proptest -run
// TestRegressions -regress.update`: it writes NAME.jsonl (the history,
// byte-identical to the txray gen command) and NAME.json (checker, model,
// expected verdict and anomaly types, known_bug while the bug is open).
//
// Measure detection: go test ./internal/proptest -run TestDetection -detect.seeds=500 -detect.out=$PWD/docs/detection.md
package proptest

import (
	"context"
	"fmt"
	"strconv"

	"github.com/txray/txray/check"
	_ "github.com/txray/txray/check/chronos" // "chronos"
	_ "github.com/txray/txray/check/elle"    // "list-append", "rw-register"
	_ "github.com/txray/txray/check/leopard" // "leopard"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
	"github.com/txray/txray/sim"
)

// Case is one simulated history: a small, fixed-shape configuration plus
// level, workload, optional fault and seed. Its String is the key used in
// failure messages and regression file names.
type Case struct {
	Level    string
	Workload string
	Fault    string  // "" for none
	Prob     float64 // fault probability
	Seed     uint64
	Txns     int // default 150
	Info     float64
}

// Shape of every generated history (small, so CI is fast).
const (
	DefaultTxns  = 150
	clients      = 5
	keys         = 4
	abortRate    = 0.1
	lockingReads = 0.1
	readRatio    = 0.5
)

// Config is the simulator configuration of c.
func (c Case) Config() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Level, cfg.Workload, cfg.Seed = c.Level, c.Workload, c.Seed
	cfg.Txns, cfg.Clients, cfg.Keys = c.Txns, clients, keys
	if cfg.Txns == 0 {
		cfg.Txns = DefaultTxns
	}
	cfg.AbortRate, cfg.LockingReads, cfg.ReadRatio, cfg.InfoRate = abortRate, lockingReads, readRatio, c.Info
	if c.Fault != "" {
		cfg.Faults = []sim.Fault{{Name: c.Fault, Prob: c.Prob}}
	}
	return cfg
}

func (c Case) String() string {
	s := c.Level + "/" + c.Workload + "/"
	if c.Fault != "" {
		s += c.Fault + ":" + strconv.FormatFloat(c.Prob, 'g', -1, 64) + "/"
	}
	return s + "seed" + strconv.FormatUint(c.Seed, 10)
}

// GenCommand is the `txray gen` command line that produces c's history
// byte for byte.
func (c Case) GenCommand() string {
	cfg := c.Config()
	s := fmt.Sprintf("txray gen -q --level %s --workload %s --txns %d --clients %d --keys %d --ops %d-%d --read-ratio %g --locking-reads %g --abort-rate %g --info-rate %g --seed %d",
		cfg.Level, cfg.Workload, cfg.Txns, cfg.Clients, cfg.Keys, cfg.MinOps, cfg.MaxOps, cfg.ReadRatio, cfg.LockingReads, cfg.AbortRate, cfg.InfoRate, cfg.Seed)
	if c.Fault != "" {
		s += fmt.Sprintf(" --fault %s:%g", c.Fault, c.Prob)
	}
	return s
}

// Repro is the one-line shell command that reproduces checker's verdict on
// c's history under model m, and the go test command that reruns the case.
func (c Case) Repro(test, checker, m string) string {
	g := fmt.Sprintf("go test ./internal/proptest -run '%s' -seed=%d -level=%s -workload=%s -txns=%d -info=%g", test, c.Seed, c.Level, c.Workload, c.txns(), c.Info)
	if c.Fault != "" {
		g += fmt.Sprintf(" -fault=%s -prob=%g", c.Fault, c.Prob)
	}
	return fmt.Sprintf("%s -v\n    or: %s | txray check --checker %s --model %s -", g, c.GenCommand(), checker, m)
}

func (c Case) txns() int {
	if c.Txns == 0 {
		return DefaultTxns
	}
	return c.Txns
}

// Generate runs the simulator for c.
func (c Case) Generate() (*history.History, *sim.Truth, error) { return sim.Generate(c.Config()) }

// Target is one checker judging one model.
type Target struct {
	Checker string
	Model   string
}

func (t Target) String() string { return t.Checker + "@" + t.Model }

// judged are the plain models the property tests judge, strongest first.
var judged = []string{model.StrictSerializable, model.Serializable, model.SnapshotIsolation,
	model.RepeatableRead, model.ReadCommitted, model.ReadUncommitted}

// LevelModels returns the models a correct history of the sim level
// satisfies and the property tests judge: the level's declared model (a
// DBMS profile for repeatable-read-mysql) and every model in judged it
// implies.
func LevelModels(level string) []string {
	var decl string
	for _, li := range sim.Levels() {
		if li.Name == level {
			decl = li.Model
		}
	}
	var out []string
	base := decl
	if p, ok := model.LookupProfile(decl); ok {
		out = append(out, p.Name)
		base = p.Model
	}
	for _, m := range judged {
		if model.Implies(base, m) {
			out = append(out, m)
		}
	}
	return out
}

// levelProfiles maps sim levels to the DBMS profiles (package model) whose
// mechanisms the level implements, per the sim level docs: snapshot
// isolation with first-updater-wins is PostgreSQL repeatable read, SSI is
// PostgreSQL serializable, per-statement snapshots with write locks are
// PostgreSQL read committed, InnoDB repeatable read is declared by the sim
// itself. Leopard judges only profiles, so these give it something to
// judge.
var levelProfiles = map[string][]string{
	sim.SnapshotIsolation: {"postgres:repeatable-read"},
	sim.SerializableSI:    {"postgres:serializable"},
	sim.ReadCommitted:     {"postgres:read-committed"},
}

// LevelProfiles returns the DBMS profiles a correct history of the sim
// level satisfies besides its declared model (possibly none).
func LevelProfiles(level string) []string {
	var out []string
	for _, p := range levelProfiles[level] {
		if pr, ok := model.LookupProfile(p); ok {
			out = append(out, pr.Name)
		}
	}
	return out
}

// DeclaredModel is the model (or profile) the sim writes in the header
// for level.
func DeclaredModel(level string) string {
	for _, li := range sim.Levels() {
		if li.Name == level {
			return li.Model
		}
	}
	return ""
}

// Targets lists the (checker, model) pairs that can soundly judge h under
// the models in ms:
//
//   - list-append / rw-register: per workload (Applies > 0), every model;
//   - chronos: snapshot-isolation always (timestamps are the real start and
//     commit points); serializable and strict-serializable only when the
//     header's "sim.commit-order-serializes" is "true", because chronos's
//     serializability check replays commits in commit-timestamp order, which
//     at SSI or with lagging read-only snapshots is not a serialization order
//     even when one exists; and snapshot-isolation only at levels whose
//     start_ts is the read snapshot (snapshotStart);
//   - leopard: every model it resolves (Applies > 0).
//
// Targets never drops a pair silently: the reasons for skipping are in the
// second result (for test logs).
func Targets(h *history.History, ms []string) (ts []Target, skipped []string) {
	for _, name := range check.Names() {
		c, _ := check.Lookup(name)
		for _, m := range ms {
			if r, why := c.Applies(h, m); r <= 0 {
				skipped = append(skipped, fmt.Sprintf("%s@%s: %s", name, m, why))
				continue
			}
			if name == "chronos" && m != model.SnapshotIsolation && h.Header.Extra["sim.commit-order-serializes"] != "true" {
				skipped = append(skipped, fmt.Sprintf("%s@%s: commit order is not a serialization order at this level", name, m))
				continue
			}
			if name == "chronos" && m == model.SnapshotIsolation && !snapshotStart[h.Header.Extra["sim.level"]] {
				skipped = append(skipped, fmt.Sprintf("%s@%s: start_ts is not the read snapshot at this level", name, m))
				continue
			}
			ts = append(ts, Target{name, m})
		}
	}
	return ts, skipped
}

// snapshotStart are the sim levels whose recorded start_ts is the
// transaction's read snapshot (package sim doc: "StartTS is the begin
// timestamp, which is the read snapshot at snapshot levels"); at strict-2pl,
// read-committed, read-uncommitted and repeatable-read-mysql reads (or
// locking reads) see later versions, so Chronos's Ext axiom does not
// describe them.
var snapshotStart = map[string]bool{sim.StrictSerializable: true, sim.Serializable: true,
	sim.SnapshotIsolation: true, sim.SnapshotIsolationFCW: true, sim.SerializableSI: true}

// Run checks h with one target. A checker panic is returned as an error
// (checkers must never panic; the caller reports it with the seed).
func Run(h *history.History, t Target) (r *check.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("%s panicked: %v", t, p)
		}
	}()
	c, ok := check.Lookup(t.Checker)
	if !ok {
		return nil, fmt.Errorf("checker %q not registered", t.Checker)
	}
	return c.Check(context.Background(), h, check.Options{Model: t.Model, MaxAnomalies: 4})
}

// Prohibited returns the anomaly types in r that r's model prohibits.
func Prohibited(r *check.Result) []string {
	var out []string
	for _, a := range r.AnomalyTypes {
		if model.Prohibits(r.Model, a) {
			out = append(out, a)
		}
	}
	return out
}

// Explain renders the first anomalies of r for failure messages.
func Explain(r *check.Result, n int) string {
	s := r.String()
	if r.Reason != "" {
		s += "\n  reason: " + r.Reason
	}
	for i, a := range r.Anomalies {
		if i == n {
			break
		}
		s += "\n  " + a.Type + ": " + a.Explanation
	}
	return s
}

// WithoutVersionOrder returns h without its recorded version order (a
// shallow copy), as a format that cannot carry one decodes it.
func WithoutVersionOrder(h *history.History) *history.History {
	r := *h
	r.VersionOrder, r.Evidence.VersionOrder = nil, false
	return &r
}

// AsRegisters returns the rw-register view of a list-append history: each
// append of e becomes a write of e, each list read becomes a read of its
// last element (nil for the empty list, unknown when the list is unknown).
// Elements are unique per key, so a list's last element names its version
// exactly: the register history has the same versions, writers and
// version order, with strictly less information in each read (the prefix
// is dropped). Hence any anomaly rw-register proves on AsRegisters(h) holds
// for h too. The view drops h's recorded version order (rw-register would
// use it, knowing more than the lists show; and a list's order names every
// append, intermediate ones included, which a register's does not).
// Interners are shared with h.
func AsRegisters(h *history.History) *history.History {
	r := *h
	r.Header.Workload = "rw-register"
	r.VersionOrder, r.Evidence.VersionOrder = nil, false
	r.Txns = make([]history.Txn, len(h.Txns))
	for i := range h.Txns {
		t := h.Txns[i]
		ops := make([]history.Op, len(t.Ops))
		for j, o := range t.Ops {
			switch {
			case o.Kind == history.Append:
				o.Kind = history.Write
			case o.Kind == history.Read && o.IsList:
				o.Value = history.NoValue
				if l := t.ListOf(&o); !o.ListUnknown && len(l) > 0 {
					o.Value = l[len(l)-1]
				}
				o.ClearList()
			}
			ops[j] = o
		}
		t.Ops, t.Lists = ops, nil
		r.Txns[i] = t
	}
	return &r
}
