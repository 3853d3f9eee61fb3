//go:build linux

package timekiller

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back the 2 MiB-aligned part of the n bytes
// at p with transparent huge pages (madvise MADV_HUGEPAGE), for memory the
// decoder is about to fill and keep: one page fault per 2 MiB instead of
// one per 4 KiB. The memory must not have been touched yet to gain
// anything. It changes no contents; where the kernel has no huge page (or
// THP is off) the pages stay small. Errors are ignored.
func adviseHuge(p unsafe.Pointer, n uintptr) {
	const huge = 2 << 20
	a := (uintptr(p) + huge - 1) &^ (huge - 1)
	e := (uintptr(p) + n) &^ (huge - 1)
	if e <= a {
		return
	}
	syscall.Syscall(syscall.SYS_MADVISE, a, e-a, 14) // MADV_HUGEPAGE
}
