package shingle

import (
	"math/bits"
	"slices"
)

// sorter sorts feature hashes. Hashes are uniformly distributed, so one counting pass on
// their top bits puts them into buckets of a few each, which insertion sort finishes:
// about three times faster than slices.Sort for the 10^3-10^6 hashes of a text. A
// bucket that is large anyway (many equal hashes, or crafted ones) is sorted with
// slices.Sort, so the worst case stays O(n log n).
type sorter struct {
	tmp    []uint64
	counts []uint32
}

// sort sorts a in ascending order.
func (s *sorter) sort(a []uint64) {
	n := len(a)
	if n <= 256 {
		slices.Sort(a)
		return
	}
	b := min(bits.Len(uint(n))-1, 16) // about two hashes per bucket
	shift := 64 - b
	s.counts = slices.Grow(s.counts[:0], 1<<b+1)[:1<<b+1]
	counts := s.counts
	clear(counts)
	for _, h := range a {
		counts[h>>shift+1]++
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	s.tmp = slices.Grow(s.tmp[:0], n)[:n]
	tmp := s.tmp
	for _, h := range a {
		i := h >> shift
		tmp[counts[i]] = h
		counts[i]++
	}
	// counts[i] is now the end of bucket i (and the start of bucket i+1).
	start := uint32(0)
	for _, end := range counts[:1<<b] {
		bucket := tmp[start:end]
		if len(bucket) > 32 {
			slices.Sort(bucket)
		} else {
			for i := 1; i < len(bucket); i++ {
				v := bucket[i]
				j := i
				for ; j > 0 && bucket[j-1] > v; j-- {
					bucket[j] = bucket[j-1]
				}
				bucket[j] = v
			}
		}
		start = end
	}
	copy(a, tmp)
}

// sortUnique sorts a, moves its distinct values to the front and returns their number.
func (s *sorter) sortUnique(a []uint64) int {
	s.sort(a)
	return len(slices.Compact(a))
}
