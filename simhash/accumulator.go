package simhash

// Accumulator computes a SimHash from a stream of hashes: Add and AddWeighted feed it, Sum64
// reads the fingerprint of everything added so far. After Add calls only, Sum64 equals
// Compute of the same hashes; Add(h) counts exactly like AddWeighted(h, 1), and the two may
// be mixed.
//
// The zero value is an empty Accumulator ready to use; Reset makes it empty again. An
// Accumulator is 1.25 KB and never allocates. It is not safe for concurrent use.
type Accumulator struct {
	c        counter     // hashes given to Add, bit-sliced like Compute
	weights  [64]float64 // ±w of the hashes given to AddWeighted, per bit
	weighted bool        // whether AddWeighted was called since the last Reset
}

// Add adds hash h with weight 1. It costs about as much per hash as Compute.
func (a *Accumulator) Add(h uint64) {
	a.c.add(h)
}

// AddWeighted adds hash h with weight w: the counter of every set bit of h moves up by w,
// that of every clear bit down by w. Weighted counters are float64 sums, so weights are
// exact only while the sums stay within 2^53; use ComputeWeighted with integer weights when
// large integer sums must be exact. A NaN weight leaves every bit of Sum64 clear. It costs
// one float64 addition per bit.
func (a *Accumulator) AddWeighted(h uint64, w float64) {
	a.weighted = true
	addWeighted(&a.weights, h, w)
}

// Sum64 returns the SimHash of the hashes added since the zero value or the last Reset:
// bit i is set when its counter is above zero. It does not change the Accumulator.
func (a *Accumulator) Sum64() uint64 {
	if !a.weighted {
		return a.c.sum64()
	}
	ones, n := a.c.counts()
	c := a.weights
	for i, o := range ones {
		// The exact integer counter of the Add calls, then the weighted ones.
		c[i] += float64(int64(2*o - n))
	}
	return floatSum(&c)
}

// Reset empties the Accumulator.
func (a *Accumulator) Reset() {
	*a = Accumulator{}
}
