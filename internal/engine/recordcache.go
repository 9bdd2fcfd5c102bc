package engine

import "sync"

// recordCacheSize is how many records a detector's recordCache holds at most.
const recordCacheSize = 16384

// recordCacheBytes bounds the sketch hashes a recordCache holds: records verified by
// sketches carry 4 bytes a distinct shingle, up to 4 KB, and a cache bounded by count
// alone would hold five times the memory of one without, against the service's memory
// budget. With it, a cache of large sketches holds fewer records instead.
const recordCacheBytes = 16 << 20

// recordCache holds the records that near-duplicate checks read most: the candidates
// their band and SimHash lookups return. Text with common phrases makes a few thousand
// documents the candidates of many checks (their band keys are the common phrases'),
// which every check would read again from the store; a cache of a few thousand of
// them answers most candidate reads.
//
// It keeps two generations of at most half its size each: a hit in the older one moves
// the record to the newer, and when the newer fills it becomes the older, whose records
// are dropped. So it holds the records read recently, at a map write a read, and at most
// recordCacheSize of them (about 800 bytes each at the defaults: 13 MB) and their
// sketches' hashes up to recordCacheBytes.
//
// It also holds records read without their sketches (partial: an exact copy's sketch
// is the entry's own, see loadExact), which only getExact returns: a page posted under
// many URLs makes every check of it read each stored copy, and a group of them is read
// again on each add. A record read whole replaces a partial one, never the reverse.
//
// Its records are shared and never changed. A write that changes or removes a record
// calls drop; a record read from the store before a drop is not put in after it
// (epoch), so no check finds a record older than the store's once the write is done.
// Safe for concurrent use.
type recordCache struct {
	mu        sync.Mutex
	cur, prev map[uint64]*Record
	curBytes  int    // the sketch bytes of cur's records
	epoch     uint64 // drops so far
}

func newRecordCache() *recordCache {
	return &recordCache{cur: make(map[uint64]*Record, recordCacheSize/2)}
}

// get returns the cached record seq, or nil and the epoch to pass to put with the record
// read from the store.
func (c *recordCache) get(seq uint64) (*Record, uint64) { return c.lookup(seq, false) }

// getExact is get for a record that may be partial.
func (c *recordCache) getExact(seq uint64) (*Record, uint64) { return c.lookup(seq, true) }

func (c *recordCache) lookup(seq uint64, partial bool) (*Record, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.cur[seq]; r != nil && (partial || !r.partial) {
		return r, 0
	}
	if r := c.prev[seq]; r != nil && (partial || !r.partial) {
		delete(c.prev, seq)
		c.add(seq, r)
		return r, 0
	}
	return nil, c.epoch
}

// put caches r, the record seq read from the store after a get that returned epoch,
// unless a record has been dropped since.
func (c *recordCache) put(seq uint64, r *Record, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return
	}
	whole := func(old *Record) bool { return old != nil && !old.partial }
	if r.partial && (whole(c.cur[seq]) || whole(c.prev[seq])) {
		return
	}
	delete(c.prev, seq)
	c.add(seq, r)
}

// add puts r in the newer generation; c.mu is held.
func (c *recordCache) add(seq uint64, r *Record) {
	if len(c.cur) >= recordCacheSize/2 || c.curBytes >= recordCacheBytes/2 {
		c.prev, c.cur = c.cur, make(map[uint64]*Record, recordCacheSize/2)
		c.curBytes = 0
	}
	c.cur[seq] = r
	c.curBytes += 4 * len(r.Sketch.Hashes)
}

// drop forgets the record seq, which a write has changed or removed.
func (c *recordCache) drop(seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	delete(c.cur, seq)
	delete(c.prev, seq)
}
