package cli

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/txray/txray/internal/bench"
)

func TestParseSizes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{"10000,100000", []int{10000, 100000}, false},
		{"10k, 1m ,1_000", []int{10000, 1000000, 1000}, false},
		{"5K,2M", []int{5000, 2000000}, false},
		{"", nil, true},
		{"0", nil, true},
		{"-5", nil, true},
		{"1x", nil, true},
		{"99999999m", nil, true},
	} {
		got, err := parseSizes(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("parseSizes(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

// TestBenchJSONRows: `txray bench --json` prints one measured row per
// applicable checker; the generated strict-serializable history is valid.
func TestBenchJSONRows(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"bench", "--in-process", "--json", "--txns", "300", "--clients", "5", "--keys", "20",
		"--checker", "all"}, &out, &errb)
	if code != ExitValid {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("want rows for list-append and chronos at least, got:\n%s", out.String())
	}
	for _, l := range lines {
		var r bench.Row
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if r.Txns != 300 || r.Verdict != "valid" || r.CheckSeconds <= 0 || r.Model != "strict-serializable" {
			t.Errorf("row %+v", r)
		}
	}
}

func TestBenchTable(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"bench", "--in-process", "--quiet", "--txns", "200", "--clients", "4", "--keys", "10",
		"--workload", "rw-register", "--format", "edn", "--checker", "rw-register"}, &out, &errb)
	if code != ExitValid {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"load average", "check/decode", "rw-register", "edn", "valid"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--txns", "zero"},
		{"bench", "--format", "polysi"},
		{"bench", "--checker", "no-such-checker"},
		{"bench", "--model", "sorta-serializable"},
		{"bench", "--ops", "0"},
		{"bench", "--level", "snapshot-ish"},
		{"bench", "--file", "/no/such/file"},
		{"bench", "--max-writes-per-key", "0"},
	} {
		var out, errb bytes.Buffer
		if code := Main(append(args, "--in-process", "--quiet"), &out, &errb); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %s)", args, code, ExitUsage, errb.String())
		}
	}
}

// TestBenchChildMode: the hidden --child mode measures one request from
// stdin and prints the measurement.
func TestBenchChildMode(t *testing.T) {
	dir := t.TempDir()
	req, _ := json.Marshal(bench.Request{Phase: bench.PhaseGen, Out: dir + "/h.jsonl", Format: "jsonl",
		Gen: &bench.GenSpec{Workload: "list-append", Txns: 50, Clients: 3, Keys: 5, MinOps: 1, MaxOps: 3, ReadRatio: 0.5, Seed: 1}})
	var out, errb bytes.Buffer
	root := NewRoot(&out, &errb)
	root.SetIn(bytes.NewReader(req))
	root.SetArgs([]string{"bench", "--child"})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var m bench.Measurement
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if m.Phase != bench.PhaseGen || m.Stats.Txns != 50 || m.FileBytes == 0 {
		t.Errorf("measurement %+v", m)
	}
	root = NewRoot(&out, &errb)
	root.SetIn(strings.NewReader("{not json"))
	root.SetArgs([]string{"bench", "--child"})
	if err := root.Execute(); err == nil {
		t.Error("bad request accepted")
	}
}

// FuzzParseSizes: --txns parsing never panics and yields only positive
// counts.
func FuzzParseSizes(f *testing.F) {
	for _, s := range []string{"10000,100000,1000000", "1k,2m", "", ",", "9999999999m", "-1", "1_0k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := parseSizes(s)
		if err != nil {
			return
		}
		if len(ns) == 0 {
			t.Fatalf("%q: no sizes and no error", s)
		}
		for _, n := range ns {
			if n < 1 {
				t.Fatalf("%q: size %d", s, n)
			}
		}
	})
}
