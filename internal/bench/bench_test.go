package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/sim"
)

var (
	update  = flag.Bool("update", false, "rewrite golden files")
	simTxns = flag.Int("sim-txns", 20000, "transactions BenchmarkSimulate runs (e.g. -sim-txns=1000000)")
)

// childEnv makes the test binary act as the `txray bench --child` process
// when ChildProcess runs it.
const childEnv = "TXRAY_BENCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := ServeChild(context.Background(), os.Stdin, os.Stdout, Env{}); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// small is the issue-2 shape at test size.
func small(workload string) GenSpec {
	return GenSpec{Workload: workload, Level: sim.StrictSerializable, Clients: 10, Keys: 50, MinOps: 4, MaxOps: 4,
		Dist: sim.Uniform, ReadRatio: 0.5, Seed: 3}
}

func TestRunInProcessEveryApplicableChecker(t *testing.T) {
	cfg := Config{Sizes: []int{300, 600}, Gen: small(sim.ListAppend), Format: "jsonl", Checkers: "all"}
	rows, err := Run(context.Background(), cfg, InProcess(Env{}))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]map[string]bool{}
	for _, r := range rows {
		if r.Verdict != "valid" {
			t.Errorf("%d txns %s: verdict %s (%s); a strict-serializable simulation must pass", r.Txns, r.Checker, r.Verdict, r.Reason)
		}
		if r.Txns != 300 && r.Txns != 600 {
			t.Errorf("row with %d txns", r.Txns)
		}
		if r.Ops != 4*r.Txns {
			t.Errorf("%d txns: %d ops, want %d", r.Txns, r.Ops, 4*r.Txns)
		}
		if r.FileBytes <= 0 || r.DecodeSeconds <= 0 || r.CheckSeconds <= 0 || r.GenSeconds <= 0 {
			t.Errorf("row not measured: %+v", r)
		}
		if r.Model != "strict-serializable" || r.Format != "jsonl" {
			t.Errorf("model %q format %q", r.Model, r.Format)
		}
		if d := r.TotalSeconds - (r.DecodeSeconds + r.CheckSeconds); d > 1e-9 || d < -1e-9 {
			t.Errorf("total %v != decode %v + check %v", r.TotalSeconds, r.DecodeSeconds, r.CheckSeconds)
		}
		if seen[r.Txns] == nil {
			seen[r.Txns] = map[string]bool{}
		}
		seen[r.Txns][r.Checker] = true
	}
	// list-append and chronos (the simulator records timestamps) apply.
	for _, n := range []int{300, 600} {
		for _, c := range []string{"list-append", "chronos"} {
			if !seen[n][c] {
				t.Errorf("%d txns: no row for checker %s (rows %v)", n, c, seen[n])
			}
		}
	}
}

func TestRunChildProcess(t *testing.T) {
	t.Setenv(childEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	g := small(sim.RWRegister)
	g.Level = sim.SnapshotIsolation
	// The chronos format carries no level: the model must be given.
	cfg := Config{Sizes: []int{400}, Gen: g, Format: "chronos", Checkers: "auto", Model: "snapshot-isolation"}
	rows, err := Run(context.Background(), cfg, ChildProcess(exe))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1 (auto picks one checker)", len(rows))
	}
	r := rows[0]
	if r.Checker != "chronos" || r.Model != "snapshot-isolation" || r.Format != "chronos" || r.Verdict != "valid" {
		t.Errorf("row %+v: want chronos, snapshot-isolation, valid", r)
	}
	if runtime.GOOS == "linux" && (r.PeakRSS <= 0 || r.DecodePeakRSS <= 0 || r.GenPeakRSS <= 0) {
		t.Errorf("peak RSS not measured: %+v", r)
	}
}

