//go:build !amd64

package aion

// prefetch does nothing on this architecture (see prefetch_amd64.go).
func prefetch(p uintptr) {}
