package hamming

import (
	"fmt"
	"iter"
	"math/bits"
	"unsafe"

	"github.com/neardup/neardup/internal/idtable"
	"github.com/neardup/neardup/internal/slots"
)

// core is the single-threaded index behind Index; see Index for the layout.
type core struct {
	d    *design
	tabs []table
	// bbits is the bucket bits tables aim for; a table uses min(bbits, its prefix width).
	bbits, maxBits uint
	// slots holds the id and fingerprint of every slot; a free slot holds zeros.
	slots slots.Store[uint64]
	free  []uint32 // free slots, reused last in first out
	// ids maps ids to slots (see idTable). While it grows past idMoveMin entries, the
	// entries not yet moved wait in old, the table before: each add moves those of the
	// next idMoveSlots slots, so that no add rebuilds the whole table, a stall that grows
	// with the number of ids. Each live id is in ids or, when its slot is moved or above,
	// in old; the entries of old for slots below moved are stale (moved, or removed since)
	// and never read.
	ids   idTable
	old   *idTable // nil when no growth is under way
	moved uint32   // the first slot whose id may be in old
	n     int
	touch uint32 // a sum of words loaded ahead of use, stored so the loads stay
}

// fp returns the fingerprint in slot s.
func (c *core) fp(s uint32) uint64 { return c.slots.Value(s) }

// id returns the id in slot s.
func (c *core) id(s uint32) uint64 { return c.slots.ID(s) }

// errFull is the panic of an add to an index that holds maxSlots fingerprints, as the id
// table stores slot+1 in a uint32.
const errFull = "hamming: index full: it holds 2^32-1 fingerprints"

// initDefault sets up an empty core with the default design, for a zero Index.
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
	c.slots.Reserve(n)
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

// add indexes fp under id.
func (c *core) add(id, fp uint64) {
	if c.n > 0 {
		if _, _, slot, ok := c.find(id); ok {
			old := c.fp(slot)
			if old == fp {
				return
			}
			c.unlink(slot, old)
			c.slots.Set(slot, id, fp)
			c.link(slot, fp)
			return
		}
	}
	var slot uint32
	if n := len(c.free); n > 0 {
		slot = c.free[n-1]
		c.free = c.free[:n-1]
		c.slots.Set(slot, id, fp)
	} else {
		if c.slots.Len() >= maxSlots {
			panic(errFull)
		}
		slot = c.slots.Append(id, fp)
	}
	if size, sb := idtable.Size(c.n+1), idSlotBits(c.slots.Len()); size > len(c.ids.tab) || sb > c.ids.slotBits {
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
	c.slots.Set(slot, 0, 0)
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
	c.n = c.slots.Len()
	c.rebuildIDTable(idtable.Size(c.n), idSlotBits(c.slots.Len()))
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

// memoryUsage returns the bytes held by c's structures, from their capacities.
func (c *core) memoryUsage() int64 {
	const header = int64(unsafe.Sizeof([]uint64(nil)))
	n := int64(unsafe.Sizeof(*c)) + c.slots.Bytes()
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
