package shingle

import (
	"math/bits"
	"slices"
)

// sorter sorts feature hashes. Hashes are uniformly distributed, so two counting passes
// on their top bits (8 bits into 256 buckets, then enough bits to split each bucket into
// pieces of about two) leave buckets that insertion sort finishes: about three times
// faster than slices.Sort for the 10^3-10^6 hashes of a text, and each pass scatters
// into few enough places to stay in cache. A piece that is large anyway (many equal
// hashes, or crafted ones) is sorted with slices.Sort, so the worst case stays
// O(n log n).
type sorter struct {
	tmp []uint64
}

// sort sorts a in ascending order.
func (s *sorter) sort(a []uint64) {
	n := len(a)
	if n <= 256 {
		slices.Sort(a)
		return
	}
	s.tmp = slices.Grow(s.tmp[:0], n)[:n]
	tmp := s.tmp
	var ends [256]int
	scatter(a, tmp, 56, &ends)
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
			scatterBits(bucket, dst, uint(56-b), b, &sub)
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
}

// scatter moves src into dst grouped by the 8 bits at shift, in order, and sets ends[i]
// to the end of group i in dst.
func scatter(src, dst []uint64, shift uint, ends *[256]int) {
	scatterBits(src, dst, shift, 8, ends)
}

// scatterBits is scatter for the b bits (b <= 8) at shift; ends[:1<<b] are set.
func scatterBits(src, dst []uint64, shift uint, b int, ends *[256]int) {
	mask := uint64(1)<<b - 1
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

func insertionSort(a []uint64) {
	for i := 1; i < len(a); i++ {
		v := a[i]
		j := i
		for ; j > 0 && a[j-1] > v; j-- {
			a[j] = a[j-1]
		}
		a[j] = v
	}
}

// sortUnique sorts a, moves its distinct values to the front and returns their number.
func (s *sorter) sortUnique(a []uint64) int {
	s.sort(a)
	return len(slices.Compact(a))
}
