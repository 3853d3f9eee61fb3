package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"

	"github.com/txray/txray/check"
	"github.com/txray/txray/check/leopard"
	"github.com/txray/txray/history/jsonl"
)

// leopardWatcher runs `txray watch --checker leopard`: native transaction
// lines with per-op client intervals are verified online by Leopard's
// two-level pipeline (package check/leopard): dispatch by before-timestamp
// up to the watermark, mechanism checks, garbage collection.
type leopardWatcher struct {
	mu  sync.Mutex
	dec *jsonl.LineDecoder
	on  *leopard.Online
	n   int64
}

func newLeopardWatcher(modelName string, maxPerType int, name string) (*leopardWatcher, error) {
	dec := jsonl.NewLineDecoder(name)
	h := dec.History()
	on, err := leopard.NewOnlineModel(modelName, leopard.OnlineOptions{Keys: h.Keys, Values: h.Values, MaxPerType: maxPerType})
	if err != nil {
		return nil, UsageErrorf("--model: %v", err)
	}
	return &leopardWatcher{dec: dec, on: on}, nil
}

// line decodes and adds one line.
func (w *leopardWatcher) line(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, err := w.dec.Decode(b)
	if err != nil || t == nil {
		return err
	}
	w.on.Add(t)
	w.n++
	return nil
}

// consume reads lines until EOF or cancellation; every complete line read
// before cancellation is added.
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
				close(lines)
				if err != io.EOF {
					errc <- err
				}
				return
			}
		}
	}()
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
			if err := w.line(b); err != nil {
				return err
			}
		case <-ctx.Done():
			for {
				select {
				case b, ok := <-lines:
					if !ok {
						return ctx.Err()
					}
					if err := w.line(b); err != nil {
						return err
					}
				default:
					return ctx.Err()
				}
			}
		}
	}
}

func (w *leopardWatcher) serveHTTP(ctx context.Context, addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(rw http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			w.mu.Lock()
			st := w.on.Stats()
			n := w.n
			w.mu.Unlock()
			fmt.Fprintf(rw, "{\"txns\":%d,\"stats\":%v}\n", n, mapJSON(st))
			return
		}
		br := bufio.NewReader(req.Body)
		for {
			b, err := br.ReadBytes('\n')
			if len(b) > 0 {
				if lerr := w.line(b); lerr != nil {
					http.Error(rw, lerr.Error(), http.StatusBadRequest)
					return
				}
			}
			if err != nil {
				break
			}
		}
		rw.WriteHeader(http.StatusAccepted)
	})
	srv := &http.Server{Addr: addr, Handler: mux}
	go func() { <-ctx.Done(); srv.Close() }()
	err := srv.ListenAndServe()
	if errors.Is(err, http.ErrServerClosed) {
		return ctx.Err()
	}
	return err
}

func mapJSON(m map[string]int64) string {
	s := "{"
	first := true
	for k, v := range m {
		if !first {
			s += ","
		}
		first = false
		s += fmt.Sprintf("%q:%d", k, v)
	}
	return s + "}"
}

// runLeopardWatch is the leopard branch of `txray watch`.
func runLeopardWatch(ctx context.Context, w *leopardWatcher, follow, httpAddr string, stdin io.Reader) (*check.Result, error) {
	var err error
	switch {
	case httpAddr != "":
		err = w.serveHTTP(ctx, httpAddr)
	case follow != "":
		var f *os.File
		if f, err = os.Open(follow); err != nil {
			return nil, &ExitError{Code: ExitUsage, Err: err}
		}
		defer f.Close()
		err = w.consume(ctx, &followReader{ctx: ctx, f: f})
	default:
		err = w.consume(ctx, stdin)
	}
	w.mu.Lock()
	res := w.on.Flush()
	w.mu.Unlock()
	if res.Stats == nil {
		res.Stats = map[string]any{}
	}
	res.Stats["txns_received"] = w.n
	return res, err
}
