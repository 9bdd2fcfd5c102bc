package redisstore

import (
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/store"
)

// Keys. Postings and records live in buckets: Redis hashes whose fields are the
// postings' keys (or the records' ids), so that a posting costs a hash field, a few
// bytes in a listpack, instead of a Redis key of its own (its name, its dict entry and
// its object, some 100 bytes). A field holds a pending transaction's intent on it in
// the same value as its committed one (field.go). Which bucket a posting is in is a
// hash of its namespace and key, never the caller's bytes, which may hold braces.
//
//	prefix:{s<bucket>}        posting bucket of keys up to 16 bytes: ns (uvarint) + key -> ids,
//	                          decimal, comma-separated, ascending
//	prefix:{p<ns>.<bucket>}   posting bucket of longer keys of ns: key -> ids
//	prefix:{r<bucket>}        record bucket: 8-byte big-endian id -> record (escRecord)
//	prefix:{<txn hex>}:t      a transaction's status: "c" committed, "a" aborted
//	prefix:{id}:n             the id counter (8 bytes, big-endian)
//	prefix:{count}:<ns>       the count of a namespace's postings
//	prefix:{meta}:buckets     the number of buckets, fixed when the store is first opened
//	prefix:{meta}:layout      the layout's version (layoutVersion)
//	prefix:{meta}:ordered     the namespaces kept in order (DB.Order), a set
//	prefix:{meta}:short       the namespaces that have had a key of up to 16 bytes, a set
//	prefix:{o<ns>.<shard>}    posting bucket of an ordered namespace, one of orderedShards
//	prefix:{o<ns>.<shard>}Z   its fields in order: a sorted set of length (4 bytes) + key

// bucketOf returns the bucket of a posting's key or a record's id, given the field's
// hash, among n (a power of two).
func bucketOf(h uint64, n int) uint64 { return h & uint64(n-1) }

// orderedShards is the number of buckets of an ordered namespace, each with the sorted
// set of its fields beside it (same slot), which the scripts keep up to date with it.
// A Postings in order reads a page of every shard first: more shards spread the
// namespace wider and cost each scan more.
const orderedShards = 256

// shortKey is the longest posting key that goes in the buckets all namespaces share
// (field: the namespace as a uvarint, then the key): the many short keys of a document
// (LSH bands, SimHash tables) fill them. Longer keys (URLs, content hashes) go in
// buckets of their own namespace, fewer (Options.Buckets / longKeyBuckets), so that a
// namespace of one posting a document fills its buckets too, a URL longer than
// hash-max-listpack-value turns only its own bucket into a hash table, and Postings
// over such a namespace (the pre-screen's URLs and hashes) reads it alone.
const (
	shortKey       = 16
	longKeyBuckets = 8
)

// postingBucket returns the bucket key and the field of the posting (ns, key). It
// builds both in buffers on the stack: an add calls it for each of its postings and
// conditions.
func (db *DB) postingBucket(ns store.Namespace, key []byte) (string, string) {
	var hb, kb [64]byte
	h := binary.BigEndian.AppendUint16(hb[:0], uint16(ns))
	sum := xxhash.Sum64(append(h, key...))
	switch {
	case db.isOrdered(ns):
		return db.orderedBucket(ns, bucketOf(sum, orderedShards)), string(key)
	case len(key) <= shortKey:
		f := binary.AppendUvarint(hb[:0], uint64(ns))
		return string(db.appendSharedBucket(kb[:0], bucketOf(sum, db.buckets))), string(append(f, key...))
	}
	return string(db.appendLongBucket(kb[:0], ns, bucketOf(sum, db.longBuckets()))), string(key)
}

// appendSharedBucket appends the key of shared posting bucket b to k.
func (db *DB) appendSharedBucket(k []byte, b uint64) []byte {
	k = strconv.AppendUint(append(append(k, db.prefix...), ":{s"...), b, 10)
	return append(k, '}')
}

// appendLongBucket appends the key of bucket b of namespace ns's long keys to k.
func (db *DB) appendLongBucket(k []byte, ns store.Namespace, b uint64) []byte {
	k = strconv.AppendUint(append(append(k, db.prefix...), ":{p"...), uint64(ns), 10)
	k = strconv.AppendUint(append(k, '.'), b, 10)
	return append(k, '}')
}

// longBuckets is the number of buckets of each namespace's long keys.
func (db *DB) longBuckets() int { return max(db.buckets/longKeyBuckets, 1) }

