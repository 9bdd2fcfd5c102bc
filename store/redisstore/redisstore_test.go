package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

// TestCluster runs every test that needs a cluster on one: starting it takes seconds.
// Each store gets a key prefix of its own, so each starts empty.
func TestCluster(t *testing.T) {
	c := redistest.Start(t)
	var n atomic.Int64
	// open opens a new store, or with another process's view of an open one (Prefix).
	open := func(t *testing.T, opt Options) *DB {
		t.Helper()
		opt.Addrs = c.Addrs
		if opt.Prefix == "" {
			opt.Prefix = fmt.Sprintf("t%d", n.Add(1))
		}
		db, err := Open(opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	t.Run("Conformance", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store { return open(t, Options{}) })
	})
	t.Run("OneBucket", func(t *testing.T) { // Postings reads its buckets by name (listBuckets)
		storetest.Run(t, func(t *testing.T) store.Store { return open(t, Options{Buckets: 1}) })
	})
	t.Run("ListBuckets", func(t *testing.T) { testListBuckets(t, open(t, Options{Buckets: 16})) })
	t.Run("Ordered", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			db := open(t, Options{})
			for _, ns := range []store.Namespace{0, 1, 2, 3, 65535} {
				if err := db.Order(ns); err != nil {
					t.Fatal(err)
				}
			}
			return db
		})
	})
	t.Run("OrderedEarlyStop", func(t *testing.T) { testOrderedEarlyStop(t, open(t, Options{})) })
	t.Run("Wait", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store { return open(t, Options{Wait: 1}) })
	})
	t.Run("WaitTooMany", func(t *testing.T) {
		db := open(t, Options{Wait: 2, WaitTimeout: 50e6})
		var b store.Batch
		b.Add(1, []byte("k"), 1)
		if err := db.Apply(&b); !errors.Is(err, ErrWait) {
			t.Errorf("Apply waiting for 2 replicas of masters with 1: %v, want ErrWait", err)
		}
	})
	t.Run("ApplyIf", func(t *testing.T) { testApplyIf(t, open(t, Options{})) })
	t.Run("Many", func(t *testing.T) { testMany(t, open(t, Options{})) })
	t.Run("Count", func(t *testing.T) {
		a := open(t, Options{})
		testCount(t, a, open(t, Options{Prefix: a.prefix, Wait: 1}))
	})
	t.Run("Race", func(t *testing.T) {
		a := open(t, Options{})
		testRace(t, a, open(t, Options{Prefix: a.prefix}))
	})
	t.Run("ShortScan", func(t *testing.T) {
		a := open(t, Options{})
		testShortScan(t, a, open(t, Options{Prefix: a.prefix}))
	})
	t.Run("CloseStopsScan", func(t *testing.T) { testCloseStopsScan(t, open(t, Options{})) })
	t.Run("CoalescedPrepares", func(t *testing.T) { testCoalescedPrepares(t, open(t, Options{})) })
	t.Run("CoalescedReads", func(t *testing.T) { testCoalescedReads(t, open(t, Options{})) })
	t.Run("CoalescedRace", func(t *testing.T) { testCoalescedRace(t, open(t, Options{})) })
	t.Run("Layout", func(t *testing.T) { testLayout(t, open(t, Options{Buckets: 64}), c.Addrs) })
	t.Run("GroupedScripts", func(t *testing.T) { testGroupedScripts(t, open(t, Options{})) })
	t.Run("FullMemory", func(t *testing.T) { testFullMemory(t, open(t, Options{LockTimeout: time.Second})) })
	t.Run("StaleSlots", func(t *testing.T) { testStaleSlots(t, open(t, Options{}), c.Addrs) }) // last but CheckConfig: it moves a slot
	t.Run("CheckConfig", func(t *testing.T) { testCheckConfig(t, open(t, Options{})) })
}

// testLayout checks that a new store gets this layout's version, and that Open refuses
// a store of the first layout, which had none.
func testLayout(t *testing.T, db *DB, addrs []string) {
	ctx := context.Background()
	if v := db.c.Get(ctx, db.layoutKey()).Val(); v != layoutVersion {
		t.Fatalf("a new store has layout %q, want %q", v, layoutVersion)
	}
	again, err := Open(Options{Addrs: addrs, Prefix: db.prefix})
	if err != nil {
		t.Fatalf("Open of a store of this layout: %v", err)
	}
	again.Close()
	if again.buckets != 64 {
		t.Fatalf("Open of a store of 64 buckets read %d", again.buckets)
	}
	if err := db.c.Del(ctx, db.layoutKey()).Err(); err != nil {
		t.Fatal(err)
	}
	if old, err := Open(Options{Addrs: addrs, Prefix: db.prefix}); !errors.Is(err, ErrLayout) {
		if err == nil {
			old.Close()
		}
		t.Fatalf("Open of a store of the first layout: %v, want ErrLayout", err)
	}
}

