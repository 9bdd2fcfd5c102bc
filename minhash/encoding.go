package minhash

import (
	"encoding/binary"
	"fmt"
)

// The signature encoding, version 1, is frozen; integers are little-endian:
//
//	version  1 byte   1: this package's scheme (one permutation hashing, optimal
//	                  densification, 32-bit values)
//	k        uint16   the number of values, 1..MaxK
//	values   k times uint32
//
// The Hasher's seed is not recorded: a Signature does not know it. Keep one seed per
// collection of signatures.
const (
	encodingVersion = 1
	encodingHeader  = 3
)

// AppendBinary appends the encoding of s (see above; 3 + 4*len(s) bytes) to dst and
// returns the extended slice; Signature implements encoding.BinaryAppender. It returns
// dst unchanged and an error wrapping ErrEncoding when len(s) is 0 or above MaxK, which
// no Hasher makes. It allocates only when dst lacks room.
func (s Signature) AppendBinary(dst []byte) ([]byte, error) {
	if len(s) == 0 || len(s) > MaxK {
		return dst, fmt.Errorf("%w: cannot encode a signature of %d values; K must be in [1, %d]", ErrEncoding, len(s), MaxK)
	}
	dst = append(dst, encodingVersion)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(s)))
	for _, v := range s {
		dst = binary.LittleEndian.AppendUint32(dst, v)
	}
	return dst, nil
}

// MarshalBinary returns the encoding of s in a new slice; Signature implements
// encoding.BinaryMarshaler. See AppendBinary.
func (s Signature) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(make([]byte, 0, encodingHeader+4*len(s)))
}

// UnmarshalBinary sets *s to the signature encoded in b, reusing *s's memory when it has
// room for K values; Signature implements encoding.BinaryUnmarshaler. It does not keep b.
// It returns an error wrapping ErrEncoding, leaving *s unchanged, when b is not exactly one
// encoded signature: an unknown version, a K of 0 or above MaxK, or a length other than
// 3 + 4*K bytes.
func (s *Signature) UnmarshalBinary(b []byte) error {
	if len(b) < encodingHeader {
		return fmt.Errorf("%w: %d bytes is shorter than the %d-byte header", ErrEncoding, len(b), encodingHeader)
	}
	if b[0] != encodingVersion {
		return fmt.Errorf("%w: version %d is unknown; this package reads version %d", ErrEncoding, b[0], encodingVersion)
	}
	k := int(binary.LittleEndian.Uint16(b[1:]))
	if k == 0 || k > MaxK {
		return fmt.Errorf("%w: K = %d is outside [1, %d]", ErrEncoding, k, MaxK)
	}
	if want := encodingHeader + 4*k; len(b) != want {
		return fmt.Errorf("%w: %d bytes for K = %d, want %d", ErrEncoding, len(b), k, want)
	}
	sig := (*s)[:0]
	if cap(sig) < k {
		sig = make(Signature, 0, k)
	}
	sig = sig[:k]
	for i := range sig {
		sig[i] = binary.LittleEndian.Uint32(b[encodingHeader+4*i:])
	}
	*s = sig
	return nil
}
