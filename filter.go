package neardup

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/neardup/neardup/internal/snapfile"
)

// KeyFilter is a Bloom filter of URL and exact-content keys: the pre-screen that tells a
// crawler, without asking the detector, that a canonical URL or a main-text hash is
// certainly new. A negative answer is always right; a positive one is wrong with about
// the false-positive rate it was sized for, as long as it holds no more keys than it was
// sized for.
//
// The bit set is bits-and-blooms/bloom's. A key's k bit positions combine four 64-bit
// base hashes as that library's double hashing does; since snapshot version 2 the base
// hashes are the four little-endian words of the key's SHA-256, which every language has
// in its standard library at native speed (a Python crawler screens URLs from the same
// snapshot with hashlib), where version 1, still read, used the library's own
// MurmurHash3, which Python would have to compute in pure Python, ten times slower.
// Positions and the format are pinned by golden tests and by cross-language vectors
// (client/prescreen/testdata/vectors.json): a filter written by one version of neardup
// is read by the next.
//
// A KeyFilter's read methods (HasURL, HasExact, Len, Capacity, FalsePositiveRate,
// WriteTo) may run concurrently with each other, so a filter that is no longer added to
// can be shared; AddURL and AddExact need the filter to themselves.
type KeyFilter struct {
	f      *bloom.BloomFilter
	n      uint64  // keys it was sized for
	rate   float64 // false-positive rate it was sized for
	count  uint64  // keys added
	murmur bool    // version 1 positions: bits-and-blooms' MurmurHash3 base hashes
}

// NewKeyFilter returns a filter sized for n keys at the false-positive rate fp: m =
// -n ln(fp) / ln(2)^2 bits and k = m/n ln(2) hash functions (9.6 bits and 7 functions a
// key at 1%). n must be at least 1 and fp in (0, 1).
func NewKeyFilter(n int, fp float64) (*KeyFilter, error) {
	if n < 1 || !(fp > 0 && fp < 1) {
		return nil, fmt.Errorf("%w: key filter needs n >= 1 and 0 < fp < 1, not n=%d fp=%g", ErrOptions, n, fp)
	}
	return &KeyFilter{f: bloom.NewWithEstimates(uint(n), fp), n: uint64(n), rate: fp}, nil
}

// Keys are prefixed by their kind so that a URL and a hash never collide by design.
const (
	urlKeyPrefix   = 'u'
	exactKeyPrefix = 'x'
)

func urlKey(dst []byte, canonical string) []byte {
	return append(append(dst, urlKeyPrefix), canonical...)
}

func exactKey(dst []byte, h Hash) []byte {
	return append(append(dst, exactKeyPrefix), h[:]...)
}

// locations returns the key's k bit positions before the modulo m, in dst's storage:
// bits-and-blooms' combination of four base hashes, here the words of its SHA-256.
func (f *KeyFilter) locations(dst *[maxFilterHashes]uint64, key []byte) []uint64 {
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

func (f *KeyFilter) add(key []byte) {
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

func (f *KeyFilter) test(key []byte) bool {
	if f.murmur {
		return f.f.Test(key)
	}
	var buf [maxFilterHashes]uint64
	return f.f.TestLocations(f.locations(&buf, key))
}

// AddURL adds a canonical URL (see urlnorm).
func (f *KeyFilter) AddURL(canonical string) { f.add(urlKey(nil, canonical)) }

// AddExact adds an exact-content hash (Fingerprints.Main).
func (f *KeyFilter) AddExact(h Hash) {
	var buf [1 + len(h)]byte
	f.add(exactKey(buf[:0], h))
}

// HasURL reports whether the canonical URL may have been added; false is certain.
func (f *KeyFilter) HasURL(canonical string) bool { return f.test(urlKey(nil, canonical)) }

// HasExact reports whether the hash may have been added; false is certain.
func (f *KeyFilter) HasExact(h Hash) bool {
	var buf [1 + len(h)]byte
	return f.test(exactKey(buf[:0], h))
}

// Len returns the number of keys added (a key added twice counts twice).
func (f *KeyFilter) Len() int { return int(f.count) }

// Capacity returns the number of keys the filter was sized for.
func (f *KeyFilter) Capacity() int { return int(f.n) }

// FalsePositiveRate returns the rate expected with the keys added so far.
func (f *KeyFilter) FalsePositiveRate() float64 {
	return bloom.EstimateFalsePositiveRate(f.f.Cap(), f.f.K(), uint(f.count))
}

// Key filter snapshot: magic, version, then n, rate (float64 bits), count and the length
// of the bloom encoding (4 x uint64, little-endian), the encoding itself
// (bits-and-blooms' binary form: m, k, then the bit set's words, big-endian), and the
// CRC-32C of everything before it.
const (
	filterMagic = "NDKEYFLT"
	// filterVersion is what WriteTo writes; ReadKeyFilter reads it and
	// filterVersionMurmur, whose positions come from MurmurHash3.
	filterVersion       = 2
	filterVersionMurmur = 1
	// maxFilterBytes bounds what ReadKeyFilter accepts: 2^34 bits, a filter for more
	// than a billion keys at 1%.
	maxFilterBytes = 1 << 31
	filterChunk    = 1 << 20
	// maxFilterHashes bounds k: 30 hash functions already mean a rate of 1e-9.
	maxFilterHashes = 64
)

// WriteTo writes the filter's snapshot to w; ReadKeyFilter reads it back.
func (f *KeyFilter) WriteTo(w io.Writer) (int64, error) {
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

// ReadKeyFilter reads a snapshot written by WriteTo. A malformed, truncated or corrupted
// snapshot gives an error wrapping ErrFilter; the memory it allocates grows with the
// bytes actually read, never with what a header claims.
func ReadKeyFilter(r io.Reader) (*KeyFilter, error) {
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
	return &KeyFilter{f: f, n: n, rate: rate, count: count, murmur: version == filterVersionMurmur}, nil
}

// clone returns a deep copy.
func (f *KeyFilter) clone() *KeyFilter {
	c := *f
	c.f = f.f.Copy()
	return &c
}
