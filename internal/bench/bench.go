// Package bench measures how fast each txray checking technique is on
// histories of given sizes: the logic behind `txray bench`.
//
// A benchmark run is a list of inputs (histories generated with the
// reference simulator, package sim, at each requested size, or existing
// files) and, for each input, three kinds of measurement, each a Request:
//
//   - PhaseGen: generate the history with sim.Stream (jsonl) or sim.Generate
//     plus the codec's encoder (edn, chronos) into a file;
//   - PhaseDecode: decode the file with history.DecodeFile (the registered
//     codecs, as `txray check` does), then, untimed, resolve the model and
//     list the applicable checkers (check.Pick);
//   - PhaseCheck: decode the file (timed separately), then run one checker
//     (check.Lookup) under the model, as `txray check` would.
//
// Each Request is measured by an Executor. ChildProcess runs it in a fresh
// child process of the txray binary (the hidden `txray bench --child` mode
// reads the Request as JSON on stdin and writes the Measurement as JSON on
// stdout), so the peak resident set size of one phase (the kernel's VmHWM,
// which only grows) is not polluted by another phase's memory, and every
// phase starts with a cold heap. InProcess measures in the calling process
// (Go benchmarks and tests); its peak RSS is the process's, not the phase's.
//
// What is measured per phase: wall time and CPU time (user+system, from
// getrusage) of the phase alone; peak RSS of the whole child (VmHWM from
// /proc/self/status, else getrusage ru_maxrss); peak Go heap (live heap
// objects, runtime/metrics "/memory/classes/heap/objects:bytes", sampled
// every few milliseconds during the phase and at its end); bytes allocated
// and GC cycles during the phase. For PhaseCheck the peak RSS covers decode
// plus check, which is what `txray check` on that file costs.
package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/txray/txray/internal/hugemem"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/txray/txray/history"
	"github.com/txray/txray/sim"
)

// Phases of a Request.
const (
	PhaseGen    = "gen"
	PhaseDecode = "decode"
	PhaseCheck  = "check"
)

// GenSpec is the simulator workload of generated inputs (Txns is set per
// size). It maps onto sim.Config; zero fields take sim's defaults.
type GenSpec struct {
	Workload        string  `json:"workload"`
	Level           string  `json:"level"`
	Txns            int     `json:"txns"`
	Clients         int     `json:"clients"`
	Keys            int     `json:"keys"`
	MinOps          int     `json:"min_ops"`
	MaxOps          int     `json:"max_ops"`
	MaxWritesPerKey int     `json:"max_writes_per_key,omitempty"`
	Dist            string  `json:"dist"`
	ReadRatio       float64 `json:"read_ratio"`
	AbortRate       float64 `json:"abort_rate,omitempty"`
	Seed            uint64  `json:"seed"`
	Mix             string  `json:"mix,omitempty"` // sim.Config.Mix
}

// SimConfig converts the spec to a simulator configuration.
func (g GenSpec) SimConfig() sim.Config {
	return sim.Config{Workload: g.Workload, Level: g.Level, Txns: g.Txns, Clients: g.Clients, Keys: g.Keys,
		MinOps: g.MinOps, MaxOps: g.MaxOps, MaxWritesPerKey: g.MaxWritesPerKey, Dist: g.Dist,
		ReadRatio: g.ReadRatio, AbortRate: g.AbortRate, Seed: g.Seed, Mix: g.Mix}
}

// Request is one measurement, run by an Executor (in a child process for
// `txray bench`). It is JSON so it can cross the process boundary.
type Request struct {
	Phase string `json:"phase"`
	// Gen and Out: PhaseGen writes the history Gen describes to file Out in
	// Format.
	Gen *GenSpec `json:"gen,omitempty"`
	Out string   `json:"out,omitempty"`
	// File and Format: the input of PhaseDecode and PhaseCheck (Format ""
	// or "auto" sniffs).
	File   string `json:"file,omitempty"`
	Format string `json:"format,omitempty"`
	// Model is the model to check (PhaseCheck), or the --model flag to
	// resolve (PhaseDecode; "" = the history's declared level, else
	// strict-serializable, as `txray check` resolves it).
	Model string `json:"model,omitempty"`
	// Checker names the checker of PhaseCheck.
	Checker      string            `json:"checker,omitempty"`
	Params       map[string]string `json:"params,omitempty"`
	MaxAnomalies int               `json:"max_anomalies,omitempty"`
	// Timeout bounds the check (verdict unknown when exceeded); 0 = none.
	Timeout time.Duration `json:"timeout,omitempty"`
	// CPUProfile and HeapProfile, when set, receive a pprof CPU profile of
	// the timed phase only and a heap profile taken at its end (before the
	// phase's data is released).
	CPUProfile  string `json:"cpu_profile,omitempty"`
	HeapProfile string `json:"heap_profile,omitempty"`
}