func TestRunChildProcessReportsChildFailure(t *testing.T) {
	t.Setenv(childEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("{\"txray\":1}\n{\"id\":\"t1\",\"status\":\"bogus\",\"ops\":[]}\n"), 0o644)
	_, err = Run(context.Background(), Config{Files: []string{bad}, Format: "jsonl"}, ChildProcess(exe))
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl") {
		t.Fatalf("err = %v, want the decoder's error naming the file", err)
	}
}

// TestRunFileLostUpdateIsInvalid: a history with an injected lost update
// (sim.FaultLostUpdate at snapshot isolation: first-updater-wins skipped)
// violates SI's NoConflict axiom; bench must report the checker's verdict,
// not hide it.
func TestRunFileLostUpdateIsInvalid(t *testing.T) {
	cfg := sim.Config{Workload: sim.RWRegister, Level: sim.SnapshotIsolation, Txns: 400, Clients: 8, Keys: 4,
		MinOps: 2, MaxOps: 4, ReadRatio: 0.5, Seed: 5, Faults: []sim.Fault{{Name: sim.FaultLostUpdate, Prob: 1}}}
	h, truth, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if truth.FaultCounts[sim.FaultLostUpdate] == 0 {
		t.Skip("fault did not fire")
	}
	file := filepath.Join(t.TempDir(), "lost.jsonl")
	var buf bytes.Buffer
	if err := jsonl.Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, buf.Bytes(), 0o644)
	rows, err := Run(context.Background(), Config{Files: []string{file}, Checkers: "chronos", Model: "snapshot-isolation"}, InProcess(Env{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Verdict != "invalid" || rows[0].Anomalies == 0 || rows[0].GenSeconds != 0 {
		t.Fatalf("rows %+v: want one invalid chronos row with anomalies and no generation", rows)
	}
	if rows[0].Format != "jsonl" {
		t.Errorf("sniffed format %q, want jsonl", rows[0].Format)
	}
}

func TestKeepReusesGeneratedFile(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Sizes: []int{200}, Gen: small(sim.ListAppend), Format: "edn", Keep: dir}
	first, err := Run(context.Background(), cfg, InProcess(Env{}))
	if err != nil {
		t.Fatal(err)
	}
	second, err := Run(context.Background(), cfg, InProcess(Env{}))
	if err != nil {
		t.Fatal(err)
	}
	if first[0].GenReused || !second[0].GenReused {
		t.Errorf("reused: first %v second %v, want false then true", first[0].GenReused, second[0].GenReused)
	}
	if first[0].File != second[0].File || first[0].FileBytes != second[0].FileBytes || first[0].Format != "edn" {
		t.Errorf("files differ: %+v vs %+v", first[0], second[0])
	}
	// A different seed is a different file.
	cfg.Gen.Seed++
	third, err := Run(context.Background(), cfg, InProcess(Env{}))
	if err != nil {
		t.Fatal(err)
	}
	if third[0].GenReused || third[0].File == first[0].File {
		t.Errorf("seed change reused %s", third[0].File)
	}
}

func TestProfilesWritten(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Sizes: []int{200}, Gen: small(sim.ListAppend), Format: "jsonl", Checkers: "list-append", ProfileDir: dir}
	if _, err := Run(context.Background(), cfg, InProcess(Env{})); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"200txns-gen", "200txns-decode", "200txns-check-list-append"} {
		for _, k := range []string{".cpu.pprof", ".heap.pprof"} {
			if fi, err := os.Stat(filepath.Join(dir, p+k)); err != nil || fi.Size() == 0 {
				t.Errorf("profile %s%s: %v", p, k, err)
			}
		}
	}
}

func TestSelectCheckers(t *testing.T) {
	app := []string{"chronos", "list-append", "leopard"}
	for _, tc := range []struct {
		spec string
		want []string
	}{
		{"auto", []string{"chronos"}},
		{"", []string{"chronos"}},
		{"all", app},
		{"list-append, leopard", []string{"list-append", "leopard"}},
		{"rw-register", []string{"rw-register"}}, // named: measured even if not applicable
	} {
		got, err := selectCheckers(tc.spec, app)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("selectCheckers(%q) = %v, %v; want %v", tc.spec, got, err, tc.want)
		}
	}
	if got, _ := selectCheckers("auto", nil); len(got) != 0 {
		t.Errorf("auto with nothing applicable = %v", got)
	}
	if _, err := selectCheckers(" , ", app); err == nil {
		t.Error("empty list accepted")
	}
}

