package history

import (
	"github.com/txray/txray/internal/mem"
	"io"
	"runtime"
	"unsafe"
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
type OpArenas = Arenas[Op]

// NewOpArenas returns arenas of n ops each. Stop ends the helper
// goroutine.
func NewOpArenas(n int) *OpArenas { return NewArenas[Op](n) }

// Arenas hands out slices of T of a fixed length, allocated and faulted
// in (populated by the kernel on Linux, else touched) on another goroutine
// when at least 2 Ps are available. T must hold no pointers that the helper's zero writes
// could matter to (it writes zero values only).
type Arenas[T any] struct {
	n    int
	ch   chan []T
	done chan struct{}
}

// NewArenas returns arenas of n elements each. Stop ends the helper
// goroutine.
func NewArenas[T any](n int) *Arenas[T] {
	a := &Arenas[T]{n: n}
	if runtime.GOMAXPROCS(0) < 2 {
		return a
	}
	a.ch = make(chan []T, aheadBlocks)
	a.done = make(chan struct{})
	var zero T
	step := max(1, 4096/max(1, int(unsafe.Sizeof(zero))))
	go func() {
		for {
			s := make([]T, n)
			// Ask the kernel to fault the pages in (one request
			// instead of a fault per page), else one write per
			// 4 KiB page faults it in.
			if !mem.CanPopulate || !mem.Populate(s) {
				for i := 0; i < len(s); i += step {
					s[i] = zero
				}
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

// Next returns a fresh zeroed arena of at least min elements.
func (a *Arenas[T]) Next(min int) []T {
	if a.ch == nil || min > a.n {
		return make([]T, max(a.n, min))
	}
	return <-a.ch
}

// Stop ends the helper goroutine; Next must not be called afterwards.
func (a *Arenas[T]) Stop() {
	if a.done != nil {
		close(a.done)
	}
}

// TxnPrefaulter faults in the pages of a transaction table's spare
// capacity on another goroutine, a few megabytes ahead of a decoder that
// appends to it, so that the appends do not take the page faults of a
// freshly allocated table (a 1M-transaction history's table is 150 MB).
// It asks the kernel to populate the pages (Linux madvise
// MADV_POPULATE_WRITE): no Go code writes the memory, so the appends do
// not race with it. Elsewhere, with fewer than 2 Ps, or when the kernel
// refuses, it does nothing.
type TxnPrefaulter struct {
	at      chan int
	done    chan struct{}
	stopped bool
}

// prefaultAhead is how far past the decoder's position the helper
// populates, and prefaultStep the size of one request.
const (
	prefaultAhead = 16 << 20
	prefaultStep  = 2 << 20
)

// PrefaultTxns starts faulting in ts[len(ts):cap(ts)] ahead of the
// appends, which the caller reports with Advance. Stop ends the helper.
func PrefaultTxns(ts []Txn) *TxnPrefaulter {
	p := &TxnPrefaulter{}
	spare := cap(ts) - len(ts)
	if runtime.GOMAXPROCS(0) < 2 || spare <= 0 || !mem.CanPopulate {
		return p
	}
	at, done := make(chan int, 1), make(chan struct{})
	p.at, p.done = at, done
	base := unsafe.Pointer(unsafe.SliceData(ts[len(ts):cap(ts)]))
	size := unsafe.Sizeof(Txn{})
	n := uintptr(spare) * size
	start := len(ts)
	go func() {
		pos := uintptr(0) // bytes of the spare part appended so far
		for off := uintptr(0); off < n; {
			if off >= pos+prefaultAhead {
				select {
				case l := <-at:
					pos = uintptr(max(0, l-start)) * size
				case <-done:
					return
				}
				continue
			}
			select {
			case <-done:
				return
			default:
			}
			if !mem.PopulateBytes(unsafe.Add(base, off), min(prefaultStep, n-off)) {
				return
			}
			off += prefaultStep
		}
		runtime.KeepAlive(ts)
	}()
	return p
}

// Advance reports that the table now holds n transactions (cheap; call it
// every few thousand appends).
func (p *TxnPrefaulter) Advance(n int) {
	if p == nil || p.at == nil {
		return
	}
	select {
	case <-p.at:
	default:
	}
	select {
	case p.at <- n:
	default:
	}
}

// Stop ends the helper (it may finish its current request afterwards).
func (p *TxnPrefaulter) Stop() {
	if p != nil && p.done != nil && !p.stopped {
		p.stopped = true
		close(p.done)
	}
}
