package hugemem

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

const (
	madvHugepage = 14      // MADV_HUGEPAGE
	hugePage     = 2 << 20 // x86-64 and arm64 (4 KiB base pages) PMD size
)

// Reserve advises huge pages for about n bytes of heap address space above
// the heap's current end, and returns how many bytes were advised (0 when
// nothing was done: policy not "madvise", turned off through Env, strict
// overcommit accounting, or n too small). It costs one garbage collection
// of the (small) start-up heap and no resident memory. Call it once, early,
// before the program allocates its large structures.
func Reserve(n uintptr) uintptr {
	if disabled() || Policy() != "madvise" || strictOvercommit() {
		return 0
	}
	n &^= hugePage - 1
	if n < 4*hugePage {
		return 0
	}
	b := make([]byte, n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (p + hugePage - 1) &^ (hugePage - 1)
	hi := (p + n) &^ (hugePage - 1)
	var done uintptr
	if hi > lo {
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvHugepage); e == 0 {
			done = hi - lo
		}
	}
	runtime.KeepAlive(b)
	b = nil
	// Free the region and release it to the OS: it was never touched, so
	// this costs page-table walks of nothing; the advice stays on the
	// mapping.
	debug.FreeOSMemory()
	return done
}

// strictOvercommit reports vm.overcommit_memory = 2: there the advised
// region would count against the commit limit while unused.
func strictOvercommit() bool {
	b, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	if err != nil {
		return false
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && v == 2
}

// memTotal returns the machine's memory in bytes (0 when unknown).
func memTotal() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
