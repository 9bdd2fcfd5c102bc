package hamming

import (
	"fmt"
	"sync"
)

// IndexOptions configures an Index. The zero value means MaxDistance 3 with 4 blocks, the
// fewest tables (4) and so the least memory for that distance.
type IndexOptions struct {
	// MaxDistance is the largest k a query may use; 0 means 3. An index answers every
	// k <= MaxDistance from the same tables.
	MaxDistance int
	// Blocks is the number of blocks the fingerprint is cut into; 0 means MaxDistance+1.
	// The index keeps Blocks choose MaxDistance tables, each costing 8 bytes per
	// fingerprint; more blocks give longer table prefixes, so smaller buckets and faster
	// queries at very large sizes, for more memory.
	Blocks int
	// Capacity is the number of fingerprints the index is expected to hold; 0 means
	// unknown, and the index grows as needed. With it, NewIndex sizes the buckets, the id
	// table and the slot index for that many, and gives every bucket room for its expected
	// share, so that adding up to Capacity fingerprints never rebuilds the id table or the
	// tables and seldom moves a bucket. It reserves the memory up front: about 44 bytes
	// per expected fingerprint for the default design at 10M, more for small capacities,
	// whose buckets are short (the slots, 16 bytes each, are allocated as they fill);
	// beyond Capacity the index grows as it would without it.
	Capacity int
}

// Match is one result of Index.Query: an indexed id, its fingerprint and the Hamming
// distance from the query.
type Match struct {
	ID          uint64
	Fingerprint uint64
	Distance    int
}

const (
	// maxTables bounds Blocks choose MaxDistance for an index, well below MaxTables: every
	// table costs 8 bytes per fingerprint, so designs beyond it are never sensible, and a
	// snapshot must not make ReadIndex build tens of thousands of tables.
	maxTables = 1024
	// maxSlots is the most fingerprints an index holds: slots are uint32 and the id table
	// stores slot+1.
	maxSlots = 1<<32 - 1
	// bucketLoad is the mean bucket length at which the bucket count doubles.
	bucketLoad = 16
	// minBucketBits and maxBucketBits bound the bucket bits of a table (further bounded by
	// the table's prefix width).
	minBucketBits = 4
	maxBucketBits = 28
)

// Index is an online index of 64-bit fingerprints keyed by uint64 ids, answering "which
// ids have a fingerprint within k bits of this one" for any k up to MaxDistance. It keeps
// one table per permutation of Manku et al.'s scheme (see Permutations); a table's buckets
// are addressed by the top bits of the permuted fingerprint, and each entry carries the 32
// permuted bits below them, so a query rejects almost every candidate of a bucket without
// touching the fingerprint itself.
//
// Memory is 16 bytes per fingerprint for its id and value, 8 per table (plus about 10%
// room to grow) and 4-11 for the id table: about 58 bytes per fingerprint for the default
// design at 10M, as MemoryUsage reports and the Go heap confirms, and 60 when built with
// IndexOptions.Capacity. Add and Remove cost an id-table probe and a bucket update per
// table; Query scans one bucket per table, about Len()/65536 entries each for the default
// design above a million fingerprints.
//
// An Index is safe for concurrent use: one sync.RWMutex guards a single-threaded core;
// Query, AppendQuery, Fingerprint, Len, MemoryUsage and WriteTo take the read lock and run
// in parallel, Add, AddBatch and Remove take the write lock. The zero value is an empty
// index with the default options. An Index must not be copied after first use.
type Index struct {
	mu sync.RWMutex
	c  core
}

// NewIndex returns an empty index with the given options. It returns an error wrapping
// ErrDesign when the options are impossible: a negative MaxDistance or Blocks, Blocks above
// 64 or not above MaxDistance, more than 1024 tables, or a Capacity that is negative or
// above 2^32-1.
func NewIndex(opt IndexOptions) (*Index, error) {
	k := opt.MaxDistance
	if k == 0 {
		k = 3
	}
	m := opt.Blocks
	switch {
	case m < 0:
		return nil, fmt.Errorf("%w: %d blocks is negative; use 0 for MaxDistance+1", ErrDesign, m)
	case m == 0:
		m = k + 1
	}
	if opt.Capacity < 0 || opt.Capacity > maxSlots {
		return nil, fmt.Errorf("%w: capacity %d is outside 0..2^32-1; use 0 when unknown", ErrDesign, opt.Capacity)
	}
	x := &Index{}
	if err := x.c.init(m, k); err != nil {
		return nil, err
	}
	if opt.Capacity > 0 {
		x.c.reserve(opt.Capacity)
	}
	return x, nil
}

