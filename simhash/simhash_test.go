package simhash

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naiveCompute is simhash-cpp's Simhash::compute, one counter per bit: the oracle.
func naiveCompute(hashes []uint64) uint64 {
	var counts [64]int
	for _, h := range hashes {
		for i := range counts {
			if h>>i&1 == 1 {
				counts[i]++
			} else {
				counts[i]--
			}
		}
	}
	var r uint64
	for i, c := range counts {
		if c > 0 {
			r |= 1 << i
		}
	}
	return r
}

// Vectors from simhash-py test/test.py and simhash-cpp test/test-simhash.cpp.
func TestDistanceUpstream(t *testing.T) {
	for _, c := range []struct {
		a, b uint64
		want int
	}{
		{0xDEADBEEF, 0xDEADBEAD, 2},
		{0xDEADBEEFDEADBEEF, 0x2152411021524110, 64},
		{0, 0, 0},
		{0, 1 << 63, 1},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%#x, %#x) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func repeat(h uint64, n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = h
	}
	return s
}

func TestComputeUpstream(t *testing.T) {
	for _, c := range []struct {
		name   string
		hashes []uint64
		want   uint64
	}{
		{"empty", nil, 0},
		{"repeat", repeat(0xDEADBEEF, 100), 0xDEADBEEF},
		{"inverse", []uint64{0xDEADBEEFDEADBEEF, 0x2152411021524110}, 0},
		{"basic", []uint64{0xABCD, 0xBCDE, 0xCDEF}, 0xADCF},
		// Our own: ties clear a bit, one hash is its own SimHash, every block size path.
		{"one", []uint64{0x0123456789ABCDEF}, 0x0123456789ABCDEF},
		{"tie", []uint64{^uint64(0), 0}, 0},
		{"majority of 17", append(repeat(^uint64(0), 9), repeat(0, 8)...), ^uint64(0)},
		{"minority of 17", append(repeat(^uint64(0), 8), repeat(0, 9)...), 0},
		{"all ones 5000", repeat(^uint64(0), 5000), ^uint64(0)},
		{"tie 4080+4080", append(repeat(^uint64(0), 4080), repeat(0, 4080)...), 0},
	} {
		if got := Compute(c.hashes); got != c.want {
			t.Errorf("%s: Compute = %#x, want %#x", c.name, got, c.want)
		}
	}
}

// randomHashes returns n hashes; biased ones make ties and narrow majorities likely.
func randomHashes(r *rand.Rand, n int) []uint64 {
	s := make([]uint64, n)
	base := r.Uint64()
	for i := range s {
		switch r.IntN(3) {
		case 0:
			s[i] = r.Uint64()
		case 1:
			s[i] = base ^ r.Uint64()&r.Uint64()&r.Uint64()
		default:
			s[i] = ^base ^ r.Uint64()&r.Uint64()
		}
	}
	return s
}

func testLengths() []int {
	var ns []int
	for n := 0; n <= 70; n++ {
		ns = append(ns, n)
	}
	for n := 71; n <= 1000; n += 37 {
		ns = append(ns, n)
	}
	return append(ns, 4079, 4080, 4081, 4096, 8161, 10000)
}

func TestComputeMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range testLengths() {
		for range 5 {
			hs := randomHashes(r, n)
			if got, want := Compute(hs), naiveCompute(hs); got != want {
				t.Fatalf("n=%d: Compute = %#x, naive %#x", n, got, want)
			}
		}
	}
}

func TestComputeWeightedOnesEqualsCompute(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range testLengths() {
		hs := randomHashes(r, n)
		want := Compute(hs)
		ints := make([]int, n)
		i32 := make([]int32, n)
		i64 := make([]int64, n)
		f32 := make([]float32, n)
		f64 := make([]float64, n)
		for i := range n {
			ints[i], i32[i], i64[i], f32[i], f64[i] = 1, 1, 1, 1, 1
		}
		for name, got := range map[string]uint64{
			"int":     ComputeWeighted(hs, ints),
			"int32":   ComputeWeighted(hs, i32),
			"int64":   ComputeWeighted(hs, i64),
			"float32": ComputeWeighted(hs, f32),
			"float64": ComputeWeighted(hs, f64),
		} {
			if got != want {
				t.Fatalf("n=%d: ComputeWeighted with %s ones = %#x, Compute %#x", n, name, got, want)
			}
		}
	}
}

// naiveWeighted follows the definition with int64 or float64 counters.
func naiveWeighted[W int64 | float64](hashes []uint64, ws []W) uint64 {
	var c [64]W
	for k, h := range hashes {
		for i := range c {
			if h>>i&1 == 1 {
				c[i] += ws[k]
			} else {
				c[i] -= ws[k]
			}
		}
	}
	var r uint64
	for i, v := range c {
		if v > 0 {
			r |= 1 << i
		}
	}
	return r
}

