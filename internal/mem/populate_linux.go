package mem

import (
	"os"
	"syscall"
	"unsafe"
)

// CanPopulate reports whether Populate can work on this system (Linux;
// older kernels may still refuse it).
const CanPopulate = true

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14).
const madvPopulateWrite = 23

// populate faults in the whole pages inside [p, p+n) for writing; false
// when the kernel refuses (older kernels: EINVAL).
func populate(p unsafe.Pointer, n uintptr) bool {
	ps := uintptr(os.Getpagesize())
	lo := (uintptr(p) + ps - 1) &^ (ps - 1)
	hi := (uintptr(p) + n) &^ (ps - 1)
	if hi <= lo {
		return true
	}
	_, _, e := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvPopulateWrite)
	return e == 0
}
