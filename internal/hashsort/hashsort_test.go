package hashsort

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// inputs returns the test inputs of one type: sizes around the thresholds, uniform
// values, few distinct values, values that share their top bits (one bucket, then one
// piece), sorted and reversed ones.
func inputs[T uint32 | uint64](r *rand.Rand) map[string][]T {
	out := map[string][]T{}
	for _, n := range []int{0, 1, 2, 255, 256, 257, 300, 1000, 4096, 100_000} {
		u := make([]T, n)
		for i := range u {
			u[i] = T(r.Uint64())
		}
		out[fmt.Sprint("uniform/", n)] = u
		few := make([]T, n)
		for i := range few {
			few[i] = T(r.IntN(3)) << (r.IntN(2) * 20)
		}
		out[fmt.Sprint("few/", n)] = few
		low := make([]T, n) // every value in the first bucket and its first piece
		for i := range low {
			low[i] = T(r.Uint64() >> 48)
		}
		out[fmt.Sprint("low/", n)] = low
		s := slices.Clone(u)
		slices.Sort(s)
		out[fmt.Sprint("sorted/", n)] = s
		rev := slices.Clone(s)
		slices.Reverse(rev)
		out[fmt.Sprint("reversed/", n)] = rev
	}
	return out
}

// TestSort holds Sort to slices.Sort, the oracle, on both types, with scratch space
// that is missing, short and long enough.
func TestSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	t.Run("uint32", func(t *testing.T) { testSort[uint32](t, r) })
	t.Run("uint64", func(t *testing.T) { testSort[uint64](t, r) })
}

func testSort[T uint32 | uint64](t *testing.T, r *rand.Rand) {
	var tmp []T
	for name, in := range inputs[T](r) {
		want := slices.Clone(in)
		slices.Sort(want)
		for _, scratch := range [][]T{nil, make([]T, 3), tmp} {
			got := slices.Clone(in)
			tmp = Sort(got, scratch)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: not sorted as slices.Sort sorts it", name)
			}
		}
	}
}

// TestSortAllocs: with scratch space of the input's size, Sort does not allocate.
func TestSortAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	in := make([]uint32, 5000)
	for i := range in {
		in[i] = r.Uint32()
	}
	a, tmp := make([]uint32, len(in)), make([]uint32, len(in))
	if n := testing.AllocsPerRun(10, func() {
		copy(a, in)
		tmp = Sort(a, tmp)
	}); n != 0 {
		t.Fatalf("%v allocations a sort, want 0", n)
	}
}

// BenchmarkSort sorts the 32-bit hashes of a page's shingles (a few thousand) and of a
// long text, against slices.Sort.
func BenchmarkSort(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{2000, 100_000} {
		in := make([]uint32, n)
		for i := range in {
			in[i] = r.Uint32()
		}
		a := make([]uint32, n)
		b.Run(fmt.Sprint("hashsort/", n), func(b *testing.B) {
			var tmp []uint32
			for b.Loop() {
				copy(a, in)
				tmp = Sort(a, tmp)
			}
		})
		b.Run(fmt.Sprint("slices/", n), func(b *testing.B) {
			for b.Loop() {
				copy(a, in)
				slices.Sort(a)
			}
		})
	}
}
