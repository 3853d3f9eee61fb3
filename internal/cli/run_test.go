package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunDefaultIsValid: `txray run` with no database flags records on
// embedded SQLite at serializable and the history checks valid (exit 0).
func TestRunDefaultIsValid(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := Main([]string{"run", "--quiet", "--out", dir, "--txns", "300", "--seed", "5"}, &out, &errb)
	if code != ExitValid {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "VALID") {
		t.Fatalf("no verdict in output:\n%s", out.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 301 {
		t.Fatalf("history.jsonl has %d lines, want header + 300", n)
	}
	// The report is written next to the history (issue 7: `txray run --out
	// DIR` writes report.html too).
	for _, f := range []string{"report.html", "report.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written by txray run --out: %v", f, err)
		}
	}
	if !strings.Contains(out.String(), "report: "+filepath.Join(dir, "report.html")) {
		t.Errorf("run does not name the report:\n%s", out.String())
	}
}

func TestRunUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--level", "snapshot-ish"},
		{"run", "--workload", "nope"},
		{"run", "--clients", "0"},
		{"run", "--dist", "gauss", "--txns", "10"},
		{"run", "--db", "oracle://x"},
	} {
		var out, errb bytes.Buffer
		if code := Main(append(args, "--quiet", "--out", t.TempDir()), &out, &errb); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %s)", args, code, ExitUsage, errb.String())
		}
	}
}

func TestRunNoRecord(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"run", "--quiet", "--no-record", "--txns", "100"}, &out, &errb); code != ExitValid {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "ran 100 txns") || strings.Contains(out.String(), "history:") {
		t.Fatalf("output:\n%s", out.String())
	}
}