// Measurement is what one Request measured.
type Measurement struct {
	Phase string `json:"phase"`
	// Seconds is the wall time of the phase; CPUSeconds its user+system CPU.
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	// PeakRSS is the process's peak resident set size (bytes); BaseRSS its
	// RSS before any work (the binary and runtime).
	PeakRSS int64 `json:"peak_rss"`
	BaseRSS int64 `json:"base_rss"`
	// PeakHeap is the largest live Go heap seen during the phase (bytes).
	PeakHeap   int64  `json:"peak_heap"`
	AllocBytes uint64 `json:"alloc_bytes"`
	GCCycles   uint64 `json:"gc_cycles"`
	// FileBytes is the input (or generated) file's size; Format the format
	// it was decoded (sniffed) or written in.
	FileBytes int64         `json:"file_bytes"`
	Format    string        `json:"format,omitempty"`
	Stats     history.Stats `json:"stats"`
	// DecodeSeconds, in PhaseCheck, is the (untimed-for-check) decode that
	// preceded the check; RSSAfterDecode the RSS then.
	DecodeSeconds  float64 `json:"decode_seconds,omitempty"`
	RSSAfterDecode int64   `json:"rss_after_decode,omitempty"`
	// Model is the resolved model; Applicable the checkers check.Pick finds
	// for it, strongest first (PhaseDecode); NotApplicable the reasons for
	// the others.
	Model         string            `json:"model,omitempty"`
	Applicable    []string          `json:"applicable,omitempty"`
	NotApplicable map[string]string `json:"not_applicable,omitempty"`
	// Checker, Verdict ("valid", "invalid", "unknown"), Reason, AnomalyTypes
	// and Anomalies (listed plus truncated) describe the check's result.
	Checker      string   `json:"checker,omitempty"`
	Verdict      string   `json:"verdict,omitempty"`
	Reason       string   `json:"reason,omitempty"`
	AnomalyTypes []string `json:"anomaly_types,omitempty"`
	Anomalies    int      `json:"anomalies,omitempty"`
	// HugeAdvised is how many bytes of heap address space the child
	// advised for transparent huge pages before the phase (internal/hugemem;
	// 0: none, e.g. the kernel's policy is always or never, or
	// TXRAY_HUGEPAGES=0).
	HugeAdvised int64 `json:"huge_advised,omitempty"`
}

// Executor runs one Request and returns its Measurement.
type Executor func(ctx context.Context, req Request) (*Measurement, error)

// Env supplies what the measuring side needs from the CLI.
type Env struct {
	// PickModel resolves the model to check h under from the --model flag
	// ("" = the history's declared level); nil uses the flag, else the
	// declared level, else strict-serializable.
	PickModel func(flag string, h *history.History) string
	// TuneGC, if set, is called once before measuring (the CLI's GC
	// settings, so measurements match `txray check`).
	TuneGC func()
}

// InProcess returns an Executor that measures in the calling process.
func InProcess(env Env) Executor {
	return func(ctx context.Context, req Request) (*Measurement, error) {
		return Measure(ctx, req, env)
	}
}

// ChildProcess returns an Executor that runs each Request in a child
// process: exe with args (e.g. the txray binary and "bench", "--child"),
// the Request as JSON on its stdin, the Measurement as JSON on its stdout.
// A child that fails has its stderr in the error.
func ChildProcess(exe string, args ...string) Executor {
	return func(ctx context.Context, req Request) (*Measurement, error) {
		in, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		if req.Timeout > 0 {
			// The checker honours the timeout through its context; this
			// bound only catches a child that does not.
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, 2*req.Timeout+time.Minute)
			defer cancel()
		}
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Stdin = bytes.NewReader(in)
		var out, errb bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(errb.String())
			if msg == "" {
				msg = err.Error()
			}
			return nil, fmt.Errorf("%s %s: %s", req.Phase, req.File+req.Out, msg)
		}
		var m Measurement
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("%s: child output: %v", req.Phase, err)
		}
		return &m, nil
	}
}

