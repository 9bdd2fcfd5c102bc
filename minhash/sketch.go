package minhash

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/neardup/neardup/internal/hashsort"
)

// DefaultSketchCap is the most hashes a Sketch keeps by default: a set with more distinct
// features is kept as the DefaultSketchCap smallest (a bottom-k sample), whose Jaccard
// estimate has a standard error of at most sqrt(J(1-J)/1024), 0.0125 at J = 0.8. Most
// web pages' main texts have fewer word 5-shingles, and are kept whole.
const DefaultSketchCap = 1024

// Sketch is a compact form of a document's shingle set kept to verify near-duplicate
// candidates when the document itself cannot be read again (a service's stored record):
// the low 32 bits of its feature hashes, sorted and distinct, all of them or, for a set
// larger than the sketch's capacity, the smallest ones. Similarity of two sketches is
// the exact Jaccard similarity of the two sets of 32-bit hashes when neither is sampled,
// and a bottom-k estimate otherwise.
//
// The zero value holds no hashes; a verifier treats it as "no sketch" and falls back to
// the signature's estimate. A Sketch does not change once made and is safe to share
// between goroutines.
type Sketch struct {
	// Hashes are the low 32 bits of the features, sorted in increasing order without
	// repeats: all of them, or, when Sampled, the len(Hashes) smallest.
	Hashes []uint32
	// Sampled reports that the set had more distinct hashes than Hashes holds.
	Sampled bool
}

// NewSketch returns the sketch of a set of features (64-bit feature hashes, in any order
// and with repeats, such as shingle.Shingler.AppendShingles gives) keeping at most
// capacity hashes: DefaultSketchCap suits most uses; capacity <= 0 keeps them all. Its
// Hashes are appended to dst[:0], which the sketch then owns; pass nil for a new slice.
// It costs a sort of the features (a radix pass on their top bits: hashes are uniform),
// and allocates only when dst lacks room for 2*len(features) values, the second half
// the sort's scratch space, which stays in the sketch's array: clone the Hashes of a
// sketch made from nil to keep it at its size.
func NewSketch(dst []uint32, features []uint64, capacity int) Sketch {
	n := len(features)
	dst = slices.Grow(dst[:0], 2*n)
	h := AppendLow32(dst[:0], features)
	hashsort.Sort(h, dst[n:n:2*n])
	h = slices.Compact(h)
	if capacity > 0 && len(h) > capacity {
		return Sketch{Hashes: h[:capacity:capacity], Sampled: true}
	}
	return Sketch{Hashes: h}
}

// Empty reports whether the sketch holds no hashes: it was never made (an entry stored
// without one) or its set was empty.
func (s Sketch) Empty() bool { return len(s.Hashes) == 0 }

// Similarity returns the Jaccard similarity of the two sketches' sets. When neither is
// sampled it is exact for their 32-bit hashes (Jaccard says what the 32 bits cost: at
// most 1/|A ∪ B| in a few thousandths of pairs). When either is sampled, both sets are
// cut at the smaller of the sampled sketches' largest hashes, below which each sketch
// holds all of its set's hashes, and the Jaccard similarity of the two cuts estimates the
// sets': a uniform sample of the union of at least the smaller capacity, so the standard
// error is at most sqrt(J(1-J)/capacity). Two empty sketches have similarity 1, as
// Jaccard says. It costs one linear merge and does not allocate.
func (s Sketch) Similarity(t Sketch) float64 {
	a, b := s.Hashes, t.Hashes
	if s.Sampled || t.Sampled {
		cut := uint32(math.MaxUint32)
		if s.Sampled && len(a) > 0 {
			cut = a[len(a)-1]
		}
		if t.Sampled && len(b) > 0 {
			cut = min(cut, b[len(b)-1])
		}
		a, b = upTo(a, cut), upTo(b, cut)
	}
	return Jaccard(a, b)
}

// upTo returns the prefix of the sorted hashes that are at most cut.
func upTo(h []uint32, cut uint32) []uint32 {
	n, _ := slices.BinarySearch(h, cut)
	if n < len(h) && h[n] == cut {
		n++
	}
	return h[:n]
}

// The sketch encoding is frozen: a uvarint of the number of hashes times 2, plus 1 when
// sampled; then the first hash and each following hash's difference from the one before
// (at least 1), as uvarints. A set of n hashes spread over 2^32 takes about
// log2(2^32/n)/7 bytes a hash rounded up: about 4 bytes a hash for 64 to 1,024 hashes.

// AppendBinary appends the sketch's encoding (see above) to b and returns the extended
// slice; Sketch implements encoding.BinaryAppender. It never fails. It allocates only when
// b lacks room.
func (s Sketch) AppendBinary(b []byte) ([]byte, error) {
	head := uint64(len(s.Hashes)) << 1
	if s.Sampled {
		head |= 1
	}
	b = binary.AppendUvarint(b, head)
	prev := uint32(0)
	for _, v := range s.Hashes {
		b = binary.AppendUvarint(b, uint64(v-prev))
		prev = v
	}
	return b, nil
}

// MarshalBinary returns AppendBinary's encoding in a new slice; Sketch implements
// encoding.BinaryMarshaler.
func (s Sketch) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// UnmarshalBinary sets *s to the sketch encoded in data, in new memory; Sketch implements
// encoding.BinaryUnmarshaler. It does not keep data. Bytes that are not exactly one
// encoded sketch (truncated, trailing bytes, hashes out of order or past 32 bits, a
// sampled sketch without hashes) are an error wrapping ErrSketchEncoding, and *s is then
// unchanged.
func (s *Sketch) UnmarshalBinary(data []byte) error {
	head, n := binary.Uvarint(data)
	if n <= 0 {
		return fmt.Errorf("%w: bad length", ErrSketchEncoding)
	}
	data = data[n:]
	count, sampled := head>>1, head&1 == 1
	// Each hash takes a byte at least: a count past the bytes left is corrupt, and is
	// refused before it sizes an allocation.
	if count > uint64(len(data)) {
		return fmt.Errorf("%w: %d hashes in %d bytes", ErrSketchEncoding, count, len(data))
	}
	if sampled && count == 0 {
		return fmt.Errorf("%w: a sampled sketch without hashes", ErrSketchEncoding)
	}
	var h []uint32
	if count > 0 {
		h = make([]uint32, count)
	}
	var v uint64
	for i := range h {
		d, n := binary.Uvarint(data)
		if n <= 0 {
			return fmt.Errorf("%w: hash %d of %d: bad uvarint", ErrSketchEncoding, i, count)
		}
		data = data[n:]
		if i > 0 && d == 0 {
			return fmt.Errorf("%w: hash %d of %d repeats the one before", ErrSketchEncoding, i, count)
		}
		if v += d; d > math.MaxUint32 || v > math.MaxUint32 {
			return fmt.Errorf("%w: hash %d of %d past 32 bits", ErrSketchEncoding, i, count)
		}
		h[i] = uint32(v)
	}
	if len(data) > 0 {
		return fmt.Errorf("%w: %d bytes after the sketch", ErrSketchEncoding, len(data))
	}
	*s = Sketch{Hashes: h, Sampled: sampled}
	return nil
}
