//go:build unix

package corpus_test

import (
	"syscall"
	"time"
)

// cpuTime returns the process's user and system CPU time so far, so that a benchmark
// on a shared machine can report its speed per CPU second as well as per second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
