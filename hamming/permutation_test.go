package hamming

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCombinationsOrder(t *testing.T) {
	// simhash-cpp's Choose3From6 vector.
	want := [][]int{
		{0, 1, 2}, {0, 1, 3}, {0, 1, 4}, {0, 1, 5}, {0, 2, 3}, {0, 2, 4}, {0, 2, 5},
		{0, 3, 4}, {0, 3, 5}, {0, 4, 5}, {1, 2, 3}, {1, 2, 4}, {1, 2, 5}, {1, 3, 4},
		{1, 3, 5}, {1, 4, 5}, {2, 3, 4}, {2, 3, 5}, {2, 4, 5}, {3, 4, 5},
	}
	var got [][]int
	combinations(6, 3, func(idx []int) { got = append(got, slices.Clone(idx)) })
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestPermutationsCountAndErrors(t *testing.T) {
	for _, c := range []struct{ blocks, k, n int }{{6, 3, 20}, {4, 3, 4}, {5, 3, 10}, {64, 3, 41664}, {64, 63, 64}, {3, 0, 1}, {1, 0, 1}} {
		perms, err := Permutations(c.blocks, c.k)
		if err != nil || len(perms) != c.n {
			t.Errorf("Permutations(%d, %d): %d, %v; want %d", c.blocks, c.k, len(perms), err, c.n)
		}
	}
	for _, c := range []struct{ blocks, k int }{{65, 3}, {2, 3}, {3, 3}, {0, 0}, {5, -1}, {64, 4}, {40, 20}} {
		if _, err := Permutations(c.blocks, c.k); !errors.Is(err, ErrDesign) {
			t.Errorf("Permutations(%d, %d): err = %v, want ErrDesign", c.blocks, c.k, err)
		}
	}
}

func TestPermutationLayout(t *testing.T) {
	// m = 6, k = 3: blocks of 10 or 11 bits; the first permutation keeps blocks 0, 1, 2 on
	// top in that order (block 0 highest), then 3, 4, 5.
	perms, err := Permutations(6, 3)
	if err != nil {
		t.Fatal(err)
	}
	p := perms[0]
	if got := p.Apply(1); got != 1<<(64-10) { // bit 0 starts block 0, 10 bits wide
		t.Errorf("Apply(1) = %#x", got)
	}
	if got, want := p.SearchMask(), spanMask(64-32, 64); got != want { // blocks 0-2: 10+11+11 bits
		t.Errorf("SearchMask = %#x, want %#x", got, want)
	}
	if got := p.Blocks(); got != 0b000111 {
		t.Errorf("Blocks = %b", got)
	}
	if got := perms[len(perms)-1].Blocks(); got != 0b111000 {
		t.Errorf("last Blocks = %b", got)
	}
}

// TestPermutationProperties checks that every permutation of many designs is a bijection
// that preserves Hamming distance, that Reverse undoes Apply, and that fingerprints agreeing
// on the chosen blocks share the search prefix.
func TestPermutationProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for blocks := 1; blocks <= 64; blocks++ {
		for _, k := range []int{0, 1, 3, blocks - 1} {
			if k < 0 || k >= blocks || tables(blocks, k) > 5000 {
				continue
			}
			perms, err := Permutations(blocks, k)
			if err != nil {
				t.Fatal(err)
			}
			d, _ := newDesign(blocks, k)
			for pi, p := range perms {
				for bit := range 64 { // a bijection on single bits is a bijection on all
					if got := bits.OnesCount64(p.Apply(1 << bit)); got != 1 {
						t.Fatalf("(%d,%d)#%d: bit %d maps to %d bits", blocks, k, pi, bit, got)
					}
				}
				if p.Apply(^uint64(0)) != ^uint64(0) {
					t.Fatalf("(%d,%d)#%d: not onto", blocks, k, pi)
				}
				var key uint64
				for c := p.Blocks(); c != 0; c &= c - 1 {
					key |= d.masks[bits.TrailingZeros64(c)]
				}
				for range 20 {
					a, b := r.Uint64(), r.Uint64()
					if p.Reverse(p.Apply(a)) != a || p.Apply(p.Reverse(a)) != a {
						t.Fatalf("(%d,%d)#%d: Reverse does not undo Apply", blocks, k, pi)
					}
					if bits.OnesCount64(p.Apply(a)^p.Apply(b)) != bits.OnesCount64(a^b) {
						t.Fatalf("(%d,%d)#%d: distance not preserved", blocks, k, pi)
					}
					b = a ^ (b &^ key) // agree with a on the chosen blocks
					if p.Apply(a)&p.SearchMask() != p.Apply(b)&p.SearchMask() {
						t.Fatalf("(%d,%d)#%d: agreeing fingerprints differ in the prefix", blocks, k, pi)
					}
				}
			}
		}
	}
}

func TestOwnerIsUnique(t *testing.T) {
	// Every pair within k bits is owned by exactly one table, and that table's chosen
	// blocks are blocks the pair agrees on.
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct{ blocks, k int }{{4, 3}, {5, 3}, {6, 3}, {7, 2}, {10, 4}} {
		d, err := newDesign(c.blocks, c.k)
		if err != nil {
			t.Fatal(err)
		}
		for range 2000 {
			var x uint64
			for range r.IntN(c.k + 1) {
				x |= 1 << r.IntN(64)
			}
			owners := 0
			for _, p := range d.perms {
				if p.Blocks() == d.owner(x) {
					owners++
					if d.agree(x)&p.Blocks() != p.Blocks() {
						t.Fatalf("%v: owner %b does not agree on x=%#x", c, p.Blocks(), x)
					}
				}
			}
			if owners != 1 {
				t.Fatalf("%v: x=%#x has %d owners", c, x, owners)
			}
		}
	}
}
