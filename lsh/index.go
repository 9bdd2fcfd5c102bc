package lsh

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/neardup/neardup/internal/idtable"
	"github.com/neardup/neardup/internal/mix"
	"github.com/neardup/neardup/minhash"
)

// Match is one result of a query: an indexed id and its similarity to the query, the
// signature estimate (or, for QueryVerified, the verifier's value).
type Match struct {
	ID         uint64
	Similarity float64
}

const (
	// maxSlots is the most signatures an index holds: slots are uint32 and the id table
	// stores slot+1.
	maxSlots = 1<<32 - 1
	// bucketLoad is the mean bucket length at which the bucket count doubles.
	bucketLoad = 16
	// minBucketBits and maxBucketBits bound the bucket bits of the band tables.
	minBucketBits = 4
	maxBucketBits = 28
	// slotChunkBits sets the slot chunk size, 4096 signatures (2 MiB at K = 128).
	slotChunkBits = 12
	slotChunk     = 1 << slotChunkBits
)

// Index finds, among indexed MinHash signatures, those whose estimated Jaccard similarity
// to a query reaches a threshold. It cuts each signature into Bands bands of Rows values
// and keeps one hash table per band; a query looks up its own bands, and every indexed
// signature that agrees with it on a whole band is a candidate, verified against the full
// signature estimate before it is returned. Pairs are found with Probability(s, Bands,
// Rows) (the S-curve): the index is exact for the candidates it sees, but may miss a pair
// just above the threshold (see Recall).
//
// Layout: signatures are stored once, in fixed chunks of 4096 slots (4*K bytes each), with
// their ids; an open-addressing table maps ids to slots. Each band's table is an array of
// buckets addressed by the top bits of the band's 64-bit key (see AppendBandKeys), and a
// bucket entry packs the next 32 bits of the key with the slot (8 bytes), so a lookup
// rejects almost every other band without touching a signature. Memory is about
// 4*K + 16 + 12*Bands bytes per signature (about 640 at the default K = 128 with 9 bands);
// MemoryUsage reports the exact figure.
//
// Costs: Add and Remove hash Bands bands and update one bucket per band, amortized (now
// and then a table doubles, rehashing every signature); a query hashes its bands, scans one
// bucket per band (8 to 16 entries) and compares each candidate's K values once.
//
// An Index is safe for concurrent use: one sync.RWMutex guards a single-threaded core;
// queries, Len, MemoryUsage, Options and WriteTo take the read lock and run in parallel,
// Add and Remove take the write lock. The zero value is an empty index with the zero
// Options. An Index must not be copied after first use.
type Index struct {
	mu sync.RWMutex
	c  core
}

// New returns an empty index with the given options, resolved as Options describes. It
// returns an error wrapping ErrOptions when they are invalid; choosing the banding costs
// under a millisecond unless it is the default or given.
func New(opt Options) (*Index, error) {
	o, err := opt.resolve()
	if err != nil {
		return nil, err
	}
	x := &Index{}
	x.c.init(o)
	return x, nil
}

// Options returns the index's options with every default resolved: the threshold, K, the
// banding and the weights it was chosen with.
func (x *Index) Options() Options {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.c.opt.K == 0 {
		return zeroOptions()
	}
	return x.c.opt
}

// zeroOptions returns the resolved zero Options.
func zeroOptions() Options {
	return Options{Threshold: DefaultThreshold, K: minhash.DefaultK, Bands: DefaultBands, Rows: DefaultRows, FPWeight: 0.5, FNWeight: 0.5}
}

// Add indexes sig under id, replacing the signature id had. It copies sig and does not
// keep it. It returns an error wrapping ErrSignature, and changes nothing, when len(sig)
// is not K. Add panics when the index already holds 2^32-1 signatures.
func (x *Index) Add(id uint64, sig minhash.Signature) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.c.opt.K == 0 {
		x.c.init(zeroOptions())
	}
	if err := x.c.check(sig); err != nil {
		return err
	}
	x.c.add(id, sig)
	return nil
}

// Remove deletes id from the index and reports whether it was there. Its slot is reused by
// a later Add.
func (x *Index) Remove(id uint64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.c.remove(id)
}

// Len returns the number of indexed signatures.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.c.n
}

