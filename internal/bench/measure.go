package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/edn"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/history/timekiller"
	"github.com/txray/txray/sim"
)

// Measure runs req in the calling process and measures it (see the package
// comment for what is measured). It returns an error for bad requests, bad
// input and I/O failures; a checker's verdict, including unknown on timeout,
// is a result.
func Measure(ctx context.Context, req Request, env Env) (*Measurement, error) {
	if env.TuneGC != nil {
		env.TuneGC()
	}
	m := &Measurement{Phase: req.Phase, BaseRSS: rssNow()}
	var err error
	switch req.Phase {
	case PhaseGen:
		err = measureGen(req, m)
	case PhaseDecode:
		err = measureDecode(req, env, m)
	case PhaseCheck:
		err = measureCheck(ctx, req, m)
	default:
		err = fmt.Errorf("bench: unknown phase %q", req.Phase)
	}
	if err != nil {
		return nil, err
	}
	m.PeakRSS = peakRSS()
	return m, nil
}

// timed runs fn and measures it: wall and CPU time, peak live heap
// (sampled), allocation and GC counts; with cpuProf a CPU profile of fn
// alone, with heapProf a heap profile written right after fn returns (while
// the phase's data is still live).
type phase struct {
	seconds, cpu float64
	peakHeap     int64
	alloc, gcs   uint64
}

func timed(cpuProf, heapProf string, fn func() error) (phase, error) {
	var p phase
	if cpuProf != "" {
		f, err := os.Create(cpuProf)
		if err != nil {
			return p, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return p, err
		}
	}
	s := newSampler()
	a0, g0 := allocGC()
	c0 := cpuTime()
	t0 := time.Now()
	err := fn()
	p.seconds = time.Since(t0).Seconds()
	p.cpu = (cpuTime() - c0).Seconds()
	a1, g1 := allocGC()
	p.alloc, p.gcs = a1-a0, g1-g0
	p.peakHeap = s.stop()
	if cpuProf != "" {
		pprof.StopCPUProfile()
	}
	if err == nil && heapProf != "" {
		// In-use data as of now, not as of the last (possibly much
		// earlier) collection; the cumulative alloc_* samples are
		// unaffected.
		runtime.GC()
		f, ferr := os.Create(heapProf)
		if ferr != nil {
			return p, ferr
		}
		werr := pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return p, werr
		}
	}
	return p, err
}

func (p phase) into(m *Measurement) {
	m.Seconds, m.CPUSeconds, m.PeakHeap, m.AllocBytes, m.GCCycles = p.seconds, p.cpu, p.peakHeap, p.alloc, p.gcs
}

