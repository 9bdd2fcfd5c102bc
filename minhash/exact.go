package minhash

import (
	"math"
	"slices"
)

// SortUnique sorts features in increasing order and removes repeats, in place, and returns
// the shortened slice, which shares features' memory. Its result meets the precondition of
// Jaccard and Containment. It takes 64-bit feature hashes, or 32-bit ones for half the
// memory (see Jaccard). It costs O(n log n) and does not allocate.
func SortUnique[T uint32 | uint64](features []T) []T {
	slices.Sort(features)
	return slices.Compact(features)
}

// AppendLow32 appends the low 32 bits of each feature hash to dst and returns the
// extended slice: the 32-bit form of a set that SortUnique, Jaccard and Containment take
// for half the memory. It allocates only when dst lacks room.
func AppendLow32(dst []uint32, features []uint64) []uint32 {
	for _, h := range features {
		dst = append(dst, uint32(h))
	}
	return dst
}

// intersection returns |a ∩ b| for sorted distinct sets by a linear merge.
func intersection[T uint32 | uint64](a, b []T) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		switch {
		case x < y:
			i++
		case x > y:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// Jaccard returns the exact Jaccard similarity |a ∩ b| / |a ∪ b| of two sets of feature
// hashes, each sorted in increasing order without repeats (see SortUnique); on other input
// the result is meaningless. Two empty sets have similarity 1, as their signatures do. It
// is the reference that Similarity estimates and what a verifier computes when it keeps the
// features. It costs one linear merge, O(len(a)+len(b)), and does not allocate.
//
// The sets may hold 32-bit hashes (the low halves of the 64-bit ones) to halve what a
// verifier keeps: two distinct features then coincide with probability 2^-32 a pair of
// them, so sets of n features differ from the 64-bit result by one feature in about
// 2^32/n² pairs of sets (one in 4,000 at 1,000 features), by at most 1/|a ∪ b| each time.
func Jaccard[T uint32 | uint64](a, b []T) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	n := intersection(a, b)
	return float64(n) / float64(len(a)+len(b)-n)
}

// Containment returns |a ∩ b| / |a|, the fraction of a's features that b also has, for
// sets sorted in increasing order without repeats (see SortUnique). It is 1 when a is a
// subset of b, including when a is empty. Use it to find a document contained in a larger
// one (a quoted passage, a page inside a bundle), which Jaccard rates low. It costs one
// linear merge and does not allocate.
func Containment[T uint32 | uint64](a, b []T) float64 {
	if len(a) == 0 {
		return 1
	}
	return float64(intersection(a, b)) / float64(len(a))
}

// Weighted is a feature hash with a weight, an element of a sparse vector such as term
// frequencies or TF-IDF.
type Weighted struct {
	Hash   uint64
	Weight float64
}

// Cosine returns the cosine similarity a·b / (|a| |b|) of two sparse vectors, each sorted
// by Hash in increasing order without repeated hashes (sort with slices.SortFunc and
// cmp.Compare on Hash, then add up the weights of repeats); on other input the result is
// meaningless. It lies in [-1, 1], and in [0, 1] for nonnegative weights. Two vectors of
// zero norm (empty, or all weights 0) have similarity 1, and one of zero norm with another
// 0, matching Jaccard's convention. A NaN or infinite weight gives NaN, and so do weights
// whose squares overflow float64 (above about 1e154). It costs one linear merge and does
// not allocate.
func Cosine(a, b []Weighted) float64 {
	var dot, na, nb float64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		switch {
		case x.Hash < y.Hash:
			na += x.Weight * x.Weight
			i++
		case x.Hash > y.Hash:
			nb += y.Weight * y.Weight
			j++
		default:
			dot += x.Weight * y.Weight
			na += x.Weight * x.Weight
			nb += y.Weight * y.Weight
			i++
			j++
		}
	}
	for _, x := range a[i:] {
		na += x.Weight * x.Weight
	}
	for _, y := range b[j:] {
		nb += y.Weight * y.Weight
	}
	switch {
	case math.IsNaN(na+nb+dot) || math.IsInf(na+nb, 0):
		return math.NaN()
	case na == 0 && nb == 0:
		return 1
	case na == 0 || nb == 0:
		return 0
	}
	c := dot / (math.Sqrt(na) * math.Sqrt(nb))
	return max(-1, min(1, c)) // rounding can step just outside
}
