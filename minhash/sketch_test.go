package minhash_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/minhash"
)

// overlapping returns two feature sets of n distinct 64-bit hashes each that share
// shared of them, with repeats and in random order, and their exact Jaccard similarity
// by brute force over the low 32 bits.
func overlapping(r *rand.Rand, n, shared int) (a, b []uint64, j float64) {
	for range shared {
		v := r.Uint64()
		a, b = append(a, v), append(b, v)
	}
	for range n - shared {
		a, b = append(a, r.Uint64()), append(b, r.Uint64())
	}
	a = append(a, a[:n/10]...) // repeats
	r.Shuffle(len(a), func(i, k int) { a[i], a[k] = a[k], a[i] })
	_, _, j = jaccardOf(a, b)
	return a, b, j
}

// TestSketchExact: below the capacity, a sketch's similarity is the brute-force Jaccard
// similarity of the 32-bit hashes, exactly.
func TestSketchExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n := 1 + r.IntN(minhash.DefaultSketchCap)
		a, b, want := overlapping(r, n, r.IntN(n+1))
		sa, sb := minhash.NewSketch(nil, a, minhash.DefaultSketchCap), minhash.NewSketch(nil, b, minhash.DefaultSketchCap)
		if sa.Sampled || sb.Sampled || len(sa.Hashes) != n {
			t.Fatalf("n %d: sampled %v %v, %d hashes", n, sa.Sampled, sb.Sampled, len(sa.Hashes))
		}
		if got := sa.Similarity(sb); got != want {
			t.Fatalf("n %d: similarity %v, want %v", n, got, want)
		}
		if got := sb.Similarity(sa); got != want {
			t.Fatalf("n %d: not symmetric: %v, want %v", n, got, want)
		}
	}
	if got := (minhash.Sketch{}).Similarity(minhash.Sketch{}); got != 1 {
		t.Errorf("two empty sketches: %v, want 1", got)
	}
}

// TestSketchSampled: above the capacity, the estimate's error stays within what the doc
// states, sqrt(J(1-J)/capacity): its mean square over many pairs is at most that
// variance (with room for the sampling of the test itself), no pair errs by more than 5
// standard errors, and the mean error (the bias) is small. Sets of unequal size mix a
// sampled sketch with a whole one.
func TestSketchSampled(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const capacity = 256
	var sumSq, sumErr, sumVar float64
	const pairs = 400
	for i := range pairs {
		n := capacity + r.IntN(8*capacity)
		shared := int(float64(n) * (0.75 + 0.2*r.Float64()))
		a, b, want := overlapping(r, n, shared)
		if i%4 == 0 {
			b = b[:capacity/2+r.IntN(capacity/2)] // a whole set against a sampled one
			_, _, want = jaccardOf(a, b)
		}
		sa, sb := minhash.NewSketch(nil, a, capacity), minhash.NewSketch(nil, b, capacity)
		if !sa.Sampled || len(sa.Hashes) != capacity {
			t.Fatalf("n %d: not sampled at capacity: %d hashes", n, len(sa.Hashes))
		}
		got := sa.Similarity(sb)
		v := want * (1 - want) / capacity
		if math.Abs(got-want) > 5*math.Sqrt(v)+1e-9 {
			t.Errorf("pair %d (n %d): estimate %.4f, exact %.4f: more than 5 standard errors", i, n, got, want)
		}
		sumSq += (got - want) * (got - want)
		sumErr += got - want
		sumVar += v
	}
	if sumSq > 1.3*sumVar {
		t.Errorf("mean squared error %.3g, above the stated variance %.3g", sumSq/pairs, sumVar/pairs)
	}
	if bias := sumErr / pairs; math.Abs(bias) > 3*math.Sqrt(sumVar)/pairs {
		t.Errorf("mean error %.4f: biased", bias)
	}
}

// jaccardOf returns the brute-force Jaccard similarity of two feature sets' low 32 bits.
func jaccardOf(a, b []uint64) (both, union int, j float64) {
	inA, all := map[uint32]bool{}, map[uint32]bool{}
	for _, v := range a {
		inA[uint32(v)], all[uint32(v)] = true, true
	}
	seen := map[uint32]bool{}
	for _, v := range b {
		if !seen[uint32(v)] && inA[uint32(v)] {
			both++
		}
		seen[uint32(v)], all[uint32(v)] = true, true
	}
	return both, len(all), float64(both) / float64(len(all))
}

