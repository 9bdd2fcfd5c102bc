package hamming

import (
	"fmt"
	"iter"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/neardup/neardup/internal/idtable"
	"github.com/neardup/neardup/internal/mix"
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
// Measured at 10M with the default design, k=3, on one core of a 2-core AMD EPYC virtual
// machine whose speed drifts by up to 40% from minute to minute, so each figure is the
// range of several runs: a query takes 1.6-2.5µs (400-600k queries/s). Building from
// empty by Add costs 0.9-1.9µs per fingerprint (0.53-1.16M/s), 0.6-1.4µs with Capacity
// (0.74-1.6M/s); by AddBatch in batches of 4096, 0.5-1.1µs (0.9-1.9M/s), 0.17-0.43µs with
// Capacity (2.3-6M/s); and in one batch of 10M, 0.14-0.33µs (3-7M/s). Those figures are
// from before the id table grew by moves (see Add), which made building by Add about a
// third slower: at 1M (BenchmarkIndexAdd -short), 1.6-1.9µs against 1.26-1.33µs per
// fingerprint in alternate runs.
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
// where rebuilding it at once held the lock for 60-90 ms at 1-2M fingerprints and
// proportionally longer beyond. To add many fingerprints, AddBatch is several times
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

// core is the single-threaded index behind Index; see Index for the layout.
type core struct {
	d    *design
	tabs []table
	// bbits is the bucket bits tables aim for; a table uses min(bbits, its prefix width).
	bbits, maxBits uint
	slots                   // the fingerprint and id of every slot
	free           []uint32 // free slots, reused last in first out
	// ids maps ids to slots (see idTable). While it grows past idMoveMin entries, the
	// entries not yet moved wait in old, the table before: each add moves those of the
	// next idMoveSlots slots, so that no add rebuilds the whole table, a stall of tens to
	// hundreds of milliseconds at millions of ids. Each live id is in ids or, when its
	// slot is moved or above, in old; the entries of old for slots below moved are stale
	// (moved, or removed since) and never read.
	ids   idTable
	old   *idTable // nil when no growth is under way
	moved uint32   // the first slot whose id may be in old
	n     int
	touch uint32 // a sum of words loaded ahead of use, stored so the loads stay
}

// slotChunkBits sets the slot chunk size: 4096 slots, 32 KiB per array.
const (
	slotChunkBits = 12
	slotChunk     = 1 << slotChunkBits
)

// slots holds the fingerprint and id of each slot in chunks of slotChunk, so that growing
// never copies or over-allocates more than one chunk; only the first chunk grows (by
// doubling), which keeps small indexes small. A free slot holds zeros.
type slots struct {
	fps, ids [][]uint64
	nslots   int
}

func (s *slots) fp(i uint32) uint64 { return s.fps[i>>slotChunkBits][i&(slotChunk-1)] }
func (s *slots) id(i uint32) uint64 { return s.ids[i>>slotChunkBits][i&(slotChunk-1)] }

func (s *slots) set(i uint32, id, fp uint64) {
	s.fps[i>>slotChunkBits][i&(slotChunk-1)] = fp
	s.ids[i>>slotChunkBits][i&(slotChunk-1)] = id
}

// append stores id and fp in a new slot and returns it.
func (s *slots) append(id, fp uint64) uint32 {
	i := s.nslots
	if i >= maxSlots {
		panic("hamming: index full: it holds 2^32-1 fingerprints")
	}
	c := i >> slotChunkBits
	if c == len(s.fps) {
		size := slotChunk
		if c == 0 {
			size = 16
		}
		s.fps = append(s.fps, make([]uint64, 0, size))
		s.ids = append(s.ids, make([]uint64, 0, size))
	} else if len(s.fps[c]) == cap(s.fps[c]) { // only chunk 0 is ever short
		size := min(2*cap(s.fps[c]), slotChunk)
		s.fps[c] = append(make([]uint64, 0, size), s.fps[c]...)
		s.ids[c] = append(make([]uint64, 0, size), s.ids[c]...)
	}
	s.fps[c] = append(s.fps[c], fp)
	s.ids[c] = append(s.ids[c], id)
	s.nslots++
	return uint32(i)
}

// reserve makes room in the chunk index for n slots, and makes the first chunk full size
// when n needs it, so that filling n slots never copies.
func (s *slots) reserve(n int) {
	if s.nslots > 0 {
		return
	}
	chunks := (n + slotChunk - 1) >> slotChunkBits
	s.fps = make([][]uint64, 0, chunks)
	s.ids = make([][]uint64, 0, chunks)
	size := min(max(n, 16), slotChunk)
	s.fps = append(s.fps, make([]uint64, 0, size))
	s.ids = append(s.ids, make([]uint64, 0, size))
}

// bytes returns the memory the slot chunks hold.
func (s *slots) bytes() int64 {
	n := int64(cap(s.fps)+cap(s.ids)) * int64(unsafe.Sizeof([]uint64(nil)))
	for i := range s.fps {
		n += int64(cap(s.fps[i])+cap(s.ids[i])) * 8
	}
	return n
}

// table is one permutation's hash table. A fingerprint whose permutation is p sits in
// bucket p>>(64-bits) as the entry sig(p)<<32 | slot, where sig(p) is the 32 bits of p
// below the bucket bits: a query compares signatures and loads the fingerprint of the
// rare entry within k bits of its own.
//
// Buckets live in segments of up to 64 consecutive buckets: one []uint64 holding them one
// after the other, each with some room to grow. When a bucket is full its segment is laid
// out anew, with room for every bucket in proportion to its length. Compared with a slice
// per bucket this saves 16 bytes of header per bucket, and, above all, the heap
// fragmentation of millions of small slices growing through the allocator's size classes:
// at 10M fingerprints, segments are large allocations, freed whole.
type table struct {
	perm     Permutation
	chosen   uint64 // perm.Blocks()
	top      int    // the highest chosen block
	width    uint   // the prefix width: bits of perm.SearchMask()
	bits     uint   // bucket bits in use, 1..width
	segShift uint   // bucket b is in segment b>>segShift
	// Bucket b is segs[b>>segShift][meta[b].off:][:meta[b].n]; its room ends where the
	// next bucket of its segment starts, or at the segment's end.
	meta []bucketMeta
	segs [][]uint64
	used []uint32 // entries per segment
}

type bucketMeta struct{ off, n uint32 }

// segBits is log2 of the buckets per segment.
const segBits = 6

// entry returns the bucket and entry of slot, holding a fingerprint whose permutation is p.
func (t *table) entry(p uint64, slot uint32) (int, uint64) {
	b := int(p >> ((64 - t.bits) & 63))
	sig := uint32(p << (t.bits & 63) >> 32)
	return b, uint64(sig)<<32 | uint64(slot)
}

// bucket returns bucket b's entries.
func (t *table) bucket(b int) []uint64 {
	m := t.meta[b]
	return t.segs[b>>t.segShift][m.off : m.off+m.n]
}

// end returns where bucket b's room ends in its segment.
func (t *table) end(b int) uint32 {
	if (b+1)&(1<<t.segShift-1) != 0 {
		return t.meta[b+1].off
	}
	return uint32(len(t.segs[b>>t.segShift]))
}

// add appends e to bucket b.
func (t *table) add(b int, e uint64) {
	m := &t.meta[b]
	if m.off+m.n == t.end(b) {
		t.relayout(b>>t.segShift, b)
	}
	s := b >> t.segShift
	t.segs[s][m.off+m.n] = e
	m.n++
	t.used[s]++
}

// removeAt deletes entry j of bucket b, moving the bucket's last entry into its place,
// and lays out the segment anew when it falls below a quarter full.
func (t *table) removeAt(b, j int) {
	if j < 0 {
		panic("hamming: index corrupt: slot missing from its bucket")
	}
	bk := t.bucket(b)
	bk[j] = bk[len(bk)-1]
	t.meta[b].n--
	s := b >> t.segShift
	t.used[s]--
	if n := len(t.segs[s]); int(t.used[s]) < n/4 {
		t.relayout(s, -1)
	}
}

// room returns the free room a bucket of n entries gets when its segment is allocated:
// an eighth, much less slack than doubling.
func room(n int) int { return n/8 + 2 }

// relayout lays out segment s anew when bucket grow is full (grow is -1 when the segment
// shrinks), spreading the segment's free room over its buckets in proportion to their
// lengths. It moves the buckets within the segment while the free room is at least a
// sixteenth of the entries, and otherwise moves them to a new segment with room(n) after
// each bucket: a segment grows by about an eighth at a time, and needs no allocation in
// between.
func (t *table) relayout(s, grow int) {
	lo := s << t.segShift
	meta := t.meta[lo : lo+1<<t.segShift]
	used := int(t.used[s])
	if grow >= 0 {
		used++
	}
	old := t.segs[s]
	seg, inPlace := old, false
	switch free := len(old) - used; {
	case used == 0:
		for i := range meta {
			meta[i].off = 0
		}
		t.segs[s] = nil
		return
	case grow >= 0 && free >= used/16+len(meta):
		inPlace = true
	case grow < 0 && used >= len(old)/4:
		// Nothing to give back.
		return
	default:
		want := used + len(meta)*room(0)
		for _, m := range meta {
			want += room(int(m.n)) - room(0)
		}
		seg = makeUint64s(want)
		seg = seg[:cap(seg)]
	}
	// New offsets: bucket i gets n_i entries plus free*(n_i+1)/(used+len(meta)) of room,
	// rounded so that the shares add up to the free room exactly.
	free := len(seg) - used
	weight, total := 0, used+len(meta)
	var offs [1 << segBits]uint32
	off := 0
	for i, m := range meta {
		n := int(m.n)
		if lo+i == grow {
			n++
		}
		offs[i] = uint32(off)
		lower := free * weight / total
		weight += n + 1
		off += n + free*weight/total - lower
	}
	if !inPlace {
		for i := range meta {
			m := &meta[i]
			copy(seg[offs[i]:], old[m.off:m.off+m.n])
			m.off = offs[i]
		}
		t.segs[s] = seg
		return
	}
	// Moving within the segment: buckets moving left go first, in ascending order, then
	// those moving right, in descending order, so that no bucket overwrites one not yet
	// moved.
	for i := range meta {
		if m := &meta[i]; offs[i] < m.off {
			copy(seg[offs[i]:], seg[m.off:m.off+m.n])
			m.off = offs[i]
		}
	}
	for i := len(meta) - 1; i >= 0; i-- {
		if m := &meta[i]; offs[i] > m.off {
			copy(seg[offs[i]:], seg[m.off:m.off+m.n])
			m.off = offs[i]
		}
	}
}

// reset gives t 1<<nb empty buckets, ready for place. On entry meta[b].n is the number of
// entries bucket b will get, which is given roomFor(n) more; reset takes meta over, with
// every n back to 0.
func (t *table) reset(nb uint, meta []bucketMeta, roomFor func(int) int) {
	t.bits = nb
	t.segShift = min(segBits, nb)
	t.meta = meta
	nseg := 1 << (nb - t.segShift)
	t.segs = make([][]uint64, nseg)
	t.used = make([]uint32, nseg)
	per := 1 << t.segShift
	for s := range nseg {
		ms := meta[s*per : (s+1)*per]
		want := 0
		for _, m := range ms {
			want += int(m.n) + roomFor(int(m.n))
		}
		seg := makeUint64s(want)
		seg = seg[:cap(seg)]
		extra, off := len(seg)-want, 0
		for i := range ms {
			n := int(ms[i].n)
			ms[i] = bucketMeta{off: uint32(off)}
			off += n + roomFor(n) + extra*(i+1)/per - extra*i/per
		}
		t.segs[s] = seg
	}
}

// place appends e to bucket b of a table just reset; it never relays out.
func (t *table) place(b int, e uint64) {
	m := &t.meta[b]
	s := b >> t.segShift
	t.segs[s][m.off+m.n] = e
	m.n++
	t.used[s]++
}

// makeUint64s returns an empty slice with room for at least n elements: n rounded up to
// the allocator's size class or page, whose slack would otherwise be lost, and uncounted.
func makeUint64s(n int) []uint64 {
	if n == 0 {
		return nil
	}
	// Appending make(...)... to nil allocates once, rounded up by the allocator.
	return append([]uint64(nil), make([]uint64, n)...)[:0]
}

func (c *core) initDefault() {
	if err := c.init(4, 3); err != nil {
		panic(err) // unreachable: the default design is valid
	}
}

// init sets up an empty core with a (blocks, k) design.
func (c *core) init(blocks, k int) error {
	if err := checkIndexDesign(blocks, k); err != nil {
		return err
	}
	d, err := newDesign(blocks, k)
	if err != nil {
		return err
	}
	*c = core{d: d, tabs: make([]table, len(d.perms)), bbits: minBucketBits}
	for i, p := range d.perms {
		t := &c.tabs[i]
		t.perm = p
		t.chosen = p.Blocks()
		t.top = 63 - bits.LeadingZeros64(t.chosen)
		t.width = uint(bits.OnesCount64(p.SearchMask()))
		c.maxBits = max(c.maxBits, min(t.width, maxBucketBits))
		t.bits = min(t.width, c.bbits)
		t.reset(t.bits, make([]bucketMeta, 1<<t.bits), room)
	}
	return nil
}

// reserve sizes an empty core for n fingerprints: the bucket bits, the id table, the slot
// index, and segments with room for each bucket's expected share.
func (c *core) reserve(n int) {
	for n > bucketLoad<<c.bbits && c.bbits < c.maxBits {
		c.bbits++
	}
	for i := range c.tabs {
		t := &c.tabs[i]
		nb := min(c.bbits, t.width)
		// Room for e, the expected length, and an eighth more: buckets vary (about
		// Poisson with mean e), but a segment's 64 vary together much less, so the few
		// buckets that overflow borrow the spare room of their segment in place.
		e := (n + 1<<nb - 1) >> nb
		t.reset(nb, make([]bucketMeta, 1<<nb), func(int) int { return e + room(e) })
	}
	c.rebuildIDTable(idtable.Size(n), idSlotBits(n))
	c.slots.reserve(n)
}

// checkIndexDesign validates a (blocks, k) design for an index, without allocating.
func checkIndexDesign(blocks, k int) error {
	if err := checkDesign(blocks, k); err != nil {
		return err
	}
	if t := tables(blocks, k); t > maxTables {
		return fmt.Errorf("%w: %d blocks with distance %d make %d tables, more than the %d an index keeps; use fewer blocks", ErrDesign, blocks, k, t, maxTables)
	}
	return nil
}

// idTable maps ids to slots: open addressing with linear probing, at most 3/4 full,
// deletion by backward shift (no tombstones). An id's home position is
// mix.Splitmix64(id)>>shift. An entry holds slot+1 in its low slotBits bits (0 is empty)
// and, above them, the same bits of uint32(mix.Splitmix64(id)) as a tag: a probe loads
// the id of an entry (a cache miss) only when the tag matches. slotBits grows with the
// slots, so the tags shrink from 16 bits to 8 at 10M slots and vanish at 2^31.
type idTable struct {
	tab      []uint32
	shift    uint
	slotBits uint
}

func newIDTable(size int, slotBits uint) idTable {
	return idTable{tab: make([]uint32, size), shift: uint(64 - bits.TrailingZeros(uint(size))), slotBits: slotBits}
}

// slotMask returns the mask of the slot bits of an entry.
func (t *idTable) slotMask() uint32 { return uint32(uint64(1)<<t.slotBits - 1) }

// slotOf returns the slot of a non-empty entry.
func (t *idTable) slotOf(e uint32) uint32 { return e&t.slotMask() - 1 }

// entry returns the entry of id in slot.
func (t *idTable) entry(id uint64, slot uint32) uint32 {
	return uint32(mix.Splitmix64(id))&^t.slotMask() | (slot + 1)
}

// homeOf returns the position where id's probe run starts.
func (t *idTable) homeOf(id uint64) int { return int(mix.Splitmix64(id) >> (t.shift & 63)) }

// Growth of the id table: tables of idMoveMin entries or more grow by moving the
// entries of idMoveSlots slots an add. A table grows when 3/4 full, to twice the size,
// or when the slots need another bit; the next growth is at least a quarter of the
// entries later, and the move takes an add per idMoveSlots of them.
const (
	idMoveMin   = 1 << 16
	idMoveSlots = 8
)

// findIn returns id's position in t and its slot, or the empty position where it would
// go.
func (c *core) findIn(t *idTable, id uint64) (pos int, slot uint32, ok bool) {
	h := mix.Splitmix64(id)
	mask, sm := len(t.tab)-1, t.slotMask()
	tag := uint32(h) &^ sm
	i := int(h >> (t.shift & 63))
	for {
		e := t.tab[i]
		if e == 0 {
			return i, 0, false
		}
		if e&^sm == tag && c.id(e&sm-1) == id {
			return i, e&sm - 1, true
		}
		i = (i + 1) & mask
	}
}

// find returns the id table that holds id, its position there and its slot; or, when
// no table holds it, c.ids and the empty position there where it would go.
func (c *core) find(id uint64) (t *idTable, pos int, slot uint32, ok bool) {
	pos, slot, ok = c.findIn(&c.ids, id)
	if ok || c.old == nil {
		return &c.ids, pos, slot, ok
	}
	if opos, oslot, ok := c.findIn(c.old, id); ok && oslot >= c.moved {
		return c.old, opos, oslot, true
	}
	return &c.ids, pos, 0, false
}

// home returns the function that gives the position in t where an entry's probe run
// starts, for idtable.Delete. For a stale entry of c.old (whose slot now holds another
// id, or none) it is wrong, which costs nothing: the backward shift moves such an entry
// or leaves it, and either way every live entry after it stays reachable from its home.
func (c *core) home(t *idTable) func(e uint32) int {
	return func(e uint32) int { return t.homeOf(c.id(t.slotOf(e))) }
}

// lookup returns id's slot.
func (c *core) lookup(id uint64) (uint32, bool) {
	if c.n == 0 {
		return 0, false
	}
	_, _, s, ok := c.find(id)
	return s, ok
}

// growIDTable makes c.ids a table of size entries with slotBits slot bits. A table of
// idMoveMin entries or more is moved into it over the adds that follow (moveIDs); a
// smaller one is rebuilt at once.
func (c *core) growIDTable(size int, slotBits uint) {
	if len(c.ids.tab) < idMoveMin {
		c.rebuildIDTable(size, slotBits)
		return
	}
	c.finishIDMove()
	old := c.ids
	c.old, c.moved = &old, 0
	c.ids = newIDTable(size, slotBits)
}

// moveIDs moves the ids of the next idMoveSlots slots from c.old to c.ids, leaving
// their entries in c.old stale.
func (c *core) moveIDs() {
	if c.old == nil {
		return
	}
	end := min(c.moved+idMoveSlots, uint32(c.nslots))
	// Load the home lines first, so that the cache misses overlap.
	var touch uint32
	for s := c.moved; s < end; s++ {
		id := c.id(s)
		touch += c.old.tab[c.old.homeOf(id)] + c.ids.tab[c.ids.homeOf(id)]
	}
	c.touch += touch
	for s := c.moved; s < end; s++ {
		id := c.id(s)
		// A free slot, or one reused since the growth began, has no entry of its own
		// in old: the entry found, if any, is another slot's.
		if _, slot, ok := c.findIn(c.old, id); !ok || slot != s {
			continue
		}
		pos, _, _ := c.findIn(&c.ids, id)
		c.ids.tab[pos] = c.ids.entry(id, s)
	}
	c.moved = end
	if int(end) == c.nslots {
		c.old = nil
	}
}

// finishIDMove moves every id still in c.old.
func (c *core) finishIDMove() {
	for c.old != nil {
		c.moveIDs()
	}
}

// rebuildIDTable makes an id table of size entries (a power of two) with slotBits slot
// bits and inserts every live id, visiting the slots in order so that their ids are read
// sequentially.
func (c *core) rebuildIDTable(size int, slotBits uint) {
	c.ids, c.old = idTable{}, nil // let the old tables go first
	c.ids = newIDTable(size, slotBits)
	var free []uint64 // bit set of the free slots
	if len(c.free) > 0 {
		free = make([]uint64, (c.nslots+63)/64)
		for _, s := range c.free {
			free[s/64] |= 1 << (s % 64)
		}
	}
	// Insert in batches: load the home line of every id of a batch first, so that those
	// cache misses overlap, then insert (a random insert is otherwise a miss each).
	const batch = 32
	var homes [batch]int
	mask := len(c.ids.tab) - 1
	for lo := uint32(0); lo < uint32(c.nslots); lo += batch {
		hi := min(lo+batch, uint32(c.nslots))
		var touch uint32
		for s := lo; s < hi; s++ {
			homes[s-lo] = c.ids.homeOf(c.id(s))
			touch += c.ids.tab[homes[s-lo]&mask]
		}
		for s := lo; s < hi; s++ {
			if free != nil && free[s/64]&(1<<(s%64)) != 0 {
				continue
			}
			id := c.id(s)
			pos, _, _ := c.findIn(&c.ids, id)
			c.ids.tab[pos] = c.ids.entry(id, s)
		}
		c.touch += touch
	}
}

// idSlotBits returns the slot bits an id table needs for nslots slots: at least 16, and
// enough for slot+1 of every slot.
func idSlotBits(nslots int) uint {
	return max(16, uint(bits.Len64(uint64(nslots))))
}

// add indexes fp under id.
func (c *core) add(id, fp uint64) {
	if c.n > 0 {
		if _, _, slot, ok := c.find(id); ok {
			old := c.fp(slot)
			if old == fp {
				return
			}
			c.unlink(slot, old)
			c.set(slot, id, fp)
			c.link(slot, fp)
			return
		}
	}
	var slot uint32
	if n := len(c.free); n > 0 {
		slot = c.free[n-1]
		c.free = c.free[:n-1]
		c.set(slot, id, fp)
	} else {
		slot = c.slots.append(id, fp)
	}
	if size, sb := idtable.Size(c.n+1), idSlotBits(c.nslots); size > len(c.ids.tab) || sb > c.ids.slotBits {
		c.growIDTable(max(size, len(c.ids.tab)), max(sb, c.ids.slotBits))
	}
	if _, pos, _, ok := c.find(id); !ok { // (a rebuild from the slots put it in)
		c.ids.tab[pos] = c.ids.entry(id, slot)
	}
	c.n++
	c.moveIDs()
	c.link(slot, fp)
	if c.n > bucketLoad<<c.bbits && c.bbits < c.maxBits {
		c.rebucket(c.bbits + 1)
	}
}

// addBatch indexes fps[i] under ids[i] in order; see AddBatch.
func (c *core) addBatch(ids, fps []uint64) {
	// Grow the id table once, for the most the batch can add (a rebuild from the slots,
	// which ends a growth under way); else finish that growth's moves.
	if size, sb := idtable.Size(c.n+len(ids)), idSlotBits(c.nslots+len(ids)); size > len(c.ids.tab) || sb > c.ids.slotBits {
		c.rebuildIDTable(max(size, len(c.ids.tab)), max(sb, c.ids.slotBits))
	} else {
		c.finishIDMove()
	}
	// Slots from base on are new and not yet in the tables: a later pair for the same id
	// only overwrites the fingerprint.
	base := uint32(c.nslots)
	const group = 32 // ids whose id-table lines are loaded together, to overlap the misses
	mask := len(c.ids.tab) - 1
	for lo := 0; lo < len(ids); lo += group {
		hi := min(lo+group, len(ids))
		var touch uint32
		for _, id := range ids[lo:hi] {
			touch += c.ids.tab[c.ids.homeOf(id)&mask]
		}
		c.touch += touch
		for i := lo; i < hi; i++ {
			id, fp := ids[i], fps[i]
			pos, slot, ok := 0, uint32(0), false
			if c.n > 0 {
				_, pos, slot, ok = c.find(id)
			} else {
				pos = c.ids.homeOf(id)
			}
			switch {
			case ok && slot >= base:
				c.set(slot, id, fp)
			case ok || len(c.free) > 0:
				c.add(id, fp)
			default:
				if c.nslots >= maxSlots {
					c.linkNew(base) // leave the index whole for the caller who recovers
				}
				slot = c.slots.append(id, fp)
				c.ids.tab[pos] = c.ids.entry(id, slot)
				c.n++
			}
		}
	}
	c.linkNew(base)
}

// linkNew adds the slots from base on, which addBatch has filled, to every table, once
// the tables have the bucket bits the new Len calls for.
func (c *core) linkNew(base uint32) {
	if c.n > bucketLoad<<c.bbits && c.bbits < c.maxBits {
		nb := c.bbits
		for c.n > bucketLoad<<nb && nb < c.maxBits {
			nb++
		}
		c.rebucket(nb)
	}
	c.linkBatch(base, uint32(c.nslots))
}

// linkBatch adds the new slots lo..hi-1 to every table. When they are at least as many as
// the table's other entries and do not fit its segments, the table is rebuilt with all of
// them, as by rebucket; otherwise they are added in order of bucket, a million at a time,
// so that the segments are written in one sweep rather than at random.
func (c *core) linkBatch(lo, hi uint32) {
	n := int(hi - lo)
	if n < 64 {
		for s := lo; s < hi; s++ {
			c.link(s, c.fp(s))
		}
		return
	}
	const chunk = 1 << 20
	var (
		bs, sorted []uint32 // buckets, then slots in bucket order
		es, out    []uint64 // entries, and in bucket order
		count      []int
	)
	for i := range c.tabs {
		t := &c.tabs[i]
		old := c.n - n
		if n >= old {
			space := 0
			for _, seg := range t.segs {
				space += len(seg)
			}
			if space < c.n {
				saved := *t
				c.fill(t, t.bits, room, func(yield func(uint32) bool) {
					for b := range saved.meta {
						for _, e := range saved.bucket(b) {
							if !yield(uint32(e)) {
								return
							}
						}
					}
					for s := lo; s < hi; s++ {
						if !yield(s) {
							return
						}
					}
				})
				continue
			}
		}
		if bs == nil {
			m := min(n, chunk)
			bs, sorted = make([]uint32, m), make([]uint32, m)
			es, out = make([]uint64, m), make([]uint64, m)
		}
		// Sort by the top db bucket bits: enough for the buckets of a group to be
		// neighbours in memory.
		db := min(t.bits, 12, uint(bits.Len(uint(min(n, chunk)))))
		shift := (t.bits - db) & 63
		if len(count) < 1<<db+1 {
			count = make([]int, 1<<db+1)
		}
		cnt := count[:1<<db+1]
		for clo := lo; clo < hi; clo += chunk {
			chi := min(clo+chunk, hi)
			m := int(chi - clo)
			clear(cnt)
			for j := range m {
				s := clo + uint32(j)
				b, e := t.entry(t.perm.Apply(c.fp(s)), s)
				bs[j], es[j] = uint32(b), e
				cnt[b>>shift+1]++
			}
			for g := 1; g < len(cnt); g++ {
				cnt[g] += cnt[g-1]
			}
			for j := range m {
				g := bs[j] >> shift
				k := cnt[g]
				cnt[g]++
				sorted[k], out[k] = bs[j], es[j]
			}
			for j := range m {
				t.add(int(sorted[j]), out[j])
			}
		}
	}
}

// remove deletes id.
func (c *core) remove(id uint64) bool {
	if c.n == 0 {
		return false
	}
	t, pos, slot, ok := c.find(id)
	if !ok {
		return false
	}
	c.unlink(slot, c.fp(slot))
	idtable.Delete(t.tab, pos, c.home(t))
	c.set(slot, 0, 0)
	c.free = append(c.free, slot)
	c.n--
	return true
}

// link adds slot, holding fp, to every table.
func (c *core) link(slot uint32, fp uint64) {
	for i := range c.tabs {
		t := &c.tabs[i]
		t.add(t.entry(t.perm.Apply(fp), slot))
	}
}

// unlink removes slot, holding fp, from every table. Like a query, it searches the
// buckets of four tables in lockstep.
func (c *core) unlink(slot uint32, fp uint64) {
	var bs [4]int
	var es [4]uint64
	var ls lanes
	for i := range c.tabs {
		t := &c.tabs[i]
		bs[ls.n], es[ls.n] = t.entry(t.perm.Apply(fp), slot)
		ls.bk[ls.n], ls.tab[ls.n] = t.bucket(bs[ls.n]), i
		if ls.n++; ls.n == 4 || i == len(c.tabs)-1 {
			js := ls.index(&es)
			for l := range ls.n {
				c.tabs[ls.tab[l]].removeAt(bs[l], js[l])
			}
			ls.n = 0
		}
	}
}

// index returns the position of es[i] in bucket ls.bk[i] for each of the first ls.n
// lanes, searching four lanes in lockstep.
func (ls *lanes) index(es *[4]uint64) [4]int {
	js := [4]int{-1, -1, -1, -1}
	m := 0
	if ls.n == 4 {
		b0, b1, b2, b3 := ls.bk[0], ls.bk[1], ls.bk[2], ls.bk[3]
		m = min(len(b0), len(b1), len(b2), len(b3))
		b0, b1, b2, b3 = b0[:m], b1[:m], b2[:m], b3[:m]
		for j := range m {
			if b0[j] == es[0] {
				js[0] = j
			}
			if b1[j] == es[1] {
				js[1] = j
			}
			if b2[j] == es[2] {
				js[2] = j
			}
			if b3[j] == es[3] {
				js[3] = j
			}
			if j&7 == 7 && min(js[0], js[1], js[2], js[3]) >= 0 {
				return js
			}
		}
	}
	for l := range ls.n {
		if js[l] < 0 {
			if j := slices.Index(ls.bk[l][m:], es[l]); j >= 0 {
				js[l] = m + j
			}
		}
	}
	return js
}

// rebucket rebuilds every table with bbits bucket bits (capped by its prefix width), one
// table at a time so that only one extra table is alive.
func (c *core) rebucket(bbits uint) {
	c.bbits = bbits
	for i := range c.tabs {
		t := &c.tabs[i]
		nb := min(bbits, t.width)
		if nb == t.bits {
			continue
		}
		old := *t
		c.fill(t, nb, room, func(yield func(uint32) bool) {
			for b := range old.meta {
				for _, e := range old.bucket(b) {
					if !yield(uint32(e)) {
						return
					}
				}
			}
		})
	}
}

// fill replaces t's buckets by 1<<nb buckets holding the given slots, with roomFor(n)
// free entries after a bucket of n.
func (c *core) fill(t *table, nb uint, roomFor func(int) int, slots iter.Seq[uint32]) {
	meta := make([]bucketMeta, 1<<nb)
	for s := range slots {
		b := int(t.perm.Apply(c.fp(s)) >> ((64 - nb) & 63))
		meta[b].n++
	}
	t.reset(nb, meta, roomFor)
	for s := range slots {
		t.place(t.entry(t.perm.Apply(c.fp(s)), s))
	}
}

// build indexes every slot of c.slots, which ReadIndex has just filled with distinct ids,
// into an empty core: the bulk path. Buckets get no room to grow, the least memory for an
// index that is mostly read; the first add to a segment lays it out with room.
func (c *core) build() {
	c.n = c.nslots
	c.rebuildIDTable(idtable.Size(c.n), idSlotBits(c.nslots))
	for c.n > bucketLoad<<c.bbits && c.bbits < c.maxBits {
		c.bbits++
	}
	all := func(yield func(uint32) bool) {
		for s := range uint32(c.n) {
			if !yield(s) {
				return
			}
		}
	}
	for i := range c.tabs {
		t := &c.tabs[i]
		c.fill(t, min(c.bbits, t.width), func(int) int { return 0 }, all)
	}
}

// appendQuery appends the matches of fp within k bits, sorted, to dst.
//
// Buckets are scanned four at a time in lockstep: the four buckets are far apart in
// memory, and stepping through them together keeps four streams of cache misses in flight
// instead of one, which more than doubles the speed of large indexes.
func (c *core) appendQuery(dst []Match, fp uint64, k int) []Match {
	start := len(dst)
	// A pair within k bits is owned by the table of its first blocks-K agreeing blocks;
	// at most k blocks disagree below the highest of them, so tables whose highest chosen
	// block is above blocks-K-1+k own no such pair and are skipped.
	limit := c.d.blocks - c.d.k - 1 + k
	var ls lanes
	for i := range c.tabs {
		t := &c.tabs[i]
		if t.top > limit {
			continue
		}
		p := t.perm.Apply(fp)
		ls.bk[ls.n] = t.bucket(int(p >> ((64 - t.bits) & 63)))
		ls.sig[ls.n] = uint32(p << (t.bits & 63) >> 32)
		ls.tab[ls.n] = i
		if ls.n++; ls.n == 4 {
			dst = c.scan(dst, &ls, fp, k)
			ls.n = 0
		}
	}
	dst = c.scan(dst, &ls, fp, k)
	slices.SortFunc(dst[start:], compareMatches)
	return dst
}

// lanes are up to four buckets to scan together: bucket bk[i] of table tab[i], for the
// query signature sig[i].
type lanes struct {
	bk  [4][]uint64
	sig [4]uint32
	tab [4]int
	n   int
	// touch is a sum of words loaded ahead of use, stored so the loads stay.
	touch uint64
}

// scan appends the matches found in the first ls.n lanes to dst. Four lanes are first
// touched (see touchAll), then scanned in lockstep up to the shortest, by next3 when k
// is at most 3; the rest of each lane is scanned alone.
func (c *core) scan(dst []Match, ls *lanes, fp uint64, k int) []Match {
	m := 0 // entries scanned in lockstep
	if ls.n == 4 {
		ls.touchAll()
		m = min(len(ls.bk[0]), len(ls.bk[1]), len(ls.bk[2]), len(ls.bk[3]))
		if k <= 3 {
			for j := ls.next3(0, m); j < m; j = ls.next3(j+1, m) {
				dst = c.verify4(dst, ls, j, fp, k)
			}
		} else {
			b0, b1, b2, b3 := ls.bk[0][:m], ls.bk[1][:m], ls.bk[2][:m], ls.bk[3][:m]
			q0, q1, q2, q3 := ls.sig[0], ls.sig[1], ls.sig[2], ls.sig[3]
			for j := range m {
				if bits.OnesCount32(uint32(b0[j]>>32)^q0) <= k ||
					bits.OnesCount32(uint32(b1[j]>>32)^q1) <= k ||
					bits.OnesCount32(uint32(b2[j]>>32)^q2) <= k ||
					bits.OnesCount32(uint32(b3[j]>>32)^q3) <= k {
					dst = c.verify4(dst, ls, j, fp, k)
				}
			}
		}
	}
	for i := range ls.n {
		q := ls.sig[i]
		for _, e := range ls.bk[i][m:] {
			if bits.OnesCount32(uint32(e>>32)^q) <= k {
				dst = c.verify(dst, ls.tab[i], e, fp, k)
			}
		}
	}
	return dst
}

// touchAll loads one word of every cache line of the four lanes' buckets, in the order
// the scan reaches them, and keeps their sum in ls.touch. The loads are independent, so
// the CPU keeps many cache misses in flight (as many as it has miss buffers), where the
// scan alone, reading each bucket in order, waits for one line of each at a time.
func (ls *lanes) touchAll() {
	var t uint64
	b0, b1, b2, b3 := ls.bk[0], ls.bk[1], ls.bk[2], ls.bk[3]
	m := max(len(b0), len(b1), len(b2), len(b3))
	for j := 0; j < m; j += 8 {
		if j < len(b0) {
			t += b0[j]
		}
		if j < len(b1) {
			t += b1[j]
		}
		if j < len(b2) {
			t += b2[j]
		}
		if j < len(b3) {
			t += b3[j]
		}
	}
	ls.touch = t
}

// next3 returns the first j in [from, m) at which an entry of one of the four lanes has
// a signature within 3 bits of its lane's, or m if there is none; m is at most the
// length of every lane.
//
// Clearing the lowest set bit three times leaves 0 exactly when at most three bits are
// set: a test in plain ALU operations. bits.OnesCount32 would branch on the CPU's POPCNT
// support at every entry, and the call in its fallback, like a call to verify in the
// loop, would make the compiler keep the loop's values on the stack; as a leaf function,
// next3 keeps them all in registers.
//
//go:noinline
func (ls *lanes) next3(from, m int) int {
	b0, b1, b2, b3 := ls.bk[0][from:m], ls.bk[1][from:m], ls.bk[2][from:m], ls.bk[3][from:m]
	q0, q1, q2, q3 := ls.sig[0], ls.sig[1], ls.sig[2], ls.sig[3]
	// One lane after the other, so that each needs two registers: the CPU overlaps them.
	for j := range b0 {
		x := uint32(b0[j]>>32) ^ q0
		x &= x - 1
		x &= x - 1
		if x&(x-1) == 0 {
			return from + j
		}
		x = uint32(b1[j]>>32) ^ q1
		x &= x - 1
		x &= x - 1
		if x&(x-1) == 0 {
			return from + j
		}
		x = uint32(b2[j]>>32) ^ q2
		x &= x - 1
		x &= x - 1
		if x&(x-1) == 0 {
			return from + j
		}
		x = uint32(b3[j]>>32) ^ q3
		x &= x - 1
		x &= x - 1
		if x&(x-1) == 0 {
			return from + j
		}
	}
	return m
}

// verify4 calls verify for the entry j of each of the four lanes whose signature is
// within k bits of the query's.
//
//go:noinline
func (c *core) verify4(dst []Match, ls *lanes, j int, fp uint64, k int) []Match {
	for i := range 4 {
		if e := ls.bk[i][j]; bits.OnesCount32(uint32(e>>32)^ls.sig[i]) <= k {
			dst = c.verify(dst, ls.tab[i], e, fp, k)
		}
	}
	return dst
}

// verify appends the match of entry e of table ti to dst if its fingerprint is within k
// bits of fp and the table owns the pair, so that each match is reported once. It is kept
// out of the scan loops, which it would otherwise crowd out of registers.
//
//go:noinline
func (c *core) verify(dst []Match, ti int, e, fp uint64, k int) []Match {
	slot := uint32(e)
	cand := c.fp(slot)
	// Loaded before the test, so that its cache miss overlaps the fingerprint's: an entry
	// that passes the signature test is almost always a match.
	id := c.id(slot)
	x := cand ^ fp
	d := bits.OnesCount64(x)
	if d > k || c.d.owner(x) != c.tabs[ti].chosen {
		return dst
	}
	return append(dst, Match{ID: id, Fingerprint: cand, Distance: d})
}

// compareMatches orders matches by distance, then id.
func compareMatches(a, b Match) int {
	if a.Distance != b.Distance {
		return a.Distance - b.Distance
	}
	switch {
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// memoryUsage returns the bytes held by c's structures, from their capacities.
func (c *core) memoryUsage() int64 {
	const header = int64(unsafe.Sizeof([]uint64(nil)))
	n := int64(unsafe.Sizeof(*c)) + c.slots.bytes()
	n += int64(cap(c.free)+cap(c.ids.tab)) * 4
	if c.old != nil {
		n += int64(cap(c.old.tab)) * 4
	}
	for i := range c.tabs {
		t := &c.tabs[i]
		n += int64(unsafe.Sizeof(*t)) + int64(cap(t.meta))*int64(unsafe.Sizeof(bucketMeta{}))
		n += int64(cap(t.segs))*header + int64(cap(t.used))*4
		for _, seg := range t.segs {
			n += int64(cap(seg)) * 8
		}
	}
	return n
}
