package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func runWatch(t *testing.T, in string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	root := NewRoot(&out, &errb)
	root.SetIn(strings.NewReader(in))
	root.SetArgs(append([]string{"watch"}, args...))
	err := root.Execute()
	code := ExitValid
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	} else if err != nil {
		code = ExitUsage
	}
	return code, out.String(), errb.String()
}

// TestWatchStdin: the Chronos paper's Fig. 15 (T3 reads x=1 after T2
// overwrote it, all sequential by timestamps) arriving out of order on stdin
// is invalid under SI (exit 1); the same without the stale read is valid
// (exit 0); a malformed line is an input error (exit 2).
func TestWatchStdin(t *testing.T) {
	fig15 := `{"txray":1}
{"id":"T3","session":"c","status":"committed","start_ts":5,"commit_ts":6,"ops":[{"f":"r","k":"x","v":1}]}
{"id":"T1","session":"a","status":"committed","start_ts":1,"commit_ts":2,"ops":[{"f":"w","k":"x","v":1}]}
{"id":"T2","session":"b","status":"committed","start_ts":3,"commit_ts":4,"ops":[{"f":"w","k":"x","v":2}]}
`
	code, out, _ := runWatch(t, fig15, "--json")
	if code != ExitInvalid {
		t.Fatalf("exit %d, output %s", code, out)
	}
	var res struct {
		Valid        any      `json:"valid"`
		AnomalyTypes []string `json:"anomaly_types"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Valid != false || len(res.AnomalyTypes) != 1 || res.AnomalyTypes[0] != "ext" {
		t.Fatalf("%v %s", err, out)
	}
	valid := strings.Replace(fig15, `"v":1}]}`+"\n"+`{"id":"T1"`, `"v":2}]}`+"\n"+`{"id":"T1"`, 1)
	if code, out, _ := runWatch(t, valid); code != ExitValid {
		t.Fatalf("valid: exit %d %s", code, out)
	}
	code, _, errs := runWatch(t, fig15+"{\"id\":\"T4\",\"status\":\"committed\",\"ops\":[{\"f\":\"q\"}]}\n")
	if code != ExitUsage || !strings.Contains(errs, "<stdin>:5") {
		t.Fatalf("bad line: exit %d, stderr %s", code, errs)
	}
	if code, _, _ := runWatch(t, "", "--model", "read-committed"); code != ExitUsage {
		t.Fatalf("unsupported model: exit %d", code)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// watchResult is the part of `watch --json` output the tests look at.
type watchResult struct {
	Valid        any            `json:"valid"`
	AnomalyTypes []string       `json:"anomaly_types"`
	Stats        map[string]any `json:"stats"`
}

func parseWatch(t *testing.T, out string) watchResult {
	t.Helper()
	var r watchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	return r
}

const (
	fig15T1 = `{"id":"T1","session":"a","status":"committed","start_ts":1,"commit_ts":2,"ops":[{"f":"w","k":"x","v":1}]}`
	fig15T2 = `{"id":"T2","session":"b","status":"committed","start_ts":3,"commit_ts":4,"ops":[{"f":"w","k":"x","v":2}]}`
	fig15T3 = `{"id":"T3","session":"c","status":"committed","start_ts":5,"commit_ts":6,"ops":[{"f":"r","k":"x","v":1}]}`
)

// TestWatchSIGINT: a real SIGINT while stdin is still open ends the watch
// with the final verdict over everything received (Fig. 15: invalid, 3
// transactions), not an error.
func TestWatchSIGINT(t *testing.T) {
	pr, pw := io.Pipe()
	var out, errb syncBuffer
	root := NewRoot(&out, &errb)
	root.SetIn(pr)
	root.SetArgs([]string{"watch", "--json", "--tick", "10ms"})
	done := make(chan error, 1)
	go func() { done <- root.Execute() }()
	// Each Write returns once the watcher has read it, so by then the
	// watcher runs and its SIGINT handler is installed.
	for _, l := range []string{fig15T3, fig15T1, fig15T2} {
		if _, err := io.WriteString(pw, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop on SIGINT")
	}
	pw.Close()
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitInvalid {
		t.Fatalf("exit %v, want %d; stderr %s", err, ExitInvalid, errb.String())
	}
	r := parseWatch(t, out.String())
	if r.Valid != false || strings.Join(r.AnomalyTypes, ",") != "ext" || r.Stats["txns"] != float64(3) {
		t.Fatalf("%+v", r)
	}
	if strings.Contains(errb.String(), "input error") {
		t.Fatalf("SIGINT reported as an input error: %s", errb.String())
	}
}

// TestWatchFollow: --follow reads a file while it is appended to (the stale
// read arrives in a later append), and cancellation (as on SIGINT) gives
// the final verdict over all of it.
func TestWatchFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := os.WriteFile(path, []byte(`{"txray":1}`+"\n"+fig15T1+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	root := NewRoot(&out, &errb)
	root.SetArgs([]string{"watch", "--json", "--follow", path, "--tick", "10ms"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range []string{fig15T2, fig15T3} {
		time.Sleep(250 * time.Millisecond) // the reader is at EOF, polling
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	cancel()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("watch --follow did not stop on cancellation")
	}
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitInvalid {
		t.Fatalf("exit %v, want %d; stderr %s", err, ExitInvalid, errb.String())
	}
	if r := parseWatch(t, out.String()); r.Stats["txns"] != float64(3) || strings.Join(r.AnomalyTypes, ",") != "ext" {
		t.Fatalf("%+v", r)
	}
}

// TestWatchHTTP: transactions POSTed as a JSON array and as JSON Lines are
// checked together, GET /status reports them, a bad POST is refused with
// 400 naming the problem, and shutdown gives the final verdict.
func TestWatchHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	root := NewRoot(&out, &errb)
	root.SetArgs([]string{"watch", "--json", "--http", "127.0.0.1:0", "--tick", "10ms"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == ""; {
		if time.Now().After(deadline) {
			t.Fatalf("no listening address: %s", errb.String())
		}
		if _, a, ok := strings.Cut(errb.String(), "listening on "); ok {
			addr = strings.TrimSpace(a)
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	post := func(body string) (int, string) {
		resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("[" + fig15T3 + "," + fig15T2 + "]"); code != http.StatusOK || !strings.Contains(body, `"accepted":2`) {
		t.Fatalf("array POST: %d %s", code, body)
	}
	if code, body := post(fig15T1 + "\n"); code != http.StatusOK || !strings.Contains(body, `"accepted":1`) {
		t.Fatalf("JSON Lines POST: %d %s", code, body)
	}
	if code, body := post(`{"id":"T4","status":"committed","ops":[{"f":"q"}]}` + "\n"); code != http.StatusBadRequest || !strings.Contains(body, "accepted 0") {
		t.Fatalf("bad POST: %d %s", code, body)
	}
	resp, err := http.Get("http://" + addr + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Txns int `json:"txns"`
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || st.Txns != 3 {
		t.Fatalf("status: %v %+v", err, st)
	}
	cancel()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("watch --http did not stop on cancellation")
	}
	// The refused POST is counted and reflected in the exit code; the
	// verdict over what was accepted is still printed.
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitUsage {
		t.Fatalf("exit %v, want %d; stderr %s", err, ExitUsage, errb.String())
	}
	if r := parseWatch(t, out.String()); r.Valid != false || r.Stats["txns"] != float64(3) || strings.Join(r.AnomalyTypes, ",") != "ext" || r.Stats["rejected_records"] != float64(1) {
		t.Fatalf("%+v", r)
	}
}

// TestWatchBlocksCutAtLines: consume reads blocks of input and cuts them
// after the last complete line; lines split across reads of any size
// (one byte at a time, or half the block), a line longer than the read
// block, and a last line without a newline are all decoded whole, and bad
// lines are reported with their own line numbers.
func TestWatchBlocksCutAtLines(t *testing.T) {
	var long strings.Builder
	long.WriteString(`{"id":"L","session":"d","status":"committed","start_ts":7,"commit_ts":8,"ops":[`)
	for i := 0; long.Len() < 3*readBlock; i++ {
		if i > 0 {
			long.WriteByte(',')
		}
		long.WriteString(`{"f":"r","k":"y","v":null}`)
	}
	long.WriteString("]}")
	in := fig15T1 + "\n" + "{bad\n" + fig15T2 + "\n" + long.String() + "\n" + "{\"id\":\"Q\"}\n" + fig15T3
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"whole":   func(r io.Reader) io.Reader { return r },
		"onebyte": func(r io.Reader) io.Reader { return &smallReads{r: r, n: 1} },
		"odd":     func(r io.Reader) io.Reader { return &smallReads{r: r, n: readBlock/2 + 7} },
	} {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			root := NewRoot(&out, &errb)
			root.SetIn(wrap(strings.NewReader(in)))
			root.SetArgs([]string{"watch", "--json"})
			root.Execute()
			r := parseWatch(t, out.String())
			if r.Stats["txns_accepted"] != float64(4) || r.Stats["rejected_records"] != float64(2) {
				t.Fatalf("stats %v", r.Stats)
			}
			if r.Valid != false || len(r.AnomalyTypes) != 1 || r.AnomalyTypes[0] != "ext" {
				t.Fatalf("verdict %v %v (T3's stale read of x)", r.Valid, r.AnomalyTypes)
			}
			if !strings.Contains(errb.String(), "<stdin>:2") || !strings.Contains(errb.String(), "<stdin>:5") {
				t.Fatalf("bad lines 2 and 5 not named: %s", errb.String())
			}
		})
	}
}

// smallReads returns at most n bytes per Read.
type smallReads struct {
	r io.Reader
	n int
}

func (s *smallReads) Read(p []byte) (int, error) {
	if len(p) > s.n {
		p = p[:s.n]
	}
	return s.r.Read(p)
}
