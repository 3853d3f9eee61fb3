package cli

import (
	"context"
	"fmt"
	"github.com/txray/txray/internal/hugemem"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/internal/bench"
	"github.com/txray/txray/internal/progress"
	"github.com/txray/txray/sim"
)

func init() { register(newBenchCmd) }

type benchFlags struct {
	gen       bench.GenSpec
	sizes     string
	ops       string
	format    string
	files     []string
	model     string
	checker   string
	json      bool
	keep      string
	profile   string
	timeout   time.Duration
	params    []string
	maxAnom   int
	quiet     bool
	child     bool
	inProcess bool
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	c := &cobra.Command{
		Use:   "bench [flags]",
		Short: "measure decode and check time and memory of each checker on histories of given sizes",
		Long: `Measure how fast each checking technique is on histories of given sizes.

For each --txns size, bench generates a history with the reference simulator
(as 'txray gen' does) in --format, or takes the --file inputs, and then
measures, each in its own child process of this binary (so one phase's memory
does not pollute another's):
  decode  history decoding, as 'txray check' does it;
  check   one run per selected checker (decoding first, timed separately),
          under --model (default: the history's declared level, else
          strict-serializable; the chronos format declares none, so pass
          e.g. --model snapshot-isolation).
The table gives per input and checker: size, format, file MB, generation
time, decode time and MB/s, check time, check/decode ratio, total (decode +
check) time, txns/s over the total, the check process's peak RSS (decode +
check, what 'txray check' would need) and the verdict. --json prints the
same rows as JSON Lines (docs/benchmarks.md lists the fields).

--checker auto benchmarks the checker 'txray check' would pick; all, every
applicable checker; or give names. --profile DIR writes a CPU and a heap
pprof profile of every phase. --keep DIR keeps generated files and reuses
them on the next run with the same settings.

Exit codes: 0 measured (whatever the verdicts); 2 usage, input or I/O error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.child {
				return runBenchChild(cmd)
			}
			return runBench(cmd, &f)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.gen.Workload, "workload", "w", sim.ListAppend, "simulated workload: list-append|rw-register")
	fl.StringVarP(&f.sizes, "txns", "n", "10000,100000,1000000", "history sizes in transactions, comma-separated (suffixes k and m allowed: 100k, 1m)")
	fl.IntVar(&f.gen.Clients, "clients", 100, "client sessions")
	fl.IntVar(&f.gen.Keys, "keys", 10000, "keys in use at a time")
	fl.IntVar(&f.gen.MaxWritesPerKey, "max-writes-per-key", 32, "retire a key after this many writes (negative: never)")
	fl.StringVar(&f.ops, "ops", "4", "micro-ops per transaction: N or MIN-MAX")
	fl.StringVar(&f.gen.Dist, "dist", sim.Uniform, "key distribution: uniform|zipfian|hotspot")
	fl.Float64Var(&f.gen.ReadRatio, "read-ratio", 0.5, "probability that a micro-op is a read")
	fl.StringVar(&f.gen.Mix, "mix", "", "workload mix (rw-register; overrides --read-ratio): "+strings.Join(sim.MixNames(), "|"))
	fl.Float64Var(&f.gen.AbortRate, "abort-rate", 0, "probability that a client rolls a transaction back")
	fl.StringVarP(&f.gen.Level, "level", "l", sim.StrictSerializable, "simulated isolation level: "+strings.Join(sim.LevelNames(), "|"))
	fl.Uint64Var(&f.gen.Seed, "seed", 1, "simulator seed")
	fl.StringVarP(&f.format, "format", "f", "jsonl", "format of generated histories: jsonl|edn|chronos, or several comma-separated (one row set per format, to compare decode MB/s); with --file: auto|"+strings.Join(history.Formats(), "|"))
	fl.StringArrayVar(&f.files, "file", nil, "measure this existing history instead of generating (repeatable)")
	fl.StringVarP(&f.model, "model", "m", "", "consistency model or DBMS profile to check (default: each history's declared level, else strict-serializable)")
	fl.StringVarP(&f.checker, "checker", "c", "auto", "checkers: auto (the one 'txray check' picks), all (every applicable), or names separated by commas: "+strings.Join(check.Names(), ", "))
	fl.BoolVar(&f.json, "json", false, "print one JSON object per measured row on stdout")
	fl.StringVar(&f.keep, "keep", "", "keep generated histories in DIR (and reuse them when the settings match)")
	fl.StringVar(&f.profile, "profile", "", "write CPU and heap pprof profiles of every phase into DIR")
	fl.DurationVar(&f.timeout, "timeout", 0, "give up a check after this long (verdict unknown); 0 = no limit")
	fl.StringArrayVarP(&f.params, "param", "p", nil, "checker-specific option key=value (repeatable)")
	fl.IntVar(&f.maxAnom, "max-anomalies", check.DefaultMaxPerType, "anomalies listed per type, 0 = all (as txray check)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bars")
	fl.BoolVar(&f.child, "child", false, "internal: measure one request (JSON on stdin) and print the measurement")
	fl.BoolVar(&f.inProcess, "in-process", false, "measure in this process instead of child processes (peak RSS is then cumulative)")
	_ = fl.MarkHidden("child")
	return c
}

// benchEnv is what the measuring side borrows from `txray check`.
func benchEnv() bench.Env {
	return bench.Env{PickModel: pickModel, TuneGC: tuneGC}
}

func runBenchChild(cmd *cobra.Command) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := bench.ServeChild(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), benchEnv()); err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	return nil
}

// parseSizes parses "10000,100k,1m".
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(strings.ReplaceAll(p, "_", ""))
		if p == "" {
			continue
		}
		mult := 1
		switch {
		case strings.HasSuffix(p, "k") || strings.HasSuffix(p, "K"):
			mult, p = 1000, p[:len(p)-1]
		case strings.HasSuffix(p, "m") || strings.HasSuffix(p, "M"):
			mult, p = 1000000, p[:len(p)-1]
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > (1<<31-1)/mult {
			return nil, UsageErrorf("--txns %q: want positive transaction counts separated by commas", s)
		}
		out = append(out, n*mult)
	}
	if len(out) == 0 {
		return nil, UsageErrorf("--txns %q: no sizes", s)
	}
	return out, nil
}

func runBench(cmd *cobra.Command, f *benchFlags) error {
	params, err := parseParams(f.params)
	if err != nil {
		return err
	}
	model := ""
	if f.model != "" {
		if model, err = canonicalModel(f.model); err != nil {
			return err
		}
	}
	if f.checker != "auto" && f.checker != "all" {
		for _, n := range strings.Split(f.checker, ",") {
			if err := knownChecker(strings.TrimSpace(n)); err != nil {
				return err
			}
		}
	}
	if f.maxAnom < 0 {
		return UsageErrorf("--max-anomalies %d: want 0 (list all) or a positive cap", f.maxAnom)
	}
	maxAnom := f.maxAnom
	if maxAnom == 0 {
		maxAnom = -1 // 0 lists all, as in txray check (check.Options: negative)
	}
	cfg := bench.Config{Format: f.format, Files: f.files, Model: model, Checkers: f.checker, Params: params,
		MaxAnomalies: maxAnom, Timeout: f.timeout, Keep: f.keep, ProfileDir: f.profile}
	if len(f.files) > 0 {
		if !cmd.Flags().Changed("format") {
			cfg.Format = "auto"
		}
		for _, file := range f.files {
			if _, err := os.Stat(file); err != nil {
				return UsageErrorf("--file: %v", err)
			}
		}
	} else {
		for _, fm := range strings.Split(f.format, ",") {
			switch fm {
			case "jsonl", "edn", "chronos":
			default:
				return UsageErrorf("--format %q: generated histories are jsonl, edn or chronos (or several, comma-separated)", fm)
			}
		}
		if cfg.Sizes, err = parseSizes(f.sizes); err != nil {
			return err
		}
		g := f.gen
		if g.MinOps, g.MaxOps, err = parseOps(f.ops); err != nil {
			return err
		}
		if g.MaxWritesPerKey == 0 {
			return UsageErrorf("--max-writes-per-key must not be 0 (negative means never retire)")
		}
		if g.Clients < 1 || g.Keys < 1 {
			return UsageErrorf("--clients and --keys must be at least 1")
		}
		probe := g.SimConfig()
		probe.Txns = 1
		if _, _, err := sim.Generate(probe); err != nil {
			return UsageErrorf("%v", err)
		}
		cfg.Gen = g
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var exec bench.Executor
	if f.inProcess {
		exec = bench.InProcess(benchEnv())
	} else {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("bench: cannot find own binary for child processes (use --in-process): %w", err)
		}
		exec = bench.ChildProcess(exe, "bench", "--child")
	}
	cfg.Progress = progress.Func(f.quiet || f.json)
	out := cmd.OutOrStdout()
	if f.json {
		cfg.Log = func(r bench.Row) { _ = bench.WriteJSON(out, []bench.Row{r}) }
	}
	load0 := loadAvg()
	start := time.Now()
	// Several generated formats (--format jsonl,edn,chronos): one run per
	// format on the same workload, rows in that order, so the table gives
	// the decode MB/s of each format side by side.
	formats := []string{cfg.Format}
	if len(f.files) == 0 {
		formats = strings.Split(f.format, ",")
	}
	var rows []bench.Row
	for _, fm := range formats {
		cfg.Format = fm
		var rs []bench.Row
		rs, err = bench.Run(ctx, cfg, exec)
		rows = append(rows, rs...)
		if err != nil {
			break
		}
	}
	if err != nil {
		if len(rows) > 0 && !f.json {
			_ = bench.WriteTable(out, rows)
		}
		if history.IsInputError(err) {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("bench: %w", err)}
	}
	if f.json {
		return nil
	}
	fmt.Fprintf(out, "# %s %s/%s, %d CPUs; load average %s at start, %s at end; %s wall; %s\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), load0, loadAvg(), time.Since(start).Round(time.Second), hugeNote(rows))
	return bench.WriteTable(out, rows)
}

// loadAvg is the 1/5/15-minute load average ("?" when unknown).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	fs := strings.Fields(string(b))
	if len(fs) < 3 {
		return "?"
	}
	return strings.Join(fs[:3], " ")
}

// hugeNote says how the check processes' heaps were paged (internal/hugemem).
func hugeNote(rows []bench.Row) string {
	p := hugemem.Policy()
	if p == "" {
		p = "unknown"
	}
	for _, r := range rows {
		if r.HugeAdvised > 0 {
			return "transparent huge pages: " + p + ", heap advised (" + hugemem.Env + "=0 turns it off)"
		}
	}
	return "transparent huge pages: " + p + ", heap not advised"
}
