package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startWatch runs `txray watch args...` in the background and returns its
// HTTP address (when --http is given), a cancel function and the result
// channel.
func startWatch(t *testing.T, args ...string) (addr string, out, errb *syncBuffer, cancel func(), done chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	out, errb = &syncBuffer{}, &syncBuffer{}
	root := NewRoot(out, errb)
	root.SetArgs(append([]string{"watch"}, args...))
	done = make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	for _, a := range args {
		if a == "--http" {
			for deadline := time.Now().Add(10 * time.Second); addr == ""; {
				if time.Now().After(deadline) {
					t.Fatalf("no listening address: %s", errb.String())
				}
				if _, a, ok := strings.Cut(errb.String(), "listening on "); ok {
					addr, _, _ = strings.Cut(a, "\n")
				} else {
					time.Sleep(5 * time.Millisecond)
				}
			}
		}
	}
	return addr, out, errb, cancel, done
}

func exitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if err != nil {
		return ExitUsage
	}
	return ExitValid
}

func waitDone(t *testing.T, done chan error, within time.Duration) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		t.Fatalf("watch did not stop within %s", within)
	}
	return nil
}

// TestWatchBadLineMidStreamSkipped: a bad line in the middle of a valid
// stream is reported with its line number, skipped and counted; the lines
// after it are still checked; the verdict is not "valid" (input was
// rejected) and the exit code is 2.
func TestWatchBadLineMidStreamSkipped(t *testing.T) {
	in := `{"txray":1}` + "\n" + fig15T1 + "\n" + `{"id":"bad","status":"committed","ops":[{"f":"q"}]}` + "\n" + fig15T2 + "\n"
	for _, args := range [][]string{{"--json"}, {"--json", "--checker", "leopard", "--model", "postgres:serializable"}} {
		code, out, errs := runWatch(t, in, args...)
		if code != ExitUsage || !strings.Contains(errs, "<stdin>:3") {
			t.Fatalf("%v: exit %d, stderr %s", args, code, errs)
		}
		r := parseWatch(t, out)
		if r.Valid == true || r.Stats["rejected_records"] != float64(1) {
			t.Fatalf("%v: %s", args, out)
		}
		if len(args) == 1 && r.Stats["txns"] != float64(2) {
			t.Fatalf("%v: lines after the bad one not checked: %s", args, out)
		}
	}
}

// TestWatchNothingCheckedIsNotValid: no transaction received (empty input,
// a header only, only rejected lines) is never "valid": true.
func TestWatchNothingCheckedIsNotValid(t *testing.T) {
	for _, in := range []string{"", `{"txray":1}` + "\n", "not json\n"} {
		for _, args := range [][]string{{"--json"}, {"--json", "--checker", "leopard", "--model", "postgres:serializable"}} {
			code, out, _ := runWatch(t, in, args...)
			r := parseWatch(t, out)
			if r.Valid == true || code == ExitValid {
				t.Fatalf("input %q %v: exit %d %s", in, args, code, out)
			}
		}
	}
}

// TestWatchHTTPLoopbackByDefault: an address without a host listens on the
// loopback interface only; other interfaces must be named.
func TestWatchHTTPLoopbackByDefault(t *testing.T) {
	for in, want := range map[string]string{":8080": "127.0.0.1:8080", "8080": "127.0.0.1:8080", "0.0.0.0:8080": "0.0.0.0:8080",
		"[::]:9": "[::]:9", "localhost:1": "localhost:1"} {
		if got, err := httpListenAddr(in); err != nil || got != want {
			t.Errorf("%q: got %q %v, want %q", in, got, err, want)
		}
	}
	if _, err := httpListenAddr("nonsense"); err == nil {
		t.Error("nonsense address accepted")
	}
	addr, _, _, cancel, done := startWatch(t, "--json", "--http", ":0", "--tick", "10ms")
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("--http :0 listens on %q", addr)
	}
	cancel()
	waitDone(t, done, 10*time.Second)
}

