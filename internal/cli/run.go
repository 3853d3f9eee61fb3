package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	// The checkers `txray run` needs for the histories it records.
	"github.com/txray/txray/check"
	_ "github.com/txray/txray/check/elle"
	"github.com/txray/txray/model"
	"github.com/txray/txray/record"
	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
	"github.com/txray/txray/report"
)

func init() { register(newRunCmd) }

type runFlags struct {
	cfg      record.Config
	seed     int64
	model    string
	quiet    bool
	duration time.Duration
	sqlTrace string
}

func newRunCmd() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run [flags]",
		Short: "run a workload against a database, record the history, and check it",
		Long: `Run a transactional workload against a database at an isolation level,
record every micro-operation (client invoke/complete times, session order,
outcomes, and the database's own ordering evidence where it offers any) to
DIR/history.jsonl as it runs, then check the history: by default against
serializable, so a run at a weaker level reports the anomalies serializable
forbids (exit 1) and a run at serializable must be valid (exit 0). Give
--model level to check only what the level promises on that database
(e.g. snapshot isolation for PostgreSQL repeatable read), or any model or
DBMS profile.

With no flags it runs list-append on an embedded SQLite database (a fresh
temporary file) at serializable and finishes in seconds.

Databases (--db):
  sqlite                               embedded SQLite (default; serializable only)
  postgres://postgres@127.0.0.1:5432/test
  mysql://root@127.0.0.1:3306/test     MariaDB or MySQL

Workloads (--workload): ` + strings.Join(workload.Names(), ", ") + `.
See docs/recorder.md for the SQL of each workload and the evidence each
database gives.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			code, err := runRun(cmd, &f)
			if err != nil {
				return err
			}
			if code != ExitValid {
				return Exit(code)
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.cfg.DB, "db", "", "database URL (default: embedded SQLite on a temporary file)")
	fl.StringVar(&f.cfg.Workload, "workload", "list-append", "workload: "+strings.Join(workload.Names(), ", "))
	fl.StringVar(&f.cfg.Level, "level", "serializable", "isolation level: read-uncommitted, read-committed, repeatable-read, serializable")
	fl.IntVar(&f.cfg.Clients, "clients", 4, "concurrent client sessions")
	fl.IntVar(&f.cfg.WL.Keys, "keys", 10, "active keys")
	fl.StringVar(&f.cfg.WL.Dist, "dist", "uniform", "key distribution: uniform, zipfian, hotspot")
	fl.IntVar(&f.cfg.WL.Ops, "ops", 4, "micro-operations per transaction")
	fl.Float64Var(&f.cfg.WL.ReadRatio, "read-ratio", 0.5, "probability that a micro-op (blindw-rw: a transaction) reads")
	fl.BoolVar(&f.cfg.WL.Deletes, "deletes", false, "predicate workload: an eighth of the writes are range DELETEs, recorded as deletes (default: on where every predicate read gets a version set: PostgreSQL repeatable read and serializable, MariaDB repeatable read; --deletes=false turns them off)")
	fl.IntVar(&f.cfg.WL.MaxWritesPerKey, "max-writes-per-key", 32, "retire a key after this many writes and use a fresh one (0 = never)")
	fl.IntVar(&f.cfg.Txns, "txns", 1000, "transactions to run (committed, aborted and unknown all count)")
	fl.DurationVar(&f.duration, "duration", 0, "run for this long instead of --txns")
	fl.Int64Var(&f.seed, "seed", 0, "random seed (0 = derived from the clock; the seed used is recorded in the history header)")
	fl.StringVar(&f.sqlTrace, "sql-trace", "", "also write the clients' SQL trace to this file (plain format of txray analyze)")
	fl.StringVar(&f.cfg.Out, "out", "", "directory for history.jsonl and evidence.jsonl (default txray-runs/<db>-<workload>-<time>)")
	fl.BoolVar(&f.cfg.NoRecord, "no-record", false, "run the workload without recording or checking (throughput baseline)")
	fl.IntVar(&f.cfg.MaxRetries, "retries", 3, "retry an aborted transaction's plan this many times (each retry is a new transaction)")
	fl.StringVarP(&f.model, "model", "m", "", "model to check: a model, a DBMS profile, or \"level\" for the model the level promises on this database (default serializable)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar and no warnings")
	fl.DurationVar(&f.cfg.ConnectTimeout, "connect-timeout", db.DefaultConnectTimeout,
		"bound on establishing each database session (TCP, TLS, authentication); a PostgreSQL URL's connect_timeout wins")
	fl.DurationVar(&f.cfg.StatementTimeout, "statement-timeout", db.DefaultStatementTimeout,
		"client-side bound on each statement's round trip (a COMMIT past it has an unknown outcome)")
	fl.DurationVar(&f.cfg.TxnTimeout, "txn-timeout", 30*time.Second, "client-side bound on one whole transaction")
	fl.DurationVar(&f.cfg.CommitPoll, "commit-poll", record.DefaultCommitPoll, "PostgreSQL: how often the commit-order slot is read during the run, so committed writers reach the history file as the run goes; a negative value reads it once after the workload (less server work beside the workload, but the history file is written only at the end)")
	return c
}

// defaultModel is the canonical model a correct implementation of level on
// database dbName promises: the DBMS profile's model where the database
// documents its own meaning of the level (PostgreSQL repeatable read is
// snapshot isolation, read uncommitted is read committed), else the ANSI /
// Adya model of the level's name (MariaDB repeatable read is checked as
// repeatable read, which its lost updates violate).
func defaultModel(dbName, level string) string {
	if dbName == "postgres" || dbName == "sqlite" {
		if p, ok := model.LookupProfile(dbName + ":" + level); ok {
			return p.Model
		}
	}
	if m, err := model.Canonical(level); err == nil {
		return m
	}
	return level
}

func runRun(cmd *cobra.Command, f *runFlags) (int, error) {
	stderr := cmd.ErrOrStderr()
	stdout := cmd.OutOrStdout()
	cfg := f.cfg
	// predicate deletes: as given, else where the database gives every
	// predicate read a version set (record.Config.DefaultDeletes)
	cfg.DefaultDeletes = !cmd.Flags().Changed("deletes")
	if _, err := db.ParseLevel(cfg.Level); err != nil {
		return ExitUsage, UsageErrorf("--level: %v", err)
	}
	if _, err := workload.New(cfg.Workload, nopDialect{}); err != nil {
		return ExitUsage, UsageErrorf("--workload: %v", err)
	}
	if f.model != "" && f.model != "level" {
		m, err := canonicalModel(f.model)
		if err != nil {
			return ExitUsage, err
		}
		f.model = m
	}
	if cfg.Clients <= 0 || cfg.WL.Keys <= 0 || cfg.WL.Ops <= 0 {
		return ExitUsage, UsageErrorf("--clients, --keys and --ops must be positive")
	}
	if cfg.ConnectTimeout <= 0 || cfg.StatementTimeout <= 0 || cfg.TxnTimeout <= 0 {
		return ExitUsage, UsageErrorf("--connect-timeout, --statement-timeout and --txn-timeout must be positive")
	}
	if cfg.Txns <= 0 && f.duration <= 0 {
		return ExitUsage, UsageErrorf("--txns must be positive (or give --duration)")
	}
	cfg.Duration = f.duration
	if f.seed == 0 {
		f.seed = time.Now().UnixNano()
	}
	cfg.Seed = uint64(f.seed)
	if cfg.Out == "" && !cfg.NoRecord {
		scheme := "sqlite"
		if i := strings.Index(cfg.DB, "://"); i > 0 {
			scheme = cfg.DB[:i]
		}
		cfg.Out = filepath.Join("txray-runs", fmt.Sprintf("%s-%s-%s", scheme, cfg.Workload, time.Now().Format("20060102T150405")))
	}
	// Warnings (e.g. SQLite running serializable instead of the requested
	// level) are printed even with -q: they change what the run means.
	cfg.Warn = func(s string) { fmt.Fprintln(stderr, "txray: warning:", s) }
	var bar *progressbar.ProgressBar
	if !f.quiet {
		if fl, ok := stderr.(*os.File); ok && term.IsTerminal(int(fl.Fd())) {
			total := int64(cfg.Txns)
			if cfg.Duration > 0 {
				total = -1
			}
			bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(stderr),
				progressbar.OptionSetDescription("txns"), progressbar.OptionShowCount(),
				progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish())
			cfg.Progress = func(s record.Stats) {
				rate := 0.0
				if s.Elapsed > 0 {
					rate = float64(s.Txns) / s.Elapsed.Seconds()
				}
				bar.Describe(fmt.Sprintf("txns (aborted %d, unknown %d, %.0f/s)", s.Aborted, s.Unknown, rate))
				_ = bar.Set64(s.Txns)
			}
		}
	}
	// The first SIGINT or SIGTERM (what timeout(1), systemd and container
	// runtimes send) stops issuing transactions: those in flight finish,
	// the history is completed, checked and reported. A second signal
	// kills the process (the default action is restored), and the server
	// drops the temporary replication slot with the session.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	if f.sqlTrace != "" {
		tf, err := os.Create(f.sqlTrace)
		if err != nil {
			return ExitUsage, UsageErrorf("--sql-trace: %v", err)
		}
		defer tf.Close()
		cfg.SQLTrace = tf
	}
	res, err := record.Run(ctx, cfg)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		var we *record.WriteError
		if res != nil && res.Path != "" && !errors.As(err, &we) {
			fmt.Fprintf(stderr, "txray: partial history in %s\n", res.Path)
		}
		return ExitUsage, err
	}
	s := res.Stats
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "txray: interrupted: stopped after %d transactions; the history holds all of them\n", s.Txns)
	}
	rate := float64(s.Txns) / s.Elapsed.Seconds()
	fmt.Fprintf(stdout, "ran %d txns in %.2fs (%.0f txn/s): %d committed, %d aborted (%d serialization, %d deadlock, %d lock timeout, %d other), %d unknown\n",
		s.Txns, s.Elapsed.Seconds(), rate, s.Committed, s.Aborted, s.Serialization, s.Deadlock, s.LockTimeout, s.Other, s.Unknown)
	if cfg.NoRecord {
		return ExitValid, nil
	}
	h := res.History
	var notes []string
	if res.EvidencePath != "" {
		notes = append(notes, "evidence file: "+res.EvidencePath)
	}
	mdl := f.model
	promised := defaultModel(h.Header.DB, h.Header.Level)
	modelWhy := mdl + " (--model)"
	switch mdl {
	case "":
		// The question a run asks is which anomalies the level lets
		// through that serializability (Papadimitriou 1979; Adya PL-3)
		// forbids, as Elle's and Jepsen's database tests ask.
		mdl = model.Serializable
		modelWhy = "serializable (txray run's default: the anomalies serializability forbids; --model level checks only what " +
			h.Header.Level + " promises, " + promised + ", which is txray check's default for this file)"
	case "level":
		mdl = promised
		modelWhy = mdl + " (--model level: what " + h.Header.Level + " promises on " + h.Header.DB + ")"
	}
	// The report (report.html, report.json) goes next to the history.
	cf := &checkFlags{model: mdl, checker: "auto", out: filepath.Dir(res.Path), quiet: f.quiet, summaryOnly: true}
	if h.Header.Workload != "list-append" {
		// Register workloads: a transaction that reads a key and later writes
		// it installs its version after the one it read, whatever the level
		// (Elle's wfr-keys assumption), which orders the versions that
		// read-modify-write workloads create.
		cf.params = []string{"wfr-keys=true"}
	}
	if h.Evidence.PredicateRead {
		if _, profile := model.LookupProfile(mdl); profile && !h.HasDeletes() {
			// Leopard verifies predicate reads against the profile's
			// mechanisms; Elle's checkers cannot read them.
			cf.checker = "leopard"
		} else if _, profile := model.LookupProfile(mdl); profile {
			// Leopard does not model deleted versions: the strongest
			// checker that does (emme with a version certificate, enne
			// with a serialization order) decides.
			cf.checker = "auto"
		} else if emmeApplies(h, mdl) {
			// A version certificate (the recorder's version order):
			// emme checks item and predicate dependencies exactly, and
			// auto ranks it first for predicate reads; where it cannot
			// decide (a predicate read's version ambiguous without version
			// sets), auto falls back to enne, which replays the expected
			// serialization order (MariaDB/SQLite serializable).
			cf.checker = "auto"
		} else {
			// Elle cannot interpret predicate reads; the projection without
			// them keeps every anomaly it shows (dropping reads only drops
			// constraints).
			var n int
			h, n = record.WithoutPredicateReads(h)
			notes = append(notes, fmt.Sprintf("note: %d predicate reads are not checked under %s (no model checker interprets them); --model %s:%s checks them with leopard",
				n, mdl, h.Header.DB, h.Header.Level))
		}
	}
	_, code, err := checkAndReportInput(cmd, res.Path, h, cf, func(in *report.Input) []string {
		in.ModelWhy = modelWhy
		var lines []string
		if len(in.Results) > 0 {
			if line := promiseLine(h.Header.DB, h.Header.Level, mdl, in.Results[0]); line != "" {
				lines = append(lines, line)
			}
		}
		return append(lines, notes...)
	})
	return code, err
}

// modelOf is the model a model name or DBMS profile stands for.
func modelOf(name string) string {
	if p, ok := model.LookupProfile(name); ok {
		return p.Model
	}
	return name
}

// promiseLine says whether the run kept the promise of the level it ran at
// (defaultModel: e.g. snapshot isolation for PostgreSQL repeatable read),
// when the history was checked against another model: the promise is broken
// exactly when an anomaly found is one the promised model prohibits
// (model.Prohibits). The exit code stays that of the checked model.
func promiseLine(dbName, level, checked string, r *check.Result) string {
	promised := defaultModel(dbName, level)
	if promised == checked || r == nil {
		return ""
	}
	var broken []string
	for _, a := range r.AnomalyTypes {
		if model.Prohibits(promised, a) {
			broken = append(broken, a)
		}
	}
	switch {
	case len(broken) > 0:
		return fmt.Sprintf("level %s on %s promises %s: BROKEN (%s prohibited by it)", level, dbName, promised, strings.Join(broken, ", "))
	case r.Verdict == check.Unknown:
		return fmt.Sprintf("level %s on %s promises %s: not decided (the check under %s was inconclusive)", level, dbName, promised, checked)
	case !model.Implies(modelOf(checked), modelOf(promised)):
		// A weaker (or incomparable) model looks for fewer anomalies: finding
		// none of those the promise forbids says nothing about the others.
		return fmt.Sprintf("level %s on %s promises %s: not decided (%s does not imply it; check with --model level)", level, dbName, promised, checked)
	case r.Verdict == check.Invalid:
		return fmt.Sprintf("level %s on %s promises %s: kept (every anomaly found is one %s allows; the exit code is for %s)", level, dbName, promised, promised, checked)
	}
	return fmt.Sprintf("level %s on %s promises %s: kept", level, dbName, promised)
}

// nopDialect lets the command validate --workload before opening a
// database.
type nopDialect struct{}

func (nopDialect) Param(int) string           { return "?" }
func (nopDialect) Upsert(string, bool) string { return "" }
func (nopDialect) TextType() string           { return "TEXT" }
