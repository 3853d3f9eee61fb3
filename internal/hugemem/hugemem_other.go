//go:build !linux

package hugemem

// Reserve does nothing outside Linux (returns 0).
func Reserve(n uintptr) uintptr { return 0 }

func memTotal() uint64 { return 0 }
