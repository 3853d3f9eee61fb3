// Package hugemem lets the Go heap be backed by transparent huge pages on
// Linux systems whose policy is "madvise" (the default of Debian, Ubuntu
// and many cloud images).
//
// Why: checking a history touches hundreds of megabytes of freshly mapped
// memory once (decoded transactions, ops, dependency graphs, version
// tables). With 4 KiB pages every first touch is a page fault, and every
// random access a likely TLB miss; on virtual machines with nested paging
// both cost several times what they cost on bare metal. Measured on the
// project's 2-core VM (docs/benchmarks.md, "hugemem"): the same binary
// checked the 1M-transaction EDN history in 4.3–5.0 s with policy madvise
// and 1.6 s with policy always.
//
// The Go runtime advises huge pages only for its own metadata; under the
// madvise policy its heap gets 4 KiB pages. Reserve maps a region of heap
// address space at start-up, advises MADV_HUGEPAGE on it, and returns it
// to the runtime unused (released to the OS: no memory is consumed). The
// runtime's page allocator reuses the lowest free addresses first, so the
// heap then grows into the advised region, whose first touches fault in
// 2 MiB pages.
package hugemem

import (
	"os"
	"strings"
)

// Env is the environment variable that turns Reserve off when set to 0,
// off or false (for comparisons, or a system where huge pages misbehave).
const Env = "TXRAY_HUGEPAGES"

// Policy returns the kernel's transparent huge page policy: "always",
// "madvise", "never", or "" when unknown (not Linux, no THP support).
func Policy() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.IndexByte(s, '[')
	j := strings.IndexByte(s, ']')
	if i < 0 || j < i {
		return ""
	}
	return s[i+1 : j]
}

// disabled reports whether the user turned Reserve off through Env.
func disabled() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(Env))) {
	case "0", "off", "false", "no":
		return true
	}
	return false
}

// ForInput returns the region Reserve should advise for a command whose
// input totals n bytes (n < 0: unknown, e.g. standard input): four times
// the input plus 256 MiB (decoded histories and their graphs take 1–3
// times the file's size; docs/benchmarks.md), at most a quarter of the
// machine's memory and 16 GiB. The region costs no resident memory while
// unused, only its share of the runtime's page metadata (about 4 MiB per
// GiB), which is why it is sized rather than taken as large as possible.
func ForInput(n int64) uintptr {
	limit := uint64(16 << 30)
	if m := memTotal(); m > 0 {
		limit = min(limit, m/4)
	}
	if n < 0 {
		return uintptr(min(limit, 4<<30))
	}
	want := uint64(n)*4 + 256<<20
	return uintptr(min(want, limit))
}
