package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

// versionInfo describes the running binary from its embedded build
// information (runtime/debug.ReadBuildInfo): the module version (a tag for
// `go install ...@vX`, "(devel)" for a build from a checkout), and the VCS
// revision, time and modified flag that `go build` stamps in a checkout.
func versionInfo() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "txray (no build information) " + runtime.Version()
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	s := "txray " + v
	var rev, at, dirty string
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.time":
			at = kv.Value
		case "vcs.modified":
			if kv.Value == "true" {
				dirty = " (modified)"
			}
		}
	}
	if rev != "" {
		s += ", commit " + rev + dirty
		if at != "" {
			s += " of " + at
		}
	} else {
		s += ", no VCS commit recorded (built outside a git checkout, or with -buildvcs=false)"
	}
	return s + ", " + bi.GoVersion + " " + runtime.GOOS + "/" + runtime.GOARCH
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print txray's module version, VCS commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionInfo())
			return nil
		},
	}
}