// testCheckConfig checks that CheckConfig finds nothing wrong with the test cluster, and
// a warning a master once appendfsync is no.
func testCheckConfig(t *testing.T, db *DB) {
	ctx := context.Background()
	if w, err := db.CheckConfig(ctx); err != nil || len(w) != 0 {
		t.Fatalf("CheckConfig on the test cluster = %q, %v; want no warning", w, err)
	}
	if err := db.c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		return n.ConfigSet(ctx, "appendfsync", "no").Err()
	}); err != nil {
		t.Fatal(err)
	}
	defer db.c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		return n.ConfigSet(ctx, "appendfsync", "everysec").Err()
	})
	w, err := db.CheckConfig(ctx)
	if err != nil || len(w) != redistest.Masters || !strings.Contains(w[0], "appendfsync is no") {
		t.Errorf("CheckConfig with appendfsync no = %q, %v; want one warning a master", w, err)
	}
}

// testApplyIf checks that a condition that holds applies the batch, and one that does
// not applies none of it.
func testApplyIf(t *testing.T, db *DB) {
	var b store.Batch
	b.Add(1, []byte("url"), 5)
	b.PutRecord(5, []byte("five"))
	if err := db.ApplyIf(&b, []store.Cond{{Namespace: 1, Key: []byte("url")}}); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	b.Remove(1, []byte("url"), 5)
	b.Add(1, []byte("url"), 6)
	b.PutRecord(6, []byte("six"))
	if err := db.ApplyIf(&b, []store.Cond{{Namespace: 1, Key: []byte("url")}}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("ApplyIf on an empty posting that holds 5: %v, want ErrConflict", err)
	}
	if ids := storetest.IDs(t, db, 1, []byte("url")); !slices.Equal(ids, []uint64{5}) {
		t.Errorf("after the conflict, url holds %v, want [5]", ids)
	}
	if _, ok, _ := db.Record(6); ok {
		t.Errorf("after the conflict, record 6 exists")
	}
	if err := db.ApplyIf(&b, []store.Cond{{Namespace: 1, Key: []byte("url"), IDs: []uint64{5}}}); err != nil {
		t.Fatal(err)
	}
	if ids := storetest.IDs(t, db, 1, []byte("url")); !slices.Equal(ids, []uint64{6}) {
		t.Errorf("url holds %v, want [6]", ids)
	}
	// ApplyIfRead returns the records as they were before the batch, in order, and
	// none when a condition fails.
	b.Reset()
	b.Add(1, []byte("url"), 7)
	b.PutRecord(5, []byte("five again"))
	recs, ok, err := db.ApplyIfRead(&b, []store.Cond{{Namespace: 1, Key: []byte("url"), IDs: []uint64{6}}}, []uint64{6, 99, 5})
	if err != nil || fmt.Sprintf("%q %v", recs, ok) != `["six" "" "five"] [true false true]` {
		t.Errorf("ApplyIfRead = %q, %v, %v; want six, none, and five as before the batch", recs, ok, err)
	}
	if recs, ok, err := db.ApplyIfRead(&b, []store.Cond{{Namespace: 1, Key: []byte("url")}}, []uint64{6}); !errors.Is(err, store.ErrConflict) || recs != nil || ok != nil {
		t.Errorf("ApplyIfRead on a condition that fails = %q, %v, %v; want ErrConflict and no records", recs, ok, err)
	}
	if rec, _, _ := db.Record(5); string(rec) != "five again" {
		t.Errorf("after ApplyIfRead, record 5 = %q, want %q", rec, "five again")
	}
	b.Reset()
	b.Add(1, []byte("other"), 1)
	if err := db.ApplyIf(&b, []store.Cond{{Namespace: 1, Key: []byte("url")}}); !errors.Is(err, ErrOptions) {
		t.Errorf("ApplyIf conditioned on a key it does not write: %v, want ErrOptions", err)
	}
}

// testRace has two stores (two processes' clients) claim the same keys at once, each
// claim a batch that posts its id under an exact key and a URL key (in other slots) and
// puts its record, on the condition that both keys are empty: of every pair exactly one
// wins, and the keys hold the winner and nothing else.
func testRace(t *testing.T, a, b *DB) {
	const races = 300
	for i := range races {
		url, exact := fmt.Appendf(nil, "u%d", i), fmt.Appendf(nil, "e%d", i)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j, db := range []*DB{a, b} {
			wg.Go(func() {
				id := uint64(2*i + j + 1)
				var bt store.Batch
				bt.Add(1, url, id)
				bt.Add(2, exact, id)
				bt.PutRecord(id, []byte("r"))
				errs[j] = db.ApplyIf(&bt, []store.Cond{{Namespace: 1, Key: url}, {Namespace: 2, Key: exact}})
			})
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("race %d: %v", i, err)
			}
		}
		u, e := storetest.IDs(t, a, 1, url), storetest.IDs(t, b, 2, exact)
		if wins != 1 || len(u) != 1 || !slices.Equal(u, e) {
			t.Fatalf("race %d: %d winners (%v); url holds %v, exact %v", i, wins, errs, u, e)
		}
	}
}

