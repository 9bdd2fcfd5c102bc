package hamming

import "math"

// design is a (blocks, k) table design with its permutations and block masks.
type design struct {
	blocks, k int
	masks     []uint64 // block i's bits in the unpermuted fingerprint
	perms     []Permutation
}

func newDesign(blocks, k int) (*design, error) {
	perms, err := Permutations(blocks, k)
	if err != nil {
		return nil, err
	}
	return &design{blocks: blocks, k: k, masks: blockMasks(blocks), perms: perms}, nil
}

// agree returns the set of blocks (bit i for block i) on which two fingerprints whose XOR
// is x are equal.
func (d *design) agree(x uint64) uint64 {
	var s uint64
	for i, m := range d.masks {
		if x&m == 0 {
			s |= 1 << i
		}
	}
	return s
}

// owner returns the chosen-block set of the one table that reports a pair whose XOR is x:
// the first blocks-k blocks, in ascending order, on which the pair agrees. A pair within k
// bits agrees on at least blocks-k blocks, so it has exactly one owner, and comparing a
// table's Blocks() with the owner reports every pair once without a set of seen pairs.
// The result is meaningless for pairs further than k bits apart.
func (d *design) owner(x uint64) uint64 {
	s := d.agree(x)
	var o uint64
	for range d.blocks - d.k {
		low := s & -s
		o |= low
		s &^= low
	}
	return o
}

// tables returns the number of tables of a (blocks, k) design: blocks choose k.
// It saturates at math.MaxInt32 for designs far beyond MaxTables.
func tables(blocks, k int) int {
	k = min(k, blocks-k)
	n := 1
	for i := range k {
		n = n * (blocks - i) / (i + 1)
		if n > math.MaxInt32 {
			return math.MaxInt32
		}
	}
	return n
}

// prefixBits returns how many bits the smallest search prefix of a (blocks, k) design has:
// the width of its blocks-k narrowest blocks.
func prefixBits(blocks, k int) int {
	return (blocks - k) * (Bits / blocks)
}
