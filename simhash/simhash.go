package simhash

import "math/bits"

// Compute returns the SimHash of hashes: bit i (value 1<<i) is set when more of the hashes
// have bit i set than clear, i.e. when the counter that each hash moves up by one for a set
// bit and down by one for a clear bit ends above zero. Ties and an empty input give 0 in
// that bit. The result equals simhash-py's compute(hashes) and simhash-cpp's
// Simhash::compute.
//
// Compute counts all 64 bit positions at once with carry-save adders over bit-sliced
// counters (about six word operations per hash instead of 64 branches); it does not
// allocate and does not keep hashes.
func Compute(hashes []uint64) uint64 {
	var c counter
	c.addSlice(hashes)
	return c.sum64()
}

// ComputeWeighted returns the weighted SimHash of hashes: hashes[k] moves the counter of each
// of its set bits up by weights[k] and the counter of each clear bit down by it; bit i of the
// result is set when its counter ends above zero. With every weight 1 it equals Compute.
//
// Integer weights are summed exactly in int64 (wrapping on overflow, which only sums
// beyond ±2^63 reach). Floating-point weights are summed in float64, hash by hash in input
// order; a NaN weight leaves every bit clear. ComputeWeighted does not allocate and does
// not keep its arguments. It panics if len(weights) != len(hashes): that is a programming
// error, not a property of the data.
func ComputeWeighted[W int | int32 | int64 | float32 | float64](hashes []uint64, weights []W) uint64 {
	if len(hashes) != len(weights) {
		panic("simhash: ComputeWeighted called with different numbers of hashes and weights")
	}
	switch ws := any(weights).(type) {
	case []int:
		return weightedInt(hashes, ws)
	case []int32:
		return weightedInt(hashes, ws)
	case []int64:
		return weightedInt(hashes, ws)
	case []float32:
		return weightedFloat(hashes, ws)
	case []float64:
		return weightedFloat(hashes, ws)
	}
	panic("unreachable")
}

// weightedInt sums integer weights: the counter of bit i is 2*(weight of the hashes with
// bit i set) - (total weight), which equals the ±w sum exactly, even modulo 2^64.
func weightedInt[W int | int32 | int64](hashes []uint64, weights []W) uint64 {
	var ones [64]int64
	var total int64
	for k, h := range hashes {
		w := int64(weights[k])
		total += w
		for i := range ones {
			ones[i] += w & -int64(h>>i&1)
		}
	}
	var r uint64
	for i, o := range ones {
		if 2*o-total > 0 {
			r |= 1 << i
		}
	}
	return r
}

// weightedFloat sums float weights into one float64 counter per bit.
func weightedFloat[W float32 | float64](hashes []uint64, weights []W) uint64 {
	var c [64]float64
	for k, h := range hashes {
		addWeighted(&c, h, float64(weights[k]))
	}
	return floatSum(&c)
}

// addWeighted adds +w to c[i] for the set bits of h and -w for the clear ones.
func addWeighted(c *[64]float64, h uint64, w float64) {
	pm := [2]float64{-w, w}
	for i := range c {
		c[i] += pm[h>>i&1]
	}
}

// floatSum returns the fingerprint of float counters.
func floatSum(c *[64]float64) uint64 {
	var r uint64
	for i, v := range c {
		if v > 0 {
			r |= 1 << i
		}
	}
	return r
}

// Distance returns the Hamming distance between two fingerprints: the number of bits in
// which they differ, 0 to 64. It equals simhash-py's num_differing_bits.
func Distance(a, b uint64) int {
	return bits.OnesCount64(a ^ b)
}

// lanes has the lowest bit of each byte set: (h>>j)&lanes spreads bits j, j+8, ..., j+56 of
// h into the eight byte lanes of a word, so that one addition counts eight bit positions.
const lanes = 0x0101010101010101

// counter counts, for each of the 64 bit positions, how many of a stream of hashes have the
// bit set. Whole blocks of 16 hashes go through a Harley-Seal carry-save adder tree into
// four bit-sliced counters (bit i of p1, p2, p4, p8 holds a 4-bit count for position i);
// every carry out of p8 is worth 16 and goes into the byte lanes of sixteens (lane b of
// sixteens[j] counts position 8b+j), which are folded into ones before a lane can reach
// 255. Hashes of an unfinished block wait in pend. The zero value is an empty counter.
type counter struct {
	p1, p2, p4, p8 uint64
	sixteens       [8]uint64
	blocks         int // blocks counted in sixteens since the last fold
	ones           [64]uint64
	n              uint64 // hashes added
	pend           [16]uint64
	npend          int
}

