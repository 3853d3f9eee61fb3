package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
)

// helperArgsEnv carries the arguments of a `txray` run in a child process
// (TestRunHelperProcess) for the tests that signal it.
const helperArgsEnv = "TXRAY_CLI_HELPER_ARGS"

// TestRunHelperProcess is not a test: run as a child process with
// helperArgsEnv set, it is the txray binary (the arguments are separated by
// newlines).
func TestRunHelperProcess(t *testing.T) {
	args := os.Getenv(helperArgsEnv)
	if args == "" {
		return
	}
	os.Exit(Main(strings.Split(args, "\n"), os.Stdout, os.Stderr))
}

// TestRunDrainsOnSignal: SIGTERM (what timeout, systemd and container
// runtimes send) and SIGINT both stop a `txray run` cleanly: transactions in
// flight finish, and the run still writes a complete history, checks it and
// writes the report, exiting with the verdict's code (0: SQLite
// serializable is valid), not 143/130. A real signal to a child process.
func TestRunDrainsOnSignal(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(exe, "-test.run=^TestRunHelperProcess$")
			cmd.Env = append(os.Environ(), helperArgsEnv+"="+strings.Join([]string{"run", "--quiet", "--out", dir, "--duration", "10m", "--seed", "3"}, "\n"))
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Signal once transactions are being recorded.
			path := filepath.Join(dir, "history.jsonl")
			deadline := time.Now().Add(2 * time.Minute)
			for {
				b, _ := os.ReadFile(path)
				if bytes.Count(b, []byte("\n")) > 20 {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("no transactions recorded after 2 minutes\nstderr:\n%s", errb.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			if code != ExitValid {
				t.Fatalf("exit %d (%v) after %v, want %d\nstdout:\n%s\nstderr:\n%s", code, err, sig, ExitValid, out.String(), errb.String())
			}
			if !strings.Contains(errb.String(), "interrupted: stopped after") || !strings.Contains(out.String(), "VALID") {
				t.Errorf("no interruption notice or verdict\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			h, err := jsonl.Decode(f, history.DecodeOptions{Name: path})
			if err != nil {
				t.Fatalf("history left by the interrupted run: %v", err)
			}
			if len(h.Notes) != 0 || len(h.Txns) == 0 {
				t.Errorf("history has %d txns, notes %q: want complete lines only", len(h.Txns), h.Notes)
			}
			if !strings.Contains(out.String(), "ran "+strconv.Itoa(len(h.Txns))+" txns") {
				t.Errorf("the file holds %d txns but the run reported\n%s", len(h.Txns), out.String())
			}
			for _, name := range []string{"report.json", "report.html"} {
				if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
					t.Errorf("%s not written after %v: %v", name, sig, err)
				}
			}
		})
	}
}

// TestRunHistoryWriteFailure: a history file that cannot be written
// (/dev/full) stops `txray run` with exit 2 and a message naming the file
// and the cause, not a run to the end.
func TestRunHistoryWriteFailure(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	dir := t.TempDir()
	if err := os.Symlink("/dev/full", filepath.Join(dir, "history.jsonl")); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main([]string{"run", "--quiet", "--out", dir, "--txns", "200"}, &out, &errb)
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitUsage, out.String(), errb.String())
	}
	msg := errb.String()
	if !strings.Contains(msg, "writing the history") || !strings.Contains(msg, "no space left on device") || strings.Contains(out.String(), "ran 200 txns") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out.String(), msg)
	}
}

// TestRunErrorsHideThePassword: `txray run` with a password in an address
// that fails (malformed, refused, unknown scheme) never prints it.
func TestRunErrorsHideThePassword(t *testing.T) {
	for _, u := range []string{
		"postgres://u:s3cret@127.0.0.1:1/db",
		"postgres://u:s3cret@h:port/db",
		"postgres://u@127.0.0.1:1/db?password=s3cret",
		"host=127.0.0.1 port=1 password=s3cret",
		"root:s3cret@tcp(127.0.0.1:1)/test",
		"mysql://root:s3cret@127.0.0.1:1/test",
		"oracle://scott:s3cret@h/orcl",
	} {
		var out, errb bytes.Buffer
		code := Main([]string{"run", "--db", u, "--out", t.TempDir(), "--txns", "5", "--connect-timeout", "2s"}, &out, &errb)
		if code == ExitValid {
			t.Errorf("%s: run succeeded", u[:8])
		}
		if strings.Contains(out.String()+errb.String(), "s3cret") {
			t.Errorf("the password is shown:\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
	}
}
