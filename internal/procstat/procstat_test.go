package procstat

import (
	"runtime"
	"testing"
)

func TestParse(t *testing.T) {
	const status = "Name:\tneardup\nVmPeak:\t  200 kB\nVmHWM:\t    1234 kB\nVmRSS:\t 1000 kB\n"
	tests := []struct {
		in, field string
		want      uint64
	}{
		{status, "VmHWM", 1234 << 10},
		{status, "VmRSS", 1000 << 10},
		{"VmHWM: 7 kB", "VmHWM", 7 << 10},
		{"Name:\tneardup\n", "VmHWM", 0},
		{"VmHWM:\t12 MB\n", "VmHWM", 0},
		{"VmHWM:\tx kB\n", "VmHWM", 0},
	}
	for _, tt := range tests {
		if got := parse([]byte(tt.in), tt.field); got != tt.want {
			t.Errorf("parse(%q, %s) = %d, want %d", tt.in, tt.field, got, tt.want)
		}
	}
}

func TestLive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/self/status is Linux's")
	}
	if rss, peak := RSS(), PeakRSS(); rss == 0 || peak < rss {
		t.Errorf("RSS %d, peak %d", rss, peak)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 12_345_678: "12.3 MB", 1 << 62: "4.6 EB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCPUTime(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no getrusage")
	}
	u0, s0, ok := CPUTime()
	if !ok {
		t.Fatal("CPUTime not available on a unix system")
	}
	x := 0
	for i := range 50_000_000 {
		x ^= i * i
	}
	u1, s1, _ := CPUTime()
	if u1+s1 <= u0+s0 || x == 1 {
		t.Errorf("CPU time did not grow over a busy loop: %v+%v then %v+%v", u0, s0, u1, s1)
	}
}