func TestNoApplicableCheckerIsUnknownRow(t *testing.T) {
	// rw-register history under a model chronos cannot judge and with
	// list-append inapplicable: only rw-register applies; ask for a model
	// nothing judges is not possible through Pick, so use a read-only
	// history: no checker applies.
	h := history.New()
	h.Header.Level = "serializable"
	k := h.Keys.Int(1)
	h.Add(history.Txn{Status: history.Committed, Ops: []history.Op{{Kind: history.Read, Key: k, Value: history.NoValue}}})
	file := filepath.Join(t.TempDir(), "ro.jsonl")
	var buf bytes.Buffer
	if err := jsonl.Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, buf.Bytes(), 0o644)
	rows, err := Run(context.Background(), Config{Files: []string{file}}, InProcess(Env{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Checker != "" || rows[0].Verdict != "unknown" || len(rows[0].NotApplicable) == 0 {
		t.Fatalf("rows %+v: want one unknown row listing why checkers do not apply", rows)
	}
}

func TestServeChildRejectsBadRequests(t *testing.T) {
	for _, in := range []string{"", "{", `{"phase":"nope"}`, `{"phase":"check","checker":"no-such"}`, `{"phase":"gen"}`, `{"bogus":1}`} {
		var out bytes.Buffer
		if err := ServeChild(context.Background(), strings.NewReader(in), &out, Env{}); err == nil {
			t.Errorf("request %q accepted: %s", in, out.String())
		}
	}
}

func TestWriteTableGolden(t *testing.T) {
	rows := []Row{
		{Txns: 100000, Format: "jsonl", FileBytes: 52_400_000, GenSeconds: 1.234, DecodeSeconds: 0.5, DecodeMBps: 104.8,
			Checker: "list-append", CheckSeconds: 1.5, CheckDecodeRatio: 3, TotalSeconds: 2, TxnsPerSec: 50000,
			PeakRSS: 512 << 20, Verdict: "valid"},
		{Txns: 100000, Format: "jsonl", FileBytes: 52_400_000, GenSeconds: 1.234, GenReused: true, DecodeSeconds: 0.5,
			DecodeMBps: 104.8, Checker: "chronos", CheckSeconds: 12.25, CheckDecodeRatio: 24.5, TotalSeconds: 12.75,
			TxnsPerSec: 7843, PeakRSS: 3 << 30, Verdict: "invalid", AnomalyTypes: []string{"ext", "noconflict"}},
		{Txns: 10, Format: "edn", FileBytes: 1000, DecodeSeconds: 0.001, DecodeMBps: 1, Verdict: "unknown",
			Reason: "no checker applies under serializable"},
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, rows); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "table.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, buf.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if buf.String() != string(want) {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := WriteJSON(&buf, rows); err != nil {
		t.Fatal(err)
	}
	var back Row
	line, _, _ := strings.Cut(buf.String(), "\n")
	if err := json.Unmarshal([]byte(line), &back); err != nil || !reflect.DeepEqual(back, rows[0]) {
		t.Errorf("JSON round trip: %+v, %v", back, err)
	}
}

func TestProcStatus(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux /proc")
	}
	if hwm, rss := procStatus("VmHWM"), procStatus("VmRSS"); hwm <= 0 || rss <= 0 || hwm < rss {
		t.Errorf("VmHWM %d VmRSS %d", hwm, rss)
	}
	if procStatus("NoSuchField") != -1 {
		t.Error("missing field found")
	}
}

// --- benchmarks (modest sizes; `txray bench` does the big ones) ---

