package shingle

import (
	"slices"

	"github.com/neardup/neardup/internal/hashsort"
)

// sorter sorts feature hashes with hashsort, keeping its scratch space between texts.
type sorter struct {
	tmp []uint64
}

// sort sorts a in ascending order.
func (s *sorter) sort(a []uint64) { s.tmp = hashsort.Sort(a, s.tmp) }

// sortUnique sorts a, moves its distinct values to the front and returns their number.
func (s *sorter) sortUnique(a []uint64) int {
	s.sort(a)
	return len(slices.Compact(a))
}
