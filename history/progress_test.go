package history_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/txray/txray/history"
	_ "github.com/txray/txray/history/jsonl"
)

// TestDecodeFileProgress: DecodeOptions.Progress sees the bytes read grow
// to the file's size, and does not change the decoded history.
func TestDecodeFileProgress(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"txray":1,"workload":"rw-register"}` + "\n")
	for i := 0; i < 20000; i++ {
		b.WriteString(`{"id":"t","status":"committed","ops":[{"f":"w","k":1,"v":` + strconv.Itoa(i+1) + `}]}` + "\n")
	}
	p := filepath.Join(t.TempDir(), "h.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var calls, last int64
	h, err := history.DecodeFile(p, "", history.DecodeOptions{Progress: func(n int64) {
		if n < last {
			t.Errorf("progress went back from %d to %d", last, n)
		}
		calls++
		last = n
	}})
	if err != nil {
		t.Fatal(err)
	}
	if last != int64(b.Len()) || calls == 0 {
		t.Errorf("progress ended at %d after %d calls, want %d", last, calls, b.Len())
	}
	plain, err := history.DecodeFile(p, "", history.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != 20000 || len(plain.Txns) != len(h.Txns) {
		t.Errorf("%d txns with progress, %d without, want 20000", len(h.Txns), len(plain.Txns))
	}
}
