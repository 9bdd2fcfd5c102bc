package hamming

import (
	"fmt"
	"iter"
	"math/bits"
	"slices"
	"sync"
	"unsafe"
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
}

// Match is one result of Index.Query: an indexed id, its fingerprint and the Hamming
// distance from the query.
type Match struct {
	ID          uint64
	Fingerprint uint64
	Distance    int
}

const (
	// maxTables bounds Blocks choose MaxDistance. Every table costs 8 bytes per fingerprint,
	// so designs beyond it are never sensible, and a snapshot must not make ReadIndex
	// enumerate billions of permutations.
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
	// minIDTable is the smallest id table.
	minIDTable = 16
)

// Index is an online index of 64-bit fingerprints keyed by uint64 ids, answering "which
// ids have a fingerprint within k bits of this one" for any k up to MaxDistance. It keeps
// one table per permutation of Manku et al.'s scheme (see Permutations); a table's buckets
// are addressed by the top bits of the permuted fingerprint, and each entry carries the 32
// permuted bits below them, so a query rejects almost every candidate of a bucket without
// touching the fingerprint itself.
//
// Memory is about 16 + 8*tables + 7 bytes per fingerprint (about 56 for the default
// design); Add and Remove cost one id-table probe and one bucket update per table; Query
// scans one bucket per table, about tables*Len()/(16*65536) entries for the default design
// above a million fingerprints.
//
// An Index is safe for concurrent use: one sync.RWMutex guards a single-threaded core,
// Query, AppendQuery, Fingerprint, Len, MemoryUsage and WriteTo take the read lock and run
// in parallel, Add and Remove take the write lock. The zero value is an empty index with
// the default options. An Index must not be copied after first use.
type Index struct {
	mu sync.RWMutex
	c  core
}

// NewIndex returns an empty index with the given options. It returns an error wrapping
// ErrDesign when the design is impossible: a negative MaxDistance or Blocks, Blocks above
// 64 or not above MaxDistance, or more than 1024 tables.
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
	x := &Index{}
	if err := x.c.init(m, k); err != nil {
		return nil, err
	}
	return x, nil
}

// Add indexes fp under id, replacing the fingerprint id had. It costs one id-table probe
// and one bucket append per table, amortized; now and then it grows the slot arrays, the
// id table or (when Len passes 16 times the bucket count) rebuilds every table with twice
// the buckets. Add panics when the index already holds 2^32-1 fingerprints.
func (x *Index) Add(id, fp uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.c.d == nil {
		x.c.initDefault()
	}
	x.c.add(id, fp)
}

// Remove deletes id from the index and reports whether it was there. Its slot is reused by
// a later Add; buckets that fall below a quarter full give memory back.
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
	return x.c.fps[slot], true
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
	if k < 0 || k > maxK {
		return dst, fmt.Errorf("%w: query distance %d is outside [0, %d]; build the index with MaxDistance >= %d", ErrDesign, k, maxK, k)
	}
	if x.c.d == nil {
		return dst, nil
	}
	return x.c.appendQuery(dst, fp, k), nil
}

// MemoryUsage returns the bytes held by the index's structures, computed from their
// capacities: the slot arrays, the free list, the id table and every table's bucket
// headers and entries. Divide by Len for the bytes per fingerprint. It walks every bucket
// header, so it costs about a millisecond per million buckets.
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
	// fps[s] and ids[s] are the fingerprint and id in slot s; a free slot holds zeros.
	fps, ids []uint64
	free     []uint32 // free slots, reused last in first out
	// idTab maps ids to slots: open addressing with linear probing, entries slot+1, 0 empty,
	// home position mix(id) >> idShift, at most 3/4 full, deletion by backward shift.
	idTab   []uint32
	idShift uint
	n       int
}

// table is one permutation's hash table.
type table struct {
	perm   Permutation
	chosen uint64 // perm.Blocks()
	top    int    // the highest chosen block
	width  uint   // the prefix width: bits of perm.SearchMask()
	bits   uint   // bucket bits in use, 1..width
	// buckets[p>>(64-bits)] holds, for each fingerprint whose permutation is p, the entry
	// sig(p)<<32 | slot, where sig(p) is the 32 bits of p below the bucket bits.
	buckets [][]uint64
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
		t.buckets = make([][]uint64, 1<<t.bits)
	}
	return nil
}

// checkIndexDesign validates a (blocks, k) design for an index, without allocating.
func checkIndexDesign(blocks, k int) error {
	if err := checkDesign(blocks, k); err != nil {
		return err
	}
	if t := tablesUpTo(blocks, k, maxTables); t > maxTables {
		return fmt.Errorf("%w: %d blocks with distance %d need more than %d tables; use fewer blocks", ErrDesign, blocks, k, maxTables)
	}
	return nil
}