// csa is a carry-save adder: per bit, a+b+c = 2*carry + sum.
func csa(a, b, c uint64) (carry, sum uint64) {
	u := a ^ b
	return a&b | u&c, u ^ c
}

// add counts one hash.
func (c *counter) add(h uint64) {
	c.pend[c.npend] = h
	c.npend++
	if c.npend == len(c.pend) {
		c.npend = 0
		c.addBlocks(c.pend[:])
	}
}

// addSlice counts hashes.
func (c *counter) addSlice(hashes []uint64) {
	for c.npend != 0 && len(hashes) > 0 {
		c.add(hashes[0])
		hashes = hashes[1:]
	}
	full := len(hashes) &^ 15
	c.addBlocks(hashes[:full])
	for _, h := range hashes[full:] {
		c.add(h)
	}
}

// addBlocks counts hashes, whose length must be a multiple of 16.
func (c *counter) addBlocks(hashes []uint64) {
	c.n += uint64(len(hashes))
	p1, p2, p4, p8 := c.p1, c.p2, c.p4, c.p8
	s := &c.sixteens
	blocks := c.blocks
	for len(hashes) >= 16 {
		h := (*[16]uint64)(hashes)
		var twosA, twosB, foursA, foursB, eightsA, eightsB, sixteens uint64
		twosA, p1 = csa(p1, h[0], h[1])
		twosB, p1 = csa(p1, h[2], h[3])
		foursA, p2 = csa(p2, twosA, twosB)
		twosA, p1 = csa(p1, h[4], h[5])
		twosB, p1 = csa(p1, h[6], h[7])
		foursB, p2 = csa(p2, twosA, twosB)
		eightsA, p4 = csa(p4, foursA, foursB)
		twosA, p1 = csa(p1, h[8], h[9])
		twosB, p1 = csa(p1, h[10], h[11])
		foursA, p2 = csa(p2, twosA, twosB)
		twosA, p1 = csa(p1, h[12], h[13])
		twosB, p1 = csa(p1, h[14], h[15])
		foursB, p2 = csa(p2, twosA, twosB)
		eightsB, p4 = csa(p4, foursA, foursB)
		sixteens, p8 = csa(p8, eightsA, eightsB)
		s[0] += sixteens & lanes
		s[1] += sixteens >> 1 & lanes
		s[2] += sixteens >> 2 & lanes
		s[3] += sixteens >> 3 & lanes
		s[4] += sixteens >> 4 & lanes
		s[5] += sixteens >> 5 & lanes
		s[6] += sixteens >> 6 & lanes
		s[7] += sixteens >> 7 & lanes
		hashes = hashes[16:]
		if blocks++; blocks == 255 {
			foldLanes(&c.ones, s, 16)
			blocks = 0
		}
	}
	c.p1, c.p2, c.p4, c.p8 = p1, p2, p4, p8
	c.blocks = blocks
}

// foldLanes adds w times the byte lanes of s to ones and clears s.
func foldLanes(ones *[64]uint64, s *[8]uint64, w uint64) {
	for j, v := range s {
		for b := range 8 {
			ones[8*b+j] += w * (v >> (8 * b) & 0xff)
		}
		s[j] = 0
	}
}

// counts returns how many hashes added so far have each bit set, and how many were added,
// without changing c.
func (c *counter) counts() (ones [64]uint64, n uint64) {
	// Lane b of small[j] counts position 8b+j for the bit-sliced planes (at most 15) and the
	// pending hashes (at most 15), so no lane overflows.
	var small [8]uint64
	for j := range small {
		small[j] = c.p1>>j&lanes + c.p2>>j&lanes*2 + c.p4>>j&lanes*4 + c.p8>>j&lanes*8
	}
	for _, h := range c.pend[:c.npend] {
		for j := range small {
			small[j] += h >> j & lanes
		}
	}
	ones = c.ones
	for j, v := range small {
		x := c.sixteens[j]
		for b := range 8 {
			ones[8*b+j] += 16*(x>>(8*b)&0xff) + v>>(8*b)&0xff
		}
	}
	return ones, c.n + uint64(c.npend)
}

// sum64 returns the SimHash of the hashes added so far, without changing c.
func (c *counter) sum64() uint64 {
	ones, n := c.counts()
	var r uint64
	for i, o := range ones {
		// The counter o - (n - o) is above zero.
		if 2*o > n {
			r |= 1 << i
		}
	}
	return r
}
