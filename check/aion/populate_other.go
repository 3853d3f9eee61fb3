//go:build !linux

package aion

import "unsafe"

// populate is not available here: pages are touched instead (pageMaker).
func populate(unsafe.Pointer, uintptr) bool { return false }
