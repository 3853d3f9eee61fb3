package aion

import (
	"github.com/txray/txray/internal/mem"
	"runtime"
	"sync"
	"unsafe"
)

// Fresh pages of the checker's big pointer-free arrays (the version pool's
// pages, the read queue's) are allocated and touched on a helper goroutine
// ahead of need, so that their page faults are not taken by the goroutine
// that checks: while a stream's window and its keys' versions grow, those
// first touches were about half of the page faults of `txray watch` and a
// tenth of its serial check stage (docs/benchmarks.md, issue 17 item 4,
// branch wchk). A page comes from the helper when one is ready, else it is
// allocated where it is needed, as before; the contents are the same
// (zero) either way.

// pageMaker hands out zeroed slices of n elements of T (T must hold no
// pointers), made ready by one helper goroutine per element type for the
// whole process, started at the first request. It keeps readyPages of them
// ready (and one more being made): at most 3 MiB of version pages and 1 MiB
// of read pages stay allocated, unused, once nothing asks for more.
type pageMaker[T any] struct {
	n    int
	once sync.Once
	ch   chan []T
}

// readyPages is how many pages a pageMaker keeps ready.
const readyPages = 2

// get returns a zeroed slice of m.n elements: a ready one if there is
// one, else a new one. With fewer than 2 Ps there is no helper.
func (m *pageMaker[T]) get() []T {
	if runtime.GOMAXPROCS(0) < 2 {
		return make([]T, m.n)
	}
	m.once.Do(func() {
		m.ch = make(chan []T, readyPages)
		go m.run()
	})
	select {
	case s := <-m.ch:
		return s
	default:
		return make([]T, m.n)
	}
}

// run makes pages ready: the kernel populates them (Linux), or one write
// per 4 KiB faults each page in.
func (m *pageMaker[T]) run() {
	var zero T
	step := max(1, 4096/int(unsafe.Sizeof(zero)))
	pop := true
	for {
		s := make([]T, m.n)
		if pop {
			pop = mem.Populate(s)
		}
		if !pop {
			for i := 0; i < len(s); i += step {
				s[i] = zero
			}
		}
		m.ch <- s
	}
}

var (
	versionPages = pageMaker[version]{n: vpage}
	readPages    = pageMaker[read]{n: readPage}
)
