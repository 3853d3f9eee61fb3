//go:build !linux

package timekiller

import "unsafe"

// adviseHuge is a no-op outside Linux (see huge_linux.go).
func adviseHuge(p unsafe.Pointer, n uintptr) {}
