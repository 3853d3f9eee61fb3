package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/internal/findings"
	"github.com/txray/txray/internal/testenv"
	"github.com/txray/txray/record/db"
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

// TestRunPostgresBars runs the acceptance commands against the
// PostgreSQL server on the machine (TXRAY_PG_URL overrides the address):
// read committed list-append under contention exits 1 with anomalies
// serializable forbids, and the same at serializable exits 0.
func TestRunPostgresBars(t *testing.T) {
	u := os.Getenv("TXRAY_PG_URL")
	if u == "" {
		u = "postgres://postgres@127.0.0.1:5432/test"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	d, err := db.Open(ctx, u, db.Options{Level: db.Serializable})
	cancel()
	if err != nil {
		testenv.Missing(t, "PostgreSQL not reachable at %s (%v)", u, err)
	}
	d.Close()
	for _, tc := range []struct {
		level string
		code  int
	}{{"read-committed", ExitInvalid}, {"serializable", ExitValid}} {
		t.Run(tc.level, func(t *testing.T) {
			var out, errb bytes.Buffer
			dir := t.TempDir()
			code := Main([]string{"run", "--db", u, "--level", tc.level, "--workload", "list-append",
				"--clients", "8", "--keys", "5", "--txns", "2000", "--quiet", "--out", dir}, &out, &errb)
			if code == ExitInvalid && tc.code == ExitValid {
				// PostgreSQL 15's SERIALIZABLE sometimes commits a G2-item
				// itself (docs/findings.md); that true finding, confirmed by
				// an independent checker, is not what this test is about.
				ok, why := pgSSIRace(t, filepath.Join(dir, "history.jsonl"))
				if ok {
					t.Log(why)
					return
				}
				t.Logf("not PostgreSQL's SSI race: %s", why)
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out.String(), errb.String())
			}
			if tc.code == ExitInvalid && !strings.Contains(out.String(), "G2-item") && !strings.Contains(out.String(), "G-single") &&
				!strings.Contains(out.String(), "lost-update") {
				t.Fatalf("no serializability anomaly named:\n%s", out.String())
			}
		})
	}
}

// pgSSIRace checks the recorded history at path with list-append under
// serializable and asks findings.PostgresSSIRace whether the invalid
// verdict is PostgreSQL's own SSI race.
func pgSSIRace(t *testing.T, path string) (bool, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := jsonl.Decode(f, history.DecodeOptions{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := check.Lookup("list-append")
	if !ok {
		t.Fatal("list-append is not registered")
	}
	r, err := c.Check(context.Background(), h, check.Options{Model: "serializable"})
	if err != nil {
		t.Fatal(err)
	}
	return findings.PostgresSSIRace(context.Background(), h, r)
}
