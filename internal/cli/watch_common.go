package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/txray/txray/check"
)

// rejects counts input records watch skipped (a bad line mid-stream, a
// transaction the checker refused) and keeps the first messages. Safe for
// concurrent use.
type rejects struct {
	mu    sync.Mutex
	n     int64
	first []string
	out   io.Writer // each of the first maxRejectShown is printed here
}

const maxRejectShown = 10

func (r *rejects) add(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if len(r.first) < maxRejectShown {
		r.first = append(r.first, msg)
		if r.out != nil {
			fmt.Fprintln(r.out, "txray watch: skipped:", msg)
		}
	}
}

func (r *rejects) get() (int64, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n, append([]string(nil), r.first...)
}

// watchHTTPConfig are the HTTP front end's limits.
type watchHTTPConfig struct {
	addr        string
	readTimeout time.Duration // whole request (headers and body)
	maxBody     int64         // bytes; larger bodies get 413
}

// httpListenAddr makes an address without a host (":8080") listen on the
// loopback interface only; any other interface must be named (e.g.
// 0.0.0.0:8080 or [::]:8080 for all of them).
func httpListenAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if _, perr := strconv.Atoi(addr); perr == nil {
			host, port = "", addr // a bare port
		} else {
			return "", UsageErrorf("--http %q: want HOST:PORT or :PORT (%v)", addr, err)
		}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// postBodies bounds the request bodies read at once (memory: at most
// postBodies × maxBody); a request waits for a slot at most its read
// timeout.
const postBodies = 8

