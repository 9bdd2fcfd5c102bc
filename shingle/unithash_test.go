package shingle

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/internal/evaldata"
)

// TestUnitHash checks unitHash against refUnitHash, the documented definition, on units
// of every length up to 40 bytes, wherever they sit in their buffer (the fast path loads
// past the end of a short unit when its capacity allows).
func TestUnitHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 64)
	for range 2000 {
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		for n := range 41 {
			for _, at := range []int{0, 64 - n - 3, 64 - n} {
				u := buf[at : at+n]
				if got, want := unitHash(u), refUnitHash(string(u)); got != want {
					t.Fatalf("unitHash(%x) at %d = %016x, want %016x", u, at, got, want)
				}
			}
		}
	}
}

// TestUnitHashAvalanche flips each input bit of units of 1 to 40 bytes and checks that
// every output bit of the unit hash flips with probability 1/2, within six standard
// deviations: over every 1-byte unit, and over 4,000 random units of each other length.
func TestUnitHashAvalanche(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 3, 5, 7, 8, 11, 16, 17, 31, 40} {
		trials := 4000
		if n == 1 {
			trials = 256
		}
		u := make([]byte, n)
		var flips [40 * 8][64]int
		for i := range trials {
			for j := range u {
				u[j] = byte(rng.Uint32())
			}
			if n == 1 {
				u[0] = byte(i)
			}
			h := unitHash(u)
			for bit := range 8 * n {
				u[bit/8] ^= 1 << (bit % 8)
				d := h ^ unitHash(u)
				u[bit/8] ^= 1 << (bit % 8)
				for o := range 64 {
					flips[bit][o] += int(d >> o & 1)
				}
			}
		}
		tol := 6 * 0.5 / math.Sqrt(float64(trials))
		for bit := range 8 * n {
			for o, f := range flips[bit] {
				if p := float64(f) / float64(trials); math.Abs(p-0.5) > tol {
					t.Errorf("%d-byte units: input bit %d flips output bit %d with probability %.3f", n, bit, o, p)
				}
			}
		}
	}
}

// TestUnitHashCollisions hashes a large vocabulary of real and structured units and
// checks that no two collide, in the unit hash or in the word 2-shingle feature hash of
// consecutive pairs, and that the low 16 bits of the feature hashes are uniform
// (chi-square). At 64 bits a collision among 7*10^5 distinct values has probability
// below 10^-7, so any collision means a flaw.
func TestUnitHashCollisions(t *testing.T) {
	vocab := map[string]bool{}
	if root, err := evaldata.Root(); err == nil {
		docs, _, err := evaldata.Debian(root)
		if err != nil {
			t.Fatal(err)
		}
		spam, _, err := evaldata.Spam(root)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := New(Options{KeepPunct: true, NoCJK: true})
		for _, d := range append(docs, spam...) {
			for w := range s.Tokens(d.Text) {
				vocab[string(w)] = true
			}
		}
	} else {
		t.Logf("no evaluation sets (%v): structured units only", err)
	}
	real := len(vocab)
	// Structured units: numbers, and long words that differ in one place.
	for i := range 200000 {
		vocab[fmt.Sprint(i)] = true
		vocab[fmt.Sprintf("document-%08d", i)] = true
		vocab[fmt.Sprintf("%d-some-long-prefix-for-a-unit", i)] = true
	}
	units := make([]string, 0, len(vocab))
	for w := range vocab {
		units = append(units, w)
	}
	seen := make(map[uint64]string, len(units))
	for _, w := range units {
		h := unitHash([]byte(w))
		if o, ok := seen[h]; ok {
			t.Fatalf("units %q and %q have the same hash %016x", o, w, h)
		}
		seen[h] = w
	}
	clear(seen)
	const buckets = 1 << 16
	var count [buckets]int
	for i := 1; i < len(units); i++ {
		h := feature(0, units[i-1], units[i])
		if o, ok := seen[h]; ok {
			t.Fatalf("shingles %q and %q %q have the same hash %016x", o, units[i-1], units[i], h)
		}
		seen[h] = units[i-1] + " " + units[i]
		count[h%buckets]++
	}
	exp := float64(len(units)-1) / buckets
	chi := 0.0
	for _, c := range count {
		chi += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	// 65,535 degrees of freedom: mean 65,535, standard deviation 362.
	if chi > buckets+5*362 {
		t.Errorf("chi-square of the low 16 bits of %d features is %.0f", len(units)-1, chi)
	}
	t.Logf("%d units (%d from the evaluation sets), %d features, chi-square %.0f for %d buckets", len(units), real, len(units)-1, chi, buckets)
}
