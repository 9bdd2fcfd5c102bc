package cli

import (
	"io"
	"log/slog"
	"math"
	"runtime/debug"
	"testing"
)

// TestServeGCPercent checks the collector's setting serve makes: GOGC 200 under a memory
// limit (the flag's or GOMEMLIMIT's), the Go default without one, and GOGC's own value
// when it is set.
func TestServeGCPercent(t *testing.T) {
	prevGC, prevLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	defer func() { debug.SetGCPercent(prevGC); debug.SetMemoryLimit(prevLimit) }()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name  string
		limit byteSize
		env   map[string]string
		want  int
	}{
		{"the flag's limit", defaultMemoryLimit, nil, serveGCPercent},
		{"GOMEMLIMIT's", 0, map[string]string{"GOMEMLIMIT": "1GiB"}, serveGCPercent},
		{"no limit", 0, nil, 100},
		{"GOGC set", defaultMemoryLimit, map[string]string{"GOGC": "50"}, 100},
	} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		c := &serveCmd{memoryLimit: tc.limit}
		c.setUp(log, serveConfig{}, func(k string) string { return tc.env[k] })
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("%s: GOGC %d, want %d", tc.name, got, tc.want)
		}
	}
}
