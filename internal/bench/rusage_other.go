//go:build !unix

package bench

import "time"

// cpuTime is unavailable here; CPU seconds are reported as 0.
func cpuTime() time.Duration { return 0 }

// maxRSS is unavailable here; peak RSS is reported as 0.
func maxRSS() int64 { return 0 }
