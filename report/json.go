// Package report renders checking results for people and programs: a text
// summary (WriteText), one JSON object per input (JSON, WriteJSON; the
// stable contract of design.md §6, documented field by field in
// docs/json-output.md with a JSON Schema in docs/json-output.schema.json),
// and a self-contained HTML report with each anomaly's dependency cycle and
// the transactions' timeline drawn as inline SVG (WriteHTML).
//
// Nothing here trusts the strings it is given: keys, values and explanations
// come from the checked history, so text output neutralises control
// characters and HTML output is escaped by html/template. Transaction
// indices that are out of range for the history are rendered as such, never
// dereferenced.
package report

import (
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// Input is everything the report knows about one checked input.
type Input struct {
	// File is the input as given on the command line ("-" = stdin).
	File string
	// History is the decoded history; nil if decoding failed.
	History *history.History
	// Results holds one result per checker run; Results[0] is the primary
	// one, whose verdict is the input's verdict.
	Results []*check.Result
	// NotApplicable maps checker name to the reason it did not apply.
	NotApplicable map[string]string
	// Elapsed is the wall time spent on this input.
	Elapsed time.Duration
	// Error, optional, is why the input could not be checked (e.g. the
	// decoding error when History is nil). It is reported as "error".
	Error string
	// Reason, optional, is why no checker produced a result when that is
	// not an input error (e.g. --timeout ran out while decoding); it is the
	// "reason" of the unknown verdict.
	Reason string
	// ModelWhy, optional, says which model was checked and why it was
	// chosen (text and HTML summaries).
	ModelWhy string
}

// Output is the JSON object for one input (design.md §6). The top-level
// verdict fields come from the primary result; Results repeats every result.
// Field order and names are a stable contract: see docs/json-output.md.
type Output struct {
	File          string            `json:"file"`
	Model         string            `json:"model"`
	Checker       string            `json:"checker"`
	Valid         check.Verdict     `json:"valid"`
	Reason        string            `json:"reason,omitempty"`
	Error         string            `json:"error,omitempty"`
	AnomalyTypes  []string          `json:"anomaly_types"`
	Anomalies     []AnomalyOut      `json:"anomalies"`
	Not           []string          `json:"not"`
	AlsoNot       []string          `json:"also_not"`
	Truncated     map[string]int    `json:"truncated,omitempty"`
	Counts        map[string]int    `json:"counts"`
	CountsAtLeast []string          `json:"counts_at_least,omitempty"`
	Stats         map[string]any    `json:"stats"`
	Warnings      []string          `json:"warnings,omitempty"`
	ElapsedMS     float64           `json:"elapsed_ms"`
	Results       []ResultOut       `json:"results"`
	NotApplicable map[string]string `json:"not_applicable,omitempty"`
	History       *HistoryOut       `json:"history"`
}

// ResultOut is one checker's result.
type ResultOut struct {
	Checker       string         `json:"checker"`
	Model         string         `json:"model"`
	Valid         check.Verdict  `json:"valid"`
	Reason        string         `json:"reason,omitempty"`
	AnomalyTypes  []string       `json:"anomaly_types"`
	Anomalies     []AnomalyOut   `json:"anomalies"`
	Not           []string       `json:"not"`
	AlsoNot       []string       `json:"also_not"`
	Truncated     map[string]int `json:"truncated,omitempty"`
	Counts        map[string]int `json:"counts"`
	CountsAtLeast []string       `json:"counts_at_least,omitempty"`
	Stats         map[string]any `json:"stats"`
	Warnings      []string       `json:"warnings,omitempty"`
}

// AnomalyOut is one anomaly. Txns are history indices (history.Txn.Index);
// Ops maps each involved index (as a decimal string) to the rendered
// transaction (history.TxnString) so a reader needs no other file.
type AnomalyOut struct {
	Type        string            `json:"type"`
	Allowed     bool              `json:"allowed,omitempty"`
	Explanation string            `json:"explanation"`
	Txns        []int32           `json:"txns"`
	Key         string            `json:"key,omitempty"`
	Cycle       []check.Step      `json:"cycle,omitempty"`
	Ops         map[string]string `json:"ops,omitempty"`
}

// HistoryOut describes the decoded history.
type HistoryOut struct {
	Format   string           `json:"format"`
	Header   history.Header   `json:"header"`
	Stats    history.Stats    `json:"stats"`
	Evidence history.Evidence `json:"evidence"`
	Ignored  map[string]int   `json:"ignored"`
	Notes    []string         `json:"notes,omitempty"`
}

// JSON returns the JSON-marshalable object for in (an *Output). It never
// fails: a missing history, no results, or out-of-range transaction indices
// all produce a well-formed object (verdict "unknown" when nothing was run).
func JSON(in *Input) any { return buildOutput(in) }

// WriteJSON writes JSON(in) to w as one line (newline-terminated), without
// HTML escaping of <, > and &.
func WriteJSON(w io.Writer, in *Input) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // "T1 < T2" reads better than "T1 \u003c T2"
	return enc.Encode(JSON(in))
}