// Query returns every indexed id whose signature shares a band with sig and whose
// estimated similarity to it (minhash.Similarity) is at least the threshold, sorted by
// similarity, highest first, then by id, in a new slice (nil when there is none). It
// returns an error wrapping ErrSignature when len(sig) is not K. See AppendQuery.
func (x *Index) Query(sig minhash.Signature) ([]Match, error) {
	return x.AppendQuery(nil, sig)
}

// AppendQuery appends to dst the matches Query would return and returns the extended
// slice; it allocates only when dst lacks room. dst's earlier elements are left alone; on
// error dst is returned unchanged. It costs Bands band hashes, a scan of one bucket per
// band, and one signature comparison per distinct candidate (an indexed signature that
// shares several bands with sig is compared once).
func (x *Index) AppendQuery(dst []Match, sig minhash.Signature) ([]Match, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.c.check(sig); err != nil {
		return dst, err
	}
	if x.c.n == 0 {
		return dst, nil
	}
	start := len(dst)
	x.c.candidates(sig, func(slot uint32, cand minhash.Signature) {
		if m, ok := x.c.verify(sig, cand); ok {
			dst = append(dst, Match{ID: x.c.id(slot), Similarity: float64(m) / float64(len(sig))})
		}
	})
	slices.SortFunc(dst[start:], compareMatches)
	return dst, nil
}

// TopK returns the k best matches of Query: at most k, with the highest similarities,
// ties broken by id. k <= 0 returns nil.
func (x *Index) TopK(sig minhash.Signature, k int) ([]Match, error) {
	ms, err := x.Query(sig)
	if err != nil || k <= 0 {
		return nil, err
	}
	if len(ms) > k {
		ms = slices.Clip(ms[:k])
	}
	return ms, nil
}

// QueryVerified is Query with the caller's own verifier: for every candidate that shares
// a band with sig, it calls verify(id), which returns the candidate's real similarity (for
// example minhash.Jaccard of the stored features) and whether the id is still known; a
// candidate is a match when verify returns true and a similarity of at least the
// threshold. The signature estimate is not consulted, so pairs it would misjudge near the
// threshold are decided exactly; the banding still decides which pairs are seen.
//
// verify is called without the index's lock held, once per candidate, from the calling
// goroutine; it may use the index. The matches are sorted as Query's.
func (x *Index) QueryVerified(sig minhash.Signature, verify func(id uint64) (float64, bool)) ([]Match, error) {
	x.mu.RLock()
	if err := x.c.check(sig); err != nil {
		x.mu.RUnlock()
		return nil, err
	}
	var ids []uint64
	if x.c.n > 0 {
		x.c.candidates(sig, func(slot uint32, _ minhash.Signature) {
			ids = append(ids, x.c.id(slot))
		})
	}
	threshold := x.c.opt.Threshold
	x.mu.RUnlock()
	var out []Match
	for _, id := range ids {
		if s, ok := verify(id); ok && s >= threshold {
			out = append(out, Match{ID: id, Similarity: s})
		}
	}
	slices.SortFunc(out, compareMatches)
	return out, nil
}

// MemoryUsage returns the bytes held by the index's structures, computed from their
// capacities: the signature and id chunks, the free list, the id table and every band's
// bucket headers and entries. Divide by Len for the bytes per signature. It walks every
// bucket header, about a millisecond per million buckets.
func (x *Index) MemoryUsage() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.c.memoryUsage()
}

