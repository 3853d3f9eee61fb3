package history

import (
	"os"
	"syscall"
	"unsafe"
)

const canDrop = true

// mmapFile maps size bytes of f read-only; nil when the kernel refuses.
func mmapFile(f *os.File, size int) ([]byte, func([]byte)) {
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil
	}
	return b, func(b []byte) { _ = syscall.Munmap(b) }
}

// dropPages takes the n bytes of whole pages at p out of the resident set
// (madvise MADV_DONTNEED: a file mapping's pages are mapped in again from
// the page cache when read).
func dropPages(p unsafe.Pointer, n uintptr) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(p), n, syscall.MADV_DONTNEED)
}
