// Package keyfilter is the Bloom filter of URL and exact-content keys behind
// neardup.Filter (the pre-screen), with its snapshot format: the implementation that
// the root package's façade and the detector's engine share. See neardup.Filter for
// what it promises.
package keyfilter

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/internal/snapfile"
)

// Filter is a Bloom filter of URL and exact-content keys (neardup.KeyFilter). The bit
// set is bits-and-blooms/bloom's; a key's positions come from its SHA-256 (snapshot
// version 2) or, in a version 1 snapshot, from the library's MurmurHash3, combined by
// the library's double hashing. Positions and format are pinned by golden tests
// (neardup's TestKeyFilterGolden) and cross-language vectors: a filter written by one
// version of neardup is read by the next.
//
// A Filter's read methods (HasURL, HasExact, Len, Capacity, FalsePositiveRate,
// WriteTo) may run concurrently with each other, so a filter that is no longer added to
// can be shared; AddURL and AddExact need the filter to themselves.
type Filter struct {
	f     *bloom.BloomFilter
	n     uint64  // keys it was sized for
	rate  float64 // false-positive rate it was sized for
	count uint64  // keys added
	// murmur marks version 1 positions: bits-and-blooms' MurmurHash3 base hashes.
	murmur bool
}

// New returns a filter sized for n keys at the false-positive rate fp: m =
// -n ln(fp) / ln(2)^2 bits and k = m/n ln(2) hash functions (9.6 bits and 7 functions a
// key at 1%). The caller checks that n is at least 1 and fp in (0, 1)
// (neardup.NewKeyFilter says so to its users).
func New(n int, fp float64) *Filter {
	return &Filter{f: bloom.NewWithEstimates(uint(n), fp), n: uint64(n), rate: fp}
}

// Full returns a filter for one key at the rate fp with every bit set: it holds every
// key, so it costs its users lookups, never a missed key.
func Full(fp float64) *Filter {
	f := New(1, fp)
	f.f.BitSet().SetAll()
	return f
}

// Keys are prefixed by their kind so that a URL and a hash never collide by design.
const (
	urlKeyPrefix   = 'u'
	exactKeyPrefix = 'x'
)

func urlKey(dst []byte, canonical string) []byte {
	return append(append(dst, urlKeyPrefix), canonical...)
}

func exactKey(dst []byte, h api.Hash) []byte {
	return append(append(dst, exactKeyPrefix), h[:]...)
}

// locations returns the key's k bit positions before the modulo m, in dst's storage:
// bits-and-blooms' combination of four base hashes, here the words of its SHA-256.
func (f *Filter) locations(dst *[maxFilterHashes]uint64, key []byte) []uint64 {
	sum := sha256.Sum256(key)
	var h [4]uint64
	for i := range h {
		h[i] = binary.LittleEndian.Uint64(sum[8*i:])
	}
	k := f.f.K()
	for i := range uint64(k) {
		dst[i] = h[i%2] + i*h[2+(((i+(i%2))%4)/2)]
	}
	return dst[:k]
}

func (f *Filter) add(key []byte) {
	f.count++
	if f.murmur {
		f.f.Add(key)
		return
	}
	var buf [maxFilterHashes]uint64
	m, bits := uint64(f.f.Cap()), f.f.BitSet()
	for _, l := range f.locations(&buf, key) {
		bits.Set(uint(l % m))
	}
}

func (f *Filter) test(key []byte) bool {
	if f.murmur {
		return f.f.Test(key)
	}
	var buf [maxFilterHashes]uint64
	return f.f.TestLocations(f.locations(&buf, key))
}

// AddURL adds a canonical URL (see urlnorm).
func (f *Filter) AddURL(canonical string) { f.add(urlKey(nil, canonical)) }

// AddExact adds an exact-content hash (Fingerprints.Main).
func (f *Filter) AddExact(h api.Hash) {
	var buf [1 + len(h)]byte
	f.add(exactKey(buf[:0], h))
}

// HasURL reports whether the canonical URL may have been added; false is certain.
func (f *Filter) HasURL(canonical string) bool { return f.test(urlKey(nil, canonical)) }

// HasExact reports whether the hash may have been added; false is certain.
func (f *Filter) HasExact(h api.Hash) bool {
	var buf [1 + len(h)]byte
	return f.test(exactKey(buf[:0], h))
}

