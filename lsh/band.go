package lsh

import (
	"math/bits"

	"github.com/neardup/neardup/internal/mix"
	"github.com/neardup/neardup/minhash"
)

// AppendBandKeys appends to dst the 64-bit keys of sig's bands, bands keys of rows values
// each (band i covers sig[i*rows:(i+1)*rows]), and returns the extended slice. Two
// signatures agree on band i exactly when their band-i keys are equal, up to 64-bit hash
// collisions; the key also depends on i, so keys of different bands can share one key
// space. These are the keys of Index's tables, for stores that keep the postings
// elsewhere (key -> ids).
//
// The key function is frozen, pinned by golden tests: keys may be persisted. It reads the
// band's values as little-endian pairs (a lone last value alone), folds each pair into an
// accumulator seeded by the band index with one multiply-rotate round, and finishes with
// the splitmix64 finalizer. It costs about a nanosecond per value and allocates only when
// dst lacks room. AppendBandKeys panics if bands or rows is not positive or
// bands*rows > len(sig).
func AppendBandKeys(dst []uint64, sig minhash.Signature, bands, rows int) []uint64 {
	if bands <= 0 || rows <= 0 || bands > len(sig) || rows > len(sig) || bands*rows > len(sig) {
		panic("lsh: AppendBandKeys needs positive bands and rows with bands*rows <= len(sig)")
	}
	for i := range bands {
		dst = append(dst, bandKey(i, sig[i*rows:(i+1)*rows]))
	}
	return dst
}

const (
	prime1 = 0x9e3779b185ebca87
	prime2 = 0xc2b2ae3d27d4eb4f
)

// bandKey returns the frozen key of band i holding values v.
func bandKey(i int, v []uint32) uint64 {
	h := uint64(i+1)*prime1 ^ uint64(len(v))
	for len(v) >= 2 {
		h = bits.RotateLeft64(h+(uint64(v[0])|uint64(v[1])<<32)*prime2, 31) * prime1
		v = v[2:]
	}
	if len(v) == 1 {
		h = bits.RotateLeft64(h+uint64(v[0])*prime2, 31) * prime1
	}
	return mix.Splitmix64(h)
}
