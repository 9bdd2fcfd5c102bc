package engine

import (
	"math"
	"sync"
	"sync/atomic"
)

// bandTable is an exact in-memory copy of a detector's band postings: for each LSH band
// key, the record ids posted under it. With it a check finds its band candidates without
// asking the store (25 lookups at the defaults, each microseconds in an LSM tree), which
// is most of the cost of a raw query and of checking a near copy.
//
// It holds 8 bytes a posting in open-addressing tables (Robin Hood linear probing),
// sharded by the band key so that a table grows one shard at a time under the shard's
// own lock: a lookup or an add waits only for a resize of a shard it touches, one of
// 1,024. A shard grows when it is 70% to 85% full, its fill staggered across the
// shards: shards fill at the same pace, and with one fill they would all double within
// the same few thousand adds. So a posting takes 9.4 to 23 bytes. A slot keeps a 32-bit
// tag of the band key and a 32-bit record id; two band keys with the same shard and tag
// share postings, so a lookup may return a few ids posted under another key (about one
// lookup in ten thousand at a million documents), which costs nothing but their check:
// every candidate is compared before it is reported. No id is ever missed.
//
// An add's postings become visible to lookups shard by shard; the detector serializes
// its writes and merges those made during a check's reads, so no check depends on
// seeing an add whole.
//
// When the store holds the band postings too, the table gives up, for good, when it
// would grow past its budget or is given a record id that does not fit 32 bits: it frees
// its slots, and the detector asks the store again, through its band filter. When the
// table is their only copy (keep), it goes on growing past its budget instead, and
// reports that it is over (a record id past 32 bits, which it cannot hold, makes it over
// too), so that the detector writes the postings to the store before it calls stop.
// Safe for concurrent use.
type bandTable struct {
	shards [bandShards]bandShard
	bytes  atomic.Int64 // of all shards' slots
	budget int64
	keep   bool        // never give up: grow past the budget, set over; set before use
	over   atomic.Bool // keep: past the budget, or missing a posting whose id does not fit
	off    atomic.Bool // set before any shard is freed
}

// bandShards is the number of shards: a power of two, indexed by a band key's low bits.
const bandShards = 1024

// bandShard is one open-addressing table: a power-of-two number of slots, where a tag's
// postings lie at or after its home slot (the tag scaled to the table), wrapping around,
// each run of full slots in the order of their homes (Robin Hood linear probing; see
// insert). It grows when a posting would take it past fill thousandths of its slots.
type bandShard struct {
	mu    sync.RWMutex
	slots []bandSlot
	n     int
	fill  int
}

// bandSlot is one posting; seq 0 marks an empty slot (record ids start at 1).
type bandSlot struct{ tag, seq uint32 }

// bandMinSlots is the fewest slots of a shard that holds anything.
const bandMinSlots = 1 << 4

// bandFill returns the fill, in thousandths, of shard i: 700 to 850, across the shards.
func bandFill(i int) int { return 700 + 150*i/bandShards }

// newBandTable returns a table with the budget in bytes, its shards sized for n
// postings, or nil when n postings would not fit the budget (or budget is negative).
func newBandTable(budget int64, n int) *bandTable {
	t := &bandTable{budget: budget}
	var slots [bandShards]int
	var need int64
	for i := range t.shards {
		t.shards[i].fill = bandFill(i)
		slots[i] = bandMinSlots
		for t.shards[i].full(n/bandShards+1, slots[i]) {
			slots[i] *= 2
		}
		need += int64(slots[i]) * 8
	}
	if budget < 0 || need > budget {
		return nil
	}
	for i := range t.shards {
		t.shards[i].slots = make([]bandSlot, slots[i])
	}
	t.bytes.Store(need)
	return t
}

// full reports whether n postings are past the shard's fill of a table of that many
// slots.
func (s *bandShard) full(n, slots int) bool { return n*1000 > slots*s.fill }

// bandSplit returns a band key's shard and tag.
func bandSplit(key uint64) (shard int, tag uint32) {
	return int(key & (bandShards - 1)), uint32(key >> 32)
}

func (s *bandShard) home(tag uint32) int { return int(uint64(tag) * uint64(len(s.slots)) >> 32) }

// active reports whether the table still answers lookups.
func (t *bandTable) active() bool { return t != nil && !t.off.Load() }

// size returns the bytes the table's slots take (0 once it has given up).
func (t *bandTable) size() int64 {
	if !t.active() {
		return 0
	}
	return t.bytes.Load()
}

