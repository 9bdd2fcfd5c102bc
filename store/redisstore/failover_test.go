package redisstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

// TestFailover kills a master with SIGKILL while batches are written with Wait 1. Its
// replica takes over, alone: writes to its slots fail with ErrWait (applied, but on no
// replica) until the killed node is restarted and rejoins as its replica. Every batch
// acknowledged before and after keeps all its postings and its record, and every write
// that fails says why as the service needs: ErrWait or store.ErrUnavailable.
func TestFailover(t *testing.T) {
	c := redistest.Start(t)
	db, err := Open(Options{Addrs: c.Addrs, Prefix: "f", Wait: 1, LockTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var acked []uint64
	write := func(id uint64) error {
		var b store.Batch
		b.PutRecord(id, fmt.Appendf(nil, "r%d", id))
		for k := range 8 {
			b.Add(1, fmt.Appendf(nil, "k%d-%d", id, k), id)
		}
		b.Add(2, []byte("all"), id)
		return db.Apply(&b)
	}
	id := uint64(1)
	for ; id <= 100; id++ {
		if err := write(id); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, id)
	}
	if err := c.Kill(0); err != nil { // a master: redis-cli makes the first nodes masters
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	failed, waits := 0, 0
	var last error
	for ok := 0; ok < 100; id++ {
		if time.Now().After(deadline) {
			t.Fatalf("no failover within 60 s: %d writes failed (%d with ErrWait), %d succeeded since the kill; last: %v", failed, waits, ok, last)
		}
		err := write(id)
		if err == nil {
			ok++
			acked = append(acked, id)
			continue
		}
		failed, last = failed+1, err
		if !errors.Is(err, ErrWait) && !errors.Is(err, store.ErrUnavailable) {
			// The service answers these 503, which clients retry; any other error 500.
			t.Errorf("a write during the failover failed with %v; want ErrWait or store.ErrUnavailable", err)
		}
		if errors.Is(err, ErrWait) {
			// The replica took over and has none of its own: bring the killed node
			// back, as its replica.
			if waits++; waits == 1 {
				if err := c.Restart(0); err != nil {
					t.Fatal(err)
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if waits == 0 {
		t.Errorf("no write failed with ErrWait while the new master had no replica")
	}
	t.Logf("%d writes failed during the failover, %d of them with ErrWait", failed, waits)
	all := storetest.IDs(t, db, 2, []byte("all"))
	have := map[uint64]bool{}
	for _, id := range all {
		have[id] = true
	}
	for _, id := range acked {
		rec, ok, err := db.Record(id)
		if err != nil || !ok || string(rec) != fmt.Sprintf("r%d", id) || !have[id] {
			t.Fatalf("acknowledged batch %d after the failover: record %q, %v, %v; under all: %v", id, rec, ok, err, have[id])
		}
		for k := range 8 {
			if got := storetest.IDs(t, db, 1, fmt.Appendf(nil, "k%d-%d", id, k)); len(got) != 1 || got[0] != id {
				t.Fatalf("acknowledged batch %d after the failover: posting %d holds %v", id, k, got)
			}
		}
	}
}