// endless is a request body that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestWatchHTTPBodyLimit413: a body over --max-body is refused with 413,
// declared (Content-Length of 1 GB) or streamed without a length.
func TestWatchHTTPBodyLimit413(t *testing.T) {
	addr, _, _, cancel, done := startWatch(t, "--json", "--http", "127.0.0.1:0", "--tick", "10ms", "--max-body", "1048576")
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", io.LimitReader(endless{}, 1<<30))
	req.ContentLength = 1 << 30
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("1 GB declared: %v %v", resp, err)
	}
	resp.Body.Close()
	req, _ = http.NewRequest(http.MethodPost, "http://"+addr+"/", io.LimitReader(endless{}, 1<<30))
	req.ContentLength = -1 // chunked
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("1 GB chunked: %v %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	waitDone(t, done, 10*time.Second)
}

// TestWatchHTTPStalledClientBlocksNothing: a client that sends headers and
// part of a body, then stalls, delays neither /status, nor another POST,
// nor SIGTERM by more than its read deadline. The bounds leave room for a
// loaded CI machine (a run at load 20 took 5.8 s for SIGTERM with a 2 s
// deadline and 1.5 s of slack): /status and the POST must finish well
// before the stalled request's deadline (blocked, they could not finish
// before it), and SIGTERM within the deadline, the shutdown's 1 s grace and
// 4 s of slack (blocked, it would never finish: the bug this guards).
func TestWatchHTTPStalledClientBlocksNothing(t *testing.T) {
	for _, checker := range []string{"aion", "leopard"} {
		t.Run(checker, func(t *testing.T) {
			args := []string{"--json", "--http", "127.0.0.1:0", "--tick", "10ms", "--read-timeout", "4s", "--checker", checker}
			if checker == "leopard" {
				args = append(args, "--model", "postgres:serializable")
			}
			addr, _, errb, _, done := startWatch(t, args...)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n[{\"id\":")
			time.Sleep(50 * time.Millisecond)
			start := time.Now()
			resp, err := http.Get("http://" + addr + "/status")
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("/status: %v %v", resp, err)
			}
			resp.Body.Close()
			line := fig15T1
			if checker == "leopard" {
				line = `{"id":"a","session":"s","status":"committed","invoke":1,"complete":5,"ops":[{"f":"w","k":"x","v":1,"invoke":2,"complete":3}]}`
			}
			resp, err = http.Post("http://"+addr+"/", "application/json", strings.NewReader(line+"\n"))
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("POST beside a stalled one: %v %v", resp, err)
			}
			resp.Body.Close()
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("/status and a POST took %s beside a stalled client (read deadline 4s)", d)
			}
			start = time.Now()
			if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			err = waitDone(t, done, 20*time.Second)
			if d := time.Since(start); d > 4*time.Second+time.Second+4*time.Second {
				t.Fatalf("SIGTERM took %s with a stalled client (read deadline 4s, shutdown grace 1s)", d)
			}
			if code := exitCode(err); code == ExitUsage {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
		})
	}
}

