package shingle

import (
	"math/bits"
	"math/rand/v2"
)

// distinct finds the distinct values of a slice with an open-addressing hash set
// (linear probing, at most half full): one probe or two per value, about three times
// faster than sorting them. The slot of a value is its product with a random odd
// multiplier, top bits, so that crafted hashes cannot pile up in one place (the
// result does not depend on the multiplier).
type distinct struct {
	table []uint64 // 0 is an empty slot; the value 0 is tracked apart
	mul   uint64
}

// unique moves the distinct values of a to its front, in the order of their first
// occurrence, and returns their number.
func (d *distinct) unique(a []uint64) int {
	if len(a) < 2 {
		return len(a)
	}
	if d.mul == 0 {
		d.mul = rand.Uint64() | 1
	}
	b := bits.Len(uint(2*len(a) - 1)) // a table of 2^b >= 2*len(a) slots
	if cap(d.table) < 1<<b {
		d.table = make([]uint64, 1<<b)
	}
	t := d.table[:1<<b]
	clear(t)
	mask, shift := uint64(len(t)-1), uint(64-b)
	n, zero := 0, false
	for _, h := range a {
		if h == 0 {
			if !zero {
				zero = true
				a[n] = 0
				n++
			}
			continue
		}
		for i := h * d.mul >> shift; ; i = (i + 1) & mask {
			if t[i] == h {
				break
			}
			if t[i] == 0 {
				t[i] = h
				a[n] = h
				n++
				break
			}
		}
	}
	return n
}
