package corpus_test

import (
	"time"

	"github.com/neardup/neardup/internal/procstat"
)

// cpuTime returns the process's user and system CPU time so far, so that a benchmark
// on a shared machine can report its speed per CPU second as well as per second; 0
// where the system does not say.
func cpuTime() time.Duration {
	user, sys, _ := procstat.CPUTime()
	return user + sys
}
