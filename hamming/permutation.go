package hamming

import (
	"fmt"
	"math/bits"
)

// Bits is the width of a fingerprint.
const Bits = 64

// MaxTables bounds the number of tables (blocks choose k) of a design, so that a mistyped
// design is an error rather than gigabytes of permutations. (64, 3) has 41,664 tables.
const MaxTables = 1 << 16

// Permutation is one of the bit permutations of Manku et al.'s table scheme, bit-identical
// to simhash-cpp's Permutation: the 64 bits are cut into m blocks, m-k of them are moved to
// the top (in ascending block order) and the other k follow (also ascending). Two
// fingerprints within k bits of each other agree on at least m-k blocks, so for at least one
// permutation they share the prefix selected by SearchMask.
//
// A Permutation is an immutable value; it is safe for concurrent use. The zero value is not
// a valid permutation: obtain them from Permutations.
type Permutation struct {
	masks   []uint64 // block masks of the source bits, in placement order (top first)
	rmasks  []uint64 // the same blocks where they sit after Apply
	offsets []int    // left shift applied to each block (negative: right shift)
	search  uint64   // the top bits that hold the m-k chosen blocks
	chosen  uint64   // bit i set when block i is one of the m-k chosen blocks
}

// blockMasks returns the masks of the m blocks: block i covers bits
// [floor(i*64/m), floor((i+1)*64/m)), block 0 the lowest.
func blockMasks(m int) []uint64 {
	masks := make([]uint64, m)
	for i := range masks {
		lo, hi := i*Bits/m, (i+1)*Bits/m
		masks[i] = spanMask(lo, hi)
	}
	return masks
}

// spanMask returns a mask with bits [lo, hi) set.
func spanMask(lo, hi int) uint64 {
	if hi-lo == Bits {
		return ^uint64(0)
	}
	return ((uint64(1) << (hi - lo)) - 1) << lo
}

// checkDesign validates a (blocks, k) table design.
func checkDesign(blocks, k int) error {
	switch {
	case k < 0:
		return fmt.Errorf("%w: distance %d is negative", ErrDesign, k)
	case blocks > Bits:
		return fmt.Errorf("%w: %d blocks exceed the %d bits of a fingerprint; use at most %d", ErrDesign, blocks, Bits, Bits)
	case blocks <= k:
		return fmt.Errorf("%w: %d blocks must be more than the distance %d; use at least %d", ErrDesign, blocks, k, k+1)
	case tables(blocks, k) > MaxTables:
		return fmt.Errorf("%w: %d blocks at distance %d make %d tables, more than %d; use fewer blocks", ErrDesign, blocks, k, tables(blocks, k), MaxTables)
	}
	return nil
}

// combinations calls fn with every r-subset of {0..n-1} in lexicographic order (the order of
// Python's itertools.combinations and simhash-cpp's Permutation::choose). fn must not keep idx.
func combinations(n, r int, fn func(idx []int)) {
	idx := make([]int, r)
	for i := range idx {
		idx[i] = i
	}
	for {
		fn(idx)
		i := r - 1
		for i >= 0 && idx[i] == i+n-r {
			i--
		}
		if i < 0 {
			return
		}
		idx[i]++
		for j := i + 1; j < r; j++ {
			idx[j] = idx[j-1] + 1
		}
	}
}

// Permutations returns the permutations of the (blocks, k) design in simhash-cpp's order:
// one for every combination of blocks-k blocks, combinations in lexicographic order. It
// returns an error wrapping ErrDesign when k < 0, blocks > 64, blocks <= k or the design
// has more than MaxTables tables.
func Permutations(blocks, k int) ([]Permutation, error) {
	if err := checkDesign(blocks, k); err != nil {
		return nil, err
	}
	masks := blockMasks(blocks)
	var perms []Permutation
	combinations(blocks, blocks-k, func(idx []int) {
		order := make([]uint64, 0, blocks)
		var chosen uint64
		for _, i := range idx {
			order = append(order, masks[i])
			chosen |= 1 << i
		}
		for i, m := range masks {
			if chosen&(1<<i) == 0 {
				order = append(order, m)
			}
		}
		perms = append(perms, newPermutation(order, k, chosen))
	})
	return perms, nil
}

// newPermutation places the blocks of order from the top bit down, as simhash-cpp does.
func newPermutation(order []uint64, k int, chosen uint64) Permutation {
	p := Permutation{
		masks:   order,
		rmasks:  make([]uint64, len(order)),
		offsets: make([]int, len(order)),
		chosen:  chosen,
	}
	width := 0
	for i, m := range order {
		lo := bits.TrailingZeros64(m)
		width += bits.OnesCount64(m)
		off := Bits - width - lo
		p.offsets[i] = off
		p.rmasks[i] = shift(m, off)
		if i == len(order)-k-1 {
			p.search = spanMask(Bits-width, Bits)
		}
	}
	return p
}

// shift moves x left by off bits, or right by -off bits when off is negative.
func shift(x uint64, off int) uint64 {
	if off >= 0 {
		return x << off
	}
	return x >> -off
}

// Apply returns x with its blocks permuted. It costs one shift and mask per block.
func (p Permutation) Apply(x uint64) uint64 {
	var r uint64
	for i, m := range p.masks {
		r |= shift(x&m, p.offsets[i])
	}
	return r
}

// Reverse undoes Apply: p.Reverse(p.Apply(x)) == x for every x.
func (p Permutation) Reverse(x uint64) uint64 {
	var r uint64
	for i, m := range p.rmasks {
		r |= shift(x&m, -p.offsets[i])
	}
	return r
}

// SearchMask returns the mask of the permuted prefix that holds the m-k chosen blocks:
// fingerprints that agree on those blocks have equal Apply(x)&SearchMask().
func (p Permutation) SearchMask() uint64 { return p.search }

// Blocks returns the indices of the chosen blocks as a bit set: bit i is set when block i is
// in the permuted prefix.
func (p Permutation) Blocks() uint64 { return p.chosen }
