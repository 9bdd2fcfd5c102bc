package shingle

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAppendDistinct checks AppendDistinct against the bag of the same options made
// distinct by hand, first occurrences first, and that sorted it is AppendHashes' set.
func TestAppendDistinct(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	texts := []string{"", "one", "a rose is a rose is a rose", englishText(5000), englishText(300000)}
	for range 20 {
		texts = append(texts, randomText(rng, rng.IntN(3000)))
	}
	for _, opt := range []Options{{}, {K: 2}, {K: 1, Seed: 3}, {Unit: Chars, K: 2}, {SampleMod: 3}, {K: 2, Bag: true}} {
		s, err := New(opt)
		if err != nil {
			t.Fatal(err)
		}
		bopt := opt
		bopt.Bag = true
		for _, text := range texts {
			var want []uint64
			seen := map[uint64]bool{}
			for _, h := range hashes(t, bopt, text) {
				if !seen[h] {
					seen[h] = true
					want = append(want, h)
				}
			}
			got := s.AppendDistinct([]uint64{7}, text)
			if got[0] != 7 || !slices.Equal(got[1:], want) {
				t.Fatalf("%+v, text of %d bytes: AppendDistinct gives %d hashes, want %d", opt, len(text), len(got)-1, len(want))
			}
			set := opt
			set.Bag = false
			slices.Sort(want)
			if !slices.Equal(want, hashes(t, set, text)) {
				t.Fatalf("%+v, text of %d bytes: sorted, AppendDistinct differs from AppendHashes", opt, len(text))
			}
		}
	}
}

func TestDistinctUnique(t *testing.T) {
	var d distinct
	for _, c := range []struct{ in, want []uint64 }{
		{nil, nil},
		{[]uint64{5}, []uint64{5}},
		{[]uint64{0, 0}, []uint64{0}},
		{[]uint64{3, 0, 3, 1, 0, 2, 1}, []uint64{3, 0, 1, 2}},
		{[]uint64{1 << 63, 1, 1 << 63, 1<<63 | 1}, []uint64{1 << 63, 1, 1<<63 | 1}},
	} {
		a := slices.Clone(c.in)
		if got := a[:d.unique(a)]; !slices.Equal(got, c.want) {
			t.Errorf("unique(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	// Values that share their top bits, which a table indexed by them alone would pile up.
	a := make([]uint64, 1<<14)
	for i := range a {
		a[i] = 1<<60 | uint64(i%5000)
	}
	if n := d.unique(a); n != 5000 || !slices.Equal(a[:3], []uint64{1 << 60, 1<<60 | 1, 1<<60 | 2}) {
		t.Errorf("unique of 5000 values repeated: %d, %v", n, a[:3])
	}
}
