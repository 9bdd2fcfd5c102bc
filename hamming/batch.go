package hamming

import (
	"math/bits"

	"github.com/neardup/neardup/internal/idtable"
)

// addBatch indexes fps[i] under ids[i] in order; see AddBatch.
func (c *core) addBatch(ids, fps []uint64) {
	// Grow the id table once, for the most the batch can add (a rebuild from the slots,
	// which ends a growth under way); else finish that growth's moves.
	if size, sb := idtable.Size(c.n+len(ids)), idSlotBits(c.slots.Len()+len(ids)); size > len(c.ids.tab) || sb > c.ids.slotBits {
		c.rebuildIDTable(max(size, len(c.ids.tab)), max(sb, c.ids.slotBits))
	} else {
		c.finishIDMove()
	}
	// Slots from base on are new and not yet in the tables: a later pair for the same id
	// only overwrites the fingerprint.
	base := uint32(c.slots.Len())
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
				c.slots.Set(slot, id, fp)
			case ok || len(c.free) > 0:
				c.add(id, fp)
			default:
				if c.slots.Len() >= maxSlots {
					c.linkNew(base) // leave the index whole for the caller who recovers
					panic(errFull)
				}
				slot = c.slots.Append(id, fp)
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
	c.linkBatch(base, uint32(c.slots.Len()))
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
	var sc sortScratch
	for i := range c.tabs {
		t := &c.tabs[i]
		if n >= c.n-n && t.space() < c.n {
			c.refill(t, lo, hi)
			continue
		}
		c.linkSorted(t, lo, hi, &sc)
	}
}

// space returns the entries t's segments have room for, used or not.
func (t *table) space() int {
	space := 0
	for _, seg := range t.segs {
		space += len(seg)
	}
	return space
}

// refill rebuilds t, with the bucket bits it has, holding its entries and the new slots
// lo..hi-1.
func (c *core) refill(t *table, lo, hi uint32) {
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
}

// sortChunk is the most new slots linkSorted sorts at a time.
const sortChunk = 1 << 20

// sortScratch is linkSorted's memory, allocated by its first call and reused for every
// table of a batch.
type sortScratch struct {
	bs, sorted []uint32 // buckets, then in bucket order
	es, out    []uint64 // entries, then in bucket order
	count      []int
}

// linkSorted adds the new slots lo..hi-1 to t in order of bucket, sortChunk at a time.
func (c *core) linkSorted(t *table, lo, hi uint32, sc *sortScratch) {
	n := int(hi - lo)
	if sc.bs == nil {
		m := min(n, sortChunk)
		sc.bs, sc.sorted = make([]uint32, m), make([]uint32, m)
		sc.es, sc.out = make([]uint64, m), make([]uint64, m)
	}
	bs, sorted, es, out := sc.bs, sc.sorted, sc.es, sc.out
	// Sort by the top db bucket bits: enough for the buckets of a group to be neighbours
	// in memory.
	db := min(t.bits, 12, uint(bits.Len(uint(min(n, sortChunk)))))
	shift := (t.bits - db) & 63
	if len(sc.count) < 1<<db+1 {
		sc.count = make([]int, 1<<db+1)
	}
	cnt := sc.count[:1<<db+1]
	for clo := lo; clo < hi; clo += sortChunk {
		chi := min(clo+sortChunk, hi)
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
