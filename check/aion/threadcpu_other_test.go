//go:build !linux

package aion

import "time"

// threadCPU cannot be read here (see the Linux version).
func threadCPU() (time.Duration, bool) { return 0, false }
