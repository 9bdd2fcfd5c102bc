package hamming

import (
	"math/bits"

	"github.com/neardup/neardup/internal/mix"
)

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
	end := min(c.moved+idMoveSlots, uint32(c.slots.Len()))
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
	if int(end) == c.slots.Len() {
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
		free = make([]uint64, (c.slots.Len()+63)/64)
		for _, s := range c.free {
			free[s/64] |= 1 << (s % 64)
		}
	}
	// Insert in batches: load the home line of every id of a batch first, so that those
	// cache misses overlap, then insert (a random insert is otherwise a miss each).
	const batch = 32
	var homes [batch]int
	mask := len(c.ids.tab) - 1
	for lo := uint32(0); lo < uint32(c.slots.Len()); lo += batch {
		hi := min(lo+batch, uint32(c.slots.Len()))
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
