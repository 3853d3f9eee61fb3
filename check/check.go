// Package check defines what every txray checker returns: a Result with a
// three-valued Verdict (valid, invalid with anomalies, unknown with a
// reason), anomalies in the shared vocabulary (package model), each with an
// explanation a person can verify by hand; and the Checker interface and
// registry that `txray check --checker auto|NAME` uses.
//
// Verdicts are results, not errors: a checker returns an error only for
// input it cannot interpret or for I/O failure.
package check

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/txray/txray/history"
)

// Verdict is a checker's judgement.
type Verdict int8

const (
	// Valid: no anomaly the model prohibits was found, and the search was
	// complete.
	Valid Verdict = iota
	// Invalid: at least one anomaly the model prohibits was found.
	Invalid
	// Unknown: no prohibited anomaly was found, but the check could not be
	// completed (search bound hit, evidence missing); Result.Reason says why.
	Unknown
)

func (v Verdict) String() string {
	switch v {
	case Valid:
		return "valid"
	case Invalid:
		return "invalid"
	}
	return "unknown"
}

// MarshalJSON renders true, false or "unknown" (design.md §6).
func (v Verdict) MarshalJSON() ([]byte, error) {
	switch v {
	case Valid:
		return []byte("true"), nil
	case Invalid:
		return []byte("false"), nil
	}
	return []byte(`"unknown"`), nil
}

// UnmarshalJSON accepts what MarshalJSON writes.
func (v *Verdict) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true":
		*v = Valid
	case "false":
		*v = Invalid
	case `"unknown"`:
		*v = Unknown
	default:
		return fmt.Errorf("bad verdict %s", b)
	}
	return nil
}

// Step is one link in an anomaly's chain of evidence: usually an edge of a
// dependency cycle, from one transaction to the next.
type Step struct {
	From int32 `json:"from"`
	To   int32 `json:"to"`
	// Rel is "ww", "wr", "rw", "process", "realtime", or a checker-specific
	// relation ("ts" for timestamp order, "lock", ...).
	Rel string `json:"rel"`
	// Key is the rendered key the step is about, if any.
	Key string `json:"key,omitempty"`
	// Why is a sentence a person can check against the history.
	Why string `json:"why"`
}

// Anomaly is one violation.
type Anomaly struct {
	// Type is the vocabulary name (model.Anomaly*), e.g. "G-single-item".
	Type string `json:"type"`
	// Txns are the transaction indices involved (history.Txn.Index).
	Txns []int32 `json:"txns"`
	// Cycle is the dependency cycle for cycle anomalies, in order; the last
	// step returns to the first transaction.
	Cycle []Step `json:"cycle,omitempty"`
	// Key is the key the anomaly is about, for non-cycle anomalies.
	Key string `json:"key,omitempty"`
	// Explanation is the full human-readable account, ending in the
	// contradiction.
	Explanation string `json:"explanation"`
	// Ops renders each involved transaction's ops, for reports.
	Ops map[int32]string `json:"ops,omitempty"`
	// Allowed is set when the model under test does not prohibit Type (it is
	// reported for information).
	Allowed bool `json:"allowed,omitempty"`
}

// TxnOps renders each transaction of txns (indices into h.Txns; any other
// index is skipped) with History.TxnString, for Anomaly.Ops.
func TxnOps(h *history.History, txns ...int32) map[int32]string {
	m := make(map[int32]string, len(txns))
	for _, t := range txns {
		if t >= 0 && int(t) < len(h.Txns) {
			m[t] = h.TxnString(t)
		}
	}
	return m
}

// Result is the outcome of one checker on one history under one model.
type Result struct {
	Checker string  `json:"checker"`
	Model   string  `json:"model"`
	Verdict Verdict `json:"valid"`
	// Reason explains an Unknown verdict (and notes limits otherwise).
	Reason       string    `json:"reason,omitempty"`
	AnomalyTypes []string  `json:"anomaly_types"`
	Anomalies    []Anomaly `json:"anomalies"`
	// Not lists the weakest models the anomalies rule out; AlsoNot the
	// stronger ones they also rule out (Elle's :not / :also-not).
	Not     []string `json:"not,omitempty"`
	AlsoNot []string `json:"also_not,omitempty"`
	// Truncated counts anomalies found but not listed (per-type cap).
	Truncated map[string]int `json:"truncated,omitempty"`
	// Counts is the number of anomalies found per type, listed or not
	// (len of that type in Anomalies plus Truncated): the honest total,
	// independent of the listing cap. Finish fills it.
	Counts map[string]int `json:"counts,omitempty"`
	// CountsAtLeast names the types whose Counts are lower bounds (the
	// search for more stopped on its budget or a deadline).
	CountsAtLeast []string       `json:"counts_at_least,omitempty"`
	Stats         map[string]any `json:"stats,omitempty"`
	Warnings      []string       `json:"warnings,omitempty"`
}

