//go:build !unix

package corpus_test

import "time"

// cpuTime is unknown here: 0, and the benchmarks report no CPU-time metric.
func cpuTime() time.Duration { return 0 }