// ServeChild is the child side of ChildProcess: it reads one Request from
// r, measures it and writes the Measurement to w.
func ServeChild(ctx context.Context, r io.Reader, w io.Writer, env Env) error {
	var req Request
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("bench child: bad request: %v", err)
	}
	// A child process measures one phase as `txray check` would run it,
	// which advises huge pages for its heap (internal/hugemem).
	var huge uintptr
	if req.File != "" && (req.Phase == PhaseDecode || req.Phase == PhaseCheck) {
		if st, err := os.Stat(req.File); err == nil {
			huge = hugemem.Reserve(hugemem.ForInput(st.Size()))
		}
	}
	m, err := Measure(ctx, req, env)
	if err != nil {
		return err
	}
	m.HugeAdvised = int64(huge)
	return json.NewEncoder(w).Encode(m)
}

// Config is a benchmark run.
type Config struct {
	// Sizes are the transaction counts to generate (ignored when Files is
	// set).
	Sizes []int
	// Gen is the workload of generated inputs.
	Gen GenSpec
	// Format is the generated inputs' format (jsonl, edn or chronos), or
	// the format of Files ("" or "auto" sniffs).
	Format string
	// Files are existing inputs to measure instead of generating.
	Files []string
	// Model is the --model flag ("" = each history's declared level).
	Model string
	// Checkers is "auto" (the strongest applicable, as `txray check`),
	// "all" (every applicable one) or comma-separated names.
	Checkers     string
	Params       map[string]string
	MaxAnomalies int
	Timeout      time.Duration
	// Keep, if set, is the directory generated files are kept in (and
	// reused from: a file whose recorded GenSpec and format match is not
	// generated again). Otherwise a temporary directory is removed at the
	// end.
	Keep string
	// ProfileDir, if set, receives a CPU and a heap profile per phase.
	ProfileDir string
	// Progress, if set, is told about each step (phase, done, total).
	Progress func(phase string, done, total int64)
	// Log, if set, receives one line per finished row.
	Log func(Row)
}

// Row is one line of the result: one input measured with one checker.
type Row struct {
	File      string `json:"file"`
	Format    string `json:"format"`
	Txns      int    `json:"txns"`
	Ops       int    `json:"ops"`
	FileBytes int64  `json:"file_bytes"`
	// GenSeconds is the generation time (0 for --file inputs); GenReused
	// reports a kept file reused instead of generated (GenSeconds is then
	// the time it took when it was generated).
	GenSeconds float64 `json:"gen_seconds,omitempty"`
	GenReused  bool    `json:"gen_reused,omitempty"`
	GenPeakRSS int64   `json:"gen_peak_rss,omitempty"`
	// Decode phase (its own child process).
	DecodeSeconds    float64 `json:"decode_seconds"`
	DecodeCPUSeconds float64 `json:"decode_cpu_seconds"`
	DecodeMBps       float64 `json:"decode_mb_per_s"`
	DecodePeakRSS    int64   `json:"decode_peak_rss"`
	DecodePeakHeap   int64   `json:"decode_peak_heap"`
	// Check phase (its own child process, which decodes first).
	Model           string  `json:"model"`
	Checker         string  `json:"checker"`
	CheckSeconds    float64 `json:"check_seconds"`
	CheckCPUSeconds float64 `json:"check_cpu_seconds"`
	// CheckDecodeRatio is CheckSeconds / DecodeSeconds.
	CheckDecodeRatio float64 `json:"check_decode_ratio"`
	// TotalSeconds is DecodeSeconds + CheckSeconds (what `txray check`
	// spends); TxnsPerSec is Txns / TotalSeconds.
	TotalSeconds float64 `json:"total_seconds"`
	TxnsPerSec   float64 `json:"txns_per_s"`
	// PeakRSS is the check child's peak RSS (decode + check: the cost of
	// `txray check` on this input); PeakHeap its peak live heap during the
	// check; RSSAfterDecode its RSS when the check began.
	PeakRSS int64 `json:"peak_rss"`
	// CheckChildDecodeSeconds is the check child's own decode before the
	// check: a second sample of DecodeSeconds (the machine may be shared).
	CheckChildDecodeSeconds float64  `json:"check_child_decode_seconds,omitempty"`
	PeakHeap                int64    `json:"peak_heap"`
	RSSAfterDecode          int64    `json:"rss_after_decode"`
	Verdict                 string   `json:"verdict"`
	Reason                  string   `json:"reason,omitempty"`
	AnomalyTypes            []string `json:"anomaly_types,omitempty"`
	Anomalies               int      `json:"anomalies,omitempty"`
	// HugeAdvised is the check child's Measurement.HugeAdvised: bytes of
	// heap advised for huge pages (0: the kernel's default paging).
	HugeAdvised int64 `json:"huge_advised,omitempty"`
	// NotApplicable lists the checkers that do not apply, with reasons.
	NotApplicable map[string]string `json:"not_applicable,omitempty"`
}

