//go:build !unix

package procstat

import "time"

// CPUTime reports that this system's CPU time is not read (no getrusage).
func CPUTime() (user, sys time.Duration, ok bool) { return 0, 0, false }
