//go:build !linux

package mem

import "unsafe"

// CanPopulate reports whether Populate can work on this system.
const CanPopulate = false

func populate(unsafe.Pointer, uintptr) bool { return false }
