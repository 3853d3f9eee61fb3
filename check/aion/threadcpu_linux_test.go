package aion

import (
	"syscall"
	"time"
)

// threadCPU is the calling thread's user+system CPU time (Linux
// RUSAGE_THREAD), or false where it cannot be read. With the goroutine
// locked to its thread it is the CPU of that goroutine alone: the
// checker's serial stage without the collector's workers or helper
// goroutines (which run on other threads).
func threadCPU() (time.Duration, bool) {
	const rusageThread = 1
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