// serveWatchHTTP serves POST / (transactions; post decodes and adds one
// body) and GET /status until ctx is done. A request's body is read in full
// (bounded by cfg.maxBody: 413 beyond it, and by cfg.readTimeout: 408)
// before post is called, so a slow or stalled client holds no lock and
// delays nothing but itself; /status never waits on a client. On
// cancellation the server stops accepting, waits for requests in flight for
// at most the read timeout, then closes every connection.
func serveWatchHTTP(ctx context.Context, stderr io.Writer, cfg watchHTTPConfig,
	post func(body []byte, name string) (accepted int, rejected []string, err error), status func() any) error {
	addr, err := httpListenAddr(cfg.addr)
	if err != nil {
		return err
	}
	slots := make(chan struct{}, postBodies)
	mux := http.NewServeMux()
	mux.HandleFunc("/status", func(rw http.ResponseWriter, req *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		json.NewEncoder(rw).Encode(status())
	})
	mux.HandleFunc("/", func(rw http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet && req.URL.Path == "/" {
			rw.Header().Set("Content-Type", "application/json")
			json.NewEncoder(rw).Encode(status())
			return
		}
		if req.Method != http.MethodPost {
			http.Error(rw, "POST a JSON array or JSON Lines of transactions; GET /status", http.StatusMethodNotAllowed)
			return
		}
		if req.ContentLength > cfg.maxBody {
			http.Error(rw, fmt.Sprintf("body of %d bytes is larger than --max-body %d", req.ContentLength, cfg.maxBody), http.StatusRequestEntityTooLarge)
			return
		}
		wait := time.NewTimer(cfg.readTimeout)
		defer wait.Stop()
		select {
		case slots <- struct{}{}:
		case <-wait.C:
			http.Error(rw, "too many bodies being received; retry", http.StatusServiceUnavailable)
			return
		case <-req.Context().Done():
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(rw, req.Body, cfg.maxBody))
		<-slots
		if err != nil {
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				http.Error(rw, fmt.Sprintf("body larger than --max-body %d bytes; nothing accepted", cfg.maxBody), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(rw, fmt.Sprintf("reading the body failed (read deadline %s): %v; nothing accepted", cfg.readTimeout, err), http.StatusRequestTimeout)
			return
		}
		n, rej, err := post(body, "POST "+req.URL.Path)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusServiceUnavailable)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		if len(rej) > 0 {
			rw.WriteHeader(http.StatusBadRequest)
			b, _ := json.Marshal(map[string]any{"accepted": n, "rejected": len(rej), "errors": rej,
				"message": fmt.Sprintf("accepted %d transactions, rejected %d records: %s", n, len(rej), rej[0])})
			rw.Write(append(b, '\n'))
			return
		}
		fmt.Fprintf(rw, "{\"accepted\":%d}\n", n)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	fmt.Fprintln(stderr, "txray watch: listening on", ln.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: cfg.readTimeout, ReadTimeout: cfg.readTimeout,
		WriteTimeout: cfg.readTimeout + 30*time.Second, IdleTimeout: 2 * cfg.readTimeout, MaxHeaderBytes: 64 << 10}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		// Requests in flight finish (what was received is kept), but
		// none waits longer than its read deadline.
		sctx, cancel := context.WithTimeout(context.Background(), cfg.readTimeout+time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()
	err = srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-stopped
		return nil
	}
	return err
}

// watchOutcome is what a watch run ends with, whatever its checker.
type watchOutcome struct {
	res      *check.Result
	accepted int64 // transactions accepted (decoded and added)
	rej      *rejects
	inErr    error  // input error that ended the stream (not cancellation)
	source   string // the input for reports: "-", the followed file, "http://ADDR"
}

// finishWatch prints the final result and returns the exit status. The
// verdict printed is never "valid" unless something was checked and no
// input was rejected: no transaction accepted, or input rejected (a bad
// line skipped, a record refused, a read error), turns a valid verdict
// into unknown with the reason (an invalid one stays invalid: its
// anomalies stand). Exit codes: 2 if input was rejected or failed (whatever
// the verdict printed); else 1 invalid; else 3 unknown; else 0.
func finishWatch(out, stderr io.Writer, o watchOutcome, asJSON bool) error {
	res := o.res
	nrej, first := o.rej.get()
	inErr := o.inErr
	if inErr != nil && errors.Is(inErr, context.Canceled) {
		inErr = nil
	}
	var why []string
	if o.accepted == 0 {
		why = append(why, "no transaction was received and checked")
	}
	if nrej > 0 {
		why = append(why, fmt.Sprintf("%d input records were rejected and skipped (first: %s); the verdict covers only the accepted ones", nrej, first[0]))
	}
	if inErr != nil {
		why = append(why, "the input ended with an error: "+inErr.Error())
		fmt.Fprintln(stderr, "txray watch: input error (verdict below covers what was received):", inErr)
	}
	if res.Verdict == check.Valid && len(why) > 0 {
		res.Verdict = check.Unknown
		res.Reason = joinWhy(why)
	} else if res.Verdict == check.Invalid && len(why) > 0 && o.accepted > 0 {
		res.Warnings = append(res.Warnings, joinWhy(why))
	}
	if res.Stats == nil {
		res.Stats = map[string]any{}
	}
	res.Stats["txns_accepted"] = o.accepted
	res.Stats["rejected_records"] = nrej
	// The output is txray check's (docs/json-output.md; text summary first):
	// "history" is null (a stream is not kept); input errors and rejected
	// records are the input's "error".
	var errs []string
	if inErr != nil {
		errs = append(errs, "the input ended with an error: "+inErr.Error())
	}
	if nrej > 0 {
		e := fmt.Sprintf("%d input records were rejected and skipped", nrej)
		if len(first) > 0 {
			e += " (first: " + strings.Join(first, "; ") + ")"
		}
		errs = append(errs, e)
	}
	if err := writeWatchReport(out, o.source, res, strings.Join(errs, "; "), asJSON); err != nil {
		return err
	}
	if !asJSON && nrej > maxRejectShown {
		fmt.Fprintf(out, "rejected: %d records (the first %d are listed on stderr)\n", nrej, maxRejectShown)
	}
	switch {
	case nrej > 0 || inErr != nil:
		return Exit(ExitUsage)
	case res.Verdict == check.Invalid:
		return Exit(ExitInvalid)
	case res.Verdict == check.Unknown:
		return Exit(ExitUnknown)
	}
	return nil
}

func joinWhy(why []string) string {
	s := why[0]
	for _, w := range why[1:] {
		s += "; " + w
	}
	return s
}

// followReader reads a file that is being appended to (like tail -F): at
// EOF it waits for more data until the context is cancelled, and it
// survives log rotation (the path now names another file: the rest of the
// old file is read, then the new one from its start) and truncation (the
// file shrank below what was read: it is read again from the start). Each
// switch is reported through note.
type followReader struct {
	ctx  context.Context
	path string
	f    *os.File
	off  int64
	note func(string)
	// switches counts rotations and truncations followed
	switches int
}

// followAtEOF, when set (tests only), is called each time a followReader
// has read its file to the end and is about to wait for more: with the
// path, the number of rotations and truncations followed so far, and the
// offset read in the current file. Tests synchronise on it instead of
// sleeping.
var followAtEOF atomic.Pointer[func(path string, switches int, off int64)]

func openFollow(ctx context.Context, path string, note func(string)) (*followReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &followReader{ctx: ctx, path: path, f: f, note: note}, nil
}

func (r *followReader) Close() error { return r.f.Close() }

func (r *followReader) Read(p []byte) (int, error) {
	for {
		n, err := r.f.Read(p)
		if n > 0 {
			r.off += int64(n)
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		// At EOF: rotated or truncated?
		if st, serr := os.Stat(r.path); serr == nil {
			if cur, ferr := r.f.Stat(); ferr == nil && !os.SameFile(st, cur) {
				if nf, oerr := os.Open(r.path); oerr == nil {
					r.f.Close()
					r.f, r.off = nf, 0
					r.switches++
					r.note(fmt.Sprintf("%s was replaced (rotated); reading the new file from its start", r.path))
					continue
				}
			} else if ferr == nil && st.Size() < r.off {
				if _, err := r.f.Seek(0, io.SeekStart); err == nil {
					r.note(fmt.Sprintf("%s was truncated (%d bytes, %d read); reading it again from the start", r.path, st.Size(), r.off))
					r.off = 0
					r.switches++
					continue
				}
			}
		}
		if h := followAtEOF.Load(); h != nil {
			(*h)(r.path, r.switches, r.off)
		}
		select {
		case <-r.ctx.Done():
			return 0, io.EOF
		case <-time.After(100 * time.Millisecond):
		}
	}
}
