// Package mem faults fresh memory in with one request to the kernel
// instead of one page fault per page.
//
// On this project's VMs a page fault on fresh memory costs several
// microseconds (the host backs the guest's page too); checkers that write
// hundreds of megabytes of fresh arrays spent a large part of their time
// in those faults. Asking the kernel to populate a range (Linux 5.14
// madvise MADV_POPULATE_WRITE) does the same work without a trap per page.
package mem

import "unsafe"

// Populate faults in the whole pages of s for writing and reports whether
// the kernel did (false elsewhere than Linux, on older kernels, or for an
// empty s). It writes nothing: the contents of s are unchanged, so it may
// run on another goroutine than the one that writes s, as long as s stays
// allocated.
func Populate[T any](s []T) bool {
	if len(s) == 0 {
		return false
	}
	var zero T
	return populate(unsafe.Pointer(unsafe.SliceData(s)), uintptr(len(s))*unsafe.Sizeof(zero))
}

// PopulateBytes is Populate for n bytes at p.
func PopulateBytes(p unsafe.Pointer, n uintptr) bool { return populate(p, n) }

// Make returns make([]T, n), populated (Populate) when it is at least
// min bytes: for big arrays about to be written all over.
func Make[T any](n int, min uintptr) []T {
	s := make([]T, n)
	var zero T
	if uintptr(n)*unsafe.Sizeof(zero) >= min {
		Populate(s)
	}
	return s
}
