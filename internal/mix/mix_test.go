package mix

import "testing"

// The published splitmix64 sequence from seed 0 (state advanced by the golden gamma) pins
// the finalizer.
func TestSplitmix64Golden(t *testing.T) {
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	var state uint64
	for i, w := range want {
		state += 0x9e3779b97f4a7c15
		if got := Splitmix64(state); got != w {
			t.Errorf("output %d = %#x, want %#x", i, got, w)
		}
	}
}