// tablesUpTo returns blocks choose k, or a number above limit as soon as it is certain to
// exceed it. It never overflows for blocks <= 64.
func tablesUpTo(blocks, k, limit int) int {
	k = min(k, blocks-k)
	n := 1
	for i := range k {
		// n is (blocks choose i), which grows with i up to blocks/2, so once it passes limit
		// the result does too.
		n = n * (blocks - i) / (i + 1)
		if n > limit {
			return n
		}
	}
	return n
}

// mix is the splitmix64 finalizer: a bijection of uint64 whose top bits depend on every
// input bit, so sequential ids spread over the id table.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// find returns id's position in the id table and its slot, or the empty position where it
// would go.
func (c *core) find(id uint64) (pos int, slot uint32, ok bool) {
	mask := len(c.idTab) - 1
	i := int(mix(id) >> (c.idShift & 63))
	for {
		s := c.idTab[i]
		if s == 0 {
			return i, 0, false
		}
		if c.ids[s-1] == id {
			return i, s - 1, true
		}
		i = (i + 1) & mask
	}
}

// lookup returns id's slot.
func (c *core) lookup(id uint64) (uint32, bool) {
	if c.n == 0 {
		return 0, false
	}
	_, s, ok := c.find(id)
	return s, ok
}

// growIDTable resizes the id table to size (a power of two) and reinserts every id.
func (c *core) growIDTable(size int) {
	old := c.idTab
	c.idTab = make([]uint32, size)
	c.idShift = uint(64 - bits.TrailingZeros(uint(size)))
	for _, s := range old {
		if s != 0 {
			pos, _, _ := c.find(c.ids[s-1])
			c.idTab[pos] = s
		}
	}
}

// deleteAt empties position i of the id table by backward shift: each later entry of the
// probe run moves back into the hole when the hole lies between its home and it.
func (c *core) deleteAt(i int) {
	mask := len(c.idTab) - 1
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := c.idTab[j]
		if s == 0 {
			break
		}
		home := int(mix(c.ids[s-1]) >> (c.idShift & 63))
		if (j-home)&mask >= (j-i)&mask {
			c.idTab[i] = s
			i = j
		}
	}
	c.idTab[i] = 0
}

// idTableSize returns the id table size for n ids: a power of two at most 3/4 full.
func idTableSize(n int) int {
	size := minIDTable
	for n > size/4*3 {
		size *= 2
	}
	return size
}

// newSlot returns a free slot holding id and fp, growing the slot arrays by an eighth when
// full (not doubling, to keep their slack small).
func (c *core) newSlot(id, fp uint64) uint32 {
	if n := len(c.free); n > 0 {
		s := c.free[n-1]
		c.free = c.free[:n-1]
		c.ids[s], c.fps[s] = id, fp
		return s
	}
	n := len(c.fps)
	if n >= maxSlots {
		panic("hamming: index full: it holds 2^32-1 fingerprints")
	}
	if n == cap(c.fps) {
		c.fps = growTo(c.fps, n+n/8+64)
		c.ids = growTo(c.ids, n+n/8+64)
	}
	c.fps = append(c.fps, fp)
	c.ids = append(c.ids, id)
	return uint32(n)
}

// makeUint64s returns an empty slice with room for at least n elements: n rounded up to
// the allocator's size class, so that the slack the allocator gives anyway is usable and
// counted by cap.
func makeUint64s(n int) []uint64 {
	if n == 0 {
		return nil
	}
	// append of make(...)... to a nil slice allocates exactly once, rounded to a size class.
	return append([]uint64(nil), make([]uint64, n)...)[:0]
}

// growTo returns s copied into a slice with capacity of at least n.
func growTo(s []uint64, n int) []uint64 {
	return append(makeUint64s(n), s...)
}

// add indexes fp under id.
func (c *core) add(id, fp uint64) {
	if c.n > 0 {
		if _, slot, ok := c.find(id); ok {
			old := c.fps[slot]
			if old == fp {
				return
			}
			c.unlink(slot, old)
			c.fps[slot] = fp
			c.link(slot, fp)
			return
		}
	}
	if (c.n+1)*4 > len(c.idTab)*3 {
		c.growIDTable(idTableSize(c.n + 1))
	}
	slot := c.newSlot(id, fp)
	pos, _, _ := c.find(id)
	c.idTab[pos] = slot + 1
	c.n++
	c.link(slot, fp)
	if c.n > bucketLoad<<c.bbits && c.bbits < c.maxBits {
		c.rebucket(c.bbits + 1)
	}
}

// remove deletes id.
func (c *core) remove(id uint64) bool {
	if c.n == 0 {
		return false
	}
	pos, slot, ok := c.find(id)
	if !ok {
		return false
	}
	c.unlink(slot, c.fps[slot])
	c.deleteAt(pos)
	c.fps[slot], c.ids[slot] = 0, 0
	c.free = append(c.free, slot)
	c.n--
	return true
}