// appendIDs appends to dst the ids posted under each key (an id once per key it is
// posted under, and possibly a few posted under keys that share a key's shard and tag);
// ok is false when the table has given up, and the store must be asked.
func (t *bandTable) appendIDs(dst []uint64, keys []uint64) (_ []uint64, ok bool) {
	if !t.active() {
		return dst, false
	}
	n := len(dst)
	for _, key := range keys {
		sh, tag := bandSplit(key)
		s := &t.shards[sh]
		s.mu.RLock()
		if s.n > 0 {
			mask := len(s.slots) - 1
			// The run is in home order (see insert): past a slot whose home is after
			// the key's, no slot is the key's.
			for i, d := s.home(tag), 0; s.slots[i].seq != 0 && s.dist(i) >= d; i, d = (i+1)&mask, d+1 {
				if s.slots[i].tag == tag {
					dst = append(dst, uint64(s.slots[i].seq))
				}
			}
		}
		s.mu.RUnlock()
	}
	// giveUp sets off before it frees a shard, so a lookup that met a freed shard sees it.
	if !t.active() {
		return dst[:n], false
	}
	return dst, true
}

// add posts seq under each key.
func (t *bandTable) add(keys []uint64, seq uint64) {
	if t == nil || len(keys) == 0 {
		return
	}
	for _, k := range keys {
		if !t.post(k, seq) {
			return
		}
	}
}

// addPostings posts seqs[i] under keys[i], for each i: a detector's postings as it
// reads them back from its store.
func (t *bandTable) addPostings(keys, seqs []uint64) {
	if t == nil {
		return
	}
	for i, k := range keys {
		if !t.post(k, seqs[i]) {
			return
		}
	}
}

// post posts seq under key; it returns false when the table has given up.
func (t *bandTable) post(key, seq uint64) bool {
	if seq == 0 || seq > math.MaxUint32 {
		if t.keep {
			t.over.Store(true)
			return true
		}
		t.giveUp()
		return false
	}
	sh, tag := bandSplit(key)
	s := &t.shards[sh]
	s.mu.Lock()
	if t.off.Load() {
		s.mu.Unlock()
		return false
	}
	if s.full(s.n+1, len(s.slots)) {
		grown := max(2*len(s.slots), bandMinSlots)
		more := int64(grown-len(s.slots)) * 8
		if t.bytes.Add(more) > t.budget {
			if !t.keep {
				t.bytes.Add(-more)
				s.mu.Unlock()
				t.giveUp()
				return false
			}
			t.over.Store(true)
		}
		s.resize(grown)
	}
	s.insert(bandSlot{tag, uint32(seq)})
	s.mu.Unlock()
	return true
}

// remove deletes the postings of seq under each key.
func (t *bandTable) remove(keys []uint64, seq uint64) {
	if !t.active() || seq == 0 || seq > math.MaxUint32 {
		return
	}
	for _, k := range keys {
		sh, tag := bandSplit(k)
		s := &t.shards[sh]
		s.mu.Lock()
		s.delete(bandSlot{tag, uint32(seq)})
		s.mu.Unlock()
	}
}

// isOver reports whether a table that keeps its postings has grown past its budget or
// missed a posting.
func (t *bandTable) isOver() bool { return t != nil && t.over.Load() }

// stop gives up: the store holds the postings now.
func (t *bandTable) stop() {
	if t != nil {
		t.giveUp()
	}
}

// giveUp frees the slots; the table answers no more lookups.
func (t *bandTable) giveUp() {
	t.off.Store(true)
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		s.slots, s.n = nil, 0
		s.mu.Unlock()
	}
}

// insert adds e by Robin Hood linear probing: walking from e's home, it takes the slot of
// the first slot whose home is after e's (one nearer its home than e would be) and goes
// on to place that one, until a slot is empty. So each run of slots is in the order of
// their homes, and a lookup stops at the first slot whose home is after its key's,
// where a plain linear-probing lookup reads to the end of the run: a lookup of a key
// with no posting, most of a unique document's, reads a few times fewer slots.
func (s *bandShard) insert(e bandSlot) {
	mask := len(s.slots) - 1
	for i, d := s.home(e.tag), 0; ; i, d = (i+1)&mask, d+1 {
		if s.slots[i].seq == 0 {
			s.slots[i] = e
			s.n++
			return
		}
		if od := s.dist(i); od < d {
			s.slots[i], e = e, s.slots[i]
			d = od
		}
	}
}

// dist returns how far the slot at i is from its home.
func (s *bandShard) dist(i int) int { return (i - s.home(s.slots[i].tag)) & (len(s.slots) - 1) }

func (s *bandShard) resize(n int) {
	old := s.slots
	s.slots, s.n = make([]bandSlot, n), 0
	for _, e := range old {
		if e.seq != 0 {
			s.insert(e)
		}
	}
}

// delete removes one slot equal to e, if there is one, and shifts the slots after it
// back by one up to the next empty slot or slot at its home (backward-shift deletion),
// which keeps the run in home order.
func (s *bandShard) delete(e bandSlot) {
	if s.n == 0 {
		return
	}
	mask := len(s.slots) - 1
	i, d := s.home(e.tag), 0
	for s.slots[i] != e {
		if s.slots[i].seq == 0 || s.dist(i) < d {
			return
		}
		i, d = (i+1)&mask, d+1
	}
	for j := (i + 1) & mask; s.slots[j].seq != 0 && s.dist(j) > 0; j = (j + 1) & mask {
		s.slots[i] = s.slots[j]
		i = j
	}
	s.slots[i] = bandSlot{}
	s.n--
}