// TestWatchFollowRotationAndTruncation: --follow keeps reading when the
// file is rotated (renamed away and recreated) and when it is truncated.
// Each step waits until the follower has read the file it follows to its
// end (followAtEOF: the number of switches it followed and the offset it
// reached), so no write races the follower: T1 is read before the rotation,
// T2 before the truncation, T3 before the end (it once failed under load
// when it slept instead).
func TestWatchFollowRotationAndTruncation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "h.jsonl")
	first := `{"txray":1}` + "\n" + fig15T1 + "\n"
	// blank lines after T2 make the file longer than what replaces it
	second := fig15T2 + "\n" + strings.Repeat("\n", 200)
	third := fig15T3 + "\n"
	if err := os.WriteFile(path, []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	type pos struct {
		switches int
		off      int64
	}
	reached := make(chan pos, 1)
	hook := func(p string, switches int, off int64) {
		if p != path {
			return
		}
		select { // keep only the latest position
		case <-reached:
		default:
		}
		reached <- pos{switches, off}
	}
	followAtEOF.Store(&hook)
	t.Cleanup(func() { followAtEOF.Store(nil) })
	waitAt := func(want pos) {
		t.Helper()
		deadline := time.After(60 * time.Second) // a hang guard, not a timing assertion
		for {
			select {
			case p := <-reached:
				if p == want {
					return
				}
			case <-deadline:
				t.Fatalf("follower never reached %+v", want)
			}
		}
	}
	_, out, errb, cancel, done := startWatch(t, "--json", "--follow", path, "--tick", "10ms")
	waitAt(pos{0, int64(len(first))})
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(second), 0o644); err != nil {
		t.Fatal(err)
	}
	waitAt(pos{1, int64(len(second))})
	if err := os.WriteFile(path, []byte(third), 0o644); err != nil { // truncated, then shorter
		t.Fatal(err)
	}
	waitAt(pos{2, int64(len(third))})
	cancel()
	err := waitDone(t, done, 60*time.Second)
	if exitCode(err) != ExitInvalid {
		t.Fatalf("exit %v; stderr %s; out %s", err, errb.String(), out.String())
	}
	r := parseWatch(t, out.String())
	if r.Stats["txns"] != float64(3) || strings.Join(r.AnomalyTypes, ",") != "ext" {
		t.Fatalf("%+v; stderr %s", r, errb.String())
	}
	if !strings.Contains(errb.String(), "rotated") || !strings.Contains(errb.String(), "truncated") {
		t.Fatalf("rotation and truncation not reported: %s", errb.String())
	}
}

// validSessions is a valid history (serial execution: every read returns
// the latest committed value; timestamps and client intervals follow the
// serial order) of nsess sessions, as one JSON Lines body per session. In
// each session's body, many reads return values written by transactions of
// sessions posted later.
func validSessions(nsess, ntx int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 1))
	val := map[string]int{}
	bodies := make([]string, nsess)
	next := 1
	for i := 0; i < ntx; i++ {
		s := i % nsess
		ts := int64(10 * (i + 1))
		var ops []string
		for j := 0; j < 3; j++ {
			k := fmt.Sprintf("k%d", rng.IntN(3))
			oi, oc := ts+int64(2*j)+1, ts+int64(2*j)+2
			if rng.IntN(2) == 0 {
				v := "null"
				if x, ok := val[k]; ok {
					v = fmt.Sprint(x)
				}
				ops = append(ops, fmt.Sprintf(`{"f":"r","k":%q,"v":%s,"invoke":%d,"complete":%d}`, k, v, oi, oc))
			} else {
				val[k] = next
				ops = append(ops, fmt.Sprintf(`{"f":"w","k":%q,"v":%d,"invoke":%d,"complete":%d}`, k, next, oi, oc))
				next++
			}
		}
		bodies[s] += fmt.Sprintf(`{"id":"t%d","session":"s%d","status":"committed","start_ts":%d,"commit_ts":%d,"invoke":%d,"complete":%d,"ops":[%s]}`+"\n",
			i, s, ts, ts+8, ts, ts+8, strings.Join(ops, ","))
	}
	return bodies
}