// compareMatches orders matches by similarity, highest first, then by id.
func compareMatches(a, b Match) int {
	if c := cmp.Compare(b.Similarity, a.Similarity); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// core is the single-threaded index behind Index; see Index for the layout.
type core struct {
	opt Options // resolved; K == 0 until init
	// minMatch is the fewest equal values whose estimate reaches the threshold.
	minMatch int
	slots
	free []uint32 // free slots, reused last in first out
	// idTab maps ids to slots: open addressing with linear probing, entries slot+1, 0
	// empty, home position mix.Splitmix64(id) >> idShift, at most 3/4 full, deletion by backward
	// shift.
	idTab   []uint32
	idShift uint
	n       int
	bbits   uint     // bucket bits of every band table
	bands   []band   // one table per band
	keys    []uint64 // scratch for one signature's band keys (write lock only)
}

// band is one band's table: 1<<bbits buckets of entries tag<<32 | slot, where tag is the
// 32 bits of the band key below the bucket bits.
type band struct {
	buckets [][]uint64
}

// slots holds the signature and id of each slot in chunks of slotChunk slots, so that
// growing never copies more than one chunk; only the first chunk grows (by doubling),
// which keeps small indexes small. A free slot keeps its old signature and id 0.
type slots struct {
	k      int
	sigs   [][]uint32 // chunk c holds slots [c*slotChunk, (c+1)*slotChunk), k values each
	ids    [][]uint64
	nslots int
}

func (s *slots) sig(i uint32) minhash.Signature {
	off := int(i&(slotChunk-1)) * s.k
	return s.sigs[i>>slotChunkBits][off : off+s.k : off+s.k]
}

func (s *slots) id(i uint32) uint64 { return s.ids[i>>slotChunkBits][i&(slotChunk-1)] }

func (s *slots) set(i uint32, id uint64, sig minhash.Signature) {
	copy(s.sig(i), sig)
	s.ids[i>>slotChunkBits][i&(slotChunk-1)] = id
}

// append stores id and sig in a new slot and returns it.
func (s *slots) append(id uint64, sig minhash.Signature) uint32 {
	i := s.nslots
	if i >= maxSlots {
		panic("lsh: index full: it holds 2^32-1 signatures")
	}
	c := i >> slotChunkBits
	if c == len(s.ids) {
		size := slotChunk
		if c == 0 {
			size = 16
		}
		s.sigs = append(s.sigs, make([]uint32, 0, size*s.k))
		s.ids = append(s.ids, make([]uint64, 0, size))
	} else if len(s.ids[c]) == cap(s.ids[c]) { // only chunk 0 is ever short
		size := min(2*cap(s.ids[c]), slotChunk)
		s.sigs[c] = append(make([]uint32, 0, size*s.k), s.sigs[c]...)
		s.ids[c] = append(make([]uint64, 0, size), s.ids[c]...)
	}
	s.sigs[c] = append(s.sigs[c], sig...)
	s.ids[c] = append(s.ids[c], id)
	s.nslots++
	return uint32(i)
}

// bytes returns the memory the slot chunks hold.
func (s *slots) bytes() int64 {
	n := int64(cap(s.sigs)+cap(s.ids)) * int64(unsafe.Sizeof([]uint64(nil)))
	for c := range s.ids {
		n += int64(cap(s.sigs[c]))*4 + int64(cap(s.ids[c]))*8
	}
	return n
}

// init sets up an empty core with resolved options.
func (c *core) init(o Options) {
	*c = core{opt: o, slots: slots{k: o.K}, bbits: minBucketBits}
	for c.minMatch < o.K && float64(c.minMatch)/float64(o.K) < o.Threshold {
		c.minMatch++
	}
	c.bands = make([]band, o.Bands)
	for i := range c.bands {
		c.bands[i].buckets = make([][]uint64, 1<<c.bbits)
	}
	c.keys = make([]uint64, 0, o.Bands)
}

// check validates a signature's length.
func (c *core) check(sig minhash.Signature) error {
	k := c.opt.K
	if k == 0 {
		k = minhash.DefaultK
	}
	if len(sig) != k {
		return fmt.Errorf("%w: it has %d values, the index takes K = %d", ErrSignature, len(sig), k)
	}
	return nil
}

// find returns id's position in the id table and its slot, or the empty position where it
// would go.
func (c *core) find(id uint64) (pos int, slot uint32, ok bool) {
	mask := len(c.idTab) - 1
	i := int(mix.Splitmix64(id) >> (c.idShift & 63))
	for {
		s := c.idTab[i]
		if s == 0 {
			return i, 0, false
		}
		if c.id(s-1) == id {
			return i, s - 1, true
		}
		i = (i + 1) & mask
	}
}

// home returns the id table position where entry e's probe run starts.
func (c *core) home(e uint32) int { return int(mix.Splitmix64(c.id(e-1)) >> (c.idShift & 63)) }

// growIDTable resizes the id table to size (a power of two) and reinserts every id.
func (c *core) growIDTable(size int) {
	old := c.idTab
	c.idTab = make([]uint32, size)
	c.idShift = uint(64 - bits.TrailingZeros(uint(size)))
	for _, s := range old {
		if s != 0 {
			pos, _, _ := c.find(c.id(s - 1))
			c.idTab[pos] = s
		}
	}
}

// add indexes sig, of length K, under id.
func (c *core) add(id uint64, sig minhash.Signature) {
	if c.n > 0 {
		if _, slot, ok := c.find(id); ok {
			if slices.Equal(c.sig(slot), sig) {
				return
			}
			c.unlink(slot)
			c.set(slot, id, sig)
			c.link(slot)
			return
		}
	}
	if (c.n+1)*4 > len(c.idTab)*3 {
		c.growIDTable(idtable.Size(c.n + 1))
	}
	var slot uint32
	if n := len(c.free); n > 0 {
		slot = c.free[n-1]
		c.free = c.free[:n-1]
		c.set(slot, id, sig)
	} else {
		slot = c.slots.append(id, sig)
	}
	pos, _, _ := c.find(id)
	c.idTab[pos] = slot + 1
	c.n++
	c.link(slot)
	if c.n > bucketLoad<<c.bbits && c.bbits < maxBucketBits {
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
	c.unlink(slot)
	idtable.Delete(c.idTab, pos, c.home)
	c.ids[slot>>slotChunkBits][slot&(slotChunk-1)] = 0
	c.free = append(c.free, slot)
	c.n--
	return true
}

// entry returns the bucket and the entry of slot for a band key.
func (c *core) entry(key uint64, slot uint32) (int, uint64) {
	b := int(key >> ((64 - c.bbits) & 63))
	tag := uint32(key << (c.bbits & 63) >> 32)
	return b, uint64(tag)<<32 | uint64(slot)
}

// link adds slot to every band table.
func (c *core) link(slot uint32) {
	c.keys = c.appendKeys(c.keys[:0], c.sig(slot))
	for i, key := range c.keys {
		t := &c.bands[i]
		b, e := c.entry(key, slot)
		t.buckets[b] = bucketAppend(t.buckets[b], e)
	}
}

// unlink removes slot from every band table.
func (c *core) unlink(slot uint32) {
	c.keys = c.appendKeys(c.keys[:0], c.sig(slot))
	for i, key := range c.keys {
		t := &c.bands[i]
		b, e := c.entry(key, slot)
		t.buckets[b] = bucketRemove(t.buckets[b], e)
	}
}

// appendKeys appends the band keys of sig.
func (c *core) appendKeys(dst []uint64, sig minhash.Signature) []uint64 {
	r := c.opt.Rows
	for i := range c.bands {
		dst = append(dst, bandKey(i, sig[i*r:(i+1)*r]))
	}
	return dst
}

// makeBucket returns an empty bucket with room for at least n entries, rounded up to the
// allocator's size class (whose slack would otherwise be lost, and uncounted).
func makeBucket(n int) []uint64 {
	if n == 0 {
		return nil
	}
	return append([]uint64(nil), make([]uint64, n)...)[:0]
}

// bucketAppend adds e to bk, growing it by a quarter when full.
func bucketAppend(bk []uint64, e uint64) []uint64 {
	if n := len(bk); n == cap(bk) {
		bk = append(makeBucket(n+n/4+1), bk...)
	}
	return append(bk, e)
}

// bucketRemove deletes e from bk by moving the last entry into its place, and gives
// memory back when the bucket falls below a quarter full.
func bucketRemove(bk []uint64, e uint64) []uint64 {
	j := slices.Index(bk, e)
	if j < 0 {
		panic("lsh: index corrupt: slot missing from its bucket")
	}
	last := len(bk) - 1
	bk[j] = bk[last]
	bk = bk[:last]
	switch {
	case last == 0:
		return nil
	case last < cap(bk)/4 && cap(bk) > 8:
		return append(makeBucket(last+last/4+1), bk...)
	}
	return bk
}

// rebucket rebuilds every band table with 1<<bbits buckets, one band at a time, each
// bucket sized exactly (up to the allocator's size class).
func (c *core) rebucket(bbits uint) {
	c.bbits = bbits
	r := c.opt.Rows
	live := c.liveSlots()
	counts := make([]uint32, 1<<bbits)
	for i := range c.bands {
		clear(counts)
		for _, s := range live {
			b, _ := c.entry(bandKey(i, c.sig(s)[i*r:(i+1)*r]), s)
			counts[b]++
		}
		bks := make([][]uint64, 1<<bbits)
		for b, n := range counts {
			bks[b] = makeBucket(int(n))
		}
		c.bands[i].buckets = nil // let the old table go before the next band's is built
		for _, s := range live {
			b, e := c.entry(bandKey(i, c.sig(s)[i*r:(i+1)*r]), s)
			bks[b] = append(bks[b], e)
		}
		c.bands[i].buckets = bks
	}
}

// liveSlots returns the slots that hold a signature, in increasing order.
func (c *core) liveSlots() []uint32 {
	live := make([]uint32, 0, c.n)
	for _, s := range c.idTab {
		if s != 0 {
			live = append(live, s-1)
		}
	}
	slices.Sort(live)
	return live
}

// build indexes every slot of c.slots, which Read has just filled with distinct ids, into
// an empty core: the bulk path.
func (c *core) build() {
	c.n = c.nslots
	c.growIDTable(idtable.Size(c.n))
	for s := range uint32(c.n) {
		pos, _, _ := c.find(c.id(s))
		c.idTab[pos] = s + 1
	}
	bbits := c.bbits
	for c.n > bucketLoad<<bbits && bbits < maxBucketBits {
		bbits++
	}
	c.rebucket(bbits)
}

// candidates calls fn once for each indexed signature that agrees with sig on at least
// one whole band. A signature is reported by the first band it agrees on (its owner), so
// no set of seen slots is needed.
//
// Bands are taken up to bandGroup at a time, in two passes: the first hashes their keys
// and loads their buckets, collecting the entries whose tag matches; the second checks
// those candidates against their signatures. Keeping signature loads out of the bucket
// scans lets the bucket loads of different bands, all cache misses in a large index,
// overlap instead of waiting for one another.
func (c *core) candidates(sig minhash.Signature, fn func(slot uint32, cand minhash.Signature)) {
	const bandGroup = 16
	var (
		bks   [bandGroup][]uint64
		tags  [bandGroup]uint32
		found [64]hit
	)
	r := c.opt.Rows
	for g := 0; g < len(c.bands); g += bandGroup {
		m := min(bandGroup, len(c.bands)-g)
		for j := range m {
			i := g + j
			b, e := c.entry(bandKey(i, sig[i*r:(i+1)*r]), 0)
			bks[j] = c.bands[i].buckets[b]
			tags[j] = uint32(e >> 32)
		}
		nf := 0
		for j := range m {
			for _, e := range bks[j] {
				if uint32(e>>32) != tags[j] {
					continue
				}
				if nf == len(found) {
					c.checkHits(found[:nf], sig, fn)
					nf = 0
				}
				found[nf] = hit{slot: uint32(e), band: g + j}
				nf++
			}
		}
		c.checkHits(found[:nf], sig, fn)
	}
}

// hit is a bucket entry whose tag matches the query's in band band.
type hit struct {
	slot uint32
	band int
}

// checkHits calls fn for each hit whose signature really agrees with sig on the hit's band
// and on no earlier band.
func (c *core) checkHits(hits []hit, sig minhash.Signature, fn func(slot uint32, cand minhash.Signature)) {
	r := c.opt.Rows
	for _, h := range hits {
		cand := c.sig(h.slot)
		i := h.band
		if slices.Equal(cand[i*r:(i+1)*r], sig[i*r:(i+1)*r]) && !ownedEarlier(cand, sig, i, r) {
			fn(h.slot, cand)
		}
	}
}

// ownedEarlier reports whether a and b agree on a whole band before band i.
func ownedEarlier(a, b minhash.Signature, i, r int) bool {
	for j := range i {
		if slices.Equal(a[j*r:(j+1)*r], b[j*r:(j+1)*r]) {
			return true
		}
	}
	return false
}

// verify counts the values a and b share and reports whether they reach minMatch,
// stopping as soon as too many differ.
func (c *core) verify(a, b minhash.Signature) (int, bool) {
	b = b[:len(a)]
	allowed := len(a) - c.minMatch // mismatches that still pass
	miss := 0
	for i, v := range a {
		if v != b[i] {
			if miss++; miss > allowed {
				return 0, false
			}
		}
	}
	return len(a) - miss, true
}

// memoryUsage returns the bytes held by c's structures, from their capacities.
func (c *core) memoryUsage() int64 {
	const header = int64(unsafe.Sizeof([]uint64(nil)))
	n := int64(unsafe.Sizeof(*c)) + c.slots.bytes()
	n += int64(cap(c.free)+cap(c.idTab))*4 + int64(cap(c.keys))*8
	n += int64(cap(c.bands)) * int64(unsafe.Sizeof(band{}))
	for i := range c.bands {
		n += int64(cap(c.bands[i].buckets)) * header
		for _, bk := range c.bands[i].buckets {
			n += int64(cap(bk)) * 8
		}
	}
	return n
}
