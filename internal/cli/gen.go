package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/txray/txray/history"
	"github.com/txray/txray/history/edn"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/history/timekiller"
	"github.com/txray/txray/sim"
)

func init() { register(newGenCmd) }

type genFlags struct {
	cfg     sim.Config
	ops     string
	faults  []string
	format  string
	out     string
	quiet   bool
	maxWPK  int
	abortRt float64
}

func newGenCmd() *cobra.Command {
	var f genFlags
	d := sim.DefaultConfig()
	var levelDoc, faultDoc strings.Builder
	for _, l := range append(sim.Levels(), sim.ReplicatedLevels()...) {
		fmt.Fprintf(&levelDoc, "  %-32s %s [satisfies %s]\n", l.Name, l.Doc, l.Model)
	}
	for _, fi := range append(sim.FaultInfos(), sim.ReplicatedFaults()...) {
		fmt.Fprintf(&faultDoc, "  %-18s %s\n", fi.Name, fi.Doc)
	}
	c := &cobra.Command{
		Use:   "gen [flags]",
		Short: "generate a history with the reference simulator (known ground truth)",
		Long: `Generate a transaction history by running a workload against txray's
in-memory reference database (package sim) at a chosen isolation level,
optionally with injected faults. The same seed gives the same bytes.

Every evidence layer is recorded: sessions (one per client), client
invoke/complete per transaction and per micro-op (simulated nanoseconds),
start/commit timestamps, the version order of every key, and with
--predicate-reads (rw-register, jsonl) predicate reads with the version set
each returned; --deletes (rw-register, jsonl) makes writes deletes (deleted
versions, "d" ops). The header's
"extra" map records the simulator settings and, for each --fault, how many
times it fired ("fault.NAME"); a fault that fired 0 times did not manifest.

Levels:
` + levelDoc.String() + `
Faults (--fault NAME[:PROB], repeatable; PROB defaults to ` + strconv.FormatFloat(sim.DefaultFaultProb, 'g', -1, 64) + `):
` + faultDoc.String() + `
A fault fires only where it can change the execution: where a level already
allows the anomaly, or lacks the mechanism the fault breaks, its count stays 0
(details in the documentation of package sim).

Checking the output: txray check FILE checks any of it (the header's level
is the default model). txray watch's default checker (aion) checks register
reads and writes only: give --workload rw-register for a history to watch
(docs/watch.md).

Example:
  txray gen --workload rw-register --level read-committed --txns 5000 -o h.jsonl
  txray check --model serializable h.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runGen(cmd, &f) },
	}
	fl := c.Flags()
	fl.StringVarP(&f.cfg.Workload, "workload", "w", d.Workload, "workload: list-append|rw-register")
	fl.IntVarP(&f.cfg.Txns, "txns", "n", d.Txns, "number of transactions")
	fl.IntVar(&f.cfg.Clients, "clients", d.Clients, "client sessions")
	fl.IntVar(&f.cfg.Concurrency, "concurrency", 0, "transactions in flight at once (default: --clients)")
	fl.IntVar(&f.cfg.Keys, "keys", d.Keys, "keys in use at a time")
	fl.IntVar(&f.maxWPK, "max-writes-per-key", 32, "retire a key after this many writes (negative: never)")
	fl.StringVar(&f.cfg.Dist, "dist", d.Dist, "key distribution: uniform|zipfian|hotspot")
	fl.StringVar(&f.ops, "ops", "1-4", "micro-ops per transaction: N or MIN-MAX")
	fl.Float64Var(&f.cfg.ReadRatio, "read-ratio", d.ReadRatio, "probability that a micro-op is a read")
	fl.StringVar(&f.cfg.Mix, "mix", "", "workload mix (rw-register; overrides --read-ratio): "+strings.Join(sim.MixNames(), "|"))
	fl.Float64Var(&f.cfg.LockingReads, "locking-reads", 0, "probability that a read is a locking read (SELECT ... FOR UPDATE)")
	fl.Float64Var(&f.cfg.Deletes, "deletes", 0, "probability that a write deletes the row instead, recorded as a delete with a fresh tombstone (rw-register, jsonl only)")
	fl.Float64Var(&f.cfg.PredicateReads, "predicate-reads", 0, "probability that a read is a predicate read over 2-4 keys, recorded with the version set it returned (rw-register, jsonl only)")
	fl.Float64Var(&f.abortRt, "abort-rate", 0.02, "probability that a client rolls a transaction back")
	fl.Float64Var(&f.cfg.InfoRate, "info-rate", 0, "probability that an outcome is recorded as unknown")
	fl.StringVarP(&f.cfg.Level, "level", "l", d.Level, "isolation level: "+strings.Join(sim.LevelNames(), "|"))
	fl.StringArrayVar(&f.faults, "fault", nil, "inject a fault NAME[:PROB] (repeatable): "+strings.Join(sim.FaultNames(), ", "))
	fl.Uint64Var(&f.cfg.Seed, "seed", d.Seed, "random seed")
	fl.StringVarP(&f.format, "format", "f", "jsonl", "output format: jsonl|edn|chronos")
	fl.StringVarP(&f.out, "output", "o", "", "write to FILE (default stdout)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no summary on stderr")
	return c
}

// parseOps parses "N" or "MIN-MAX".
func parseOps(s string) (int, int, error) {
	lo, hi, rng := strings.Cut(strings.TrimSpace(s), "-")
	a, err := strconv.Atoi(lo)
	if err != nil || a < 1 {
		return 0, 0, UsageErrorf("--ops %q: want N or MIN-MAX with N >= 1", s)
	}
	if !rng {
		return a, a, nil
	}
	b, err := strconv.Atoi(hi)
	if err != nil || b < a {
		return 0, 0, UsageErrorf("--ops %q: want N or MIN-MAX with MIN <= MAX", s)
	}
	return a, b, nil
}

func runGen(cmd *cobra.Command, f *genFlags) error {
	cfg := f.cfg
	var err error
	if cfg.MinOps, cfg.MaxOps, err = parseOps(f.ops); err != nil {
		return err
	}
	if f.maxWPK == 0 {
		return UsageErrorf("--max-writes-per-key must not be 0 (negative means never retire)")
	}
	cfg.MaxWritesPerKey = f.maxWPK
	cfg.AbortRate = f.abortRt
	for _, n := range []struct {
		name string
		v    int
	}{{"--txns", cfg.Txns}, {"--clients", cfg.Clients}, {"--keys", cfg.Keys}} {
		if n.v < 1 {
			return UsageErrorf("%s must be at least 1", n.name)
		}
	}
	for _, s := range f.faults {
		ft, err := sim.ParseFault(s)
		if err != nil {
			return UsageErrorf("--fault: %v", err)
		}
		cfg.Faults = append(cfg.Faults, ft)
	}
	switch f.format {
	case "jsonl", "edn", "chronos":
	default:
		return UsageErrorf("--format %q: want jsonl, edn or chronos", f.format)
	}
	if cfg.Deletes > 0 && f.format != "jsonl" {
		return UsageErrorf("--deletes: the %s format cannot carry deletes (use jsonl)", f.format)
	}
	if cfg.PredicateReads > 0 && f.format != "jsonl" {
		return UsageErrorf("--predicate-reads: the %s format cannot carry predicate reads (use jsonl)", f.format)
	}
	// Validate before creating the output file.
	probe := cfg
	probe.Txns = 1
	if _, _, err := sim.Generate(probe); err != nil {
		return UsageErrorf("%v", err)
	}

	var w io.Writer = cmd.OutOrStdout()
	var file *os.File
	if f.out != "" && f.out != "-" {
		file, err = os.Create(f.out)
		if err != nil {
			return UsageErrorf("%v", err)
		}
		defer file.Close()
		w = file
	}
	var truth *sim.Truth
	var stats history.Stats
	switch f.format {
	case "jsonl":
		jw := jsonl.NewWriter(w)
		cs := &countSink{Sink: jw}
		truth, err = sim.Stream(cfg, cs)
		if err == nil {
			err = jw.Close()
		}
		stats = cs.stats
	case "chronos":
		// Streamed: memory stays bounded by the live transactions instead of
		// holding the whole history (2.2 GB for 1M x 15 ops). The format has
		// no header, so sim.Each (no fault-count pre-pass) suffices.
		te := timekiller.NewEncoder(w)
		cs := &countSink{Sink: tkSink{te}}
		truth, err = sim.Each(cfg, cs.WriteTxn)
		if err == nil {
			err = te.Close()
		}
		stats = cs.stats
	default: // edn: the encoder pairs invoke and complete events across transactions
		var h *history.History
		h, truth, err = sim.Generate(cfg)
		if err == nil {
			bw := bufio.NewWriterSize(w, 1<<20)
			err = edn.Encode(bw, h)
			if err == nil {
				err = bw.Flush()
			}
			stats = h.Stats()
		}
	}
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	if file != nil {
		if err := file.Close(); err != nil {
			return fmt.Errorf("gen: %w", err)
		}
	}
	if !f.quiet {
		var fs []string
		for n, c := range truth.FaultCounts {
			fs = append(fs, fmt.Sprintf("%s fired %d times in %d txns", n, c, affected(truth, n)))
		}
		sort.Strings(fs)
		msg := fmt.Sprintf("txray gen: %s %s: %d txns (%d committed, %d aborted, %d unknown)",
			cfg.Level, cfg.Workload, stats.Txns, stats.Committed, stats.Aborted, stats.Unknown)
		if len(fs) > 0 {
			msg += "; " + strings.Join(fs, "; ")
		}
		fmt.Fprintln(cmd.ErrOrStderr(), msg)
	}
	return nil
}

func affected(t *sim.Truth, fault string) int {
	n := 0
	for _, fs := range t.Faults {
		for _, f := range fs {
			if f == fault {
				n++
			}
		}
	}
	return n
}

// countSink passes a stream through to a sink and keeps stats.
type countSink struct {
	sim.Sink
	stats history.Stats
}

// tkSink streams transactions to a TimeKiller (chronos format) encoder; the
// format has no header and no version orders.
type tkSink struct{ e *timekiller.Encoder }

func (tkSink) WriteHeader(history.Header, history.Evidence) error { return nil }
func (s tkSink) WriteTxn(h *history.History, t *history.Txn) error {
	return s.e.WriteTxn(h, t)
}
func (tkSink) WriteVersionOrder(*history.History, int32, []int32) error { return nil }

func (c *countSink) WriteTxn(h *history.History, t *history.Txn) error {
	c.stats.Count(t)
	return c.Sink.WriteTxn(h, t)
}
