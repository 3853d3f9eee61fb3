// Package progress draws progress bars on stderr for long txray work
// (decoding, graph building, cycle search) — but only when stderr is a
// terminal and the user did not ask for --quiet. Everywhere else (pipes, CI
// logs, --json consumers) every call is a cheap no-op, so callers never need
// to check.
//
// It wraps github.com/schollz/progressbar/v3; terminal detection uses
// golang.org/x/term.
package progress

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Output is where bars are drawn and enabled reports whether it is a
// terminal. Both are variables so tests can force a bar onto a buffer.
var (
	output  io.Writer = os.Stderr
	enabled           = func() bool { return term.IsTerminal(int(os.Stderr.Fd())) }
)

// throttle limits redraws; a bar redrawn on every op would cost more than
// the work it reports.
const throttle = 100 * time.Millisecond

// Bar is a progress bar, or a no-op when progress is disabled. The zero
// value and a nil *Bar are valid no-op bars. Methods are safe for concurrent
// use.
type Bar struct {
	pb *progressbar.ProgressBar
}

// New returns a bar for total units of work labelled desc. total <= 0 means
// the total is unknown (a spinner with a count). The bar is a no-op unless
// stderr is a terminal and quiet is false.
func New(total int64, desc string, quiet bool) *Bar {
	if quiet || !enabled() {
		return &Bar{}
	}
	return newBar(output, total, desc)
}

func newBar(w io.Writer, total int64, desc string) *Bar {
	if total <= 0 {
		total = -1
	}
	return &Bar{pb: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionThrottle(throttle),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetPredictTime(true),
	)}
}

// Enabled reports whether the bar draws anything.
func (b *Bar) Enabled() bool { return b != nil && b.pb != nil }

// Add advances the bar by n units.
func (b *Bar) Add(n int64) {
	if b.Enabled() {
		_ = b.pb.Add64(n)
	}
}

// Set moves the bar to n units done.
func (b *Bar) Set(n int64) {
	if b.Enabled() {
		_ = b.pb.Set64(n)
	}
}

// Finish completes the bar and clears it from the terminal. Further calls
// are no-ops.
func (b *Bar) Finish() {
	if b.Enabled() {
		_ = b.pb.Finish()
		_ = b.pb.Exit()
	}
}

// Func returns a callback with the signature of check.Options.Progress
// (phase, done, total): each new phase replaces the previous phase's bar.
// When progress is disabled (quiet, or stderr not a terminal) it returns
// nil, so it can be assigned to Options.Progress directly and checkers skip
// the calls entirely; callers that invoke it themselves must check for nil.
// A done >= total (with total > 0) finishes the phase's bar.
func Func(quiet bool) func(phase string, done, total int64) {
	if quiet || !enabled() {
		return nil
	}
	return phaseFunc(output)
}

func phaseFunc(w io.Writer) func(phase string, done, total int64) {
	var (
		mu       sync.Mutex
		cur      *Bar
		curPhase string
		curTotal int64
		finished bool
	)
	return func(phase string, done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		if cur == nil || phase != curPhase || total != curTotal {
			if cur != nil && !finished {
				cur.Finish()
			}
			cur, curPhase, curTotal, finished = newBar(w, total, phase), phase, total, false
		}
		if finished {
			return
		}
		cur.Set(done)
		if total > 0 && done >= total {
			cur.Finish()
			finished = true
		}
	}
}