// Options configure a check.
type Options struct {
	// Model is the canonical consistency model (or DBMS profile) to check.
	Model string
	// MaxAnomalies caps the anomalies listed per type (0 = default 8;
	// negative = no cap). Anomalies beyond the cap are still counted
	// (Result.Truncated, Result.Counts).
	MaxAnomalies int
	// Budget bounds search work (cycle search steps, solver conflicts);
	// 0 = checker default. Exceeding it yields Unknown, never a hang.
	Budget int64
	// Params are checker-specific options ("linearizable-keys": "true", ...).
	Params map[string]string
	// Progress, if set, receives phase progress for long work.
	Progress func(phase string, done, total int64)
}

// Param returns a checker-specific option or def.
func (o Options) Param(name, def string) string {
	if v, ok := o.Params[name]; ok {
		return v
	}
	return def
}

// DefaultMaxPerType is the per-type listing cap when Options.MaxAnomalies
// is 0.
const DefaultMaxPerType = 8

// NoCap is what MaxPerType returns for a negative MaxAnomalies: in effect
// no cap.
const NoCap = math.MaxInt32

// MaxPerType is the per-type anomaly listing cap.
func (o Options) MaxPerType() int {
	switch {
	case o.MaxAnomalies < 0:
		return NoCap
	case o.MaxAnomalies == 0:
		return DefaultMaxPerType
	}
	return o.MaxAnomalies
}

// Checker is one checking technique.
type Checker interface {
	// Name is the --checker name.
	Name() string
	// Doc is a one-line description.
	Doc() string
	// Applies tells whether the checker can judge h under model, and how
	// strong its evidence is: 0 = not applicable (reason says why); higher
	// ranks win in --checker auto.
	Applies(h *history.History, model string) (rank int, reason string)
	// Check judges h. Errors are only for bad input or I/O.
	Check(ctx context.Context, h *history.History, opts Options) (*Result, error)
}

var (
	regMu    sync.RWMutex
	checkers = map[string]Checker{}
)

// Register adds a checker; checker packages call it from init. The
// registry hands out the checker wrapped so that a valid verdict on a
// history in which nothing committed becomes unknown (NothingCommitted):
// every checker obtained through Lookup or Pick keeps that contract.
func Register(c Checker) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, wrapped := c.(vacuousGuard); !wrapped {
		c = vacuousGuard{c}
	}
	checkers[c.Name()] = c
}

// Lookup returns a registered checker.
func Lookup(name string) (Checker, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	c, ok := checkers[name]
	return c, ok
}

// Names lists registered checkers, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	var ns []string
	for n := range checkers {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// Pick returns the applicable checkers for h under model, strongest first,
// and the reasons the others do not apply.
func Pick(h *history.History, model string) (ok []Checker, notApplicable map[string]string) {
	regMu.RLock()
	defer regMu.RUnlock()
	if h != nil {
		// Every Applies asks about h's op kinds: one pass for all.
		defer h.MemoShape()()
	}
	type rc struct {
		c Checker
		r int
	}
	var rs []rc
	notApplicable = map[string]string{}
	for _, n := range sortedKeys(checkers) {
		c := checkers[n]
		r, why := c.Applies(h, model)
		if r <= 0 {
			notApplicable[n] = why
			continue
		}
		rs = append(rs, rc{c, r})
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].r > rs[j].r })
	for _, x := range rs {
		ok = append(ok, x.c)
	}
	return ok, notApplicable
}

func sortedKeys(m map[string]Checker) []string {
	var ns []string
	for n := range m {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// String renders a result compactly for logs.
func (r *Result) String() string {
	b, _ := json.Marshal(struct {
		C string   `json:"checker"`
		M string   `json:"model"`
		V Verdict  `json:"valid"`
		T []string `json:"anomaly_types"`
	}{r.Checker, r.Model, r.Verdict, r.AnomalyTypes})
	return string(b)
}
