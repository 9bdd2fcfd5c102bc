package pebblestore

import (
	"encoding/binary"

	"github.com/cockroachdb/pebble/v2"

	"github.com/neardup/neardup/store"
)

// The persistent key layout. Every key starts with a tag byte:
//
//	tagMeta    "format"                                -> formatValue
//	tagRecord  id (8 bytes, big-endian)                -> the record
//	tagPosting ns (2 bytes, big-endian) len(key) key id (8 bytes, big-endian) -> empty
//
// len(key) is in the order-preserving form of appendLen. A posting's prefix (everything
// before the id) is prefix-free: the length in front of the key means no (ns, key) prefix
// begins another, so the postings of (ns, key) are exactly the keys that start with its
// prefix, and big-endian ids sort them in ascending order. Bytewise order of posting keys
// is (ns, len(key), key, id), the order of store.Store.Postings. The comparer's Split
// returns the prefix, so the sstables' Bloom filters hold (ns, key) pairs and a lookup
// of a key with no postings usually reads no data block.
const (
	tagMeta    byte = 0
	tagRecord  byte = 1
	tagPosting byte = 2
)

// maxKeyLen is the longest posting key appendLen encodes.
const maxKeyLen = 1<<32 - 1

// appendLen appends n, at most maxKeyLen, to dst in a form whose bytewise order is the
// order of the numbers: 1 byte below 2^7 (0xxxxxxx), 2 below 2^14 (10xxxxxx, then a
// byte), 3 below 2^21 (110xxxxx, then 2 bytes), and 0xe0 then 4 bytes big-endian above.
// A longer form starts with a larger byte than every shorter one.
func appendLen(dst []byte, n int) []byte {
	switch {
	case n < 1<<7:
		return append(dst, byte(n))
	case n < 1<<14:
		return append(dst, 0x80|byte(n>>8), byte(n))
	case n < 1<<21:
		return append(dst, 0xc0|byte(n>>16), byte(n>>8), byte(n))
	default:
		return binary.BigEndian.AppendUint32(append(dst, 0xe0), uint32(n))
	}
}

// readLen decodes what appendLen wrote at the start of b: the length and the bytes it
// took, or w = 0 if b does not start with one.
func readLen(b []byte) (n, w int) {
	switch {
	case len(b) >= 1 && b[0] < 0x80:
		return int(b[0]), 1
	case len(b) >= 2 && b[0] < 0xc0:
		return int(b[0]&0x3f)<<8 | int(b[1]), 2
	case len(b) >= 3 && b[0] < 0xe0:
		return int(b[0]&0x1f)<<16 | int(b[1])<<8 | int(b[2]), 3
	case len(b) >= 5 && b[0] == 0xe0:
		return int(binary.BigEndian.Uint32(b[1:])), 5
	}
	return 0, 0
}

// postingPrefix appends the prefix of the postings of (ns, key) to dst.
func postingPrefix(dst []byte, ns store.Namespace, key []byte) []byte {
	dst = append(dst, tagPosting)
	dst = binary.BigEndian.AppendUint16(dst, uint16(ns))
	dst = appendLen(dst, len(key))
	return append(dst, key...)
}

// postingKey appends the key of the posting of id under (ns, key) to dst.
func postingKey(dst []byte, ns store.Namespace, key []byte, id uint64) []byte {
	return binary.BigEndian.AppendUint64(postingPrefix(dst, ns, key), id)
}

// namespaceBounds returns the bounds of the posting keys of ns: lower inclusive, upper
// exclusive.
func namespaceBounds(ns store.Namespace) (lower, upper []byte) {
	lower = binary.BigEndian.AppendUint16([]byte{tagPosting}, uint16(ns))
	if ns == 0xffff {
		return lower, []byte{tagPosting + 1}
	}
	return lower, binary.BigEndian.AppendUint16([]byte{tagPosting}, uint16(ns)+1)
}

// recordKey appends the key of the record under id to dst.
func recordKey(dst []byte, id uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, tagRecord), id)
}

// split is the comparer's Split: the length of a posting key's prefix, and the whole
// length of every other key.
func split(k []byte) int {
	if len(k) < 3 || k[0] != tagPosting {
		return len(k)
	}
	n, w := readLen(k[3:])
	if w == 0 || n > len(k) {
		return len(k)
	}
	if p := 3 + w + n; p+8 == len(k) {
		return p
	}
	return len(k)
}

// comparer orders keys bytewise, as pebble's default, and splits posting keys before
// their id. Its name is persisted: pebble refuses a database made with another comparer,
// so it changes with every change of split.
var comparer = func() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Split = split
	c.Name = "neardup.store.v2"
	return &c
}()

// metaFormatKey holds formatValue: the magic and the version of this key layout.
var metaFormatKey = []byte{tagMeta, 'f', 'o', 'r', 'm', 'a', 't'}

// formatVersion is the version of the key layout above; a database with another one is
// refused with ErrFormat. Version 1 had the key's length as a uvarint, which does not
// sort as the lengths do from 128 bytes on.
const formatVersion = 2

var formatValue = binary.BigEndian.AppendUint32([]byte("neardup-store\x00"), formatVersion)
