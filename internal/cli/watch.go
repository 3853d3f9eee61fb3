package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
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
		follow      string
		httpAddr    string
		model       string
		initial     string
		finalAfter  time.Duration
		tick        time.Duration
		asJSON      bool
		maxPerType  int
		memLimit    int64
		spillLimit  int64
		checker     string
		readTimeout time.Duration
		maxBody     int64
	)
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "check a live stream of transactions (online: Aion with DB timestamps, or Leopard with client intervals)",
		Long: `watch checks transactions as they arrive. Input is native txray JSON Lines
transaction records from stdin (default), from a file being appended to
(--follow FILE: survives truncation and log rotation), or from HTTP (--http
ADDR; POST a JSON array or JSON Lines to /, GET /status). --http :8080
listens on the loopback interface only; to listen elsewhere name the
interface (--http 0.0.0.0:8080 for all of them). Each request must arrive
within --read-timeout and be at most --max-body bytes (413 beyond it).

--checker aion (default) uses database start and commit timestamps, in any
order across sessions (in session order within a session): Ext verdicts can
change while late transactions arrive; each becomes final --final-after after
its transaction arrived, and a write arriving later than that re-opens the
verdicts it affects (withdrawn, or unknown when the deciding state was
already discarded). --checker leopard uses client-side per-op intervals and a
DBMS profile (--model postgres:serializable, ...): traces are verified once
every transaction that could precede them has had --final-after to arrive; a
transaction later than that makes the verdict unknown. State older than the
window is discarded to bound memory (see docs/watch.md).

A bad line mid-stream is reported on stderr, skipped and counted. End of
input or SIGINT/SIGTERM gives the final verdict over everything accepted;
"valid" is never printed when nothing was checked or input was rejected.
Exit codes: 2 input rejected or input error (the verdict is still
printed), else 0 valid, 1 invalid, 3 unknown. --json prints one object in
the shape of txray check --json (docs/json-output.md).

What it can check: aion needs database timestamps and checks register
reads and writes (list appends make the verdict unknown): txray gen
--workload rw-register output, or your own stream with start_ts/commit_ts.
txray run's PostgreSQL and MariaDB recordings have client times but no
database timestamps: watch them with --checker leopard --model
postgres:read-committed (the database's profile). Everything else:
txray check.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if maxPerType < 0 {
				return UsageErrorf("--max-anomalies %d: want 0 (list all) or a positive cap", maxPerType)
			}
			if maxPerType == 0 {
				maxPerType = check.NoCap // 0 lists all, as in txray check
			}
			if follow != "" && httpAddr != "" {
				return UsageErrorf("--follow and --http are exclusive")
			}
			if readTimeout <= 0 || maxBody <= 0 {
				return UsageErrorf("--read-timeout and --max-body must be positive")
			}
			if finalAfter <= 0 || tick <= 0 {
				return UsageErrorf("--final-after and --tick must be positive")
			}
			if err := checkMiB("--memory-limit", memLimit); err != nil {
				return err
			}
			if err := checkMiB("--spill-limit", spillLimit); err != nil {
				return err
			}
			if httpAddr != "" {
				if _, err := httpListenAddr(httpAddr); err != nil {
					return err
				}
			}
			if memLimit > 0 {
				// A soft limit: the Go runtime collects harder near it. The
				// checker's live state is about (arrival rate) × --final-after
				// × ~1.3 KB per 15-op transaction (see package check/aion).
				debug.SetMemoryLimit(memLimit << 20)
				// Under a limit, collect less often than the default
				// (heap growth 300 % instead of 100 % between
				// collections; the limit still caps the heap): each
				// collection scans the transactions in the window.
				debug.SetGCPercent(300)
			}
			hc := watchHTTPConfig{addr: httpAddr, readTimeout: readTimeout, maxBody: maxBody}
			if checker == "leopard" {
				return watchLeopard(cmd, model, follow, hc, maxPerType, asJSON, finalAfter, tick, memLimit, spillLimit)
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
			if memLimit > 0 {
				// The runtime's limit covers what it manages, not the
				// executable's pages and the kernel's own: keep 1/16
				// of --memory-limit for those, so that the process's
				// peak RSS stays under the limit (docs/watch.md).
				debug.SetMemoryLimit(aionRuntimeLimit(memLimit, hugeAdvised > 0))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// Decoding from a stream recycles the memory of transactions
			// the checker is done with (aion.Recycler); HTTP bodies are
			// decoded by each request, into fresh memory.
			var rc *aion.Recycler
			if httpAddr == "" && !watchNoRecycle {
				rc = aion.NewRecycler()
				if watchPoison {
					rc.Poison()
					watchPoisoned = rc
				}
			}
			w := &watcher{rc: rc, c: aion.New(aion.Config{Model: m, InitialZero: initial == "0", FinalAfter: finalAfter, MaxPerType: maxPerType, Recycler: rc,
				MaxKeys: aionMaxKeys(memLimit), MaxFilterBytes: aionMaxFilterBytes(memLimit), MaxWindowBytes: aionMaxWindowBytes(memLimit), MaxValueBytes: aionMaxValueBytes(memLimit), MaxUnknownWrites: aionMaxUnknownWrites(memLimit),
				MaxSessions: aionMaxSessions(memLimit)}),
				stderr: cmd.ErrOrStderr()}
			w.rej.out = w.stderr
			if f, ok := w.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				w.tty = true
			}
			done := make(chan struct{})
			go w.ticker(ctx, tick, done)
			var err error
			switch {
			case httpAddr != "":
				err = serveWatchHTTP(ctx, w.stderr, hc, w.post, func() any {
					w.mu.Lock()
					defer w.mu.Unlock()
					n, _ := w.rej.get()
					return struct {
						aion.Status
						Accepted int64 `json:"txns_accepted"`
						Rejected int64 `json:"rejected_records"`
					}{w.c.Status(), w.n, n}
				})
			case follow != "":
				var f *followReader
				if f, err = openFollow(ctx, follow, func(s string) { fmt.Fprintln(w.stderr, "txray watch:", s) }); err != nil {
					return &ExitError{Code: ExitUsage, Err: err}
				}
				defer f.Close()
				err = w.consume(ctx, f, follow)
			default:
				err = w.consume(ctx, cmd.InOrStdin(), "<stdin>")
			}
			close(done)
			w.mu.Lock()
			w.closed = true
			res := w.c.Close()
			n := w.n
			w.mu.Unlock()
			if w.tty {
				fmt.Fprint(w.stderr, "\r\033[K")
			}
			if ee := (*ExitError)(nil); errors.As(err, &ee) {
				return err
			}
			return finishWatch(cmd.OutOrStdout(), w.stderr, watchOutcome{res: res, accepted: n, rej: &w.rej, inErr: err, source: watchSource(follow, httpAddr)}, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&follow, "follow", "", "read a file that is being appended to (like tail -F: survives truncation and rotation)")
	f.StringVar(&httpAddr, "http", "", "listen on this address for POSTed transactions (:8080 = loopback only; 0.0.0.0:8080 = every interface)")
	f.StringVar(&model, "model", "snapshot-isolation", "aion: snapshot-isolation or serializable; leopard: a DBMS profile (e.g. postgres:serializable)")
	f.StringVar(&checker, "checker", "aion", "online checker: aion (database start/commit timestamps) or leopard (client-side per-op intervals)")
	f.StringVar(&initial, "initial-value", "null", "value of every key before any write: null or 0")
	f.DurationVar(&finalAfter, "final-after", time.Second, "arrival window: aion Ext verdicts become final, and leopard dispatches traces, this long after arrival (state is kept this long)")
	f.Int64Var(&memLimit, "memory-limit", 900, "soft memory limit for the Go runtime in MiB (0 = none; with a limit the GC runs at 300% heap growth, and both checkers keep at most about half of it in per-key state, forgetting the coldest settled keys beyond that: a later read of one makes the verdict unknown)")
	f.Int64Var(&spillLimit, "spill-limit", 1024, "leopard: disk the spill file of explanation records may use, in MiB (0 = no bound; beyond it the oldest records are dropped and explanations naming them say so)")
	f.DurationVar(&tick, "tick", 250*time.Millisecond, "how often to finalise verdicts, collect garbage and refresh the status line")
	f.BoolVar(&asJSON, "json", false, "print the final result as one JSON object")
	f.IntVar(&maxPerType, "max-anomalies", check.DefaultMaxPerType, "anomalies listed per type; 0 lists all (the totals per type are always complete)")
	f.DurationVar(&readTimeout, "read-timeout", 30*time.Second, "--http: each request (headers and body) must be received within this")
	f.Int64Var(&maxBody, "max-body", 64<<20, "--http: largest request body in bytes (413 beyond it)")
	return cmd
}

// maxMiB is the largest size in MiB whose byte count fits an int64.
const maxMiB = math.MaxInt64 >> 20

// checkMiB validates a size flag given in MiB (0 = no bound): a negative
// value, or one whose byte count (v << 20) would overflow, is a usage error
// rather than a silently wrapped bound.
func checkMiB(flag string, v int64) error {
	if v < 0 {
		return UsageErrorf("%s %d: must be >= 0 (MiB; 0 = no bound)", flag, v)
	}
	if v > maxMiB {
		return UsageErrorf("%s %d: too large (at most %d MiB, 8 EiB; 0 = no bound)", flag, v, int64(maxMiB))
	}
	return nil
}

// aionMaxKeys is the aion checker's key budget under a memory limit of
// memLimit MiB (0 = none): half the limit in retained keys
// (aion.KeyBytes each; the other half is for the arrival window and the
// keys still being decided). Beyond it the checker forgets the coldest
// settled keys, and a later read of one makes the verdict unknown
// (aion.Config.MaxKeys).
func aionMaxKeys(memLimit int64) int {
	if memLimit <= 0 {
		return 0
	}
	return int(memLimit << 20 / 2 / aion.KeyBytes)
}

// aionRuntimeLimit is the Go runtime's soft limit under --memory-limit
// memLimit MiB (> 0), in bytes: the runtime's limit covers what it manages,
// not the executable's pages (about 16 MiB resident) nor the kernel's
// share, so those are kept out of it, with 1/16 of the limit for the rest.
// With a heap backed by huge pages (huge, internal/hugemem) another 1/32
// is held back: the runtime returns free memory in pieces smaller than a
// huge page and avoids breaking up dense ones, so resident memory runs a
// little above the heap it accounts for.
func aionRuntimeLimit(memLimit int64, huge bool) int64 {
	l := memLimit<<20 - memLimit<<20/16 - exePages
	if huge {
		l -= memLimit << 20 / 32
	}
	return max(l, memLimit<<20/2)
}

// exePages is about what the executable's own pages take of the resident
// set (text, data): a watch of 1,000 transactions peaks at 25 MiB RSS,
// heap and stacks included.
const exePages = 16 << 20

// aionMaxWindowBytes bounds the aion checker's arrival window under a
// memory limit of memLimit MiB (0 = none): 1/8 of the limit. Beyond it the
// oldest transactions' reads become final before --final-after
// (aion.Config.MaxWindowBytes).
func aionMaxWindowBytes(memLimit int64) int64 {
	if memLimit <= 0 {
		return 0
	}
	return memLimit << 20 / 8
}

// aionMaxValueBytes is the aion checker's budget for its table of
// distinct string values under a memory limit of memLimit MiB (0 = none):
// 1/16 of the limit. Beyond it the values no retained state names are
// dropped, and a failing read that may be due to a dropped value makes the
// verdict unknown (aion.Config.MaxValueBytes).
func aionMaxValueBytes(memLimit int64) int64 {
	if memLimit <= 0 {
		return 0
	}
	return memLimit << 20 / 16
}

// aionMaxUnknownWrites bounds the writes of unknown-outcome transactions
// the aion checker remembers exactly under a memory limit of memLimit MiB
// (0 = none): 1/32 of the limit at 128 bytes each (the map entry, the
// queue entry, the key's count). Beyond it the oldest are kept only in a
// filter (aion.Config.MaxUnknownWrites).
func aionMaxUnknownWrites(memLimit int64) int {
	if memLimit <= 0 {
		return 0
	}
	return int(memLimit << 20 / 32 / 128)
}

// aionMaxFilterBytes is the size of the aion checker's filter of forgotten
// key names under a memory limit of memLimit MiB: 1/32 of the limit. 1/16
// cost about a fifth more CPU on a stream of ever-new keys at 900 MiB (the
// heap sat nearer the runtime's limit, so the collector ran more often) for
// a false-positive rate of 2.7e-5 instead of 3.7e-4 at 8.8 million names
// forgotten; the filter is consulted only when a forgotten version could
// matter (docs/benchmarks.md, "aion sessions bounded, replayable filters").
func aionMaxFilterBytes(memLimit int64) int64 {
	return memLimit << 20 / 32
}

// aionMaxSessions bounds the sessions the aion checker retains under
// strong-session-snapshot-isolation with a memory limit of memLimit MiB (0
// = none): 1/32 of the limit at aion.SessionBytes each. Beyond it the
// coldest idle sessions are forgotten, and a transaction whose Session
// check would need a forgotten predecessor makes the verdict unknown
// (aion.Config.MaxSessions).
func aionMaxSessions(memLimit int64) int {
	if memLimit <= 0 {
		return 0
	}
	return int(memLimit << 20 / 32 / aion.SessionBytes)
}

// watchNoRecycle and watchPoison (tests only): watch without an
// aion.Recycler, or with a poisoned one (a use of a transaction after its
// release names "recycled").
var watchNoRecycle, watchPoison bool

// watchPoisoned is the last poisoned Recycler (tests only).
var watchPoisoned *aion.Recycler

// readBlock is how much consume reads at once (a batch holds one such
// block, cut after its last complete line).
const readBlock = 1 << 17

type watcher struct {
	mu     sync.Mutex
	c      *aion.Checker
	rc     *aion.Recycler // the checker's, for consume's Readers (or nil)
	stderr io.Writer
	tty    bool
	n      int64 // transactions accepted (under mu)
	closed bool  // the final verdict was taken (under mu)
	rej    rejects
}

// addLocked adds decoded transactions (w.mu held); a transaction the
// checker refuses is rejected and skipped.
func (w *watcher) addLocked(txns []*aion.Txn) int {
	n := w.c.AddAll(txns, func(_ *aion.Txn, err error) { w.rej.add(err.Error()) })
	w.n += int64(n)
	return n
}

// decodeLines decodes buf (complete lines; line numbers from base+1) into
// transactions. On a bad record the buffer is decoded again line by line,
// so only the bad lines are lost: each is returned as a message naming
// its line.
func decodeLines(rd *aion.Reader, buf []byte, base int) (txns []*aion.Txn, bad []string) {
	rd.Reset(buf, base)
	for {
		t, err := rd.Next()
		if err == io.EOF {
			return txns, nil
		}
		if err != nil {
			break
		}
		txns = append(txns, t)
	}
	txns = txns[:0]
	line := base
	for len(buf) > 0 {
		l := buf
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			l, buf = buf[:i+1], buf[i+1:]
		} else {
			buf = nil
		}
		if len(bytes.TrimSpace(l)) > 0 {
			rd.Reset(l, line)
			for {
				t, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					bad = append(bad, err.Error())
					break
				}
				txns = append(txns, t)
			}
		}
		line++
	}
	return txns, bad
}

// post decodes and adds one HTTP body (read in full by the caller). The
// body is decoded outside w.mu (the reader interns under the checker's own
// lock), so decoding never delays /status or other requests.
func (w *watcher) post(body []byte, name string) (int, []string, error) {
	rd := aion.NewBytesReader(nil, w.c, name)
	var txns []*aion.Txn
	var bad []string
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		// One JSON array: all or nothing.
		rd.Reset(body, 0)
		for {
			x, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				txns, bad = nil, []string{err.Error()}
				break
			}
			txns = append(txns, x)
		}
	} else {
		txns, bad = decodeLines(rd, body, 0)
	}
	for _, b := range bad {
		w.rej.add(b)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, nil, errors.New("watch is shutting down; nothing accepted")
	}
	n0, _ := w.rej.get()
	n := w.addLocked(txns)
	if n1, _ := w.rej.get(); n1 > n0 {
		d := n1 - n0
		bad = append(bad, fmt.Sprintf("%d transactions refused by the checker (see the service's stderr)", d))
	}
	return n, bad, nil
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
				fmt.Fprintf(w.stderr, "\r\033[Kaion: %d txns (%.0f/s), %d pending reads, %d versions, %d keys (%d forgotten), flips %d, violations %v",
					st.Txns, rate, st.Pending, st.Versions, st.Keys, st.ForgottenKeys, st.Flips, st.Violations)
			}
		}
	}
}

// consume feeds every transaction read from r to the checker, in input
// order. Three stages run concurrently: a reader goroutine reads blocks of
// input into batches of complete lines (outside any lock: a read may block
// indefinitely on a live stream); decoder goroutines (one per CPU the
// runtime may use, at most 4) decode batches in parallel, each with its own
// aion.Reader (string values are interned under the checker's own lock, so
// which decoder interns first does not matter: ids are only compared; keys
// are left raw and interned by the checker); the checker goroutine adds
// each batch under w.mu in the order the lines were read. A bad line is reported, counted and skipped (decodeLines); only a
// read error ends the stream. On cancellation every batch already read is
// still decoded and added, so nothing received is lost; a read blocked
// waiting for input is abandoned.
func (w *watcher) consume(ctx context.Context, r io.Reader, name string) error {
	type job struct {
		buf   []byte
		base  int   // line number before the batch's first line
		rerr  error // read error after the batch; io.EOF at the end
		txns  []*aion.Txn
		bad   []string
		ready chan struct{} // closed once decoded
	}
	ndec := max(1, min(runtime.GOMAXPROCS(0), 4))
	const inFlight = 8 // batches read but not yet added (besides those decoding)
	order := make(chan *job, inFlight+ndec)
	work := make(chan *job, inFlight+ndec)
	bufs := make(chan []byte, inFlight+2*ndec+2)
	var waiting atomic.Bool // the reader is blocked reading input
	labels := pprof.Labels("watch", "decode")
	go pprof.Do(ctx, labels, func(context.Context) {
		defer close(work)
		// Blocks of input are read straight into the batch buffer and
		// cut after their last newline; the partial line after it starts
		// the next batch. A batch is handed over as soon as it holds a
		// complete line (a live stream's lines are not held back).
		var carry []byte
		base := 0
		for {
			var buf []byte
			select {
			case buf = <-bufs:
			default:
				buf = make([]byte, 0, 1<<18)
			}
			// carry may lie in this very buffer (recycled): append
			// moves it to the front (memmove handles the overlap)
			buf = append(buf[:0], carry...)
			carry = nil
			var rerr error
			for {
				if cap(buf)-len(buf) < 1<<12 {
					buf = slices.Grow(buf, cap(buf))
				}
				free := buf[len(buf):cap(buf)]
				if len(free) > readBlock {
					free = free[:readBlock]
				}
				waiting.Store(true)
				n, err := r.Read(free)
				waiting.Store(false)
				buf = buf[:len(buf)+n]
				if err != nil {
					rerr = err
					break
				}
				if n > 0 && bytes.IndexByte(buf[len(buf)-n:], '\n') >= 0 {
					break
				}
			}
			if rerr == nil {
				cut := bytes.LastIndexByte(buf, '\n') + 1
				carry, buf = buf[cut:], buf[:cut]
			}
			lines := bytes.Count(buf, []byte{'\n'})
			if rerr != nil && len(buf) > 0 && buf[len(buf)-1] != '\n' {
				lines++ // a last line without newline
			}
			j := &job{buf: buf, base: base, rerr: rerr, ready: make(chan struct{})}
			base += lines
			order <- j // FIFO: the checker adds in input order
			work <- j
			if rerr != nil {
				close(order)
				return
			}
		}
	})
	for range ndec {
		go pprof.Do(ctx, labels, func(context.Context) {
			rd := aion.NewBytesReader(nil, w.c, name)
			if w.rc != nil {
				// the transactions of a batch are only used until
				// the checker's AddAll returns (add below)
				rd.Recycle(w.rc)
			}
			for j := range work {
				// decodeLines copies what it keeps (ids, session names,
				// ops), so the buffer is free again once it returns.
				if len(bytes.TrimSpace(j.buf)) > 0 {
					j.txns, j.bad = decodeLines(rd, j.buf, j.base)
				}
				select {
				case bufs <- j.buf:
				default:
				}
				j.buf = nil
				close(j.ready)
			}
		})
	}
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("watch", "check")))
	add := func(j *job) error {
		<-j.ready
		for _, m := range j.bad {
			w.rej.add(m)
		}
		w.mu.Lock()
		w.addLocked(j.txns)
		w.mu.Unlock()
		return j.rerr
	}
	for {
		select {
		case j, ok := <-order:
			if !ok {
				return nil // not reached: the last batch carries the read error
			}
			if err := add(j); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		case <-ctx.Done():
			// Add what was already read; stop once the reader is waiting
			// for input (or after a grace period).
			deadline := time.Now().Add(2 * time.Second)
			for time.Now().Before(deadline) {
				select {
				case j, ok := <-order:
					if !ok {
						return ctx.Err()
					}
					if err := add(j); err != nil {
						if err == io.EOF {
							return nil
						}
						return err
					}
					continue
				default:
				}
				if waiting.Load() && len(order) == 0 {
					// the reader waits for input and handed over every
					// batch it read before it began waiting
					break
				}
				time.Sleep(time.Millisecond)
			}
			return ctx.Err()
		}
	}
}