// TestWatchLateSessionsNeverInvalid (issue 12 bar): a valid history POSTed
// session by session, with delays beyond --final-after between sessions,
// is never reported INVALID, by aion or by leopard: late arrivals re-open
// the verdicts they affect or make the verdict unknown with the reason.
func TestWatchLateSessionsNeverInvalid(t *testing.T) {
	for _, checker := range []string{"aion", "leopard"} {
		t.Run(checker, func(t *testing.T) {
			args := []string{"--json", "--http", "127.0.0.1:0", "--tick", "5ms", "--final-after", "30ms", "--checker", checker}
			if checker == "leopard" {
				args = append(args, "--model", "postgres:serializable")
			}
			addr, out, errb, cancel, done := startWatch(t, args...)
			for _, body := range validSessions(4, 60, 7) {
				resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(body))
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("POST: %v %v", resp, err)
				}
				resp.Body.Close()
				time.Sleep(120 * time.Millisecond) // 4 × --final-after
			}
			cancel()
			err := waitDone(t, done, 10*time.Second)
			r := parseWatch(t, out.String())
			if exitCode(err) == ExitInvalid || r.Valid == false {
				t.Fatalf("valid history reported invalid: %s\nstderr %s", out.String(), errb.String())
			}
			if r.Valid == "unknown" && !strings.Contains(out.String(), `"reason"`) {
				t.Fatalf("unknown without a reason: %s", out.String())
			}
			t.Logf("%s: %v", checker, r.Valid)
		})
	}
}

// TestWatchLateSessionsWithinWindowValid: the same history POSTed session
// by session within --final-after is judged exactly: valid.
func TestWatchLateSessionsWithinWindowValid(t *testing.T) {
	for _, checker := range []string{"aion", "leopard"} {
		t.Run(checker, func(t *testing.T) {
			args := []string{"--json", "--http", "127.0.0.1:0", "--tick", "5ms", "--final-after", "10s", "--checker", checker}
			if checker == "leopard" {
				args = append(args, "--model", "postgres:serializable")
			}
			addr, out, errb, cancel, done := startWatch(t, args...)
			for _, body := range validSessions(4, 60, 7) {
				resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(body))
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("POST: %v %v", resp, err)
				}
				resp.Body.Close()
			}
			cancel()
			err := waitDone(t, done, 10*time.Second)
			if r := parseWatch(t, out.String()); exitCode(err) != ExitValid || r.Valid != true {
				t.Fatalf("exit %v: %s\nstderr %s", err, out.String(), errb.String())
			}
		})
	}
}

// TestWatchSizeFlagsOverflowRejected: --spill-limit and --memory-limit are
// MiB counts converted to bytes with << 20; a value whose byte count would
// overflow int64 (and wrap to a small or negative bound) is a usage error
// that names the flag, as is a negative one; the largest value that fits is
// accepted.
func TestWatchSizeFlagsOverflowRejected(t *testing.T) {
	big := fmt.Sprint(int64(maxMiB) + 1)
	for _, tc := range []struct {
		args []string
		bad  string // flag named in the error; "" = accepted
	}{
		{[]string{"--checker", "leopard", "--model", "postgres:serializable", "--spill-limit", big}, "--spill-limit"},
		{[]string{"--checker", "leopard", "--model", "postgres:serializable", "--spill-limit", "9223372036854775807"}, "--spill-limit"},
		{[]string{"--checker", "leopard", "--model", "postgres:serializable", "--spill-limit", "-1"}, "--spill-limit"},
		{[]string{"--spill-limit", big}, "--spill-limit"},
		{[]string{"--memory-limit", big}, "--memory-limit"},
		{[]string{"--checker", "leopard", "--model", "postgres:serializable", "--memory-limit", "-5"}, "--memory-limit"},
		{[]string{"--checker", "leopard", "--model", "postgres:serializable", "--spill-limit", fmt.Sprint(int64(maxMiB))}, ""},
	} {
		var out, errb strings.Builder
		root := NewRoot(&out, &errb)
		root.SetIn(strings.NewReader(""))
		root.SetArgs(append([]string{"watch"}, tc.args...))
		err := root.Execute()
		if tc.bad == "" {
			if code := exitCode(err); code == ExitUsage && strings.Contains(fmt.Sprint(err), "limit") {
				t.Errorf("%v: rejected: %v", tc.args, err)
			}
			continue
		}
		if code := exitCode(err); code != ExitUsage || !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("%v: exit %d, error %v; want a usage error naming %s", tc.args, code, err, tc.bad)
		}
	}
}
