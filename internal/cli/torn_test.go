package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckReadsTornLastLineWithNotice: `txray check` reads a recorded
// history whose last line was cut off (a crash prefix, as docs/history-format.md
// promises) and says on stderr which line it dropped; a cut mid-file stays
// an input error (exit 2).
func TestCheckReadsTornLastLineWithNotice(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	// One client: lines are in commit order, so the prefix without the last
	// transaction is itself valid (with several clients a reader's line can
	// precede the line of the writer it read, the crash-prefix limitation
	// docs/recorder.md describes).
	if code := Main([]string{"run", "--quiet", "--clients", "1", "--out", dir, "--txns", "40", "--seed", "9"}, &out, &errb); code != ExitValid {
		t.Fatalf("run: exit %d: %s", code, errb.String())
	}
	full, err := os.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(dir, "torn.jsonl")
	if err := os.WriteFile(torn, full[:len(full)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	code := Main([]string{"check", torn}, &out, &errb)
	if code != ExitValid {
		t.Fatalf("check of a torn history: exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "notice: "+torn+": line 41 is torn") || !strings.Contains(out.String(), "history: 39 txns") {
		t.Errorf("want a notice naming line 41 and 39 txns read\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	lines := bytes.SplitAfter(full, []byte("\n"))
	mid := append(append(append([]byte{}, bytes.Join(lines[:10], nil)...), lines[10][:15]...), bytes.Join(lines[11:], nil)...)
	bad := filepath.Join(dir, "mid.jsonl")
	if err := os.WriteFile(bad, mid, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := Main([]string{"check", bad}, &out, &errb); code != ExitUsage || !strings.Contains(out.String()+errb.String(), bad+":11") {
		t.Errorf("a line cut mid-file: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 2 naming line 11", code, out.String(), errb.String())
	}
}
