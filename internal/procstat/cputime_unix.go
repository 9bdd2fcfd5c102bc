//go:build unix

package procstat

import (
	"syscall"
	"time"
)

// CPUTime returns the user and system CPU time this process has used so far, from
// getrusage(2); ok is false where that is not available. One system call.
func CPUTime() (user, sys time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), true
}
