package lsh

import (
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/neardup/neardup/internal/idtable"
	"github.com/neardup/neardup/internal/mix"
	"github.com/neardup/neardup/internal/slots"
	"github.com/neardup/neardup/minhash"
)

// core is the single-threaded index behind Index; see Index for the layout.
type core struct {
	opt Options // resolved; K == 0 until init
	// minMatch is the fewest equal values whose estimate reaches the threshold.
	minMatch int
	// slots holds the id and signature of every slot; a free slot keeps its old signature
	// and id 0.
	slots slots.Store[uint32]
	free  []uint32 // free slots, reused last in first out
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

// sig returns the signature in slot i, aliasing the slot store.
func (c *core) sig(i uint32) minhash.Signature { return c.slots.Row(i) }

// id returns the id in slot i.
func (c *core) id(i uint32) uint64 { return c.slots.ID(i) }

// init sets up an empty core with resolved options.
func (c *core) init(o Options) {
	*c = core{opt: o, slots: slots.New[uint32](o.K), bbits: minBucketBits}
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
			c.slots.SetRow(slot, id, sig)
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
		c.slots.SetRow(slot, id, sig)
	} else {
		if c.slots.Len() >= maxSlots {
			panic("lsh: index full: it holds 2^32-1 signatures")
		}
		slot = c.slots.AppendRow(id, sig)
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
	c.slots.SetID(slot, 0)
	c.free = append(c.free, slot)
	c.n--
	return true
}

// build indexes every slot of c.slots, which Read has just filled with distinct ids, into
// an empty core: the bulk path.
func (c *core) build() {
	c.n = c.slots.Len()
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

// memoryUsage returns the bytes held by c's structures, from their capacities.
func (c *core) memoryUsage() int64 {
	const header = int64(unsafe.Sizeof([]uint64(nil)))
	n := int64(unsafe.Sizeof(*c)) + c.slots.Bytes()
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
