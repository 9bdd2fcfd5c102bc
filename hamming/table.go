package hamming

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
