package history

import (
	"io"
	"os"
	"strings"
	"unsafe"
)

// MappedInput is the reader DecodeFile hands a decoder for a regular file
// that it has mapped into memory (on Linux, for files of at least
// mapMin bytes). Read copies from the mapping as from any reader; decoders
// that cut their input into chunks may instead take the bytes in place
// (Bytes, Advance), which saves read(2)'s copy of the whole input, and give
// back the pages of the chunks they are done with (Drop).
//
// Contract for decoders that use Bytes: the bytes are read-only (a write
// faults) and valid only until Decode returns, when DecodeFile unmaps them.
// So a decoder must keep no reference to them in what it returns (strings
// it keeps are copies), and no goroutine of it may read them after it
// returns (on every path, errors included). Other readers (stdin, pipes,
// `txray watch`'s stream) never see a MappedInput.
type MappedInput struct {
	b        []byte
	off      int
	dropped  int // bytes [0, dropped) of b were dropped (page aligned)
	progress func(int64)
	unmap    func([]byte)
}

// NewMappedInput returns a MappedInput over b (which it does not unmap);
// for tests of decoders' mapped paths.
func NewMappedInput(b []byte) *MappedInput { return &MappedInput{b: b} }

// Read implements io.Reader (copying).
func (m *MappedInput) Read(p []byte) (int, error) {
	if m.off >= len(m.b) {
		return 0, io.EOF
	}
	n := copy(p, m.b[m.off:])
	m.Advance(n)
	return n, nil
}

// Bytes returns the input not consumed yet, in place (with no spare
// capacity, so appending to it copies).
func (m *MappedInput) Bytes() []byte { return m.b[m.off:len(m.b):len(m.b)] }

// Advance consumes the first n bytes of Bytes.
func (m *MappedInput) Advance(n int) {
	m.off += n
	if m.progress != nil && n > 0 {
		m.progress(int64(m.off))
	}
}

// Drop tells that the bytes of the mapping up to the end of b (a part of
// what Bytes returned; it may be called from any goroutine, in input order)
// will not be read again: their pages leave the process's resident set,
// so the mapping does not add the input's size to the peak RSS. They stay
// in the page cache, and reading them again is still valid (they are
// mapped in again), so a late reader is slower, never wrong.
func (m *MappedInput) Drop(b []byte) {
	if len(b) == 0 || m.unmap == nil || !canDrop {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m.b)))
	end := uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(len(b))
	if end <= base || end > base+uintptr(len(m.b)) {
		return
	}
	ps := uintptr(os.Getpagesize())
	hi := (end - base) &^ (ps - 1)
	lo := uintptr(m.dropped)
	if hi <= lo {
		return
	}
	dropPages(unsafe.Add(unsafe.Pointer(unsafe.SliceData(m.b)), lo), hi-lo)
	m.dropped = int(hi)
}

// mapMin is the size from which DecodeFile maps a regular file instead of
// reading it; a variable so tests can map small files.
var mapMin int64 = 8 << 20

// mapOff disables mapping (tests of the reading path).
var mapOff bool

// MapEnv is the environment variable that turns decoding in place on
// ("1", "on", "true"). It is off by default: a file truncated by another
// process while it is decoded in place ends this process with SIGBUS (the
// pages behind the new end no longer exist), where reading it gives a
// short read and a clear error; the copies it saves cost 0.15–0.2 CPU-s
// per 500 MB (docs/benchmarks.md, edn seventh session).
const MapEnv = "TXRAY_MMAP"

func mapWanted() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(MapEnv))) {
	case "1", "on", "true", "yes":
		return true
	}
	return false
}

// mapFile maps f (size bytes) read-only, or returns nil when it cannot
// (or should not: MapEnv not set) be mapped.
func mapFile(f *os.File, size int64) *MappedInput {
	if mapOff || !mapWanted() || size < mapMin || size != int64(int(size)) {
		return nil
	}
	b, unmap := mmapFile(f, int(size))
	if b == nil {
		return nil
	}
	return &MappedInput{b: b, unmap: unmap}
}

// close unmaps m's bytes (DecodeFile, after the decoder returned).
func (m *MappedInput) close() {
	if m.unmap != nil {
		m.unmap(m.b)
		m.unmap = nil
	}
	m.b = nil
}