// Add indexes fp under id, replacing the fingerprint id had. It costs an id-table probe
// and a bucket append per table; now and then it also lays out a segment of 64 buckets
// anew, grows the id table, or (when Len passes 16 times the bucket count, up to the
// width of the table prefixes: 524,288 fingerprints for the default design) rebuilds
// every table with twice the buckets, all amortized to a constant per Add, and mostly
// avoided up to IndexOptions.Capacity. An id table of 65,536 entries or more grows
// without a pause: each Add moves the entries of the next 8 slots to the larger table,
// where rebuilding it at once would hold the lock for a time in proportion to Len. To add many fingerprints, AddBatch is several times
// faster. Add panics when the index already holds 2^32-1 fingerprints.
func (x *Index) Add(id, fp uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.c.d == nil {
		x.c.initDefault()
	}
	x.c.add(id, fp)
}

// AddBatch indexes fps[i] under ids[i] for every i, with the result of calling Add for
// each pair in order: a later pair replaces an earlier one with the same id. It panics if
// the slices differ in length. It reads ids and fps only during the call.
//
// It takes the write lock once, grows the id table once to hold Len()+len(ids), and then
// inserts the new fingerprints table by table in bucket order, so that memory is written
// in order rather than at random; when they outnumber the fingerprints already indexed
// and do not fit the table's room, it rebuilds the table with them instead. This makes it
// several times faster than Add per pair on large indexes, all the more for large
// batches. It needs 24 bytes per pair of temporary memory, for at most a million pairs at
// a time. Ids already in the index, and new ids while removed slots remain to be reused,
// are added one by one as by Add. AddBatch panics when the index would hold more than
// 2^32-1 fingerprints, with the pairs before indexed.
func (x *Index) AddBatch(ids, fps []uint64) {
	if len(ids) != len(fps) {
		panic(fmt.Sprintf("hamming: AddBatch with %d ids and %d fingerprints", len(ids), len(fps)))
	}
	if len(ids) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.c.d == nil {
		x.c.initDefault()
	}
	x.c.addBatch(ids, fps)
}

// Remove deletes id from the index and reports whether it was there. Its slot is reused
// by a later Add, and bucket segments that fall below a quarter full give memory back; the
// number of buckets, the slots and the id table never shrink.
func (x *Index) Remove(id uint64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.c.remove(id)
}

// Fingerprint returns the fingerprint indexed under id, and whether there is one.
func (x *Index) Fingerprint(id uint64) (uint64, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	slot, ok := x.c.lookup(id)
	if !ok {
		return 0, false
	}
	return x.c.fp(slot), true
}

// Len returns the number of indexed fingerprints.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.c.n
}

// Query returns every indexed id whose fingerprint is within k bits of fp, sorted by
// distance and then by id, in a new slice (nil when there is none). It returns an error
// wrapping ErrDesign when k is negative or above the index's MaxDistance. See AppendQuery
// for the cost.
func (x *Index) Query(fp uint64, k int) ([]Match, error) {
	return x.AppendQuery(nil, fp, k)
}

// AppendQuery appends to dst the matches Query would return and returns the extended
// slice; it allocates only when dst lacks room. The matches appended are sorted by distance
// and then id; dst's earlier elements are left alone. On error dst is returned unchanged.
// It costs, per table, one permutation and a scan of one bucket comparing 32 bits per
// entry, plus a full check of the few entries that pass; tables that cannot own a pair
// within k bits are skipped, so smaller k are cheaper (k=0 scans a single table).
func (x *Index) AppendQuery(dst []Match, fp uint64, k int) ([]Match, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	maxK := 3
	if x.c.d != nil {
		maxK = x.c.d.k
	}
	switch {
	case k < 0:
		return dst, fmt.Errorf("%w: query distance %d is negative", ErrDesign, k)
	case k > maxK:
		return dst, fmt.Errorf("%w: query distance %d is above the index's MaxDistance %d; build the index with MaxDistance >= %d", ErrDesign, k, maxK, k)
	}
	if x.c.d == nil {
		return dst, nil
	}
	return x.c.appendQuery(dst, fp, k), nil
}

// MemoryUsage returns the bytes held by the index's structures, computed from their
// capacities (which include the allocator's rounding): the slots, the free list, the id
// table, and every table's bucket metadata and segments. Divide by Len for the bytes per
// fingerprint. It visits every segment, about 4 per 1,000 fingerprints, so it is cheap.
func (x *Index) MemoryUsage() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.c.memoryUsage()
}