func measureGen(req Request, m *Measurement) error {
	if req.Gen == nil || req.Out == "" {
		return errors.New("bench: gen request needs gen and out")
	}
	switch req.Format {
	case "", "jsonl", "edn", "chronos":
	default:
		return fmt.Errorf("bench: cannot generate format %q (want jsonl, edn or chronos)", req.Format)
	}
	cfg := req.Gen.SimConfig()
	f, err := os.Create(req.Out)
	if err != nil {
		return err
	}
	defer f.Close()
	var st history.Stats
	p, err := timed(req.CPUProfile, req.HeapProfile, func() error {
		switch req.Format {
		case "", "jsonl":
			jw := jsonl.NewWriter(f)
			cs := &statSink{Writer: jw}
			if _, err := sim.Stream(cfg, cs); err != nil {
				return err
			}
			st = cs.stats
			return jw.Close()
		}
		// edn and chronos encoders take a whole history.
		h, _, err := sim.Generate(cfg)
		if err != nil {
			return err
		}
		st = h.Stats()
		bw := bufio.NewWriterSize(f, 1<<20)
		if req.Format == "edn" {
			err = edn.Encode(bw, h)
		} else {
			err = timekiller.Encode(bw, h)
		}
		if err == nil {
			err = bw.Flush()
		}
		if err == nil {
			err = f.Sync()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("bench: generating %s: %w", req.Out, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	p.into(m)
	m.Stats = st
	m.Format = req.Format
	if m.Format == "" {
		m.Format = "jsonl"
	}
	if fi, err := os.Stat(req.Out); err == nil {
		m.FileBytes = fi.Size()
	}
	return nil
}

// statSink counts a streamed history on its way to a jsonl.Writer.
type statSink struct {
	*jsonl.Writer
	stats history.Stats
}

func (c *statSink) WriteTxn(h *history.History, t *history.Txn) error {
	c.stats.Count(t)
	return c.Writer.WriteTxn(h, t)
}

func decode(file, format string) (*history.History, error) {
	return history.DecodeFile(file, format, history.DecodeOptions{})
}

func measureDecode(req Request, env Env, m *Measurement) error {
	var h *history.History
	p, err := timed(req.CPUProfile, req.HeapProfile, func() error {
		var err error
		h, err = decode(req.File, req.Format)
		return err
	})
	if err != nil {
		return err
	}
	p.into(m)
	m.Format = h.Header.Format
	m.Stats = h.Stats()
	m.FileBytes = fileSize(req.File)
	m.Model = resolveModel(env, req.Model, h)
	ok, notApp := check.Pick(h, m.Model)
	for _, c := range ok {
		m.Applicable = append(m.Applicable, c.Name())
	}
	if len(notApp) > 0 {
		m.NotApplicable = notApp
	}
	runtime.KeepAlive(h)
	return nil
}

func resolveModel(env Env, flag string, h *history.History) string {
	if env.PickModel != nil {
		return env.PickModel(flag, h)
	}
	if flag != "" {
		return flag
	}
	if h.Header.Level != "" {
		return h.Header.Level
	}
	return check.DefaultModel
}

func measureCheck(ctx context.Context, req Request, m *Measurement) error {
	c, ok := check.Lookup(req.Checker)
	if !ok {
		return fmt.Errorf("bench: unknown checker %q (known: %v)", req.Checker, check.Names())
	}
	t0 := time.Now()
	h, err := decode(req.File, req.Format)
	if err != nil {
		return err
	}
	m.DecodeSeconds = time.Since(t0).Seconds()
	m.RSSAfterDecode = rssNow()
	m.Stats = h.Stats()
	m.Format = h.Header.Format
	m.FileBytes = fileSize(req.File)
	m.Model, m.Checker = req.Model, req.Checker
	opts := check.Options{Model: req.Model, MaxAnomalies: req.MaxAnomalies, Params: req.Params}
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	var r *check.Result
	p, err := timed(req.CPUProfile, req.HeapProfile, func() error {
		var err error
		r, err = c.Check(ctx, h, opts)
		return err
	})
	p.into(m)
	switch {
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		m.Verdict, m.Reason = check.Unknown.String(), "timed out after "+req.Timeout.String()
	case err != nil:
		return fmt.Errorf("%s: checker %s: %w", req.File, req.Checker, err)
	default:
		m.Verdict, m.Reason, m.AnomalyTypes = r.Verdict.String(), r.Reason, r.AnomalyTypes
		m.Anomalies = len(r.Anomalies)
		for _, n := range r.Truncated {
			m.Anomalies += n
		}
	}
	runtime.KeepAlive(h)
	return nil
}

func fileSize(path string) int64 {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return fi.Size()
	}
	return 0
}

// sampler tracks the peak live heap while a phase runs.
type sampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	peak int64
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func heapNow() int64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		return int64(s[0].Value.Uint64())
	}
	return 0
}

func newSampler() *sampler {
	s := &sampler{done: make(chan struct{}), peak: heapNow()}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		sm := []metrics.Sample{{Name: heapMetric}}
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-tk.C:
				metrics.Read(sm)
				if sm[0].Value.Kind() == metrics.KindUint64 {
					if v := int64(sm[0].Value.Uint64()); v > s.peak {
						s.peak = v
					}
				}
			}
		}
	}()
	return s
}

// stop ends sampling and returns the peak (including a final sample).
func (s *sampler) stop() int64 {
	close(s.done)
	s.wg.Wait()
	if v := heapNow(); v > s.peak {
		s.peak = v
	}
	return s.peak
}

func allocGC() (alloc, gcs uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		alloc = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		gcs = s[1].Value.Uint64()
	}
	return alloc, gcs
}

// procStatus returns a "Vm...:" field of /proc/self/status in bytes, or -1.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		rest, ok := bytes.CutPrefix(line, []byte(field+":"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			return -1
		}
		n, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return -1
		}
		if len(f) > 1 && string(f[1]) == "kB" {
			n *= 1024
		}
		return n
	}
	return -1
}

// peakRSS is the process's peak resident set size in bytes.
func peakRSS() int64 {
	if v := procStatus("VmHWM"); v >= 0 {
		return v
	}
	return maxRSS()
}

// rssNow is the current resident set size (0 when unknown).
func rssNow() int64 {
	if v := procStatus("VmRSS"); v >= 0 {
		return v
	}
	return 0
}
