package redisstore

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

// TestReshard moves 400 slots from one master to another while four writers
// apply batches and read them back: the client follows MOVED and ASK, every batch
// applies, and every one is whole afterwards.
func TestReshard(t *testing.T) {
	c := redistest.Start(t)
	db, err := Open(Options{Addrs: c.Addrs, Prefix: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	write := func(id uint64) error {
		var b store.Batch
		b.PutRecord(id, fmt.Appendf(nil, "r%d", id))
		for k := range 6 {
			b.Add(1, fmt.Appendf(nil, "k%d-%d", id, k), id)
		}
		b.Add(2, fmt.Appendf(nil, "shared%d", id%7), id)
		return db.Apply(&b)
	}
	var next atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				id := next.Add(1)
				if err := write(id); err != nil {
					t.Errorf("batch %d during the resharding: %v", id, err)
					return
				}
				if rec, ok, err := db.Record(id); !ok || err != nil || string(rec) != fmt.Sprintf("r%d", id) {
					t.Errorf("record %d read back during the resharding: %q, %v, %v", id, rec, ok, err)
					return
				}
			}
		})
	}
	const slots = 400
	err = c.Reshard(0, 1, slots)
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	n := next.Load()
	shared := map[uint64]bool{}
	for k := range uint64(7) {
		for _, id := range storetest.IDs(t, db, 2, fmt.Appendf(nil, "shared%d", k)) {
			shared[id] = true
		}
	}
	for id := uint64(1); id <= n; id++ {
		if rec, ok, err := db.Record(id); !ok || err != nil || string(rec) != fmt.Sprintf("r%d", id) {
			t.Fatalf("batch %d after the resharding: record %q, %v, %v", id, rec, ok, err)
		}
		for k := range 6 {
			if got := storetest.IDs(t, db, 1, fmt.Appendf(nil, "k%d-%d", id, k)); len(got) != 1 || got[0] != id {
				t.Fatalf("batch %d after the resharding: posting %d holds %v", id, k, got)
			}
		}
		if !shared[id] {
			t.Fatalf("batch %d after the resharding: not under its shared key", id)
		}
	}
	t.Logf("%d batches applied while %d slots moved", n, slots)
}
