package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/txray/txray/check/leopard"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
)

// leopardWatcher runs `txray watch --checker leopard`: native transaction
// lines with per-op client intervals are verified online by Leopard's
// two-level pipeline (package check/leopard): dispatch by before-timestamp
// up to the watermark, mechanism checks, garbage collection.
//
// The watermark is the arrival window (leopard.OnlineOptions.Window): every
// tick, the verifier may dispatch traces that began no later than the
// latest transaction begin received at least --final-after ago. A session
// first seen late, or an idle one, therefore neither blocks dispatch (an
// idle session would otherwise hold all state in memory) nor is missed if
// its transactions arrive within the window; one that arrives later than
// that is counted as late and makes the verdict unknown with the reason.
type leopardWatcher struct {
	mu     sync.Mutex
	dec    *jsonl.LineDecoder
	on     *leopard.Online
	n      int64
	closed bool
	rej    rejects
	// maxBegin is the latest transaction begin received; samples holds
	// (arrival time, maxBegin) pairs younger than the window.
	maxBegin int64
	samples  []beginSample
	window   time.Duration
}

type beginSample struct {
	at    time.Time
	begin int64
}

// leopardMaxKeys is the key bound of the online verifier under a memory
// limit of memLimit MiB (0 = none): half the limit in retained keys, each
// a key slot (leopard.KeySlotBytes) and leopard.KeyTableIds entries of the
// decoder's key table (keyTableBytes each; the table holds at most that
// many ids per retained key, forgotten keys' ids being recycled beyond
// it); the other half is for the arrival window and the keys still
// being worked on. Beyond it the verifier forgets the oldest settled
// keys, and a later read of one makes the verdict unknown
// (leopard.OnlineOptions.MaxKeys).
func leopardMaxKeys(memLimit int64) int {
	if memLimit <= 0 {
		return 0
	}
	return int(memLimit << 20 / 2 / (leopard.KeySlotBytes + leopard.KeyTableIds*keyTableBytes))
}

// keyTableBytes is what a key costs in a recycling key interner (maps
// only, history.NewRecyclingInterner): measured 52 bytes per key on the
// 10M-transaction stream of docs/benchmarks.md (map entry, id table, at
// the map's growth points), rounded up.
const keyTableBytes = 56

func newLeopardWatcher(modelName string, maxPerType int, name string, window time.Duration, maxKeys int, spillLimit int64) (*leopardWatcher, error) {
	dec := jsonl.NewLineDecoder(name)
	h := dec.History()
	// Under a key bound, forgotten keys' ids are recycled (the decoder's
	// key table stays bounded by the keys retained), and idle sessions'
	// ids are released with their state (leopard.OnlineOptions).
	if maxKeys > 0 {
		h.Keys = history.NewRecyclingInterner()
	}
	h.Sessions = history.NewRecyclingInterner()
	// Values only need to compare equal and render: integer values are
	// their own ids, so the interner does not keep every value the
	// stream ever wrote (a table of them grew by about 17 bytes per
	// write without bound). Nothing here sizes a table by value id.
	h.Values = history.NewIdentityInterner()
	on, err := leopard.NewOnlineModel(modelName, leopard.OnlineOptions{Keys: h.Keys, Values: h.Values, MaxPerType: maxPerType, Window: true,
		MaxKeys: maxKeys, RecycleKeys: maxKeys > 0, ForgetSessions: true, OnForgetSession: dec.ForgetSession, SpillLimit: spillLimit})
	if err != nil {
		return nil, UsageErrorf("--model: %v", err)
	}
	return &leopardWatcher{dec: dec, on: on, window: window, maxBegin: -1 << 62}, nil
}

// lineLocked decodes and adds one line (w.mu held). A bad line is
// rejected and skipped.
func (w *leopardWatcher) lineLocked(b []byte) {
	t, err := w.dec.Decode(b)
	if h := w.dec.History(); h.VersionOrder != nil {
		h.VersionOrder = nil // version-order evidence is not used online; do not accumulate it
	}
	if err != nil {
		w.rej.add(err.Error())
		return
	}
	if t == nil {
		return
	}
	w.on.Add(t)
	w.n++
	if t.HasTime {
		w.maxBegin = max(w.maxBegin, t.Invoke)
	}
}

