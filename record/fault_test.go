package record

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
)

// failAfter passes the first n bytes to w, then fails as a full disk does:
// the write that crosses n is short.
type failAfter struct {
	w io.Writer
	n int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, syscall.ENOSPC
	}
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, syscall.ENOSPC
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// TestHistoryWriteFailureStopsRunAtOnce: when the history file cannot be
// written (disk full after 20 KB), the run stops issuing transactions at
// once instead of running to its end, Run says so in a WriteError naming
// the file, and the file is readable up to its torn last line.
func TestHistoryWriteFailureStopsRunAtOnce(t *testing.T) {
	const limit = 20 << 10
	cfg := Config{Workload: "list-append", Clients: 4, Duration: 5 * time.Minute, Seed: 7, Out: t.TempDir(),
		wrapHistory: func(w io.Writer) io.Writer { return &failAfter{w: w, n: limit} }}
	cfg.WL.Keys, cfg.WL.Ops, cfg.WL.ReadRatio = 10, 4, 0.5
	res, err := Run(context.Background(), cfg)
	var we *WriteError
	if !errors.As(err, &we) {
		t.Fatalf("Run = %v, want a *WriteError", err)
	}
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), res.Path) || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("message does not name the file, the cause and the stop: %v", err)
	}
	if res.Stats.Elapsed >= cfg.Duration/2 {
		t.Fatalf("the run went on for %v after the write failure", res.Stats.Elapsed)
	}
	if res.History != nil {
		t.Errorf("a failed run returned a history to check")
	}
	f, err := os.Open(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	if st.Size() != limit {
		t.Fatalf("file has %d bytes, want the %d the disk took", st.Size(), limit)
	}
	h, err := jsonl.Decode(f, history.DecodeOptions{Name: res.Path})
	if err != nil {
		t.Fatalf("the history left by the failed run is not readable: %v", err)
	}
	if len(h.Txns) == 0 || int64(len(h.Txns)) > we.Written {
		t.Errorf("file holds %d transactions, want 1..%d", len(h.Txns), we.Written)
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, limit-1); err != nil {
		t.Fatal(err)
	}
	if last[0] == '\n' {
		// the disk filled exactly at a line end: no line is torn
		if len(h.Ignored) != 0 {
			t.Errorf("ignored %v on a history that ends at a line end", h.Ignored)
		}
	} else if h.Ignored[jsonl.TornReason] != 1 || len(h.Notes) != 1 || !strings.Contains(h.Notes[0], "torn") {
		t.Errorf("ignored %v, notes %q: want the torn last line counted and named", h.Ignored, h.Notes)
	}
}

// TestHistoryUnwritableFromStartFails: a history file that takes no byte
// (/dev/full) ends the run before any transaction, with a WriteError.
func TestHistoryUnwritableFromStartFails(t *testing.T) {
	cfg := Config{Workload: "list-append", Clients: 2, Txns: 50, Seed: 7, Out: t.TempDir(),
		wrapHistory: func(w io.Writer) io.Writer { return &failAfter{w: w, n: 0} }}
	res, err := Run(context.Background(), cfg)
	var we *WriteError
	if !errors.As(err, &we) || res == nil || res.Stats.Txns != 0 {
		t.Fatalf("Run = %v (res %+v), want a WriteError before any transaction", err, res)
	}
	if !strings.Contains(err.Error(), "did not start") {
		t.Errorf("message: %v", err)
	}
}

// TestRunAgainstSilentServerTimesOut: `txray run` against a server that
// accepts connections and never answers ends with a timeout error (and no
// password in it) instead of hanging, for PostgreSQL and MySQL URLs.
func TestRunAgainstSilentServerTimesOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	for _, u := range []string{"postgres://u:s3cret@" + l.Addr().String() + "/db", "mysql://u:s3cret@" + l.Addr().String() + "/db"} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // the test's own safety net
		_, err := Run(ctx, Config{DB: u, Txns: 10, Out: t.TempDir(), ConnectTimeout: 200 * time.Millisecond, StatementTimeout: 200 * time.Millisecond})
		safety := ctx.Err()
		cancel()
		if err == nil || safety != nil {
			t.Fatalf("%s: Run = %v (safety net fired: %v)", u[:5], err, safety)
		}
		if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("%s: error %v: want a timeout named and no password", u[:5], err)
		}
	}
}
