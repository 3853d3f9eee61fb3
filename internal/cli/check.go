package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/versionorder"
	"github.com/txray/txray/internal/progress"
	"github.com/txray/txray/model"
	"github.com/txray/txray/report"
)

func init() { register(newCheckCmd) }

// checkFlags are the options shared by `txray check` and `txray run`.
type checkFlags struct {
	model        string
	format       string
	checker      string
	json         bool
	out          string
	verbose      bool
	quiet        bool
	maxAnomalies int
	budget       int64
	timeout      time.Duration
	params       []string
	versionOrder string // txray check --version-order FILE (history/versionorder)
	// summaryOnly (txray run) prints the summary and points to the report
	// for the details.
	summaryOnly bool
}

func (f *checkFlags) add(c *cobra.Command, withFormat bool) {
	fl := c.Flags()
	fl.StringVarP(&f.model, "model", "m", "", "consistency model or DBMS profile to check (e.g. serializable, si, postgres:repeatable-read), or \"level\" for what the history's declared level promises; default: the declared level's promise, else strict-serializable (docs/models.md)")
	if withFormat {
		fl.StringVarP(&f.format, "format", "f", "auto", "input format: auto|"+strings.Join(formatNames(), "|"))
	}
	fl.StringVarP(&f.checker, "checker", "c", "auto", "checker: auto (strongest the evidence allows; when it cannot decide, the next applicable one), all (every applicable one), or names separated by commas: "+strings.Join(check.Names(), ", "))
	fl.BoolVar(&f.json, "json", false, "print one JSON object per input on stdout, failed inputs included (docs/json-output.md)")
	fl.StringVarP(&f.out, "out", "o", "", "write report.html and report.json into this directory (created if needed)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "print every cycle step, decoder notes and the full reasons checkers did not apply")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bars (warnings are still printed)")
	fl.IntVar(&f.maxAnomalies, "max-anomalies", check.DefaultMaxPerType, "anomalies listed per type; 0 lists all (the totals per type are always counted in full)")
	fl.Int64Var(&f.budget, "budget", 0, "search work bound for cycle search / solvers (0 = checker default); exceeding it gives verdict unknown")
	fl.DurationVar(&f.timeout, "timeout", 0, "give up after this long, decoding included (verdict unknown for what was not finished); 0 = no limit")
	fl.StringArrayVarP(&f.params, "param", "p", nil, "checker-specific option KEY=VALUE (repeatable); unknown keys are rejected. Keys:\n"+check.ParamsHelp())
}

// formatAliases are other tools' names for formats txray registers under
// another name.
var formatAliases = map[string]string{
	"timekiller": "chronos", // TimeKiller and Chronos/Aion share the JSON history format
	"aion":       "chronos",
	"elle":       "edn",
	"jepsen":     "edn",
	"txray":      "jsonl",
}

// formatNames lists the registered formats and the aliases that name one.
func formatNames() []string {
	names := history.Formats()
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	var al []string
	for a, f := range formatAliases {
		if known[f] && !known[a] {
			al = append(al, a)
		}
	}
	sort.Strings(al)
	return append(names, al...)
}

// resolveFormat maps an alias to its registered format; "auto" and
// registered names pass through; anything else is a usage error naming the
// accepted names.
func resolveFormat(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" || n == "auto" {
		return "auto", nil
	}
	if _, ok := history.LookupFormat(n); ok {
		return n, nil
	}
	if f, ok := formatAliases[n]; ok {
		if _, ok := history.LookupFormat(f); ok {
			return f, nil
		}
	}
	return "", UsageErrorf("--format: unknown format %q (known: auto, %s)", name, strings.Join(formatNames(), ", "))
}

