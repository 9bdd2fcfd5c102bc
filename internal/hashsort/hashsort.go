// Package hashsort sorts hashes: values spread uniformly over their type's range, such
// as shingle feature hashes and their 32-bit forms. Two counting passes on their top
// bits (8 bits into 256 buckets, then enough bits to split each bucket into pieces of
// about two) leave pieces that insertion sort finishes: about three times faster than
// slices.Sort for the 10^3-10^6 hashes of a text, and each pass scatters into few
// enough places to stay in cache.
//
// # Caveats
//
// Values that are not spread (many equal values, or crafted ones) make large pieces,
// which are sorted with slices.Sort, so the worst case stays O(n log n); only the speed
// is lost.
package hashsort

import (
	"math/bits"
	"slices"
)

// Sort sorts a in increasing order, using tmp as scratch space (grown to len(a) when it
// is shorter), and returns tmp for the next call. It allocates only when tmp lacks room,
// and not at all for 256 values or fewer, which it sorts with slices.Sort. It keeps
// neither slice.
func Sort[T uint32 | uint64](a, tmp []T) []T {
	n := len(a)
	if n <= 256 {
		slices.Sort(a)
		return tmp
	}
	tmp = slices.Grow(tmp[:0], n)[:n]
	top := uint(bits.Len64(uint64(^T(0)))) - 8 // the shift of the top 8 bits
	var ends [256]int
	scatter(a, tmp, top, 8, &ends)
	start := 0
	for _, end := range ends {
		bucket, dst := tmp[start:end], a[start:end]
		if len(bucket) <= 32 {
			insertionSort(bucket)
			copy(dst, bucket)
		} else {
			// The next bits, about log2(len/2) of them, at most 8.
			b := min(bits.Len(uint(len(bucket)))-1, 8)
			var sub [256]int
			scatter(bucket, dst, top-uint(b), b, &sub)
			from := 0
			for _, to := range sub[:1<<b] {
				piece := dst[from:to]
				if len(piece) > 32 {
					slices.Sort(piece)
				} else {
					insertionSort(piece)
				}
				from = to
			}
		}
		start = end
	}
	return tmp
}

// scatter moves src into dst grouped by the b bits (b <= 8) at shift, in order, and
// sets ends[i] to the end of group i in dst, for i < 1<<b.
func scatter[T uint32 | uint64](src, dst []T, shift uint, b int, ends *[256]int) {
	mask := T(1)<<b - 1
	var counts [256]int
	for _, h := range src {
		counts[h>>shift&mask]++
	}
	sum := 0
	for i := range 1 << b {
		counts[i], sum = sum, sum+counts[i]
	}
	for _, h := range src {
		i := h >> shift & mask
		dst[counts[i]] = h
		counts[i]++
	}
	copy(ends[:], counts[:1<<b])
}

func insertionSort[T uint32 | uint64](a []T) {
	for i := 1; i < len(a); i++ {
		v := a[i]
		j := i
		for ; j > 0 && a[j-1] > v; j-- {
			a[j] = a[j-1]
		}
		a[j] = v
	}
}