// input is one history file to measure.
type input struct {
	file   string
	format string
	gen    *Measurement
	reused bool
}

// Run measures every input with every selected checker, one Request at a
// time through exec, and returns the rows in order (also reported to
// cfg.Log as they finish). An error of a single check (a checker failing on
// its input) becomes that row's verdict "error: ..."; errors generating or
// decoding an input, or of the executor itself, stop the run.
func Run(ctx context.Context, cfg Config, exec Executor) ([]Row, error) {
	if len(cfg.Files) == 0 && len(cfg.Sizes) == 0 {
		return nil, errors.New("bench: no sizes and no files")
	}
	if cfg.Checkers == "" {
		cfg.Checkers = "auto"
	}
	dir := cfg.Keep
	if dir == "" && len(cfg.Files) == 0 {
		tmp, err := os.MkdirTemp("", "txray-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	if cfg.ProfileDir != "" {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			return nil, err
		}
	}
	n := len(cfg.Files)
	if n == 0 {
		n = len(cfg.Sizes)
	}
	// Steps for progress: gen (if any), decode, then checks (counted as one
	// until the decode tells how many).
	total := int64(n * 2)
	if len(cfg.Files) == 0 {
		total = int64(n * 3)
	}
	var done int64
	step := func(what string) {
		if cfg.Progress != nil {
			cfg.Progress(what, done, total)
		}
	}
	var rows []Row
	for i := 0; i < n; i++ {
		var in input
		label := ""
		if len(cfg.Files) > 0 {
			in = input{file: cfg.Files[i], format: cfg.Format}
			label = filepath.Base(in.file)
		} else {
			g := cfg.Gen
			g.Txns = cfg.Sizes[i]
			label = fmt.Sprintf("%d txns", g.Txns)
			step(label + ": generating")
			cpu, heap := profPaths(cfg.ProfileDir, label, "gen")
			var err error
			in, err = generate(ctx, exec, g, cfg.Format, dir, cfg.Keep != "", cpu, heap)
			if err != nil {
				return rows, err
			}
			done++
		}
		step(label + ": decoding")
		req := Request{Phase: PhaseDecode, File: in.file, Format: in.format, Model: cfg.Model}
		req.CPUProfile, req.HeapProfile = profPaths(cfg.ProfileDir, label, "decode")
		dm, err := exec(ctx, req)
		if err != nil {
			return rows, err
		}
		done++
		names, err := selectCheckers(cfg.Checkers, dm.Applicable)
		if err != nil {
			return rows, err
		}
		if len(names) == 0 {
			names = []string{""} // a row saying no checker applies
		}
		total += int64(len(names) - 1)
		base := Row{File: in.file, Format: in.format, Txns: dm.Stats.Txns, Ops: dm.Stats.Ops, FileBytes: dm.FileBytes,
			DecodeSeconds: dm.Seconds, DecodeCPUSeconds: dm.CPUSeconds, DecodePeakRSS: dm.PeakRSS,
			DecodePeakHeap: dm.PeakHeap, Model: dm.Model, NotApplicable: dm.NotApplicable}
		if dm.Format != "" {
			base.Format = dm.Format
		}
		if dm.Seconds > 0 {
			base.DecodeMBps = float64(dm.FileBytes) / 1e6 / dm.Seconds
		}
		if in.gen != nil {
			base.GenSeconds, base.GenReused, base.GenPeakRSS = in.gen.Seconds, in.reused, in.gen.PeakRSS
		}
		for _, name := range names {
			r := base
			if name == "" {
				r.Verdict = "unknown"
				r.Reason = "no checker applies under " + dm.Model
				rows = append(rows, r)
				if cfg.Log != nil {
					cfg.Log(r)
				}
				done++
				continue
			}
			step(label + ": " + name)
			creq := Request{Phase: PhaseCheck, File: in.file, Format: base.Format, Model: dm.Model, Checker: name,
				Params: cfg.Params, MaxAnomalies: cfg.MaxAnomalies, Timeout: cfg.Timeout}
			creq.CPUProfile, creq.HeapProfile = profPaths(cfg.ProfileDir, label, "check-"+name)
			cm, err := exec(ctx, creq)
			done++
			r.Checker = name
			if err != nil {
				if ctx.Err() != nil {
					return rows, ctx.Err()
				}
				r.Verdict = "error: " + err.Error()
				rows = append(rows, r)
				if cfg.Log != nil {
					cfg.Log(r)
				}
				continue
			}
			fillCheck(&r, cm)
			rows = append(rows, r)
			if cfg.Log != nil {
				cfg.Log(r)
			}
		}
	}
	step("done")
	return rows, nil
}

