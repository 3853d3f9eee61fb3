package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
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
}

func (f *checkFlags) add(c *cobra.Command, withFormat bool) {
	fl := c.Flags()
	fl.StringVarP(&f.model, "model", "m", "", "consistency model or DBMS profile to check (e.g. serializable, si, postgres:repeatable-read); default: the history's declared level, else strict-serializable")
	if withFormat {
		fl.StringVarP(&f.format, "format", "f", "auto", "input format: auto|"+strings.Join(history.Formats(), "|"))
	}
	fl.StringVarP(&f.checker, "checker", "c", "auto", "checker: auto (strongest the evidence allows), all (every applicable one), or names separated by commas: "+strings.Join(check.Names(), ", "))
	fl.BoolVar(&f.json, "json", false, "print one JSON object per input on stdout (docs/json-output.md)")
	fl.StringVarP(&f.out, "out", "o", "", "write report.html and report.json into this directory")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "print every cycle step and decoder notes")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bars")
	fl.IntVar(&f.maxAnomalies, "max-anomalies", 8, "anomalies listed per type (the rest are counted)")
	fl.Int64Var(&f.budget, "budget", 0, "search work bound for cycle search / solvers (0 = checker default); exceeding it gives verdict unknown")
	fl.DurationVar(&f.timeout, "timeout", 0, "give up checking after this long (verdict unknown); 0 = no limit")
	fl.StringArrayVarP(&f.params, "param", "p", nil, "checker-specific option key=value (repeatable), e.g. linearizable-keys=true")
}

func newCheckCmd() *cobra.Command {
	var f checkFlags
	c := &cobra.Command{
		Use:   "check [flags] FILE...",
		Short: "check recorded histories for isolation anomalies",
		Long: `Check one or more recorded histories ("-" reads stdin) in any supported format
(` + strings.Join(history.Formats(), ", ") + `).

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
	return c
}

// runCheck checks every file and returns the aggregate exit code.
func runCheck(cmd *cobra.Command, files []string, f *checkFlags) (int, error) {
	params, err := parseParams(f.params)
	if err != nil {
		return ExitUsage, err
	}
	if f.model != "" {
		if _, err := canonicalModel(f.model); err != nil {
			return ExitUsage, err
		}
	}
	tuneGC()
	var inputs []*report.Input
	codes := []int{}
	for _, file := range files {
		start := time.Now()
		h, err := history.DecodeFile(file, f.format, decodeOptions(file, f.quiet || f.json))
		if err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "txray:", err)
			codes = append(codes, ExitUsage)
			continue
		}
		for _, n := range h.Notices {
			fmt.Fprintln(cmd.ErrOrStderr(), "txray: notice:", n)
		}
		in, code, err := checkHistory(cmd, file, h, f, params, start)
		if err != nil {
			return ExitUsage, err
		}
		inputs = append(inputs, in)
		codes = append(codes, code)
	}
	if f.out != "" && len(inputs) > 0 {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return ExitUsage, err
		}
		p, err := report.WriteHTML(f.out, inputs)
		if err != nil {
			return ExitUsage, err
		}
		if !f.json {
			fmt.Fprintln(cmd.OutOrStdout(), "report:", p)
		}
	}
	return aggregate(codes), nil
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

func canonicalModel(name string) (string, error) {
	if p, ok := model.LookupProfile(name); ok {
		return p.Name, nil
	}
	m, err := model.Canonical(name)
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
	return m, nil
}

// pickModel resolves the model for h: the flag, else the history's declared
// level, else strict-serializable.
func pickModel(flag string, h *history.History) string {
	if flag != "" {
		m, _ := canonicalModel(flag)
		return m
	}
	if h.Header.Level != "" {
		if m, err := canonicalModel(defaultModel(h.Header.DB, h.Header.Level)); err == nil {
			return m
		}
	}
	return "strict-serializable"
}

// checkHistory runs the selected checkers on h, prints the result (text or
// JSON) and returns the report input and the exit code for this history.
func checkHistory(cmd *cobra.Command, file string, h *history.History, f *checkFlags, params map[string]string, start time.Time) (*report.Input, int, error) {
	mdl := pickModel(f.model, h)
	checkers, notApp, err := selectCheckers(h, mdl, f.checker)
	if err != nil {
		return nil, ExitUsage, err
	}
	in := &report.Input{File: file, History: h, NotApplicable: notApp}
	ctx := context.Background()
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	opts := check.Options{Model: mdl, MaxAnomalies: f.maxAnomalies, Budget: f.budget, Params: params,
		Progress: progress.Func(f.quiet || f.json)}
	for _, c := range checkers {
		r, err := c.Check(ctx, h, opts)
		if err != nil {
			if history.IsInputError(err) {
				fmt.Fprintln(cmd.ErrOrStderr(), "txray:", err)
				return in, ExitUsage, nil
			}
			if errors.Is(err, context.DeadlineExceeded) {
				r = &check.Result{Checker: c.Name(), Model: mdl, Verdict: check.Unknown, Reason: "timed out after " + f.timeout.String()}
			} else {
				return nil, ExitUsage, fmt.Errorf("%s: checker %s: %w", file, c.Name(), err)
			}
		}
		in.Results = append(in.Results, r)
	}
	in.Elapsed = time.Since(start)
	w := cmd.OutOrStdout()
	if f.json {
		err = report.WriteJSON(w, in)
	} else {
		err = report.WriteText(w, in, f.verbose)
	}
	if err != nil {
		return nil, ExitUsage, err
	}
	return in, verdictCode(in.Results), nil
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

func selectCheckers(h *history.History, mdl, spec string) ([]check.Checker, map[string]string, error) {
	ok, notApp := check.Pick(h, mdl)
	switch spec {
	case "", "auto":
		if len(ok) > 0 {
			return ok[:1], notApp, nil
		}
		return nil, notApp, nil
	case "all":
		return ok, notApp, nil
	}
	var out []check.Checker
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		c, found := check.Lookup(n)
		if !found {
			return nil, nil, UsageErrorf("--checker: unknown checker %q (known: %s)", n, strings.Join(check.Names(), ", "))
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
	_, code, err := checkAndReportInput(cmd, name, h, f)
	return code, err
}

// checkAndReportInput is checkAndReportFlags that also returns the checked
// input (nil on error).
func checkAndReportInput(cmd *cobra.Command, name string, h *history.History, f *checkFlags) (*report.Input, int, error) {
	params, err := parseParams(f.params)
	if err != nil {
		return nil, ExitUsage, err
	}
	in, code, err := checkHistory(cmd, name, h, f, params, time.Now())
	if err != nil {
		return nil, ExitUsage, err
	}
	if f.out != "" && in != nil {
		p, err := report.WriteHTML(f.out, []*report.Input{in})
		if err != nil {
			return nil, ExitUsage, err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", p)
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