func TestSketchBinary(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	sketches := []minhash.Sketch{{}, {Hashes: []uint32{0}}, {Hashes: []uint32{math.MaxUint32}, Sampled: true}, {Hashes: []uint32{0, 1, math.MaxUint32}}}
	for range 50 {
		f := make([]uint64, r.IntN(3000))
		for i := range f {
			f[i] = r.Uint64()
		}
		sketches = append(sketches, minhash.NewSketch(nil, f, 1+r.IntN(2000)))
	}
	for _, s := range sketches {
		b, _ := s.MarshalBinary()
		var got minhash.Sketch
		if err := got.UnmarshalBinary(b); err != nil || got.Sampled != s.Sampled || !slices.Equal(got.Hashes, s.Hashes) {
			t.Fatalf("round trip of %d hashes: %v", len(s.Hashes), err)
		}
		for n := range len(b) {
			keep := got
			if err := got.UnmarshalBinary(b[:n]); !errors.Is(err, minhash.ErrSketchEncoding) || !slices.Equal(keep.Hashes, got.Hashes) {
				t.Fatalf("truncated at %d of %d: %v", n, len(b), err)
			}
		}
		if err := got.UnmarshalBinary(append(bytes.Clone(b), 0)); !errors.Is(err, minhash.ErrSketchEncoding) {
			t.Fatalf("trailing byte: %v", err)
		}
	}
	for name, bad := range map[string][]byte{
		"repeat":          {4, 5, 0},
		"past 32 bits":    {4, 0xff, 0xff, 0xff, 0xff, 0x0f, 1},
		"sampled, empty":  {1},
		"count past data": {0xff, 0xff, 0x03, 1},
	} {
		if err := new(minhash.Sketch).UnmarshalBinary(bad); !errors.Is(err, minhash.ErrSketchEncoding) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSketchGolden pins the encoding: stores keep sketches across versions.
func TestSketchGolden(t *testing.T) {
	s := minhash.NewSketch(nil, []uint64{0x1_0000_0005, 7, 300, 5, 0xffff_ffff, 1 << 40}, 4)
	if !s.Sampled || !slices.Equal(s.Hashes, []uint32{0, 5, 7, 300}) {
		t.Fatalf("sketch %+v", s)
	}
	b, _ := s.AppendBinary([]byte("p"))
	if got, want := hex.EncodeToString(b), "7009000502a502"; got != want {
		t.Errorf("encoding %s, want %s", got, want)
	}
}

func TestSketchAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	a, b, _ := overlapping(r, 3000, 2500)
	sa, sb := minhash.NewSketch(nil, a, minhash.DefaultSketchCap), minhash.NewSketch(nil, b, minhash.DefaultSketchCap)
	dst := make([]uint32, 0, 2*len(a)) // the hashes and the sort's scratch space
	if n := testing.AllocsPerRun(20, func() { _ = sa.Similarity(sb); _ = minhash.NewSketch(dst, a, minhash.DefaultSketchCap) }); n != 0 {
		t.Errorf("%v allocations a run, want 0", n)
	}
}

func FuzzSketchBinary(f *testing.F) {
	for _, s := range []minhash.Sketch{{}, {Hashes: []uint32{1, 9, 1 << 31}}, {Hashes: []uint32{7}, Sampled: true}} {
		b, _ := s.MarshalBinary()
		f.Add(b)
	}
	f.Add([]byte{4, 5, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var s minhash.Sketch
		if err := s.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, minhash.ErrSketchEncoding) {
				t.Fatalf("error not ErrSketchEncoding: %v", err)
			}
			return
		}
		if !slices.IsSorted(s.Hashes) || len(slices.Compact(slices.Clone(s.Hashes))) != len(s.Hashes) {
			t.Fatalf("decoded hashes not sorted and distinct: %v", s.Hashes)
		}
		var again minhash.Sketch
		b, _ := s.MarshalBinary()
		if err := again.UnmarshalBinary(b); err != nil || again.Sampled != s.Sampled || !slices.Equal(again.Hashes, s.Hashes) {
			t.Fatalf("an accepted sketch does not round-trip: %v", err)
		}
		_ = s.Similarity(s)
	})
}
