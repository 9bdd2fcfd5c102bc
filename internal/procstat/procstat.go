// Package procstat reads this process's memory figures from /proc/self/status (Linux)
// and its CPU time (getrusage, Unix), for the commands and benchmarks that report them.
package procstat

import (
	"bytes"
	"os"
	"strconv"
)

// PeakRSS returns the peak resident set size of this process in bytes (VmHWM), or 0
// where /proc/self/status does not exist (systems other than Linux) or cannot be parsed.
func PeakRSS() uint64 { return read("VmHWM") }

// RSS returns the resident set size of this process in bytes now (VmRSS), or 0 as
// PeakRSS does.
func RSS() uint64 { return read("VmRSS") }

func read(field string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	return parse(b, field)
}

// parse returns the value of field, in bytes, from a /proc/self/status text
// ("VmHWM:   123456 kB"), or 0.
func parse(status []byte, field string) uint64 {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte(field+":"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0
		}
		kb, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// Bytes formats a byte count as people read it, in powers of 1000: "512 B", "12.3 MB".
func Bytes(n int64) string {
	const unit = 1000
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + "kMGTPE"[exp:exp+1] + "B"
}
