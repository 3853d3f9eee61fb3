package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/isodiff"
	"github.com/txray/txray/record"
	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

func init() { register(newAnalyzeCmd) }

type analyzeFlags struct {
	level, format, dialect, hints, out string
	k, l                               int
	jsonOut                            bool
	budget                             time.Duration
	workers                            int
	histories                          []string
	// --record-db: run a workload at the level, analyse its trace and
	// observe its history.
	recordDB, workload  string
	txns, keys, clients int
	seed                int64
}

func newAnalyzeCmd() *cobra.Command {
	var f analyzeFlags
	c := &cobra.Command{
		Use:   "analyze [flags] TRACE...",
		Short: "find the transactions of an application that break under read committed or snapshot isolation (IsoDiff)",
		Long: `Analyse an application's SQL trace (IsoDiff, Gan et al., VLDB 2020): group
its transactions into classes, build the static dependency graph, search
for Δ cycles (read committed: a cycle with an rw dependency; snapshot
isolation: two consecutive vulnerable rw dependencies), drop those that
timing or same-row correlation rule out, and propose the fewest columns
to protect (TargetColumns), each with a concrete fix.

Trace formats (--format, detected by default): PostgreSQL server logs
written with log_statement=all (log_line_prefix with %c or [%p]), the
MariaDB/MySQL general query log, and a plain format of one statement a line
"SESSION<TAB>SQL[<TAB>PARAMS-JSON]" (what txray run --sql-trace writes).
A TRACE may be gzip-compressed. See docs/analyze.md, including the --hints
file format.

--history FILE (repeatable) gives a history recorded together with the
trace (txray run --sql-trace T --out DIR writes DIR/history.jsonl and names
every trace transaction with its history id): it is checked against
serializable, and each predicted Δ cycle whose shape (the same transaction
classes in cycle order, an rw dependency) one of its anomalies has is marked
OBSERVED. --record-db URL runs --workload (default tpcc) at the level itself
with txray run's recorder and analyses its trace and history.

Exit codes: 0 no Δ cycle; 1 Δ cycles found; 2 usage or input error; 3 unknown (nothing
analysed, no Δ cycle but some statements unparsable, or the set cover stopped before every
Δ cycle was broken).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && f.recordDB == "" {
				return UsageErrorf("analyze needs at least one TRACE file (use - for stdin), or --record-db")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnalyze(cmd, args, &f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.level, "level", "read-committed", "isolation level: read-committed (rc) or snapshot-isolation (si)")
	fl.StringVar(&f.format, "format", "auto", "trace format: auto, plain, pglog or mysql")
	fl.StringVar(&f.dialect, "dialect", "auto", "SQL dialect: auto (from the format; plain tries PostgreSQL then MySQL), postgres or mysql")
	fl.IntVar(&f.k, "k", 10, "closing paths per dangerous path (k shortest paths)")
	fl.IntVar(&f.l, "l", 6, "operation-level samples per transaction-level cycle (ℓ)")
	fl.StringVar(&f.hints, "hints", "", "hints file (docs/analyze.md)")
	fl.BoolVar(&f.jsonOut, "json", false, "write the report as JSON on stdout")
	fl.StringVar(&f.out, "out", "", "write an HTML report (DIR/analyze.html) with the Δ cycles drawn")
	fl.DurationVar(&f.budget, "cycle-budget", 50*time.Millisecond, "time limit of the correlation check of one cycle (coverage is reported when it runs out)")
	fl.IntVar(&f.workers, "workers", 0, "parallel workers over dangerous paths (0: GOMAXPROCS)")
	fl.StringVar(&f.recordDB, "record-db", "", "run --workload against this database at --level (snapshot-isolation: repeatable read) with txray run's recorder, then analyse its SQL trace (with the TRACEs given, if any) and mark the Δ cycles its history shows as observed")
	fl.StringVar(&f.workload, "workload", "tpcc", "with --record-db: the workload to run")
	fl.IntVar(&f.txns, "txns", 300, "with --record-db: transactions to run")
	fl.IntVar(&f.keys, "keys", 1, "with --record-db: active keys (tpcc: warehouses)")
	fl.IntVar(&f.clients, "clients", 4, "with --record-db: concurrent client sessions")
	fl.Int64Var(&f.seed, "seed", 0, "with --record-db: random seed (0: from the clock)")
	fl.StringArrayVar(&f.histories, "history", nil, "a history recorded with the trace (txray run --sql-trace T --out DIR: DIR/history.jsonl); its anomalies (checked against serializable) mark the Δ cycles of their shape as observed; repeatable")
	return c
}

func runAnalyze(cmd *cobra.Command, args []string, f *analyzeFlags) error {
	var level string
	switch f.level {
	case "read-committed", "rc", "RC":
		level = isodiff.ReadCommitted
	case "snapshot-isolation", "si", "SI":
		level = isodiff.SnapshotIsolation
	default:
		return UsageErrorf("--level %q: want read-committed or snapshot-isolation", f.level)
	}
	switch f.dialect {
	case isodiff.DialectAuto, isodiff.DialectPostgres, isodiff.DialectMySQL:
	default:
		return UsageErrorf("--dialect %q: want auto, postgres or mysql", f.dialect)
	}
	if f.k < 1 || f.l < 1 {
		return UsageErrorf("--k and --l must be at least 1")
	}
	opts := isodiff.Options{Level: level, K: f.k, L: f.l, CycleBudget: f.budget, Workers: f.workers}
	if f.hints != "" {
		fh, err := os.Open(f.hints)
		if err != nil {
			return UsageErrorf("--hints: %v", err)
		}
		h, err := isodiff.ParseHints(fh, f.hints)
		fh.Close()
		if err != nil {
			return UsageErrorf("%v", err)
		}
		opts.Hints = h
	}
	if f.recordDB != "" {
		trace, hist, err := recordForAnalyze(cmd, f, level)
		if err != nil {
			return err
		}
		args = append(args, trace)
		f.histories = append(f.histories, hist)
	}
	var b *isodiff.Builder
	for _, p := range args {
		var r io.Reader = os.Stdin
		if p != "-" {
			fh, err := os.Open(p)
			if err != nil {
				return UsageErrorf("%v", err)
			}
			defer fh.Close()
			r = fh
		}
		r, err := isodiff.MaybeGunzip(r, p)
		if err != nil {
			return UsageErrorf("%v", err)
		}
		es, format, err := isodiff.ReadTrace(r, p, f.format)
		if err != nil {
			if history.IsInputError(err) {
				return UsageErrorf("%v", err)
			}
			return err
		}
		if b == nil {
			d := f.dialect
			if d == isodiff.DialectAuto {
				switch format {
				case isodiff.FormatPG:
					d = isodiff.DialectPostgres
				case isodiff.FormatMySQL:
					d = isodiff.DialectMySQL
				}
			}
			b = isodiff.NewBuilder(d)
		}
		b.Add(p, format, es)
	}
	app := b.Build()
	app.ApplyLabels(opts.Hints)
	rep := isodiff.Analyze(app, opts)
	for _, hp := range f.histories {
		if err := observeHistory(cmd, rep, app, hp); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if f.jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		isodiff.WriteText(out, rep)
	}
	if f.out != "" {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return err
		}
		p := filepath.Join(f.out, "analyze.html")
		fh, err := os.Create(p)
		if err != nil {
			return err
		}
		if err := isodiff.WriteHTML(fh, rep); err != nil {
			fh.Close()
			return err
		}
		if err := fh.Close(); err != nil {
			return err
		}
		if !f.jsonOut {
			fmt.Fprintf(out, "HTML report: %s\n", p)
		}
	}
	if len(rep.Cycles) > 0 {
		return Exit(ExitInvalid)
	}
	// "No Δ cycle" is a claim about the transactions analysed: with none
	// (an empty trace, the wrong --format, every statement unparsable) it
	// would be a claim about nothing, so say so and exit unknown.
	if analysedClasses(rep) == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "txray analyze: nothing analysed: %d statements read, %d unparsable, no transaction with a table access (wrong --format or --dialect?); verdict unknown\n",
			rep.Trace.Statements, rep.Trace.Unparsable)
		return Exit(ExitUnknown)
	}
	// A statement left out (unparsable) may be the read or write that
	// closes a Δ cycle: "no Δ cycle" is then no claim about its
	// transaction.
	if rep.Trace.Unparsable > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "txray analyze: no Δ cycle among the statements parsed, but %d statements could not be parsed and were left out; verdict unknown\n",
			rep.Trace.Unparsable)
		return Exit(ExitUnknown)
	}
	if rep.Incomplete {
		return Exit(ExitUnknown)
	}
	return nil
}

// analysedClasses counts the transaction classes with at least one statement
// that the analysis kept (not removed by a hint).
func analysedClasses(rep *isodiff.Report) int {
	n := 0
	for _, c := range rep.Classes {
		if !c.Removed && len(c.Stmts) > 0 {
			n++
		}
	}
	return n
}

// observeHistory checks a recorded history against serializable with the
// strongest applicable checker that decides and marks the Δ cycles whose shape its
// cycle anomalies have (isodiff.Observe). The history's transactions are
// found in the trace by their ids (txray run --sql-trace writes them).
func observeHistory(cmd *cobra.Command, rep *isodiff.Report, app *isodiff.App, file string) error {
	h, err := history.DecodeFile(file, "auto", history.DecodeOptions{})
	if err != nil {
		if history.IsInputError(err) {
			var ie *history.InputError
			if errors.As(err, &ie) && strings.HasPrefix(ie.Msg, "cannot tell the format") {
				// analyze's --format names the trace format; a history's
				// format is always detected, so "pass --format" would mislead.
				e := *ie
				e.Msg = "cannot tell the history's format (analyze detects it; formats: " + strings.Join(history.Formats(), ", ") + ")"
				return UsageErrorf("--history: %v", &e)
			}
			return UsageErrorf("--history: %v", err)
		}
		return err
	}
	c, r, err := decisiveCheck(cmd, h, file)
	if err != nil {
		return err
	}
	var notes []string
	if r.Verdict == check.Unknown && h.Evidence.PredicateRead {
		// As txray run does: the projection without predicate reads keeps
		// every anomaly it shows (dropping reads only drops constraints).
		p, n := record.WithoutPredicateReads(h)
		if c2, r2, err := decisiveCheck(cmd, p, file); err == nil && r2.Verdict != check.Unknown {
			c, r, h = c2, r2, p
			notes = append(notes, fmt.Sprintf("%s: checked without its %d predicate reads (no checker that decides interprets them): anomalies through them are not seen", file, n))
		}
	}
	var as []isodiff.HistoryAnomaly
	for _, a := range r.Anomalies {
		if len(a.Cycle) == 0 {
			continue
		}
		var ha isodiff.HistoryAnomaly
		ha.Type = a.Type
		for _, st := range a.Cycle {
			id := ""
			if st.From >= 0 && int(st.From) < len(h.Txns) {
				id = h.Txns[st.From].ID
			}
			ha.Txns = append(ha.Txns, id)
			ha.Rels = append(ha.Rels, st.Rel)
		}
		as = append(as, ha)
	}
	isodiff.Observe(rep, app, file, as)
	o := rep.Observed
	o.Notes = append(o.Notes, notes...)
	if !slices.Contains(o.Checkers, c.Name()) {
		o.Checkers = append(o.Checkers, c.Name())
	}
	switch {
	case r.Verdict == check.Unknown:
		o.Notes = append(o.Notes, fmt.Sprintf("%s: checker %s could not decide everything (%s): cycles not observed may still have happened", file, c.Name(), clipReason(r.Reason)))
	case len(r.CountsAtLeast) > 0:
		o.Notes = append(o.Notes, fmt.Sprintf("%s: the anomaly search stopped on its budget for %v: more anomalies may exist", file, r.CountsAtLeast))
	}
	return nil
}

func clipReason(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// decisiveCheck checks h against serializable with the applicable checkers,
// strongest first; the first that decides (valid or invalid) gives the
// result. When none decides, the strongest one's result is returned.
func decisiveCheck(cmd *cobra.Command, h *history.History, file string) (check.Checker, *check.Result, error) {
	ok, notApp := check.Pick(h, "serializable")
	if len(ok) == 0 {
		var why []string
		for n, r := range notApp {
			why = append(why, n+": "+r)
		}
		sort.Strings(why)
		return nil, nil, UsageErrorf("--history %s: no checker applies under serializable (%s)", file, strings.Join(why, "; "))
	}
	var (
		c check.Checker
		r *check.Result
	)
	for _, ck := range ok {
		res, err := ck.Check(cmd.Context(), h, check.Options{Model: "serializable", MaxAnomalies: -1})
		if err != nil {
			if history.IsInputError(err) {
				return nil, nil, UsageErrorf("--history: %v", err)
			}
			return nil, nil, fmt.Errorf("--history %s: checker %s: %w", file, ck.Name(), err)
		}
		if r == nil || r.Verdict == check.Unknown && res.Verdict != check.Unknown {
			c, r = ck, res
		}
		if r.Verdict != check.Unknown {
			break
		}
	}
	return c, r, nil
}

// recordForAnalyze runs f.workload against f.recordDB at the database level
// that gives the analysed one (read committed; snapshot isolation is
// PostgreSQL's repeatable read) with the recorder of txray run, writing the
// SQL trace and the history into a temporary directory; it returns their
// paths.
func recordForAnalyze(cmd *cobra.Command, f *analyzeFlags, level string) (string, string, error) {
	dbLevel := "read-committed"
	if level == isodiff.SnapshotIsolation {
		dbLevel = "repeatable-read"
	}
	if _, err := workload.New(f.workload, nopDialect{}); err != nil {
		return "", "", UsageErrorf("--workload: %v", err)
	}
	if f.txns <= 0 || f.keys <= 0 || f.clients <= 0 {
		return "", "", UsageErrorf("--txns, --keys and --clients must be positive")
	}
	dir, err := os.MkdirTemp("", "txray-analyze-")
	if err != nil {
		return "", "", err
	}
	trace := filepath.Join(dir, "trace.sql")
	tf, err := os.Create(trace)
	if err != nil {
		return "", "", err
	}
	defer tf.Close()
	seed := f.seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	cfg := record.Config{DB: f.recordDB, Level: dbLevel, Workload: f.workload, Clients: f.clients, Txns: f.txns,
		Seed: uint64(seed), Out: dir, MaxRetries: 3, SQLTrace: tf,
		WL:   workload.Config{Keys: f.keys, Ops: 4, ReadRatio: 0.5, Dist: "uniform", MaxWritesPerKey: 32},
		Warn: func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "txray: warning:", s) }}
	res, err := record.Run(cmd.Context(), cfg)
	if err != nil {
		return "", "", fmt.Errorf("--record-db: %w", err)
	}
	if err := tf.Close(); err != nil {
		return "", "", err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "txray analyze: ran %d %s transactions on %s at %s (%d committed); trace %s, history %s\n",
		res.Stats.Txns, f.workload, db.Scrub(f.recordDB, f.recordDB), dbLevel, res.Stats.Committed, trace, res.Path)
	return trace, res.Path, nil
}