// tick advances the verifier to the window bound: the latest begin
// received at least one window ago.
func (w *leopardWatcher) tick(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.samples = append(w.samples, beginSample{at: now, begin: w.maxBegin})
	bound, i := int64(-1<<62), 0
	for ; i < len(w.samples) && now.Sub(w.samples[i].at) >= w.window; i++ {
		bound = w.samples[i].begin
	}
	if i > 0 {
		w.samples = append(w.samples[:0], w.samples[i:]...)
		w.on.Advance(bound)
	}
}

func (w *leopardWatcher) ticker(ctx context.Context, every time.Duration, done chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case now := <-t.C:
			w.tick(now)
		}
	}
}

// consume reads lines until EOF, a read error or cancellation; every
// complete line read before cancellation is added.
func (w *leopardWatcher) consume(ctx context.Context, r io.Reader) error {
	lines := make(chan []byte, 1024)
	errc := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			b, err := br.ReadBytes('\n')
			if len(b) > 0 {
				lines <- b
			}
			if err != nil {
				if err != io.EOF {
					errc <- err
				}
				close(lines)
				return
			}
		}
	}()
	add := func(b []byte) {
		w.mu.Lock()
		w.lineLocked(b)
		w.mu.Unlock()
	}
	for {
		select {
		case b, ok := <-lines:
			if !ok {
				select {
				case err := <-errc:
					return err
				default:
					return nil
				}
			}
			add(b)
		case <-ctx.Done():
			for {
				select {
				case b, ok := <-lines:
					if !ok {
						return ctx.Err()
					}
					add(b)
				default:
					return ctx.Err()
				}
			}
		}
	}
}

// post adds one HTTP body (JSON Lines), read in full by the caller.
func (w *leopardWatcher) post(body []byte, name string) (int, []string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, nil, errors.New("watch is shutting down; nothing accepted")
	}
	n0 := w.n
	var bad []string
	for len(body) > 0 {
		l := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			l, body = body[:i+1], body[i+1:]
		} else {
			body = nil
		}
		before, _ := w.rej.get()
		w.lineLocked(l)
		if after, _ := w.rej.get(); after > before {
			bad = append(bad, "a line of "+name+" was rejected (see the service's stderr)")
		}
	}
	return int(w.n - n0), bad, nil
}

func (w *leopardWatcher) status() any {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.on.Stats()
	rej, _ := w.rej.get()
	return map[string]any{"txns": w.n, "rejected_records": rej, "stats": st}
}

// watchLeopard is the leopard branch of `txray watch`.
func watchLeopard(cmd *cobra.Command, model, follow string, hc watchHTTPConfig, maxPerType int, asJSON bool, window, tick time.Duration, memLimit, spillLimit int64) error {
	name := "<stdin>"
	if follow != "" {
		name = follow
	}
	if err := checkMiB("--spill-limit", spillLimit); err != nil {
		return err
	}
	w, err := newLeopardWatcher(model, maxPerType, name, window, leopardMaxKeys(memLimit), spillLimit<<20)
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	w.rej.out = stderr
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan struct{})
	go w.ticker(ctx, tick, done)
	switch {
	case hc.addr != "":
		err = serveWatchHTTP(ctx, stderr, hc, w.post, w.status)
	case follow != "":
		var f *followReader
		if f, err = openFollow(ctx, follow, func(s string) { fmt.Fprintln(stderr, "txray watch:", s) }); err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		defer f.Close()
		err = w.consume(ctx, f)
	default:
		err = w.consume(ctx, cmd.InOrStdin())
	}
	close(done)
	if ee := (*ExitError)(nil); errors.As(err, &ee) {
		return err
	}
	w.mu.Lock()
	w.closed = true
	res := w.on.Flush()
	n := w.n
	w.mu.Unlock()
	return finishWatch(cmd.OutOrStdout(), stderr, watchOutcome{res: res, accepted: n, rej: &w.rej, inErr: err, source: watchSource(follow, hc.addr)}, asJSON)
}