// benchFile generates the input of a benchmark (not timed).
func benchFile(b *testing.B, g GenSpec, format string) string {
	b.Helper()
	in, err := generate(context.Background(), InProcess(Env{}), g, format, b.TempDir(), false, "", "")
	if err != nil {
		b.Fatal(err)
	}
	return in.file
}

// pipeline decodes file and runs checker under model per iteration, and
// reports decode and check seconds and transactions per second.
func pipeline(b *testing.B, file, checker, model string) {
	c, ok := check.Lookup(checker)
	if !ok {
		b.Fatalf("no checker %s", checker)
	}
	var dec, chk float64
	txns := 0
	for b.Loop() {
		var h *history.History
		dp, err := timed("", "", func() error {
			var err error
			h, err = decode(file, "")
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		txns = len(h.Txns)
		var r *check.Result
		cp, err := timed("", "", func() error {
			var err error
			r, err = c.Check(context.Background(), h, check.Options{Model: model})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if r.Verdict != check.Valid {
			b.Fatalf("%s: %v %s %v", checker, r.Verdict, r.Reason, r.AnomalyTypes)
		}
		dec += dp.seconds
		chk += cp.seconds
	}
	b.ReportMetric(dec/float64(b.N), "decode-s/op")
	b.ReportMetric(chk/float64(b.N), "check-s/op")
	b.ReportMetric(float64(txns)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
}

// BenchmarkPipelineListAppend20k: issue-2 shape (4 micro-ops, 100 clients,
// 10k keys, uniform) at 20,000 transactions, decode + list-append check
// under strict-serializable.
func BenchmarkPipelineListAppend20k(b *testing.B) {
	g := GenSpec{Workload: sim.ListAppend, Level: sim.StrictSerializable, Txns: 20000, Clients: 100, Keys: 10000,
		MinOps: 4, MaxOps: 4, Dist: sim.Uniform, ReadRatio: 0.5, Seed: 1}
	pipeline(b, benchFile(b, g, "jsonl"), "list-append", "strict-serializable")
}

// BenchmarkPipelineChronos20k: issue-4 shape (15 ops, 50 sessions, 1,000
// keys, zipfian, 50% reads, snapshot isolation) at 20,000 transactions in
// the chronos format, decode + chronos SI check.
func BenchmarkPipelineChronos20k(b *testing.B) {
	g := GenSpec{Workload: sim.RWRegister, Level: sim.SnapshotIsolation, Txns: 20000, Clients: 50, Keys: 1000,
		MinOps: 15, MaxOps: 15, Dist: sim.Zipfian, ReadRatio: 0.5, Seed: 1}
	pipeline(b, benchFile(b, g, "chronos"), "chronos", "snapshot-isolation")
}

// BenchmarkPipelineRWRegisterElle20k: the issue-4 history checked by Elle's
// rw-register inference instead of timestamps (for comparison).
func BenchmarkPipelineRWRegisterElle20k(b *testing.B) {
	g := GenSpec{Workload: sim.RWRegister, Level: sim.SnapshotIsolation, Txns: 20000, Clients: 50, Keys: 1000,
		MinOps: 15, MaxOps: 15, Dist: sim.Zipfian, ReadRatio: 0.5, Seed: 1}
	pipeline(b, benchFile(b, g, "chronos"), "rw-register", "snapshot-isolation")
}

// BenchmarkSimulate: the simulator alone (no encoding), issue-2 shape,
// -sim-txns transactions (default 20,000).
func BenchmarkSimulate(b *testing.B) {
	cfg := sim.Config{Workload: sim.ListAppend, Txns: *simTxns, Clients: 100, Keys: 10000, MinOps: 4, MaxOps: 4, ReadRatio: 0.5, Seed: 1}
	for b.Loop() {
		if _, err := sim.Each(cfg, func(*history.History, *history.Txn) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cfg.Txns)*float64(b.N)/b.Elapsed().Seconds(), "txns/s")
}