// entry returns table t's bucket index and entry for slot holding a fingerprint whose
// permutation is p.
func (t *table) entry(p uint64, slot uint32) (int, uint64) {
	b := int(p >> ((64 - t.bits) & 63))
	sig := uint32(p << (t.bits & 63) >> 32)
	return b, uint64(sig)<<32 | uint64(slot)
}

// link adds slot, holding fp, to every table.
func (c *core) link(slot uint32, fp uint64) {
	for i := range c.tabs {
		t := &c.tabs[i]
		b, e := t.entry(t.perm.Apply(fp), slot)
		bk := t.buckets[b]
		if len(bk) == cap(bk) {
			bk = growTo(bk, len(bk)+len(bk)/8+4)
		}
		t.buckets[b] = append(bk, e)
	}
}

// unlink removes slot, holding fp, from every table, giving memory back from buckets that
// fall below a quarter full.
func (c *core) unlink(slot uint32, fp uint64) {
	for i := range c.tabs {
		t := &c.tabs[i]
		b, e := t.entry(t.perm.Apply(fp), slot)
		bk := t.buckets[b]
		j := slices.Index(bk, e)
		if j < 0 {
			panic("hamming: index corrupt: slot missing from its bucket")
		}
		last := len(bk) - 1
		bk[j] = bk[last]
		bk = bk[:last]
		switch {
		case last == 0:
			bk = nil
		case last < cap(bk)/4 && cap(bk) > 16:
			bk = growTo(bk, last+last/8+4)
		}
		t.buckets[b] = bk
	}
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
		old := t.buckets
		c.fill(t, nb, func(yield func(uint32) bool) {
			for _, bk := range old {
				for _, e := range bk {
					if !yield(uint32(e)) {
						return
					}
				}
			}
		})
	}
}

// fill replaces t's buckets by 1<<nb buckets holding the given slots, each bucket sized
// exactly (up to the allocator's size class).
func (c *core) fill(t *table, nb uint, slots iter.Seq[uint32]) {
	t.bits = nb
	counts := make([]uint32, 1<<nb)
	for s := range slots {
		b, _ := t.entry(t.perm.Apply(c.fps[s]), s)
		counts[b]++
	}
	bks := make([][]uint64, 1<<nb)
	for b, n := range counts {
		bks[b] = makeUint64s(int(n))
	}
	for s := range slots {
		b, e := t.entry(t.perm.Apply(c.fps[s]), s)
		bks[b] = append(bks[b], e)
	}
	t.buckets = bks
}

// build indexes fps[s] under ids[s] for every s, into an empty core whose slot arrays
// were just set: ReadIndex's bulk path. The ids must be distinct.
func (c *core) build() {
	c.n = len(c.fps)
	c.growIDTable(idTableSize(c.n))
	for s, id := range c.ids {
		pos, _, _ := c.find(id)
		c.idTab[pos] = uint32(s) + 1
	}
	for c.n > bucketLoad<<c.bbits && c.bbits < c.maxBits {
		c.bbits++
	}
	all := func(yield func(uint32) bool) {
		for s := range c.fps {
			if !yield(uint32(s)) {
				return
			}
		}
	}
	for i := range c.tabs {
		t := &c.tabs[i]
		c.fill(t, min(c.bbits, t.width), all)
	}
}

// appendQuery appends the matches of fp within k bits, sorted, to dst.
func (c *core) appendQuery(dst []Match, fp uint64, k int) []Match {
	start := len(dst)
	// A pair within k bits is owned by the table of its first blocks-K agreeing blocks;
	// at most k blocks disagree below the highest of them, so tables whose highest chosen
	// block is above blocks-K-1+k own no such pair and are skipped.
	limit := c.d.blocks - c.d.k - 1 + k
	fps, ids := c.fps, c.ids
	for i := range c.tabs {
		t := &c.tabs[i]
		if t.top > limit {
			continue
		}
		p := t.perm.Apply(fp)
		q := uint32(p << (t.bits & 63) >> 32)
		for _, e := range t.buckets[p>>((64-t.bits)&63)] {
			if bits.OnesCount32(uint32(e>>32)^q) > k {
				continue
			}
			cand := fps[uint32(e)]
			x := cand ^ fp
			d := bits.OnesCount64(x)
			if d > k || c.d.owner(x) != t.chosen {
				continue
			}
			dst = append(dst, Match{ID: ids[uint32(e)], Fingerprint: cand, Distance: d})
		}
	}
	slices.SortFunc(dst[start:], compareMatches)
	return dst
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
	n := int64(unsafe.Sizeof(*c))
	n += int64(cap(c.fps)+cap(c.ids))*8 + int64(cap(c.free)+cap(c.idTab))*4
	for i := range c.tabs {
		t := &c.tabs[i]
		n += int64(unsafe.Sizeof(*t)) + int64(cap(t.buckets))*header
		for _, bk := range t.buckets {
			n += int64(cap(bk)) * 8
		}
	}
	return n
}