func newCheckCmd() *cobra.Command {
	var f checkFlags
	c := &cobra.Command{
		Use:   "check [flags] FILE...",
		Short: "check recorded histories for isolation anomalies",
		Long: `Check one or more recorded histories ("-" reads stdin) in any supported format
(` + strings.Join(formatNames(), ", ") + `).

Text output starts with a summary per input (verdict, model, the number of
anomalies found per type, the report path), then the details. --json prints
one object per input, inputs that cannot be decoded included (with "error"
and "history": null).

The model: --model, else what the history's declared level promises on its
database (a PostgreSQL repeatable-read history is checked as snapshot
isolation), else strict-serializable. ` + "`txray run`" + ` checks serializable by
default; both print the model and why it was chosen.

Hints: TimeKiller, dbcop and PolySI histories start every key at 0: give
-p initial-value=0. elle-cli's "--model list-append" is --checker
list-append here (--model is the isolation level).

Exit codes: 0 every history valid; 1 some history invalid; 2 usage or input
error; 3 some verdict unknown.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return UsageErrorf("check needs at least one FILE (use - for stdin)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			code, err := runCheck(cmd, args, &f)
			if err != nil {
				return err
			}
			if code != ExitValid {
				return Exit(code)
			}
			return nil
		},
	}
	f.add(c, true)
	c.Flags().StringVar(&f.versionOrder, "version-order", "", "read a version-order file (KEY V1 V2 ... per line, oldest first; partial orders allowed; docs/history-format.md) and add it to every input's evidence")
	return c
}

// validate checks the flags common to check and run and normalises them:
// --max-anomalies 0 becomes "no cap" (check.Options' negative), --format
// aliases become the registered name.
func (f *checkFlags) validate() (map[string]string, error) {
	params, err := parseParams(f.params)
	if err != nil {
		return nil, err
	}
	if f.model != "" && f.model != "level" {
		if _, err := canonicalModel(f.model); err != nil {
			return nil, err
		}
	}
	if f.maxAnomalies < 0 {
		return nil, UsageErrorf("--max-anomalies %d: want 0 (list all) or a positive cap", f.maxAnomalies)
	}
	if f.format != "" {
		if f.format, err = resolveFormat(f.format); err != nil {
			return nil, err
		}
	}
	if f.checker != "" && f.checker != "auto" && f.checker != "all" {
		for _, n := range strings.Split(f.checker, ",") {
			if err := knownChecker(strings.TrimSpace(n)); err != nil {
				return nil, err
			}
		}
	}
	return params, nil
}

// maxPerType turns the flag into check.Options.MaxAnomalies (0 = no cap on
// the command line, negative in check.Options).
func (f *checkFlags) maxPerType() int {
	if f.maxAnomalies == 0 {
		return -1
	}
	return f.maxAnomalies
}

func knownChecker(n string) error {
	if _, found := check.Lookup(n); found {
		return nil
	}
	msg := fmt.Sprintf("--checker: unknown checker %q (known: auto, all, %s)", n, strings.Join(check.Names(), ", "))
	if s := closest(n, check.Names()); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return UsageErrorf("%s", msg)
}

// closest returns the name in names nearest to n (edit distance at most a
// third of its length), or "".
func closest(n string, names []string) string {
	for _, s := range model.SuggestAmong(n, names, 1) {
		return s
	}
	return ""
}

// runCheck checks every file and returns the aggregate exit code. Every
// input gets its output, failed ones included: with --json one object per
// input (an undecodable one has "error" and "history": null), in text its
// summary. --timeout bounds the whole command, decoding included.
func runCheck(cmd *cobra.Command, files []string, f *checkFlags) (int, error) {
	params, err := f.validate()
	if err != nil {
		return ExitUsage, err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	tuneGC()
	reportPath := ""
	if f.out != "" {
		reportPath = filepath.Join(f.out, "report.html")
	}
	var inputs []*report.Input
	codes := []int{}
	for _, file := range files {
		start := time.Now()
		h, err := decodeCtx(ctx, file, f.format, decodeOptions(file, f.quiet || f.json))
		if err == nil && f.versionOrder != "" {
			err = versionorder.ReadFile(f.versionOrder, h)
		}
		var in *report.Input
		code := ExitUsage
		switch {
		case err == nil:
			for _, n := range h.Notices {
				fmt.Fprintln(cmd.ErrOrStderr(), "txray: notice:", n)
			}
			in, code, err = checkHistoryCtx(ctx, file, h, f, params, start)
			if err != nil {
				return ExitUsage, err
			}
		case ctx.Err() != nil && !history.IsInputError(err):
			in = &report.Input{File: file, Reason: "timed out after " + f.timeout.String() + " (--timeout) before the input was decoded", Elapsed: time.Since(start)}
			code = ExitUnknown
		default:
			in = &report.Input{File: file, Error: err.Error(), Elapsed: time.Since(start)}
		}
		if !f.json && len(codes) > 0 {
			fmt.Fprintln(cmd.OutOrStdout()) // a blank line between inputs
		}
		if err := printInput(cmd, in, f, reportPath, nil); err != nil {
			return ExitUsage, err
		}
		if in.History != nil {
			inputs = append(inputs, in)
		}
		codes = append(codes, code)
	}
	if f.out != "" && len(inputs) > 0 {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return ExitUsage, err
		}
		if _, err := report.WriteHTML(f.out, inputs); err != nil {
			return ExitUsage, err
		}
	}
	return aggregate(codes), nil
}

// decodeCtx decodes file, giving up when ctx ends (the decoder itself
// cannot be interrupted; it is left to finish in the background and its
// result discarded, which is fine for a command about to exit).
func decodeCtx(ctx context.Context, file, format string, opts history.DecodeOptions) (*history.History, error) {
	if ctx.Done() == nil {
		return history.DecodeFile(file, format, opts)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type res struct {
		h   *history.History
		err error
	}
	ch := make(chan res, 1)
	go func() {
		h, err := history.DecodeFile(file, format, opts)
		ch <- res{h, err}
	}()
	select {
	case r := <-ch:
		return r.h, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// printInput prints one checked (or failed) input: its JSON object, or its
// text with the summary first (model choice, extra summary lines, report
// path).
func printInput(cmd *cobra.Command, in *report.Input, f *checkFlags, reportPath string, extra []string) error {
	w := cmd.OutOrStdout()
	if f.json {
		return report.WriteJSON(w, in)
	}
	var summary []string
	if in.ModelWhy != "" {
		summary = append(summary, "model: "+in.ModelWhy)
	}
	summary = append(summary, extra...)
	if h := initialZeroHint(in, f); h != "" {
		summary = append(summary, h)
	}
	if in.History == nil {
		reportPath = ""
	}
	opts := report.TextOptions{Verbose: f.verbose, Summary: summary, ReportPath: reportPath}
	if f.summaryOnly && reportPath != "" {
		opts.SummaryOnly = true
		opts.DetailsHint = "details (every anomaly explained): " + reportPath + ", or txray check -v " + in.File
	}
	return report.WriteTextOptions(w, in, opts)
}

// aggregate folds per-input exit codes: input errors first, then invalid,
// then unknown.
func aggregate(codes []int) int {
	out := ExitValid
	rank := map[int]int{ExitValid: 0, ExitUnknown: 1, ExitInvalid: 2, ExitUsage: 3}
	for _, c := range codes {
		if rank[c] > rank[out] {
			out = c
		}
	}
	return out
}

// canonicalModel resolves a --model value (model, alias or DBMS profile),
// or returns a usage error with the closest names and hints
// (model.Resolve).
func canonicalModel(name string) (string, error) {
	m, err := model.Resolve(name)
	if err != nil {
		return "", UsageErrorf("--model: %v", err)
	}
	return m, nil
}

func parseParams(ps []string) (map[string]string, error) {
	m := map[string]string{}
	for _, p := range ps {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, UsageErrorf("--param %q: want key=value", p)
		}
		m[k] = v
	}
	if err := check.ValidateParams(m); err != nil {
		return nil, UsageErrorf("%v", err)
	}
	return m, nil
}

// pickModel resolves the model for h: the flag, else the history's declared
// level, else strict-serializable.
func pickModel(flag string, h *history.History) string {
	m, _ := pickModelWhy(flag, h)
	return m
}

// pickModelWhy is pickModel with the reason for the choice, printed in the
// summary so the default is never silent (txray run's default differs:
// serializable).
func pickModelWhy(flag string, h *history.History) (string, string) {
	declared := ""
	if h.Header.Level != "" {
		if m, err := canonicalModel(defaultModel(h.Header.DB, h.Header.Level)); err == nil {
			declared = m
		}
	}
	switch {
	case flag == "level" && declared != "":
		return declared, fmt.Sprintf("%s (--model level: what %s promises%s)", declared, h.Header.Level, onDB(h.Header.DB))
	case flag == "level":
		return "strict-serializable", "strict-serializable (--model level, but the history declares no level)"
	case flag != "":
		m, _ := canonicalModel(flag)
		return m, m + " (--model)"
	case declared != "":
		return declared, fmt.Sprintf("%s (default: what the history's level %s promises%s; txray run checks serializable by default, --model serializable here)",
			declared, h.Header.Level, onDB(h.Header.DB))
	}
	return "strict-serializable", "strict-serializable (default: the history declares no level; --model to choose)"
}

func onDB(db string) string {
	if db == "" {
		return ""
	}
	return " on " + db
}

// checkHistoryCtx runs the selected checkers on h under ctx and returns
// the report input and the exit code for this history. A checker stopped by
// ctx's deadline gives verdict unknown.
//
// --checker auto runs the strongest applicable checker; when it cannot
// decide (verdict unknown, e.g. emme on a predicate read whose version is
// ambiguous without version sets), the next applicable one runs, and so on
// until one decides: the deciding result is the primary one (results[0],
// the exit code follows it) and the undecided ones follow it, each with its
// reason. A deadline stops the fallback.
func checkHistoryCtx(ctx context.Context, file string, h *history.History, f *checkFlags, params map[string]string, start time.Time) (*report.Input, int, error) {
	mdl, why := pickModelWhy(f.model, h)
	auto := f.checker == "" || f.checker == "auto"
	// With auto, every applicable checker, strongest first; the loop stops
	// at the first decision.
	checkers, notApp, err := selectCheckers(h, mdl, f.checker)
	if err != nil {
		return nil, ExitUsage, err
	}
	in := &report.Input{File: file, History: h, NotApplicable: notApp, ModelWhy: why}
	opts := check.Options{Model: mdl, MaxAnomalies: f.maxPerType(), Budget: f.budget, Params: params,
		Progress: progress.Func(f.quiet || f.json)}
	for i, c := range checkers {
		if auto && i > 0 {
			if prev := in.Results[i-1]; prev.Verdict != check.Unknown || ctx.Err() != nil {
				break
			}
		}
		if ctx.Err() != nil {
			in.Results = append(in.Results, timedOut(c.Name(), mdl, f.timeout))
			continue
		}
		r, err := c.Check(ctx, h, opts)
		if err != nil {
			if history.IsInputError(err) {
				in.Error = err.Error()
				in.Elapsed = time.Since(start)
				return in, ExitUsage, nil
			}
			if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
				r = timedOut(c.Name(), mdl, f.timeout)
			} else {
				return nil, ExitUsage, fmt.Errorf("%s: checker %s: %w", file, c.Name(), err)
			}
		}
		in.Results = append(in.Results, r)
	}
	in.Elapsed = time.Since(start)
	if last := len(in.Results) - 1; auto && last > 0 && in.Results[last].Verdict != check.Unknown {
		// The last result decided after stronger checkers could not: it
		// leads. (When none decided, the strongest one's reason leads.)
		in.Results = append([]*check.Result{in.Results[last]}, in.Results[:last]...)
		return in, verdictCode(in.Results[:1]), nil
	}
	return in, verdictCode(in.Results), nil
}

func timedOut(checker, mdl string, d time.Duration) *check.Result {
	r := &check.Result{Checker: checker, Model: mdl, Verdict: check.Unknown, Reason: "timed out after " + d.String() + " (--timeout)"}
	r.Finish()
	return r
}

func verdictCode(rs []*check.Result) int {
	if len(rs) == 0 {
		return ExitUnknown // no checker applied
	}
	code := ExitValid
	for _, r := range rs {
		switch r.Verdict {
		case check.Invalid:
			return ExitInvalid
		case check.Unknown:
			code = ExitUnknown
		}
	}
	return code
}

// selectCheckers returns the checkers spec names (with "" or "auto", every
// applicable one, strongest first) and why the others do not apply. It
// calls check.Pick once: every checker's Applies looks at the whole history
// (on 1M transactions × 15 ops, a second Pick cost about 0.5 s).
func selectCheckers(h *history.History, mdl, spec string) ([]check.Checker, map[string]string, error) {
	ok, notApp := check.Pick(h, mdl)
	switch spec {
	case "", "auto":
		return ok, notApp, nil
	case "all":
		return ok, notApp, nil
	}
	var out []check.Checker
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		c, found := check.Lookup(n)
		if !found {
			return nil, nil, knownChecker(n)
		}
		out = append(out, c)
	}
	return out, notApp, nil
}

// checkAndReport checks an in-memory history (used by `txray run`) with the
// strongest applicable checkers under model and prints the verdict; it
// returns the exit code.
func checkAndReport(cmd *cobra.Command, name string, h *history.History, mdl string) (int, error) {
	return checkAndReportFlags(cmd, name, h, &checkFlags{model: mdl, checker: "auto"})
}

func checkAndReportFlags(cmd *cobra.Command, name string, h *history.History, f *checkFlags) (int, error) {
	_, code, err := checkAndReportInput(cmd, name, h, f, nil)
	return code, err
}

// checkAndReportInput checks h, writes the HTML report when f.out is set,
// and prints the input (summary first; summary gives extra summary lines
// computed from the input, e.g. run's level promise). It returns the
// checked input (nil on error).
func checkAndReportInput(cmd *cobra.Command, name string, h *history.History, f *checkFlags,
	summary func(*report.Input) []string) (*report.Input, int, error) {
	params, err := f.validate()
	if err != nil {
		return nil, ExitUsage, err
	}
	ctx := context.Background()
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	in, code, err := checkHistoryCtx(ctx, name, h, f, params, time.Now())
	if err != nil {
		return nil, ExitUsage, err
	}
	reportPath := ""
	if f.out != "" && in != nil {
		if reportPath, err = report.WriteHTML(f.out, []*report.Input{in}); err != nil {
			return nil, ExitUsage, err
		}
	}
	var extra []string
	if summary != nil {
		extra = summary(in)
	}
	if err := printInput(cmd, in, f, reportPath, extra); err != nil {
		return nil, ExitUsage, err
	}
	return in, code, nil
}

var _ io.Writer = os.Stdout

// tuneGC trades memory for speed while decoding and checking big histories:
// the history is live until the end, so frequent collections only rescan it.
// GOGC in the environment wins.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
}

// decodeOptions draws a "decode" progress bar over the input's bytes (on a
// terminal, unless quiet; an unknown size, e.g. stdin, shows a counter).
func decodeOptions(file string, quiet bool) history.DecodeOptions {
	pf := progress.Func(quiet)
	if pf == nil {
		return history.DecodeOptions{}
	}
	total := int64(-1)
	if st, err := os.Stat(file); err == nil && st.Mode().IsRegular() {
		total = st.Size()
	}
	return history.DecodeOptions{Progress: func(n int64) { pf("decode (bytes)", n, total) }}
}

// zeroInitialFormats are the formats whose sources (TimeKiller/Chronos,
// PolySI, dbcop, Cobra) start every key at 0 rather than absent.
var zeroInitialFormats = map[string]bool{"chronos": true, "polysi": true, "cobra": true, "dbcop": true}

// initialZeroHint suggests -p initial-value=0 when a history in such a
// format was not found valid under the default initial value: reads of the
// initial 0 then look like reads of a value nobody wrote.
func initialZeroHint(in *report.Input, f *checkFlags) string {
	h := in.History
	if h == nil || !zeroInitialFormats[h.Header.Format] || len(in.Results) == 0 || in.Results[0] == nil ||
		in.Results[0].Verdict == check.Valid {
		return ""
	}
	for _, p := range f.params {
		if strings.HasPrefix(p, "initial-value=") {
			return ""
		}
	}
	return "hint: " + h.Header.Format + "-format histories (written by TimeKiller/Chronos, PolySI, dbcop or Cobra) usually start every key at 0; if this one does, check with -p initial-value=0"
}