func TestComputeWeighted(t *testing.T) {
	for _, c := range []struct {
		name   string
		hashes []uint64
		ws     []int64
		want   uint64
	}{
		{"heavier wins", []uint64{0xFF, 0x0F}, []int64{1, 3}, 0x0F},
		{"tie", []uint64{0xFF, 0x0F}, []int64{2, 2}, 0x0F},
		{"negative flips", []uint64{0xF0}, []int64{-1}, ^uint64(0xF0)},
		{"zero weights", []uint64{0xF0, 0x0F}, []int64{0, 0}, 0},
		// Exactness beyond float64: 2^53+1 against 2^53 would tie in float64.
		{"exact int64", []uint64{1, 0}, []int64{1<<53 + 1, 1 << 53}, 1},
		{"exact int64 sum", []uint64{1, 0, 0}, []int64{1<<61 + 2, 1 << 61, 1}, 1},
	} {
		if got := ComputeWeighted(c.hashes, c.ws); got != c.want {
			t.Errorf("%s: ComputeWeighted = %#x, want %#x", c.name, got, c.want)
		}
	}
	if got := ComputeWeighted([]uint64{^uint64(0)}, []float64{math.NaN()}); got != 0 {
		t.Errorf("NaN weight: ComputeWeighted = %#x, want 0", got)
	}

	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 3, 17, 100, 1000} {
		hs := randomHashes(r, n)
		ws := make([]int64, n)
		fs := make([]float64, n)
		for i := range ws {
			ws[i] = r.Int64N(2000) - 1000
			fs[i] = r.NormFloat64()
		}
		if got, want := ComputeWeighted(hs, ws), naiveWeighted(hs, ws); got != want {
			t.Errorf("n=%d int64: ComputeWeighted = %#x, naive %#x", n, got, want)
		}
		if got, want := ComputeWeighted(hs, fs), naiveWeighted(hs, fs); got != want {
			t.Errorf("n=%d float64: ComputeWeighted = %#x, naive %#x", n, got, want)
		}
	}
}

func TestComputeWeightedPanicsOnLengths(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("ComputeWeighted with 2 hashes and 1 weight did not panic")
		}
	}()
	ComputeWeighted([]uint64{1, 2}, []int{1})
}

func TestAccumulatorEqualsCompute(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var a Accumulator
	for _, n := range testLengths() {
		hs := randomHashes(r, n)
		a.Reset()
		for i, h := range hs {
			a.Add(h)
			// Sum64 in the middle must not disturb the count.
			if i%97 == 0 {
				if got, want := a.Sum64(), naiveCompute(hs[:i+1]); got != want {
					t.Fatalf("n=%d after %d: Sum64 = %#x, naive %#x", n, i+1, got, want)
				}
			}
		}
		if got, want := a.Sum64(), Compute(hs); got != want {
			t.Fatalf("n=%d: Accumulator = %#x, Compute %#x", n, got, want)
		}
	}
}

func TestAccumulatorWeighted(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 2, 5, 16, 33, 300} {
		hs := randomHashes(r, n)
		ws := make([]float64, n)
		var a, ones Accumulator
		for i, h := range hs {
			ws[i] = float64(r.IntN(5)) - 1 // -1..3: ties happen
			a.AddWeighted(h, ws[i])
			// Add is AddWeighted with weight 1, and the two mix.
			if i%2 == 0 {
				ones.Add(h)
			} else {
				ones.AddWeighted(h, 1)
			}
		}
		if got, want := a.Sum64(), naiveWeighted(hs, ws); got != want {
			t.Errorf("n=%d: weighted Accumulator = %#x, naive %#x", n, got, want)
		}
		if got, want := ones.Sum64(), Compute(hs); got != want {
			t.Errorf("n=%d: mixed Add/AddWeighted(1) = %#x, Compute %#x", n, got, want)
		}
	}
	var a Accumulator
	a.Add(0xFF)
	a.AddWeighted(0x0F, 1)
	a.AddWeighted(0xF0, 0.5)
	// bits 0-3: +1 +1 -0.5; bits 4-7: +1 -1 +0.5; others: -1 -1 -0.5.
	if got := a.Sum64(); got != 0xFF {
		t.Errorf("mixed weights: Sum64 = %#x, want 0xff", got)
	}
	a.Reset()
	if got := a.Sum64(); got != 0 {
		t.Errorf("after Reset: Sum64 = %#x, want 0", got)
	}
}

func TestAllocs(t *testing.T) {
	hs := randomHashes(rand.New(rand.NewPCG(11, 12)), 1000)
	ws := make([]float64, len(hs))
	is := make([]int64, len(hs))
	text := benchText(4 << 10)
	var a Accumulator
	for _, c := range []struct {
		name string
		fn   func()
	}{
		{"Compute", func() { Compute(hs) }},
		{"ComputeWeighted/float64", func() { ComputeWeighted(hs, ws) }},
		{"ComputeWeighted/int64", func() { ComputeWeighted(hs, is) }},
		{"Accumulator", func() {
			a.Reset()
			for _, h := range hs[:100] {
				a.Add(h)
				a.AddWeighted(h, 0.5)
			}
			a.Sum64()
		}},
		{"UnsignedHash", func() { UnsignedHash([]byte(text[:16])) }},
		{"PyFingerprint", func() { PyFingerprint(text) }},
		{"PyFingerprint/unicode", func() { PyFingerprint("ΟΔΥΣΣΕΥΣ İstanbul Straße 日本語 ᏣᎳᎩ") }},
	} {
		if n := testing.AllocsPerRun(20, c.fn); n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", c.name, n)
		}
	}
}
