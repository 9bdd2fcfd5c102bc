package minhash

import (
	"math"

	"github.com/neardup/neardup/internal/mix"
)

const (
	// DefaultK is the signature length a zero Hasher uses.
	DefaultK = 128
	// MaxK is the longest signature a Hasher makes and UnmarshalBinary accepts.
	MaxK = 4096 // at most 1<<16: densification draws bins from 16-bit values
	// Empty is the value of every element of an empty set's signature. Non-empty sets
	// never produce it: their values are at most Empty-1.
	Empty = math.MaxUint32
)

// Signature is a MinHash signature: K 32-bit values, one per bin, made by a Hasher. Two
// signatures are comparable only when made by Hashers with the same K and Seed (see
// Similarity).
//
// Values are 32 bits rather than 64 because that halves the memory of every indexed
// document (512 bytes at K=128 instead of 1 KiB) at a negligible cost in accuracy: two
// different minima collide with probability about m/2^33 for bins of m features, so the
// estimate is biased upwards by at most (1-J)*n/(K*2^33), under 10^-6 for sets of a million
// features at K=128.
type Signature []uint32

// Hasher makes MinHash signatures of sets of 64-bit feature hashes. The zero value uses
// K = DefaultK and seed 0. A Hasher is a plain value: it holds no state, costs nothing to
// create, and is safe for concurrent use.
//
// The scheme is one permutation hashing (Li, Owen and Zhang 2012) with optimal
// densification (Shrivastava 2017); see the package documentation. It is frozen: the same
// (K, Seed, features) give the same signature on every machine and in every version of
// this package, as the golden tests in testdata pin.
type Hasher struct {
	// K is the signature length, 1..MaxK; 0 means DefaultK. The standard error of the
	// Jaccard estimate is about sqrt(J(1-J)/K): 0.035 at J=0.8 for K=128.
	K int
	// Seed selects the hash function: signatures made with different seeds are unrelated.
	Seed uint64
}

// k returns the resolved signature length; it panics on an invalid K.
func (h Hasher) k() int {
	switch {
	case h.K == 0:
		return DefaultK
	case h.K < 0 || h.K > MaxK:
		panic("minhash: Hasher.K must be in [0, 4096]")
	}
	return h.K
}

// Signature returns the signature of features in a new slice; see AppendSignature.
func (h Hasher) Signature(features []uint64) Signature {
	return h.AppendSignature(make(Signature, 0, h.k()), features)
}

// AppendSignature appends the K-value signature of the set features to dst and returns
// the extended slice. It allocates only when dst lacks room for K more values, and does not
// keep features or dst.
//
// features is treated as a set: order and repeats do not matter, so unsorted input with
// duplicates gives the same signature as its sorted, deduplicated form. An empty set gives
// K copies of Empty. It costs one 64-bit mix and one compare per feature, plus, for each
// bin left empty (sets of fewer than a few times K features), about 1/f probes at four
// per hash evaluation, where f is the fraction of bins that are not empty: for a
// 10-feature set at K = 128, about 13 probes for each of at least 118 empty bins.
// AppendSignature panics if h.K is negative or above MaxK.
func (h Hasher) AppendSignature(dst Signature, features []uint64) Signature {
	k := h.k()
	n := len(dst)
	dst = grow(dst, k)
	sig := dst[n : n+k]
	for i := range sig {
		sig[i] = Empty
	}
	kk := uint64(k)
	seed := featureSeed(h.Seed)
	for _, f := range features {
		x := mix.Splitmix64(f ^ seed)
		// The high 32 bits pick the bin (Lemire's multiply-shift range reduction), the low
		// 32 bits, independent of them, are the value.
		b := (x >> 32) * kk >> 32
		v := min(uint32(x), Empty-1)
		if v < sig[b] {
			sig[b] = v
		}
	}
	densify(sig, h.Seed)
	return dst
}

// grow returns dst with room for k more values, allocating at most once.
func grow(dst Signature, k int) Signature {
	n := len(dst)
	if cap(dst)-n < k {
		d := make(Signature, n, n+k)
		copy(d, dst)
		dst = d
	}
	return dst[:n+k]
}

// densify fills the empty bins of sig by Shrivastava's optimal densification: empty bin i
// takes the value of the first originally non-empty bin in its own random probe sequence
// p(i, 0), p(i, 1), ... Two sets see the same probe sequence for a bin that is empty in
// both, so both copy the first bin that is non-empty in their union; they agree exactly
// when that bin's minimum lies in their intersection, which has probability J, and the
// estimator stays unbiased. A signature with no non-empty bin (the empty set) is left all
// Empty.
//
// The probes of bin i come four at a time from mix.Splitmix64(probeSeed ^ (i<<32 | round)): each
// 16-bit quarter q, lowest first, gives the bin q*K >> 16. The sequence depends only on
// the seed and K, never on the data, which is all unbiasedness needs.
func densify(sig Signature, seed uint64) {
	var filled [MaxK / 64]uint64 // bins that were non-empty before densification
	nonEmpty, last := 0, 0
	for i, v := range sig {
		if v != Empty {
			filled[i>>6] |= 1 << (i & 63)
			nonEmpty++
			last = i
		}
	}
	switch nonEmpty {
	case 0, len(sig):
		return
	case 1: // every probe sequence ends at the one non-empty bin
		for i := range sig {
			sig[i] = sig[last]
		}
		return
	}
	ps := probeSeed(seed)
	kk := uint64(len(sig))
	for i := range sig {
		if sig[i] != Empty {
			continue
		}
	probe:
		for round := uint64(0); ; round++ {
			x := mix.Splitmix64(ps ^ (uint64(i)<<32 | round))
			for range 4 {
				j := (x & 0xffff) * kk >> 16
				if filled[j>>6]&(1<<(j&63)) != 0 {
					sig[i] = sig[j]
					break probe
				}
				x >>= 16
			}
		}
	}
}

// featureSeed and probeSeed derive the frozen per-seed constants of the two hash
// functions of the scheme: the feature permutation and the densification probes.
func featureSeed(seed uint64) uint64 { return mix.Splitmix64(seed ^ 0x6a09e667f3bcc908) }
func probeSeed(seed uint64) uint64   { return mix.Splitmix64(seed ^ 0xbb67ae8584caa73b) }

// Similarity returns the estimated Jaccard similarity of the sets behind a and b: the
// fraction of positions where they hold the same value. It is exact (1) for equal sets,
// 1 for two empty sets and 0 for an empty and a non-empty set. It costs one comparison per
// value and does not allocate.
//
// Signatures of different lengths come from different Hashers, which is a programming
// error: Similarity panics if len(a) != len(b) or if they are empty (zero-length). It
// cannot tell signatures made with different seeds apart; their estimate is near 0.
func Similarity(a, b Signature) float64 {
	if len(a) != len(b) || len(a) == 0 {
		panic("minhash: Similarity of signatures of different or zero lengths")
	}
	return float64(matches(a, b)) / float64(len(a))
}

// matches returns the number of positions where a and b hold the same value; it compares
// min(len(a), len(b)) positions.
func matches(a, b Signature) int {
	b = b[:min(len(a), len(b))]
	a = a[:len(b)]
	n := 0
	i := 0
	for ; i+4 <= len(a); i += 4 {
		n += eq(a[i], b[i]) + eq(a[i+1], b[i+1]) + eq(a[i+2], b[i+2]) + eq(a[i+3], b[i+3])
	}
	for ; i < len(a); i++ {
		n += eq(a[i], b[i])
	}
	return n
}

func eq(x, y uint32) int {
	if x == y {
		return 1
	}
	return 0
}
