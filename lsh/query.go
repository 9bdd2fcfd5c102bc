package lsh

import (
	"slices"

	"github.com/neardup/neardup/minhash"
)

// candidates calls fn once for each indexed signature that agrees with sig on at least
// one whole band. A signature is reported by the first band it agrees on (its owner), so
// no set of seen slots is needed.
//
// Bands are taken up to bandGroup at a time, in two passes: the first hashes their keys
// and loads their buckets, collecting the entries whose tag matches; the second checks
// those candidates against their signatures. Keeping signature loads out of the bucket
// scans lets the bucket loads of different bands, all cache misses in a large index,
// overlap instead of waiting for one another.
func (c *core) candidates(sig minhash.Signature, fn func(slot uint32, cand minhash.Signature)) {
	const bandGroup = 16
	var (
		bks   [bandGroup][]uint64
		tags  [bandGroup]uint32
		found [64]hit
	)
	r := c.opt.Rows
	for g := 0; g < len(c.bands); g += bandGroup {
		m := min(bandGroup, len(c.bands)-g)
		for j := range m {
			i := g + j
			b, e := c.entry(bandKey(i, sig[i*r:(i+1)*r]), 0)
			bks[j] = c.bands[i].buckets[b]
			tags[j] = uint32(e >> 32)
		}
		nf := 0
		for j := range m {
			for _, e := range bks[j] {
				if uint32(e>>32) != tags[j] {
					continue
				}
				if nf == len(found) {
					c.checkHits(found[:nf], sig, fn)
					nf = 0
				}
				found[nf] = hit{slot: uint32(e), band: g + j}
				nf++
			}
		}
		c.checkHits(found[:nf], sig, fn)
	}
}

// hit is a bucket entry whose tag matches the query's in band band.
type hit struct {
	slot uint32
	band int
}

// checkHits calls fn for each hit whose signature really agrees with sig on the hit's band
// and on no earlier band.
func (c *core) checkHits(hits []hit, sig minhash.Signature, fn func(slot uint32, cand minhash.Signature)) {
	r := c.opt.Rows
	for _, h := range hits {
		cand := c.sig(h.slot)
		i := h.band
		if slices.Equal(cand[i*r:(i+1)*r], sig[i*r:(i+1)*r]) && !SharesBand(cand, sig, i, r) {
			fn(h.slot, cand)
		}
	}
}

// SharesBand reports whether signatures a and b agree on a whole band among the first
// bands of r rows each: whether an index of those bands makes them candidates. A band key
// that two signatures share while their rows differ is a 64-bit hash collision, which
// the index ignores and so must a caller matching band keys of its own. It does not
// allocate.
func SharesBand(a, b minhash.Signature, bands, r int) bool {
	for j := range bands {
		if slices.Equal(a[j*r:(j+1)*r], b[j*r:(j+1)*r]) {
			return true
		}
	}
	return false
}

// verify counts the values a and b share and reports whether they reach minMatch,
// stopping as soon as too many differ.
func (c *core) verify(a, b minhash.Signature) (int, bool) {
	b = b[:len(a)]
	allowed := len(a) - c.minMatch // mismatches that still pass
	miss := 0
	for i, v := range a {
		if v != b[i] {
			if miss++; miss > allowed {
				return 0, false
			}
		}
	}
	return len(a) - miss, true
}
