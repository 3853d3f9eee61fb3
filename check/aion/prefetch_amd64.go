package aion

// prefetch asks the processor to bring the cache line at p into its
// caches without waiting for it (PREFETCHT0: it never faults, so p may be
// any address). Checker.Prefetch uses it to start a later transaction's
// cache misses while the current one is checked.
//
//go:noescape
func prefetch(p uintptr)