// sharedField splits a field of a shared bucket into its namespace and key.
func sharedField(f string) (store.Namespace, string, bool) {
	ns, n := binary.Uvarint([]byte(f))
	if n <= 0 || ns > 65535 {
		return 0, "", false
	}
	return store.Namespace(ns), f[n:], true
}

// recordBucket returns the bucket key and the field of record id.
func (db *DB) recordBucket(id uint64) (string, string) {
	var fb, kb [64]byte
	f := binary.BigEndian.AppendUint64(fb[:0], id)
	k := strconv.AppendUint(append(append(kb[:0], db.prefix...), ":{r"...), bucketOf(xxhash.Sum64(f), db.buckets), 10)
	return string(append(k, '}')), string(f)
}

// orderedBucket returns the key of shard b of ordered namespace ns.
func (db *DB) orderedBucket(ns store.Namespace, b uint64) string {
	return db.prefix + ":{o" + strconv.Itoa(int(ns)) + "." + strconv.FormatUint(b, 10) + "}"
}

// indexKey is the sorted set of the fields of ordered bucket k.
func indexKey(k string) string { return k + "Z" }

// shortMetaKey is the set of the namespaces that have had a posting in the shared
// buckets: Postings over any other reads its own buckets alone.
func (db *DB) shortMetaKey() string { return db.prefix + ":{meta}:short" }

// orderedMetaKey is the set of the namespaces kept in order.
func (db *DB) orderedMetaKey() string { return db.prefix + ":{meta}:ordered" }

func (db *DB) statusKey(txn string) string {
	return db.prefix + ":{" + hex.EncodeToString([]byte(txn)) + "}:t"
}

func (db *DB) counterKey() string { return db.prefix + ":{id}:n" }

func (db *DB) metaKey() string { return db.prefix + ":{meta}:buckets" }

func (db *DB) layoutKey() string { return db.prefix + ":{meta}:layout" }

func (db *DB) countKey(ns store.Namespace) string {
	return db.prefix + ":{count}:" + strconv.Itoa(int(ns))
}

// Kinds of buckets, as parseBucket tells them.
const (
	kindRecord  = 'r' // records
	kindShared  = 's' // short posting keys of every namespace
	kindPosting = 'p' // long posting keys of one namespace
	kindOrdered = 'o' // the postings of an ordered namespace
)

// parseBucket returns the kind of a bucket key from a SCAN and, for kindPosting and
// kindOrdered, its namespace; ok is false for any other key, lock keys among them.
func (db *DB) parseBucket(k string) (kind byte, ns store.Namespace, ok bool) {
	rest, found := strings.CutPrefix(k, db.prefix+":{")
	if !found || !strings.HasSuffix(rest, "}") || len(rest) < 3 {
		return 0, 0, false
	}
	rest = rest[:len(rest)-1]
	kind, rest = rest[0], rest[1:]
	switch kind {
	case kindOrdered, kindPosting:
		num, b, found := strings.Cut(rest, ".")
		n, err := strconv.ParseUint(num, 10, 16)
		if _, err2 := strconv.ParseUint(b, 10, 64); !found || err != nil || err2 != nil {
			return 0, 0, false
		}
		return kind, store.Namespace(n), true
	case kindRecord, kindShared:
		_, err := strconv.ParseUint(rest, 10, 64)
		return kind, 0, err == nil
	}
	return 0, 0, false
}

// A posting's ids are stored as decimal numbers joined by commas, in ascending order:
// a single id of up to 63 bits is then an integer to Redis, which a listpack keeps in 2
// to 9 bytes, and the scripts compare and sort ids as strings (Lua's numbers are
// doubles, which do not hold every uint64). The encoding is canonical, so that a
// condition on a posting is a comparison of strings.

// appendIDs appends the encoding of ids, which must be ascending, to b.
func appendIDs(b []byte, ids []uint64) []byte {
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, id, 10)
	}
	return b
}

// parseIDs decodes appendIDs's encoding; it returns false for anything else.
func parseIDs(s string) ([]uint64, bool) {
	if s == "" {
		return nil, true
	}
	out := make([]uint64, 0, strings.Count(s, ",")+1)
	for f := range strings.SplitSeq(s, ",") {
		id, err := strconv.ParseUint(f, 10, 64)
		if err != nil || f != strconv.FormatUint(id, 10) {
			return nil, false
		}
		out = append(out, id)
	}
	return out, slices.IsSorted(out)
}
