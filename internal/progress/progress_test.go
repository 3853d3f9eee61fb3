package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// A pipe or file (as under `go test`) is not a terminal: everything is a
// no-op and Func returns nil so checkers skip progress work.
func TestDisabledWhenNotTerminal(t *testing.T) {
	old := enabled
	defer func() { enabled = old }()
	enabled = func() bool { return false }
	b := New(10, "x", false)
	if b.Enabled() {
		t.Fatal("bar enabled without a terminal")
	}
	b.Add(3)
	b.Set(5)
	b.Finish()
	if f := Func(false); f != nil {
		t.Fatal("Func returned a callback without a terminal")
	}
	var nb *Bar
	nb.Add(1) // nil bar is a valid no-op
	nb.Finish()
}

func TestQuietWinsOverTerminal(t *testing.T) {
	old := enabled
	defer func() { enabled = old }()
	enabled = func() bool { return true }
	if New(10, "x", true).Enabled() {
		t.Fatal("bar enabled with quiet")
	}
	if Func(true) != nil {
		t.Fatal("Func enabled with quiet")
	}
	if !New(10, "x", false).Enabled() {
		t.Fatal("bar disabled on a terminal")
	}
}

func TestBarDraws(t *testing.T) {
	var buf bytes.Buffer
	b := newBar(&buf, 4, "decode")
	b.Add(1)
	b.Finish()
	if !strings.Contains(buf.String(), "decode") {
		t.Fatalf("bar output lacks description: %q", buf.String())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Phases switch bars; concurrent callers (checkers report from several
// goroutines) must not race (run with -race).
func TestPhaseFunc(t *testing.T) {
	var buf syncBuf
	f := phaseFunc(&buf)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); i <= 50; i++ {
				f("graph", i, 50)
			}
		}()
	}
	wg.Wait()
	f("cycles", 1, 0) // unknown total: spinner
	f("cycles", 2, 0)
	f("cycles", 3, 3) // total changed: new bar, finished at once
	out := buf.String()
	for _, want := range []string{"graph", "cycles"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks phase %q: %q", want, out)
		}
	}
}
