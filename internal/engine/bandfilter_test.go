package engine

import (
	"math/rand/v2"
	"testing"
)

// TestBandFilter fills three layers of a band filter and checks that every key added is
// still found (a false negative would lose near-duplicates) and that keys never added
// pass at about three times one layer's rate, as documented.
func TestBandFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	f := newBandFilter(1 << 16)
	var added []uint64
	for len(added)+25 <= 7<<16 { // 1 + 2 + 4 layers' room
		keys := make([]uint64, 25)
		for i := range keys {
			keys[i] = r.Uint64()
		}
		f.add(keys)
		added = append(added, keys...)
	}
	if len(f.layers) != 3 {
		t.Fatalf("%d layers after %d keys, want 3", len(f.layers), len(added))
	}
	for _, k := range added {
		if !f.mayHave(k) {
			t.Fatalf("key %#x added but not found", k)
		}
	}
	const probes = 200_000
	fp := 0
	for range probes {
		if f.mayHave(r.Uint64()) {
			fp++
		}
	}
	if rate := float64(fp) / probes; rate > 3.3*bandFilterRate || rate < 2.5*bandFilterRate {
		t.Errorf("false-positive rate %.4f with three full layers, want about %.3f", rate, 3*bandFilterRate)
	}
}