// testMany checks IDsMany and RecordsMany against IDs and Record, on keys and ids with
// postings or records and without.
func testMany(t *testing.T, db *DB) {
	var b store.Batch
	var keys []store.Key
	var ids []uint64
	for i := range uint64(40) {
		k := fmt.Appendf(nil, "k%d", i%13)
		b.Add(store.Namespace(i%3), k, i)
		if i%4 != 0 {
			b.PutRecord(i, fmt.Appendf(nil, "r%d", i))
		}
		keys = append(keys, store.Key{Namespace: store.Namespace(i % 5), Key: k})
		ids = append(ids, i, i+100)
	}
	if err := db.Apply(&b); err != nil {
		t.Fatal(err)
	}
	got, err := db.IDsMany(keys)
	if err != nil || len(got) != len(keys) {
		t.Fatalf("IDsMany: %d answers, %v", len(got), err)
	}
	for i, k := range keys {
		if want := storetest.IDs(t, db, k.Namespace, k.Key); !slices.Equal(got[i], want) {
			t.Errorf("IDsMany[%d] (%d, %q) = %v, IDs %v", i, k.Namespace, k.Key, got[i], want)
		}
	}
	recs, oks, err := db.RecordsMany(ids)
	if err != nil || len(recs) != len(ids) || len(oks) != len(ids) {
		t.Fatalf("RecordsMany: %d answers, %v", len(recs), err)
	}
	for i, id := range ids {
		rec, ok, err := db.Record(id)
		if err != nil || ok != oks[i] || string(rec) != string(recs[i]) {
			t.Errorf("RecordsMany[%d] (%d) = %q, %v; Record %q, %v, %v", i, id, recs[i], oks[i], rec, ok, err)
		}
	}
}

// testCount applies random batches through two stores (one with Wait, whose resolves
// take another path) and checks each namespace's Count against Postings.
func testCount(t *testing.T, a, b *DB) {
	r := rand.New(rand.NewPCG(3, 4))
	var bt store.Batch
	for i := range 60 {
		bt.Reset()
		for range 1 + r.IntN(6) {
			ns, key, id := store.Namespace(r.IntN(3)), fmt.Appendf(nil, "k%d", r.IntN(8)), uint64(r.IntN(10))
			if r.IntN(3) == 0 {
				bt.Remove(ns, key, id)
			} else {
				bt.Add(ns, key, id)
			}
		}
		db := a
		if i%2 == 1 {
			db = b
		}
		if err := db.Apply(&bt); err != nil {
			t.Fatal(err)
		}
	}
	// Each store adds its last write's changes with its next write, or with Count.
	for _, db := range []*DB{a, b} {
		if _, err := db.Count(0); err != nil {
			t.Fatal(err)
		}
	}
	for ns := range store.Namespace(3) {
		n := 0
		if err := a.Postings(ns, func([]byte, uint64) bool { n++; return true }); err != nil {
			t.Fatal(err)
		}
		for _, db := range []*DB{a, b} {
			if got, err := db.Count(ns); err != nil || got != int64(n) {
				t.Errorf("Count(%d) = %d, %v; Postings has %d", ns, got, err, n)
			}
		}
	}
}

// testOrderedEarlyStop checks that Postings over an ordered namespace, stopped after a
// few postings, reads a page of each shard and not the whole namespace, and that a
// process that opens the store later knows the namespace is ordered.
func testOrderedEarlyStop(t *testing.T, db *DB) {
	if err := db.Order(4); err != nil {
		t.Fatal(err)
	}
	const n = 60000
	var b store.Batch
	for i := range uint64(n) {
		b.Add(4, binary.BigEndian.AppendUint64(nil, i*7), i+1)
		if b.Len() == 5000 {
			if err := db.Apply(&b); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	other, err := Open(Options{Addrs: db.opt.Addrs, Prefix: db.prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	rt := &roundTrips{}
	other.c.AddHook(rt)
	var got []uint64
	for range 2 { // the first teaches the nodes the scripts: count the second
		rt.cmds.Store(0)
		got = got[:0]
		if err := other.Postings(4, func(key []byte, id uint64) bool {
			got = append(got, id)
			return len(got) < 10
		}); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Errorf("the first 10 postings of the ordered namespace: %v", got)
	}
	if early := rt.cmds.Load(); early > orderedShards*(orderedPage+1) {
		t.Errorf("Postings stopped after 10 of %d postings sent %d commands: it read past the first page", n, early)
	}
	all := 0
	if err := other.Postings(4, func([]byte, uint64) bool { all++; return true }); err != nil || all != n {
		t.Errorf("Postings over the whole ordered namespace: %d postings, %v; want %d", all, err, n)
	}
}