func fillCheck(r *Row, cm *Measurement) {
	r.CheckSeconds, r.CheckCPUSeconds = cm.Seconds, cm.CPUSeconds
	if r.DecodeSeconds > 0 {
		r.CheckDecodeRatio = cm.Seconds / r.DecodeSeconds
	}
	r.TotalSeconds = r.DecodeSeconds + cm.Seconds
	if r.TotalSeconds > 0 {
		r.TxnsPerSec = float64(r.Txns) / r.TotalSeconds
	}
	r.PeakRSS, r.PeakHeap, r.RSSAfterDecode = cm.PeakRSS, cm.PeakHeap, cm.RSSAfterDecode
	r.CheckChildDecodeSeconds = cm.DecodeSeconds
	r.HugeAdvised = cm.HugeAdvised
	r.Verdict, r.Reason, r.AnomalyTypes, r.Anomalies = cm.Verdict, cm.Reason, cm.AnomalyTypes, cm.Anomalies
}

// selectCheckers applies the --checker spec to the applicable checkers.
func selectCheckers(spec string, applicable []string) ([]string, error) {
	switch spec {
	case "", "auto":
		if len(applicable) > 0 {
			return applicable[:1], nil
		}
		return nil, nil
	case "all":
		return applicable, nil
	}
	var out []string
	for _, n := range strings.Split(spec, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: empty --checker list")
	}
	return out, nil
}

func profPaths(dir, label, phase string) (cpu, heap string) {
	if dir == "" {
		return "", ""
	}
	base := strings.NewReplacer(" ", "", "/", "_").Replace(label) + "-" + phase
	return filepath.Join(dir, base+".cpu.pprof"), filepath.Join(dir, base+".heap.pprof")
}

// Ext is the file extension used for generated files of a format.
func Ext(format string) string {
	switch format {
	case "edn":
		return ".edn"
	case "chronos":
		return ".json"
	}
	return ".jsonl"
}

// keptSpec is the sidecar recorded next to a kept generated file.
type keptSpec struct {
	Gen    GenSpec      `json:"gen"`
	Format string       `json:"format"`
	Result *Measurement `json:"result"`
}

// generate produces (or, when keep, reuses) the file for g.
func generate(ctx context.Context, exec Executor, g GenSpec, format, dir string, keep bool, cpuProf, heapProf string) (input, error) {
	spec, _ := json.Marshal(keptSpec{Gen: g, Format: format})
	sum := sha256.Sum256(spec)
	name := fmt.Sprintf("txray-bench-%s-%d-%s", g.Workload, g.Txns, hex.EncodeToString(sum[:4]))
	file := filepath.Join(dir, name+Ext(format))
	side := filepath.Join(dir, name+".spec.json")
	if keep {
		if b, err := os.ReadFile(side); err == nil {
			var ks keptSpec
			if json.Unmarshal(b, &ks) == nil && ks.Gen == g && ks.Format == format && ks.Result != nil {
				if st, err := os.Stat(file); err == nil && st.Size() == ks.Result.FileBytes {
					return input{file: file, format: format, gen: ks.Result, reused: true}, nil
				}
			}
		}
	}
	m, err := exec(ctx, Request{Phase: PhaseGen, Gen: &g, Out: file, Format: format, CPUProfile: cpuProf, HeapProfile: heapProf})
	if err != nil {
		return input{}, err
	}
	if keep {
		b, _ := json.MarshalIndent(keptSpec{Gen: g, Format: format, Result: m}, "", "  ")
		if err := os.WriteFile(side, b, 0o644); err != nil {
			return input{}, err
		}
	}
	return input{file: file, format: format, gen: m}, nil
}
