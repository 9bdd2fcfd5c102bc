package lsh

import (
	"slices"

	"github.com/neardup/neardup/minhash"
)

// band is one band's table: 1<<bbits buckets of entries tag<<32 | slot, where tag is the
// 32 bits of the band key below the bucket bits.
type band struct {
	buckets [][]uint64
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
