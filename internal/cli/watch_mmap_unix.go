//go:build linux || darwin || freebsd

package cli

import (
	"io"
	"os"
	"syscall"
)

// inputMap is the rest of a regular input file (stdin redirected from a
// file: txray watch < FILE), mapped read-only, so that watch's batches of
// lines are slices of the page cache instead of copies made by read(2):
// on the committed-heavy stream of docs/benchmarks.md (issue 17 item 4)
// the copy was about a tenth of the process's CPU time. Data appended to
// the file after it was mapped, and a last line without a newline, are
// read with read(2) after the mapping (consume). A fault reading the
// mapping (the file was truncated meanwhile) is turned into a read error
// by the goroutines that read it (debug.SetPanicOnFault), never a crash.
type inputMap struct {
	data     []byte // the mapping, from a page boundary at or before the read offset
	skip     int    // bytes of data before the read offset
	end      int64  // file offset of the end of data
	f        *os.File
	released int // data[:released] was handed back (MADV_DONTNEED)
}

// mapMin is the smallest rest of a file that is mapped (tests lower it).
var mapMin int64 = 8 << 20

// mapInput maps the rest of r when it is a regular file of at least
// mapMin bytes from its current offset on; otherwise (a pipe, a terminal,
// a small file, any error) it returns nil and r is read as it is.
func mapInput(r io.Reader) *inputMap {
	f, ok := r.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil || st.Size()-off < mapMin {
		return nil
	}
	page := int64(os.Getpagesize())
	base := off &^ (page - 1)
	n := st.Size() - base
	if int64(int(n)) != n {
		return nil
	}
	data, err := syscall.Mmap(int(f.Fd()), base, int(n), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL)
	return &inputMap{data: data, skip: int(off - base), end: st.Size(), f: f}
}

// release hands back the pages wholly before data[upto] (every line there
// was decoded), at most every few MiB, so that the mapped file does not
// grow the resident set: a page is read again from the page cache if
// touched later, so releasing is never wrong, only slower.
func (m *inputMap) release(upto int) {
	page := os.Getpagesize()
	upto &^= page - 1
	if upto-m.released < 4<<20 {
		return
	}
	_ = syscall.Madvise(m.data[m.released:upto], syscall.MADV_DONTNEED)
	m.released = upto
}

// close unmaps the file; nothing may read data afterwards.
func (m *inputMap) close() { _ = syscall.Munmap(m.data) }
