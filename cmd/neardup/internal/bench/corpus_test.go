package bench

import (
	"bytes"
	"math"
	"testing"
)

// TestCorpusDeterministic checks that a document depends on the seed and its index
// alone: made in another order, or by a clone, it is the same text.
func TestCorpusDeterministic(t *testing.T) {
	a, b := NewCorpus(7, 500, 3, 0.3), NewCorpus(7, 500, 3, 0.3).Clone()
	var fwd [][]byte
	for i := range 50 {
		fwd = append(fwd, a.Text(nil, i))
	}
	for i := 49; i >= 0; i-- {
		if got := b.Text(nil, i); !bytes.Equal(got, fwd[i]) {
			t.Fatalf("document %d differs when made in reverse order by a clone", i)
		}
	}
	if c := NewCorpus(8, 500, 3, 0.3); bytes.Equal(c.Text(nil, 0), fwd[0]) {
		t.Fatal("another seed made the same document 0")
	}
	if (*Corpus)(nil).Clone() != nil {
		t.Fatal("a nil corpus cloned to a non-nil one")
	}
}

// TestCorpusPlanted checks the planted share and that a near copy differs from its
// original by about the edits asked for.
func TestCorpusPlanted(t *testing.T) {
	const n, plant, edits = 2000, 0.2, 3
	s := NewCorpus(1, 400, edits, plant)
	planted := 0
	for i := range n {
		o := s.Original(i)
		if o < 0 {
			continue
		}
		planted++
		if o >= i {
			t.Fatalf("document %d copies %d, not an earlier one", i, o)
		}
		if i%20 != 0 || s.Original(o) >= 0 { // a copy of a copy is made from the first text
			continue
		}
		orig, cp := bytes.Fields(s.Text(nil, o)), bytes.Fields(s.Text(nil, i))
		if len(orig) != len(cp) {
			t.Fatalf("copy %d has %d words, its original %d has %d", i, len(cp), o, len(orig))
		}
		diff := 0
		for k := range orig {
			if !bytes.Equal(orig[k], cp[k]) {
				diff++
			}
		}
		if diff == 0 || diff > edits {
			t.Fatalf("copy %d differs from %d in %d words, want 1 to %d", i, o, diff, edits)
		}
	}
	if got := float64(planted) / n; math.Abs(got-plant) > 0.04 {
		t.Fatalf("planted share %.3f, want about %.2f", got, plant)
	}
	if NewCorpus(1, 400, edits, 0).Original(5) != -1 {
		t.Fatal("plant 0 planted a copy")
	}
}
