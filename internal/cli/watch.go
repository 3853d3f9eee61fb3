package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/aion"
	"github.com/txray/txray/check/chronos"
)

func init() { register(newWatchCmd) }

func newWatchCmd() *cobra.Command {
	var (
		follow     string
		httpAddr   string
		model      string
		initial    string
		finalAfter time.Duration
		tick       time.Duration
		asJSON     bool
		maxPerType int
		memLimit   int64
		checker    string
	)
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "check a live stream of transactions with DB timestamps (online, Aion)",
		Long: `watch checks transactions as they arrive, in any order across sessions (in
session order within a session), using their database start and commit
timestamps (Aion, the online mode of Chronos). Input is native txray JSON
Lines transaction records from stdin (default), from a file being appended to
(--follow FILE), or from HTTP (--http :PORT; POST a JSON array or JSON Lines
to /, GET /status).

Ext verdicts can change while late transactions arrive; each becomes final
--final-after after its transaction arrived, and state older than the
watermark is discarded to bound memory (see package check/aion). On a TTY a
status line is kept on stderr. End of input or SIGINT/SIGTERM gives the final
verdict over everything received. Exit codes: 0 valid, 1 invalid, 2 input
error, 3 unknown.

What it can check: the default checker (aion) needs database start and
commit timestamps on every transaction and checks register reads and writes
(list appends make the verdict unknown): txray gen --workload rw-register
output, or your own stream with start_ts/commit_ts. txray run's PostgreSQL
and MariaDB recordings have client times but no database timestamps: watch
them with --checker leopard --model postgres:read-committed (the database's
profile). Everything else: txray check. See docs/watch.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if maxPerType < 0 {
				return UsageErrorf("--max-anomalies %d: want 0 (list all) or a positive cap", maxPerType)
			}
			if maxPerType == 0 {
				maxPerType = check.NoCap // 0 lists all, as in txray check
			}
			if checker == "leopard" {
				return watchLeopard(cmd, model, follow, httpAddr, maxPerType, asJSON)
			}
			if checker != "aion" {
				return UsageErrorf("--checker must be aion or leopard")
			}
			m := chronos.Canon(model)
			if !aion.Models(m) {
				return UsageErrorf("watch checks snapshot-isolation or serializable, not %q", model)
			}
			if initial != "null" && initial != "0" {
				return UsageErrorf("--initial-value must be null or 0")
			}
			if follow != "" && httpAddr != "" {
				return UsageErrorf("--follow and --http are exclusive")
			}
			if memLimit > 0 {
				// A soft limit: the Go runtime collects harder near it. The
				// checker's live state is about (arrival rate) × --final-after
				// × ~1.5 KB per 15-op transaction (see package check/aion).
				debug.SetMemoryLimit(memLimit << 20)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			w := &watcher{c: aion.New(aion.Config{Model: m, InitialZero: initial == "0", FinalAfter: finalAfter, MaxPerType: maxPerType}),
				stderr: cmd.ErrOrStderr()}
			if f, ok := w.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				w.tty = true
			}
			done := make(chan struct{})
			go w.ticker(ctx, tick, done)
			var err error
			switch {
			case httpAddr != "":
				err = w.serveHTTP(ctx, httpAddr)
			case follow != "":
				var f *os.File
				if f, err = os.Open(follow); err != nil {
					return &ExitError{Code: ExitUsage, Err: err}
				}
				defer f.Close()
				err = w.consume(ctx, &followReader{ctx: ctx, f: f}, follow)
			default:
				err = w.consume(ctx, cmd.InOrStdin(), "<stdin>")
			}
			close(done)
			w.mu.Lock()
			res := w.c.Close()
			w.mu.Unlock()
			if w.tty {
				fmt.Fprint(w.stderr, "\r\033[K")
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintln(w.stderr, "txray watch: input error (verdict below covers what was received):", err)
			}
			if perr := printWatchFinal(cmd, watchSource(follow, httpAddr), res, inputErr(err), asJSON); perr != nil {
				return perr
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				return Exit(ExitUsage)
			}
			switch res.Verdict {
			case check.Invalid:
				return Exit(ExitInvalid)
			case check.Unknown:
				return Exit(ExitUnknown)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&follow, "follow", "", "read a file that is being appended to (like tail -f)")
	f.StringVar(&httpAddr, "http", "", "listen on this address (e.g. :8080) for POSTed transactions")
	f.StringVar(&model, "model", "snapshot-isolation", "aion: snapshot-isolation or serializable; leopard: a DBMS profile (e.g. postgres:serializable) or model")
	f.StringVar(&checker, "checker", "aion", "online checker: aion (database start/commit timestamps) or leopard (client-side per-op intervals)")
	f.StringVar(&initial, "initial-value", "null", "value of every key before any write: null or 0")
	f.DurationVar(&finalAfter, "final-after", time.Second, "Ext verdicts become final this long after arrival (state is kept this long)")
	f.Int64Var(&memLimit, "memory-limit", 900, "soft memory limit for the Go runtime in MiB (0 = none)")
	f.DurationVar(&tick, "tick", 250*time.Millisecond, "how often to finalise verdicts, collect garbage and refresh the status line")
	f.BoolVar(&asJSON, "json", false, "print the final result as one JSON object")
	f.IntVar(&maxPerType, "max-anomalies", check.DefaultMaxPerType, "anomalies listed per type; 0 lists all (the totals per type are always complete)")
	return cmd
}

type watcher struct {
	mu     sync.Mutex
	c      *aion.Checker
	stderr io.Writer
	tty    bool
}

func (w *watcher) ticker(ctx context.Context, every time.Duration, done chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	last, lastT := int64(0), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case now := <-t.C:
			w.mu.Lock()
			w.c.Tick()
			var st aion.Status
			if w.tty {
				st = w.c.Status()
			}
			w.mu.Unlock()
			if w.tty {
				rate := float64(st.Txns-last) / now.Sub(lastT).Seconds()
				last, lastT = st.Txns, now
				fmt.Fprintf(w.stderr, "\r\033[Kaion: %d txns (%.0f/s), %d pending reads, %d versions, flips %d, violations %v",
					st.Txns, rate, st.Pending, st.Versions, st.Flips, st.Violations)
			}
		}
	}
}

// consume feeds every transaction read from r to the checker. Two stages
// run concurrently: a reader goroutine reads complete lines (outside any
// lock: a read may block indefinitely on a live stream) and decodes them
// into batches; the checker goroutine adds each batch under w.mu. On
// cancellation every batch already decoded is still added, so nothing
// received and decoded is lost; a read blocked waiting for input is
// abandoned.
func (w *watcher) consume(ctx context.Context, r io.Reader, name string) error {
	type batch struct {
		txns []*aion.Txn
		err  error // decoding or read error after txns; io.EOF at the end
	}
	batches := make(chan batch, 8)
	var waiting atomic.Bool // the reader is blocked reading input
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		rd := aion.NewBytesReader(nil, w.c, name)
		base := 0
		for {
			buf := make([]byte, 0, 1<<17)
			lines := 0
			var rerr error
			for lines < 512 && len(buf) < 1<<17 {
				waiting.Store(br.Buffered() == 0)
				b, err := br.ReadSlice('\n')
				waiting.Store(false)
				buf = append(buf, b...)
				if err == bufio.ErrBufferFull {
					continue
				}
				if err != nil {
					rerr = err
					break
				}
				lines++
				if br.Buffered() == 0 {
					break // hand over what we have rather than wait for more
				}
			}
			var out batch
			if len(bytes.TrimSpace(buf)) > 0 {
				rd.Reset(buf, base)
				for {
					t, err := rd.Next()
					if err != nil {
						if err != io.EOF {
							out.err = err
						}
						break
					}
					out.txns = append(out.txns, t)
				}
			}
			base += lines
			if out.err == nil && rerr != nil {
				out.err = rerr
			}
			batches <- out
			if out.err != nil {
				return
			}
		}
	}()
	add := func(b batch) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, t := range b.txns {
			if err := w.c.Add(t); err != nil {
				return err
			}
		}
		if b.err == io.EOF {
			return io.EOF
		}
		return b.err
	}
	for {
		select {
		case b := <-batches:
			if err := add(b); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		case <-ctx.Done():
			// Add what was already read and decoded; stop once the reader
			// is waiting for input (or after a grace period).
			deadline := time.Now().Add(2 * time.Second)
			for time.Now().Before(deadline) {
				select {
				case b := <-batches:
					if err := add(b); err != nil {
						if err == io.EOF {
							return nil
						}
						return err
					}
					continue
				default:
				}
				if waiting.Load() {
					break
				}
				time.Sleep(time.Millisecond)
			}
			return ctx.Err()
		}
	}
}

// followReader reads a growing file, waiting for more data at EOF until the
// context is cancelled.
type followReader struct {
	ctx context.Context
	f   *os.File
}

func (r *followReader) Read(p []byte) (int, error) {
	for {
		n, err := r.f.Read(p)
		if n > 0 {
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		select {
		case <-r.ctx.Done():
			return 0, io.EOF
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (w *watcher) serveHTTP(ctx context.Context, addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/status", func(rw http.ResponseWriter, req *http.Request) {
		w.mu.Lock()
		st := w.c.Status()
		w.mu.Unlock()
		rw.Header().Set("Content-Type", "application/json")
		json.NewEncoder(rw).Encode(st)
	})
	mux.HandleFunc("/", func(rw http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			http.Error(rw, "POST a JSON array or JSON Lines of transactions", http.StatusMethodNotAllowed)
			return
		}
		w.mu.Lock()
		rd := aion.NewReader(req.Body, w.c, "POST "+req.URL.Path)
		n := 0
		var err error
		for {
			var t *aion.Txn
			if t, err = rd.Next(); err != nil {
				break
			}
			if err = w.c.Add(t); err != nil {
				break
			}
			n++
		}
		w.mu.Unlock()
		if err != nil && err != io.EOF {
			http.Error(rw, fmt.Sprintf("accepted %d transactions, then: %v", n, err), http.StatusBadRequest)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(rw, "{\"accepted\":%d}\n", n)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	fmt.Fprintln(w.stderr, "txray watch: listening on", ln.Addr())
	srv := &http.Server{Handler: mux}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx) // finish in-flight POSTs so nothing received is lost
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}

// watchLeopard runs the leopard online checker and prints its verdict.
func watchLeopard(cmd *cobra.Command, model, follow, httpAddr string, maxPerType int, asJSON bool) error {
	if follow != "" && httpAddr != "" {
		return UsageErrorf("--follow and --http are exclusive")
	}
	w, err := newLeopardWatcher(model, maxPerType, "<stdin>")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := runLeopardWatch(ctx, w, follow, httpAddr, cmd.InOrStdin())
	if res == nil {
		return err
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(cmd.ErrOrStderr(), "txray watch: input error (verdict below covers what was received):", err)
	}
	if perr := printWatchFinal(cmd, watchSource(follow, httpAddr), res, inputErr(err), asJSON); perr != nil {
		return perr
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return Exit(ExitUsage)
	}
	switch res.Verdict {
	case check.Invalid:
		return Exit(ExitInvalid)
	case check.Unknown:
		return Exit(ExitUnknown)
	}
	return nil
}

func printWatchResult(out io.Writer, r *check.Result) {
	fmt.Fprintf(out, "%s under %s: %s\n", r.Checker, r.Model, r.Verdict)
	if r.Reason != "" {
		fmt.Fprintln(out, "reason:", r.Reason)
	}
	for _, a := range r.Anomalies {
		fmt.Fprintf(out, "- %s: %s\n", a.Type, a.Explanation)
	}
	for t, n := range r.Truncated {
		fmt.Fprintf(out, "  (%d more %s not listed)\n", n, t)
	}
	for _, wn := range r.Warnings {
		fmt.Fprintln(out, "warning:", wn)
	}
	b, _ := json.Marshal(r.Stats)
	fmt.Fprintf(out, "stats: %s\n", b)
}
