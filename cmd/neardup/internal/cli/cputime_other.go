//go:build !unix

package cli

import "time"

// cpuTime reports that this system's CPU time is not read (no getrusage).
func cpuTime() (user, sys time.Duration, ok bool) { return 0, 0, false }