func buildOutput(in *Input) *Output {
	o := &Output{File: in.File, Error: in.Error, ElapsedMS: float64(in.Elapsed.Microseconds()) / 1000}
	for _, r := range in.Results {
		if r == nil {
			continue
		}
		o.Results = append(o.Results, resultOut(in.History, r))
	}
	if o.Results == nil {
		o.Results = []ResultOut{}
	}
	if len(in.NotApplicable) > 0 {
		o.NotApplicable = in.NotApplicable
	}
	if len(o.Results) > 0 {
		p := o.Results[0]
		o.Model, o.Checker, o.Valid, o.Reason = p.Model, p.Checker, p.Valid, p.Reason
		o.AnomalyTypes, o.Anomalies, o.Not, o.AlsoNot = p.AnomalyTypes, p.Anomalies, p.Not, p.AlsoNot
		o.Truncated, o.Stats, o.Warnings = p.Truncated, p.Stats, p.Warnings
		o.Counts, o.CountsAtLeast = p.Counts, p.CountsAtLeast
	} else {
		o.Valid = check.Unknown
		o.Reason = noResultReason(in)
		o.AnomalyTypes, o.Anomalies, o.Not, o.AlsoNot = []string{}, []AnomalyOut{}, []string{}, []string{}
		o.Stats = map[string]any{}
		o.Counts = map[string]int{}
	}
	if h := in.History; h != nil {
		ho := &HistoryOut{Format: h.Header.Format, Header: h.Header, Evidence: h.Evidence, Ignored: h.Ignored, Notes: h.Notes}
		if h.Keys != nil && h.Sessions != nil {
			ho.Stats = h.Stats()
		} else {
			ho.Stats = history.Stats{Txns: len(h.Txns)}
		}
		if ho.Ignored == nil {
			ho.Ignored = map[string]int{}
		}
		o.History = ho
	}
	return o
}

// noResultReason explains an input for which no checker produced a result.
func noResultReason(in *Input) string {
	if in.Reason != "" {
		return in.Reason
	}
	if in.Error != "" {
		return "not checked: " + in.Error
	}
	if in.History == nil {
		return "not checked: no history"
	}
	if len(in.NotApplicable) == 0 {
		return "no checker was run"
	}
	names := make([]string, 0, len(in.NotApplicable))
	for n := range in.NotApplicable {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("no checker applies (")
	for i, n := range names {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(n + ": " + in.NotApplicable[n])
	}
	b.WriteString(")")
	return b.String()
}

func resultOut(h *history.History, r *check.Result) ResultOut {
	ro := ResultOut{
		Checker: r.Checker, Model: r.Model, Valid: r.Verdict, Reason: r.Reason,
		AnomalyTypes: nonNil(r.AnomalyTypes), Not: nonNil(r.Not), AlsoNot: nonNil(r.AlsoNot),
		Truncated: r.Truncated, Stats: r.Stats, Warnings: r.Warnings,
		Anomalies: make([]AnomalyOut, 0, len(r.Anomalies)),
		Counts:    resultCounts(r), CountsAtLeast: r.CountsAtLeast,
	}
	if len(ro.Truncated) == 0 {
		ro.Truncated = nil
	}
	if ro.Stats == nil {
		ro.Stats = map[string]any{}
	}
	for i := range r.Anomalies {
		ro.Anomalies = append(ro.Anomalies, anomalyOut(h, &r.Anomalies[i]))
	}
	return ro
}

func anomalyOut(h *history.History, a *check.Anomaly) AnomalyOut {
	ao := AnomalyOut{
		Type: a.Type, Allowed: a.Allowed, Explanation: a.Explanation,
		Txns: a.Txns, Key: a.Key, Cycle: a.Cycle,
	}
	if ao.Txns == nil {
		ao.Txns = []int32{}
	}
	ops := map[string]string{}
	for _, t := range involved(a) {
		if s, ok := a.Ops[t]; ok {
			ops[strconv.Itoa(int(t))] = s
		} else if s, ok := txnString(h, t); ok {
			ops[strconv.Itoa(int(t))] = s
		}
	}
	// Keep entries the checker supplied for transactions outside Txns/Cycle.
	for t, s := range a.Ops {
		if _, ok := ops[strconv.Itoa(int(t))]; !ok {
			ops[strconv.Itoa(int(t))] = s
		}
	}
	if len(ops) > 0 {
		ao.Ops = ops
	}
	return ao
}

// involved lists the anomaly's transactions: Txns, then cycle endpoints not
// already listed, in order of first appearance.
func involved(a *check.Anomaly) []int32 {
	seen := make(map[int32]bool, len(a.Txns)+len(a.Cycle))
	var out []int32
	add := func(t int32) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, s := range a.Cycle {
		add(s.From)
		add(s.To)
	}
	for _, t := range a.Txns {
		add(t)
	}
	return out
}

// validTxn reports whether t indexes h.Txns.
func validTxn(h *history.History, t int32) bool {
	return h != nil && t >= 0 && int(t) < len(h.Txns)
}

// txnString renders transaction t if h has it (h.TxnString needs the
// interners; a hand-built history without them falls back to the name).
func txnString(h *history.History, t int32) (string, bool) {
	if !validTxn(h, t) || h.Keys == nil || h.Values == nil {
		return "", false
	}
	return h.TxnString(t), true
}

// txnName renders a transaction's name, tolerating indices outside h.
func txnName(h *history.History, t int32) string {
	if validTxn(h, t) {
		return h.TxnName(t)
	}
	return "T" + strconv.Itoa(int(t))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
