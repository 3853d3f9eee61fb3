package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txray/txray/history"
	"github.com/txray/txray/history/edn"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/history/timekiller"
	"github.com/txray/txray/sim"
)

func genMain(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestGenJSONL(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "h.jsonl")
	code, _, stderr := genMain("gen", "-n", "200", "--clients", "4", "--level", "snapshot-isolation",
		"--workload", "rw-register", "--fault", "lost-update:0.5", "--ops", "2-5", "--seed", "9", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "lost-update fired") {
		t.Errorf("summary does not mention the fault: %q", stderr)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := jsonl.Decode(f, history.DecodeOptions{Name: p})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != 200 || h.Header.Level != "snapshot-isolation" || h.Header.Workload != "rw-register" {
		t.Fatalf("got %d txns, header %+v", len(h.Txns), h.Header)
	}
	if _, ok := h.Header.Extra["fault.lost-update"]; !ok {
		t.Errorf("header extra lacks the fault count: %v", h.Header.Extra)
	}
	for i := range h.Txns {
		if n := len(h.Txns[i].Ops); n < 2 || n > 5 {
			t.Fatalf("txn %d has %d ops, want 2-5", i, n)
		}
	}
	if !h.Evidence.VersionOrder || !h.Evidence.Timestamps || len(h.VersionOrder) == 0 {
		t.Errorf("evidence %+v, %d version orders", h.Evidence, len(h.VersionOrder))
	}
	// Same seed to stdout: same bytes.
	_, out1, _ := genMain("gen", "-n", "200", "--clients", "4", "--level", "snapshot-isolation",
		"--workload", "rw-register", "--fault", "lost-update:0.5", "--ops", "2-5", "--seed", "9", "-q")
	want, _ := os.ReadFile(p)
	if out1 != string(want) {
		t.Errorf("stdout output differs from the file written with the same seed")
	}
}

func TestGenOtherFormats(t *testing.T) {
	for _, fm := range []string{"edn", "chronos"} {
		code, out, stderr := genMain("gen", "-n", "50", "-f", fm, "-q")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", fm, code, stderr)
		}
		var h *history.History
		var err error
		if fm == "edn" {
			h, err = edn.Decode(strings.NewReader(out), history.DecodeOptions{Name: fm, Workload: "list-append"})
		} else {
			h, err = timekiller.Decode(strings.NewReader(out), history.DecodeOptions{Name: fm, Workload: "list-append"})
		}
		if err != nil {
			t.Fatalf("%s: %v", fm, err)
		}
		if len(h.Txns) != 50 {
			t.Errorf("%s: %d txns decoded, want 50", fm, len(h.Txns))
		}
	}
}

func TestGenUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"gen", "--level", "bogus"},
		{"gen", "--workload", "bank"},
		{"gen", "--fault", "nope"},
		{"gen", "--fault", "stale-read:2"},
		{"gen", "--ops", "5-2"},
		{"gen", "--ops", "x"},
		{"gen", "--format", "xml"},
		{"gen", "--dist", "pareto"},
		{"gen", "--txns", "0"},
		{"gen", "--read-ratio", "1.5"},
		{"gen", "extra-arg"},
	} {
		if code, _, _ := genMain(args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
}

// TestGenLevelsDeclareKnownModels: the level each simulated history declares
// in its header is a model or DBMS profile `txray check` understands.
func TestGenLevelsDeclareKnownModels(t *testing.T) {
	for _, l := range sim.Levels() {
		if _, err := canonicalModel(l.Model); err != nil {
			t.Errorf("%s declares %q: %v", l.Name, l.Model, err)
		}
	}
}
