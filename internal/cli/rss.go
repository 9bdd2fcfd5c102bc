package cli

import (
	"bytes"
	"os"
	"strconv"
)

// peakRSS returns the peak resident set size of this process in bytes, from the VmHWM line
// of /proc/self/status ("VmHWM:   123456 kB"). It returns 0 where that file does not exist
// (systems other than Linux) or cannot be parsed.
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	return parseVmHWM(b)
}

// parseVmHWM returns the VmHWM of a /proc/self/status text in bytes, or 0.
func parseVmHWM(status []byte) uint64 {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("VmHWM:"))
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
