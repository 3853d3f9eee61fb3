//go:build !(linux || darwin || freebsd)

package cli

import (
	"io"
	"os"
)

// inputMap: input files are read with read(2) on this platform (see
// watch_mmap_unix.go).
type inputMap struct {
	data []byte
	skip int
	end  int64
	f    *os.File
}

var mapMin int64 = 8 << 20

func mapInput(io.Reader) *inputMap { return nil }

func (m *inputMap) release(int) {}

func (m *inputMap) close() {}
