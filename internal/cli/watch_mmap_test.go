//go:build linux || darwin || freebsd

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/txray/txray/check/aion"
)

// mappedHistory is a register history of n transactions (sequential
// timestamps, 40 keys) with a stale read every 997th transaction, a bad
// line at line 1500 and one transaction of 12,000 ops (a line longer than
// readBlock), as native JSON Lines with a header.
func mappedHistory(n int) string {
	var b strings.Builder
	b.WriteString(`{"txray":1}` + "\n")
	last := map[int]int{}
	for i := 1; i <= n; i++ {
		if i == 1500 {
			b.WriteString(`{"id":"bad","status":"committed","ops":[{"f":"q"}]}` + "\n")
		}
		rk, wk := (i*7)%40, i%40
		rv := "null"
		if v, ok := last[rk]; ok {
			rv = fmt.Sprint(v)
		}
		if i%997 == 0 && rv != "null" {
			rv = fmt.Sprint(last[rk] - 1) // stale
		}
		fmt.Fprintf(&b, `{"id":"t%d","session":"s%d","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[{"f":"r","k":%d,"v":%s},{"f":"w","k":%d,"v":%d}]}`,
			i, i%5, 10*i, 10*i+5, rk, rv, wk, i)
		b.WriteString("\n")
		last[wk] = i
		if i == n/2 {
			fmt.Fprintf(&b, `{"id":"big","session":"big","status":"committed","start_ts":%d,"commit_ts":%d,"ops":[`, 10*i+6, 10*i+7)
			for j := range 12000 {
				if j > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `{"f":"w","k":%d,"v":%d}`, 1000+j, j)
			}
			b.WriteString("]}\n")
		}
	}
	return b.String()
}

// runWatchFile runs watch --json with stdin the file at path, positioned
// at off.
func runWatchFile(t *testing.T, path string, off int64) (int, string, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	root := NewRoot(&out, &errb)
	root.SetIn(f)
	root.SetArgs([]string{"watch", "--json", "--max-anomalies", "0"})
	err = root.Execute()
	code := ExitValid
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	} else if err != nil {
		code = ExitUsage
	}
	return code, out.String(), errb.String()
}

// comparable drops the timing fields of a watch --json output.
func comparableWatch(t *testing.T, out string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	delete(m, "elapsed_ms")
	for _, s := range []any{m["stats"], m["results"]} {
		switch s := s.(type) {
		case map[string]any:
			delete(s, "seconds")
			delete(s, "txns_per_second")
		case []any:
			for _, r := range s {
				if r, ok := r.(map[string]any); ok {
					delete(r, "elapsed_ms")
					if st, ok := r["stats"].(map[string]any); ok {
						delete(st, "seconds")
						delete(st, "txns_per_second")
					}
				}
			}
		}
	}
	return m
}

// TestWatchMappedInputAgreesWithRead: stdin redirected from a regular file
// is read through a mapping (mapInput); the verdict, anomalies, statistics,
// exit code and the bad line's message with its line number are those of
// the same bytes read from a pipe, whether the file is read from its start
// or from an offset inside a page (after the header line), and whether
// its last line ends with a newline or not; a line longer than a batch is
// kept whole.
func TestWatchMappedInputAgreesWithRead(t *testing.T) {
	defer func(v int64) { mapMin = v }(mapMin)
	mapMin = 1
	h := mappedHistory(6000)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data string
		off  int
	}{
		{"whole", h, 0},
		{"after-header", h, strings.IndexByte(h, '\n') + 1},
		{"no-final-newline", strings.TrimSuffix(h, "\n"), 0},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if m := func() *inputMap {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m := mapInput(f)
			if m != nil {
				m.close()
			}
			return m
		}(); m == nil {
			t.Fatalf("%s: the file was not mapped", tc.name)
		}
		wantCode, wantOut, wantErr := runWatch(t, tc.data[tc.off:], "--json", "--max-anomalies", "0")
		code, out, errs := runWatchFile(t, path, int64(tc.off))
		if code != wantCode || errs != wantErr {
			t.Fatalf("%s: exit %d, stderr %q; read from a pipe: exit %d, stderr %q", tc.name, code, errs, wantCode, wantErr)
		}
		if !strings.Contains(errs, ":1501:") && tc.off == 0 { // the header is line 1
			t.Fatalf("%s: the bad line's number is missing: %q", tc.name, errs)
		}
		got, want := comparableWatch(t, out), comparableWatch(t, wantOut)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: mapped input gives\n%s\nread input gives\n%s", tc.name, out, wantOut)
		}
		if r := parseWatch(t, out); r.Valid != false || r.Stats["txns"] != float64(6001) {
			t.Fatalf("%s: want invalid over 6001 transactions: %s", tc.name, out)
		}
	}
}

// TestWatchMappedInputTruncatedIsReadError: a mapped input file truncated
// while it is being read ends the stream with a read error (the verdict
// covers what was decoded before), never a crash (SIGBUS).
func TestWatchMappedInputTruncatedIsReadError(t *testing.T) {
	defer func(v int64) { mapMin = v }(mapMin)
	mapMin = 1
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := os.WriteFile(path, []byte(mappedHistory(3000)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := mapInput(f)
	if m == nil {
		t.Fatal("the file was not mapped")
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	w := &watcher{c: aion.New(aion.Config{FinalAfter: time.Second}), stderr: io.Discard}
	w.rej.out = io.Discard
	err = w.consumeIn(context.Background(), f, m, "h.jsonl")
	if !errors.Is(err, errInputFault) {
		t.Fatalf("consume of a truncated mapped file: %v, want %v", err, errInputFault)
	}
}