// Len returns the number of keys added (a key added twice counts twice).
func (f *Filter) Len() int { return int(f.count) }

// Capacity returns the number of keys the filter was sized for.
func (f *Filter) Capacity() int { return int(f.n) }

// FalsePositiveRate returns the rate expected with the keys added so far.
func (f *Filter) FalsePositiveRate() float64 {
	return bloom.EstimateFalsePositiveRate(f.f.Cap(), f.f.K(), uint(f.count))
}

// Key filter snapshot: magic, version, then n, rate (float64 bits), count and the length
// of the bloom encoding (4 x uint64, little-endian), the encoding itself
// (bits-and-blooms' binary form: m, k, then the bit set's words, big-endian), and the
// CRC-32C of everything before it.
const (
	filterMagic = "NDKEYFLT"
	// filterVersion is what WriteTo writes; Read reads it and filterVersionMurmur,
	// whose positions come from MurmurHash3.
	filterVersion       = 2
	filterVersionMurmur = 1
	// maxFilterBytes bounds what Read accepts: 2^34 bits, a filter for more
	// than a billion keys at 1%.
	maxFilterBytes = 1 << 31
	filterChunk    = 1 << 20
	// maxFilterHashes bounds k: 30 hash functions already mean a rate of 1e-9.
	maxFilterHashes = 64
)

// WriteTo writes the filter's snapshot to w; Read reads it back.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	body, err := f.f.MarshalBinary()
	if err != nil {
		return 0, fmt.Errorf("neardup: key filter: %w", err)
	}
	version := uint32(filterVersion)
	if f.murmur {
		version = filterVersionMurmur
	}
	sw := snapfile.NewWriter(w, "neardup", filterMagic, version, 32+len(body))
	sw.Buf = binary.LittleEndian.AppendUint64(sw.Buf, f.n)
	sw.Buf = binary.LittleEndian.AppendUint64(sw.Buf, math.Float64bits(f.rate))
	sw.Buf = binary.LittleEndian.AppendUint64(sw.Buf, f.count)
	sw.Buf = binary.LittleEndian.AppendUint64(sw.Buf, uint64(len(body)))
	sw.Buf = append(sw.Buf, body...)
	return sw.Finish()
}

// Read reads a snapshot written by WriteTo. A malformed, truncated or corrupted
// snapshot gives an error wrapping ErrFilter; the memory it allocates grows with the
// bytes actually read, never with what a header claims.
func Read(r io.Reader) (*Filter, error) {
	sr := snapfile.NewReader(r, "neardup", ErrFilter)
	var hdr [32]byte
	version, err := sr.HeaderVersions(filterMagic, filterVersionMurmur, filterVersion, hdr[:])
	if err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(hdr[0:])
	rate := math.Float64frombits(binary.LittleEndian.Uint64(hdr[8:]))
	count := binary.LittleEndian.Uint64(hdr[16:])
	size := binary.LittleEndian.Uint64(hdr[24:])
	if n < 1 || !(rate > 0 && rate < 1) || size > maxFilterBytes {
		return nil, fmt.Errorf("%w: header n=%d rate=%g size=%d", ErrFilter, n, rate, size)
	}
	var body []byte
	for uint64(len(body)) < size {
		chunk := min(size-uint64(len(body)), filterChunk)
		body = append(body, make([]byte, chunk)...)
		if err := sr.ReadFull(body[len(body)-int(chunk):], "bloom filter"); err != nil {
			return nil, err
		}
	}
	if err := sr.Verify(); err != nil {
		return nil, err
	}
	f := new(bloom.BloomFilter)
	if _, err := f.ReadFrom(bytes.NewReader(body)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFilter, err)
	}
	// A forged k or m would make every test slow or every answer false.
	if f.K() == 0 || f.K() > maxFilterHashes || f.Cap() == 0 || uint64(f.Cap()) > 8*size {
		return nil, fmt.Errorf("%w: bloom filter with m=%d bits and k=%d in %d bytes", ErrFilter, f.Cap(), f.K(), size)
	}
	return &Filter{f: f, n: n, rate: rate, count: count, murmur: version == filterVersionMurmur}, nil
}

// Clone returns a deep copy.
func (f *Filter) Clone() *Filter {
	c := *f
	c.f = f.f.Copy()
	return &c
}
