package neardup

import (
	"fmt"
	"io"

	"github.com/neardup/neardup/internal/keyfilter"
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
type KeyFilter struct{ f *keyfilter.Filter }

// NewKeyFilter returns a filter sized for n keys at the false-positive rate fp: m =
// -n ln(fp) / ln(2)^2 bits and k = m/n ln(2) hash functions (9.6 bits and 7 functions a
// key at 1%). n must be at least 1 and fp in (0, 1).
func NewKeyFilter(n int, fp float64) (*KeyFilter, error) {
	if n < 1 || !(fp > 0 && fp < 1) {
		return nil, fmt.Errorf("%w: key filter needs n >= 1 and 0 < fp < 1, not n=%d fp=%g", ErrOptions, n, fp)
	}
	return &KeyFilter{keyfilter.New(n, fp)}, nil
}

// AddURL adds a canonical URL (see urlnorm).
func (f *KeyFilter) AddURL(canonical string) { f.f.AddURL(canonical) }

// AddExact adds an exact-content hash (Fingerprints.Main).
func (f *KeyFilter) AddExact(h Hash) { f.f.AddExact(h) }

// HasURL reports whether the canonical URL may have been added; false is certain.
func (f *KeyFilter) HasURL(canonical string) bool { return f.f.HasURL(canonical) }

// HasExact reports whether the hash may have been added; false is certain.
func (f *KeyFilter) HasExact(h Hash) bool { return f.f.HasExact(h) }

// Len returns the number of keys added (a key added twice counts twice).
func (f *KeyFilter) Len() int { return f.f.Len() }

// Capacity returns the number of keys the filter was sized for.
func (f *KeyFilter) Capacity() int { return f.f.Capacity() }

// FalsePositiveRate returns the rate expected with the keys added so far.
func (f *KeyFilter) FalsePositiveRate() float64 { return f.f.FalsePositiveRate() }

// WriteTo writes the filter's snapshot to w (a magic number, a version, the sizes, the
// bloom bits and a CRC-32C); ReadKeyFilter reads it back.
func (f *KeyFilter) WriteTo(w io.Writer) (int64, error) { return f.f.WriteTo(w) }

// ReadKeyFilter reads a snapshot written by WriteTo. A malformed, truncated or corrupted
// snapshot gives an error wrapping ErrFilter; the memory it allocates grows with the
// bytes actually read, never with what a header claims.
func ReadKeyFilter(r io.Reader) (*KeyFilter, error) {
	f, err := keyfilter.Read(r)
	if err != nil {
		return nil, err
	}
	return &KeyFilter{f}, nil
}
