package pebblestore

import (
	"encoding/binary"

	"github.com/cockroachdb/pebble/v2"

	"github.com/neardup/neardup/store"
)

// The persistent key layout. Every key starts with a tag byte:
//
//	tagMeta    "format"                                   -> formatValue
//	tagRecord  id (8 bytes, big-endian)                   -> the record
//	tagPosting ns (2 bytes, big-endian) uvarint(len(key)) key  id (8 bytes, big-endian) -> empty
//
// A posting's prefix (everything before the id) is prefix-free: the length in front of
// the key means no (ns, key) prefix begins another, so the postings of (ns, key) are
// exactly the keys that start with its prefix, and big-endian ids sort them in ascending
// order. The comparer's Split returns that prefix, so the sstables' Bloom filters hold
// (ns, key) pairs and a lookup of a key with no postings usually reads no data block.
const (
	tagMeta    byte = 0
	tagRecord  byte = 1
	tagPosting byte = 2
)

// postingPrefix appends the prefix of the postings of (ns, key) to dst.
func postingPrefix(dst []byte, ns store.Namespace, key []byte) []byte {
	dst = append(dst, tagPosting)
	dst = binary.BigEndian.AppendUint16(dst, uint16(ns))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	return append(dst, key...)
}

// postingKey appends the key of the posting of id under (ns, key) to dst.
func postingKey(dst []byte, ns store.Namespace, key []byte, id uint64) []byte {
	return binary.BigEndian.AppendUint64(postingPrefix(dst, ns, key), id)
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
	n, w := binary.Uvarint(k[3:])
	if w <= 0 || n > uint64(len(k)) {
		return len(k)
	}
	if p := 3 + w + int(n); p+8 == len(k) {
		return p
	}
	return len(k)
}

// comparer orders keys bytewise, as pebble's default, and splits posting keys before
// their id. Its name is persisted: pebble refuses a database made with another comparer.
var comparer = func() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Split = split
	c.Name = "neardup.store.v1"
	return &c
}()

// metaFormatKey holds formatValue: the magic and the version of this key layout.
var metaFormatKey = []byte{tagMeta, 'f', 'o', 'r', 'm', 'a', 't'}

// formatVersion is the version of the key layout above; a database with another one is
// refused with ErrFormat.
const formatVersion = 1

var formatValue = binary.BigEndian.AppendUint32([]byte("neardup-store\x00"), formatVersion)
