package redisstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// testFullMemory fills the masters to a maxmemory set just above what they use, and
// checks what a full disk must do for pebble: a write refused for memory is an error
// wrapping store.ErrNoSpace, Health says so without a write, no write acknowledged is
// lost and reads go on; once maxmemory is raised, Health clears by itself and writes
// are taken again, on the postings the refused writes had touched as well.
func testFullMemory(t *testing.T, db *DB) {
	every := healthEvery
	healthEvery = 20 * time.Millisecond
	defer func() { healthEvery = every }()
	none := func(int64) int64 { return 0 }
	defer setMaxMemory(t, db, none)
	waitHealth(t, db, true)

	record := func(id uint64) []byte { return bytes.Repeat([]byte{byte(id)}, 2000) }
	batch := func(id uint64) *store.Batch {
		var b store.Batch
		b.PutRecord(id, record(id))
		b.Add(1, fmt.Appendf(nil, "https://example.com/%d", id), id)
		b.Add(2, []byte{byte(id % 7)}, id) // a few postings that every batch shares
		return &b
	}
	setMaxMemory(t, db, func(used int64) int64 { return used + 1<<20 })
	var acked []uint64
	var refused error
	var refusedID uint64
	for id := uint64(1); id <= 5000 && refused == nil; id++ {
		if err := db.Apply(batch(id)); err != nil {
			refused, refusedID = err, id
		} else {
			acked = append(acked, id)
		}
	}
	if !errors.Is(refused, store.ErrNoSpace) || len(acked) < 10 {
		t.Fatalf("after %d batches of 2 KB over 1 MB of room a master, the write's error is %v; want one wrapping store.ErrNoSpace", len(acked), refused)
	}
	if err := db.Apply(batch(refusedID)); !errors.Is(err, store.ErrNoSpace) {
		t.Errorf("a second write to a full cluster: %v; want store.ErrNoSpace", err)
	}
	waitHealth(t, db, false)
	// A master just refused hovers at its maxmemory: set every one well below what it
	// uses, so that Health's own checks of the masters, with no write, say full too.
	setMaxMemory(t, db, func(used int64) int64 { return used / 2 })
	for range 3 {
		if err := checkedHealth(t, db); !errors.Is(err, store.ErrNoSpace) {
			t.Fatalf("Health() = %v with the masters full; want store.ErrNoSpace", err)
		}
	}
	// Reads go on, and every write acknowledged is there.
	for _, id := range acked {
		rec, ok, err := db.Record(id)
		if err != nil || !ok || !bytes.Equal(rec, record(id)) {
			t.Fatalf("record %d of %d acknowledged: %d bytes, %v, %v", id, len(acked), len(rec), ok, err)
		}
	}
	var ids []uint64
	if err := db.IDs(2, []byte{3}, func(id uint64) bool { ids = append(ids, id); return true }); err != nil {
		t.Fatal(err)
	}
	for _, id := range acked {
		if id%7 == 3 && !slices.Contains(ids, id) {
			t.Fatalf("posting (2, 3) lacks id %d, acknowledged", id)
		}
	}

	setMaxMemory(t, db, none)
	waitHealth(t, db, true)
	// The refused batch's postings may hold its intents: a writer takes them over once
	// they are older than LockTimeout, or finds them aborted.
	if err := db.Apply(batch(refusedID)); err != nil {
		t.Fatalf("a write once maxmemory is raised: %v", err)
	}
	if rec, ok, err := db.Record(refusedID); err != nil || !ok || !bytes.Equal(rec, record(refusedID)) {
		t.Fatalf("record %d written after the refusal: %d bytes, %v, %v", refusedID, len(rec), ok, err)
	}
}

// setMaxMemory sets each master's maxmemory to what limit makes of its used_memory (0: no
// limit).
func setMaxMemory(t *testing.T, db *DB, limit func(used int64) int64) {
	t.Helper()
	ctx := context.Background()
	if err := db.c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		used, _ := strconv.ParseInt(n.InfoMap(ctx, "memory").Val()["Memory"]["used_memory"], 10, 64)
		m := limit(used)
		return n.ConfigSet(ctx, "maxmemory", fmt.Sprint(m)).Err()
	}); err != nil {
		t.Fatal(err)
	}
}

// waitHealth waits up to 5 s for db.Health to say the cluster takes writes (want), or
// that it is full (an error wrapping store.ErrNoSpace).
func waitHealth(t *testing.T, db *DB, want bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := db.Health()
		if (err == nil) == want && (want || errors.Is(err, store.ErrNoSpace)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Health() = %v; want healthy: %v", err, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkedHealth returns Health's answer from a check of the masters that started after
// the call (the first check to end after it may have started before: a check runs in
// the background, one at a time).
func checkedHealth(t *testing.T, db *DB) error {
	t.Helper()
	mark := time.Now()
	for range 2 { // a check that ends after mark, then one that ends after that one
		deadline := time.Now().Add(5 * time.Second)
		for {
			db.Health() // starts a check once the last is healthEvery old
			db.health.mu.Lock()
			at := db.health.at
			db.health.mu.Unlock()
			if at.After(mark) {
				mark = at
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("Health did not check the masters within 5 s")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return db.Health()
}
