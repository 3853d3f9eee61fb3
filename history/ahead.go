package history

import (
	"io"
	"runtime"
)

// Helpers that let a sequential decoder use a second CPU without changing
// its logic: reading the input ahead, and allocating (page-faulting) the
// memory its ops go to ahead. Decoding a 1M-transaction history writes
// about a gigabyte of fresh ops; on the decoding goroutine the page faults
// of that memory and the read system calls cost about a third of the time.

// aheadBlocks is how many blocks ReadAhead and OpArenas keep ready.
const aheadBlocks = 4

// ReadAhead returns a reader that yields r's bytes, read ahead in blocks of
// block bytes on another goroutine when at least 2 Ps are available
// (otherwise r itself). stop must be called when the reader is no longer
// needed (it ends the goroutine; the reader must not be used afterwards).
// Read errors are returned after the bytes read before them, as from r.
func ReadAhead(r io.Reader, block int) (rd io.Reader, stop func()) {
	if runtime.GOMAXPROCS(0) < 2 {
		return r, func() {}
	}
	a := &aheadReader{ch: make(chan aheadBlock, aheadBlocks), free: make(chan []byte, aheadBlocks+2), done: make(chan struct{})}
	go func() {
		defer close(a.ch)
		for {
			var buf []byte
			select {
			case buf = <-a.free:
			default:
				buf = make([]byte, block)
			}
			n, err := io.ReadFull(r, buf)
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			select {
			case a.ch <- aheadBlock{buf[:n], err}:
			case <-a.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return a, func() { close(a.done) }
}

type aheadBlock struct {
	b   []byte
	err error
}

type aheadReader struct {
	ch   chan aheadBlock
	free chan []byte
	done chan struct{}
	cur  []byte
	rest []byte
	err  error
}

func (a *aheadReader) Read(p []byte) (int, error) {
	for len(a.rest) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		if a.cur != nil {
			select {
			case a.free <- a.cur[:cap(a.cur)]:
			default:
			}
			a.cur = nil
		}
		blk, ok := <-a.ch
		if !ok {
			return 0, io.EOF
		}
		a.cur, a.rest, a.err = blk.b, blk.b, blk.err
	}
	n := copy(p, a.rest)
	a.rest = a.rest[n:]
	return n, nil
}

// OpArenas hands out op slices of a fixed length, allocated and touched
// (so their pages are faulted in) on another goroutine when at least 2 Ps
// are available.
type OpArenas struct {
	n    int
	ch   chan []Op
	done chan struct{}
}

// NewOpArenas returns arenas of n ops each. Stop ends the helper
// goroutine.
func NewOpArenas(n int) *OpArenas {
	a := &OpArenas{n: n}
	if runtime.GOMAXPROCS(0) < 2 {
		return a
	}
	a.ch = make(chan []Op, aheadBlocks)
	a.done = make(chan struct{})
	go func() {
		for {
			s := make([]Op, n)
			// One write per 4 KiB page (64 ops of 64 bytes) faults it in.
			for i := 0; i < len(s); i += 64 {
				s[i].Value = 0
			}
			select {
			case a.ch <- s:
			case <-a.done:
				return
			}
		}
	}()
	return a
}

// Next returns a fresh zeroed arena of at least min ops.
func (a *OpArenas) Next(min int) []Op {
	if a.ch == nil || min > a.n {
		return make([]Op, max(a.n, min))
	}
	return <-a.ch
}

// Stop ends the helper goroutine; Next must not be called afterwards.
func (a *OpArenas) Stop() {
	if a.done != nil {
		close(a.done)
	}
}
