package engine

import (
	"sync"
	"testing"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/minhash"
)

// TestRecordCache: the cache holds at most recordCacheSize records, keeps those read
// recently, forgets a dropped one, and does not take a record read before a drop.
func TestRecordCache(t *testing.T) {
	c := newRecordCache()
	rec := func(seq uint64) *Record { return &Record{Entry: api.Entry{ID: "d"}, seq: seq} }
	for seq := uint64(1); seq <= 3*recordCacheSize; seq++ {
		r, epoch := c.get(seq)
		if r != nil {
			t.Fatalf("get(%d) found a record never put", seq)
		}
		c.put(seq, rec(seq), epoch)
		if seq%100 == 0 { // read one early record again and again: it stays
			if r, _ := c.get(1); seq > 1 && r == nil || r != nil && r.seq != 1 {
				t.Fatalf("after %d puts, record 1 (read every 100) is %v", seq, r)
			}
		}
		if n := len(c.cur) + len(c.prev); n > recordCacheSize {
			t.Fatalf("%d records cached, more than %d", n, recordCacheSize)
		}
	}
	last := uint64(3 * recordCacheSize)
	if r, _ := c.get(last); r == nil || r.seq != last {
		t.Fatalf("the last record put is not cached: %v", r)
	}
	if r, _ := c.get(2); r != nil {
		t.Fatal("record 2, read once long ago, is still cached")
	}
	c.drop(last)
	if r, _ := c.get(last); r != nil {
		t.Fatal("a dropped record is still cached")
	}

	// A record read from the store before a drop (of any record) is not put after it:
	// it may be older than the write that dropped it.
	r, epoch := c.get(7)
	if r != nil {
		t.Fatal("record 7 was cached")
	}
	c.drop(7)
	c.put(7, rec(7), epoch)
	if r, _ := c.get(7); r != nil {
		t.Fatal("a record read before a drop was cached after it")
	}
	_, epoch = c.get(7)
	c.put(7, rec(7), epoch)
	if r, _ := c.get(7); r == nil {
		t.Fatal("a record read after the last drop was not cached")
	}
}

// TestRecordCachePartial: a record read without its sketch is returned only to an
// exact read; a whole one replaces it, and it never replaces a whole one.
func TestRecordCachePartial(t *testing.T) {
	c := newRecordCache()
	partial := func(seq uint64) *Record { return &Record{Entry: api.Entry{ID: "p"}, seq: seq, partial: true} }
	whole := func(seq uint64) *Record { return &Record{Entry: api.Entry{ID: "w"}, seq: seq} }
	_, epoch := c.getExact(1)
	c.put(1, partial(1), epoch)
	if r, _ := c.get(1); r != nil {
		t.Fatal("get returned a partial record")
	}
	if r, _ := c.getExact(1); r == nil || !r.partial {
		t.Fatalf("getExact(1) = %v, want the partial record", r)
	}
	_, epoch = c.get(1)
	c.put(1, whole(1), epoch)
	for _, get := range []func(uint64) (*Record, uint64){c.get, c.getExact} {
		if r, _ := get(1); r == nil || r.partial {
			t.Fatalf("after a whole put, record 1 is %v", r)
		}
	}
	_, epoch = c.getExact(2)
	c.put(2, whole(2), epoch)
	c.put(2, partial(2), epoch)
	if r, _ := c.get(2); r == nil || r.partial {
		t.Fatalf("a partial put replaced a whole record: %v", r)
	}
	// The same in the older generation.
	for seq := uint64(3); len(c.prev) == 0 || c.prev[2] == nil; seq++ {
		_, epoch = c.get(seq)
		c.put(seq, whole(seq), epoch)
	}
	c.put(2, partial(2), c.epoch)
	if r, _ := c.get(2); r == nil || r.partial {
		t.Fatalf("a partial put replaced a whole record of the older generation: %v", r)
	}
}

// TestRecordCacheConcurrent runs gets, puts and drops from several goroutines (for the
// race detector) and checks that every record found is the one put for its seq.
func TestRecordCacheConcurrent(t *testing.T) {
	c := newRecordCache()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20000 {
				seq := uint64((i*7 + g) % 3000)
				if r, epoch := c.get(seq); r == nil {
					c.put(seq, &Record{seq: seq}, epoch)
				} else if r.seq != seq {
					t.Errorf("get(%d) returned record %d", seq, r.seq)
					return
				}
				if i%97 == 0 {
					c.drop(seq)
				}
			}
		})
	}
	wg.Wait()
}

// TestRecordCacheBytes: records with large sketches are bounded by recordCacheBytes
// rather than by their count.
func TestRecordCacheBytes(t *testing.T) {
	c := newRecordCache()
	hashes := make([]uint32, 1024)
	for seq := uint64(1); seq <= recordCacheSize; seq++ {
		r := &Record{Entry: api.Entry{ID: "d", Fingerprints: api.Fingerprints{Sketch: minhash.Sketch{Hashes: hashes}}}, seq: seq}
		_, epoch := c.get(seq)
		c.put(seq, r, epoch)
		held := 0
		for _, m := range []map[uint64]*Record{c.cur, c.prev} {
			for _, r := range m {
				held += 4 * len(r.Sketch.Hashes)
			}
		}
		if held > recordCacheBytes+2*4*len(hashes) {
			t.Fatalf("after %d puts the cache holds %d bytes of sketches, past %d", seq, held, recordCacheBytes)
		}
	}
}
