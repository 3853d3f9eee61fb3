// Package cli implements the txray command line. cmd/txray only calls Main.
//
// Each subcommand lives in its own file and registers itself from init with
// register, so subcommands can be developed independently.
//
// Exit codes (design.md §6), which scripts rely on:
//
//	0 every history valid
//	1 some history invalid
//	2 usage or input error
//	3 some verdict unknown (and none invalid)
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitValid   = 0
	ExitInvalid = 1
	ExitUsage   = 2
	ExitUnknown = 3
)

// ExitError carries an exit code out of a command. Commands return it for
// verdict-driven exits (1, 3) and for usage/input errors (2).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit returns an ExitError with code and no message.
func Exit(code int) error { return &ExitError{Code: code} }

// UsageErrorf returns an exit-2 error with a message.
func UsageErrorf(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

var commands []func() *cobra.Command

// register adds a subcommand constructor; call from init.
func register(f func() *cobra.Command) { commands = append(commands, f) }

// NewRoot builds the root command with every registered subcommand.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "txray",
		Short: "txray checks whether a database gives the isolation level it claims",
		Long: `txray records transaction histories from databases and checks them for
isolation anomalies (Adya/Elle vocabulary), offline or online, and analyses
application SQL traces for transactions that break under weak levels.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: err}
	})
	var cpuProfile, memProfile, traceFile string
	var stopProfile func()
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile (pprof) of the command to this file")
	root.PersistentFlags().Lookup("cpuprofile").Hidden = true
	root.PersistentFlags().StringVar(&memProfile, "memprofile", "", "write a heap profile (pprof) to this file when the command ends; it shows the live heap as of the last garbage collection (no collection is forced, so state the command held until its end is still in it)")
	root.PersistentFlags().Lookup("memprofile").Hidden = true
	root.PersistentFlags().StringVar(&traceFile, "trace", "", "write an execution trace (runtime/trace; go tool trace) of the command to this file")
	root.PersistentFlags().Lookup("trace").Hidden = true
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		adviseHugePages(c, args)
		if traceFile != "" {
			f, err := os.Create(traceFile)
			if err != nil {
				return err
			}
			if err := trace.Start(f); err != nil {
				f.Close()
				return err
			}
			stopProfile = func() {
				trace.Stop()
				f.Close()
			}
		}
		if memProfile != "" {
			traceStop := stopProfile
			stopProfile = func() {
				if f, err := os.Create(memProfile); err == nil {
					pprof.WriteHeapProfile(f)
					f.Close()
				}
				if traceStop != nil {
					traceStop()
				}
			}
		}
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		memStop := stopProfile
		stopProfile = func() {
			pprof.StopCPUProfile()
			f.Close()
			if memStop != nil {
				memStop()
			}
		}
		return nil
	}
	for _, f := range commands {
		root.AddCommand(f())
	}
	profileStop = func() {
		if stopProfile != nil {
			stopProfile()
			stopProfile = nil
		}
	}
	return root
}

// profileStop ends a --cpuprofile started by the last NewRoot and writes
// its --memprofile.
var profileStop = func() {}

// Main runs the CLI with args and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	root := NewRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	profileStop()
	if err == nil {
		return ExitValid
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(stderr, "txray:", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintln(stderr, "txray:", err)
	return ExitUsage
}

// Run is Main on the process's own arguments and streams.
func Run() int { return Main(os.Args[1:], os.Stdout, os.Stderr) }
