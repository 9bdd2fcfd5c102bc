package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// testGroupedScripts checks that a script over many buckets that meets a bucket its
// node does not serve fails whole, having changed nothing: the guarantee the fallback
// to a script a bucket rests on.
func testGroupedScripts(t *testing.T, db *DB) {
	ctx := context.Background()
	local, remote := bucketsOn(t, db, 2)
	node, err := db.c.MasterForKey(ctx, local[0])
	if err != nil {
		t.Fatal(err)
	}
	txn := newTxn(time.Now())
	prep := func(keys ...string) ([]string, error) {
		args := []any{txn, len(keys)}
		for _, k := range keys {
			args = append(args, k, 1, "f", markDelta, "+7")
		}
		return node.Eval(ctx, prepManyScript.src, keys[:1], args...).StringSlice()
	}
	locks := func() (n int) {
		for _, k := range local {
			raw, err := node.HGet(ctx, k, "f").Result()
			if v, _ := splitField(raw, err == nil); v.txn != "" {
				n++
			}
		}
		return n
	}
	if _, err := prep(local[0], local[1], remote[0]); err == nil || locks() != 0 {
		t.Fatalf("prepare over a bucket of another node: %v, %d intents placed; want an error and none", err, locks())
	}
	if got, err := prep(local[0], local[1]); err != nil || !slices.Equal(got, []string{"OK,1", "OK,1"}) || locks() != 2 {
		t.Fatalf("prepare over buckets of its node = %q, %v, %d intents; want OK,1 twice, 2", got, err, locks())
	}
	resolve := func(keys ...string) (int64, error) {
		args := []any{txn, "1", len(keys)}
		for _, k := range keys {
			args = append(args, k, 1, "f")
		}
		return node.Eval(ctx, resolveManyScript.src, keys[:1], args...).Int64()
	}
	if _, err := resolve(local[0], remote[0], local[1]); err == nil || locks() != 2 {
		t.Fatalf("resolve over a bucket of another node: %v, %d intents left; want an error, and both", err, locks())
	}
	if got, err := resolve(local[0], local[1]); err != nil || got != 2 || locks() != 0 {
		t.Fatalf("resolve over buckets of its node = %v, %v, %d intents left; want 2, none", got, err, locks())
	}
	// A field that must be absent gets its intent as the prepare checks it: a call that
	// fails part way may leave some placed, and run again a bucket at a time it finds
	// them its own.
	txn2 := newTxn(time.Now())
	value := pendingHead(txn2, "9", true) + "0"
	args := []any{txn2, 3}
	for _, k := range []string{local[0], local[1], remote[0]} {
		args = append(args, k, 1, "g", "", value)
	}
	if err := node.Eval(ctx, prepManyScript.src, local[:1], args...).Err(); err == nil {
		t.Fatal("prepare over a bucket of another node answered")
	}
	for _, k := range local {
		if got, err := db.c.Eval(ctx, prepScript.src, []string{k}, txn2, "g", "", value).Text(); err != nil || got != "OK" {
			t.Fatalf("prepare of %s run again = %q, %v; want OK", k, got, err)
		}
		if v := node.HGet(ctx, k, "g").Val(); v != value {
			t.Fatalf("%s field g = %q after the prepare, want %q", k, v, value)
		}
	}
	read := node.Eval(ctx, readManyScript.src, local[:1], local[0], "f", remote[0], "f")
	if err := read.Err(); err == nil {
		t.Fatal("read over a bucket of another node answered")
	}
	if got, err := node.Eval(ctx, readManyScript.src, local[:1], local[0], "f", local[1], "h").Slice(); err != nil || fmt.Sprint(got) != "[7 <nil>]" {
		t.Fatalf("read over buckets of its node = %q, %v; want [7 <nil>]", got, err)
	}
}

// bucketsOn returns n record buckets of the store on the master of the first and one on
// another, all absent from the cluster.
func bucketsOn(t *testing.T, db *DB, n int) (local, remote []string) {
	ctx := context.Background()
	var first *redis.Client
	for id := uint64(1); len(local) < n || len(remote) < 1; id++ {
		k, _ := db.recordBucket(id)
		node, err := db.c.MasterForKey(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if db.c.Exists(ctx, k).Val() != 0 || slices.Contains(local, k) || slices.Contains(remote, k) {
			continue
		}
		if first == nil {
			first = node
		}
		if node == first && len(local) < n {
			local = append(local, k)
		} else if node != first && len(remote) < 1 {
			remote = append(remote, k)
		}
	}
	return local, remote
}

// testStaleSlots moves an empty slot to another master behind the store's back, so that
// its map of slots is stale, and checks that writes and reads of that slot's bucket
// still find their way (the script over many buckets fails, the script a bucket follows
// MOVED). Run it last: it changes the cluster.
func testStaleSlots(t *testing.T, db *DB, addrs []string) {
	ctx := context.Background()
	// A second store, its map read before the slot moves too, for the coalesced
	// prepare below (the first learns of the move from its Apply).
	db2, err := Open(Options{Addrs: addrs, Prefix: db.prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	var key []byte
	var bucket string
	var slot int64
	for i := 0; ; i++ {
		key = fmt.Appendf(nil, "k%d", i)
		bucket, _ = db.postingBucket(1, key)
		slot = db.c.ClusterKeySlot(ctx, bucket).Val()
		if db.c.ClusterCountKeysInSlot(ctx, int(slot)).Val() == 0 {
			break
		}
	}
	from, err := db.c.MasterForKey(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(Options{Addrs: addrs, Prefix: db.prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var to *redis.Client
	var mu sync.Mutex
	err = other.c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		if n.Options().Addr != from.Options().Addr && to == nil {
			to = redis.NewClient(&redis.Options{Addr: n.Options().Addr})
		}
		return nil
	})
	if err != nil || to == nil {
		t.Fatal(err)
	}
	defer to.Close()
	fromID, toID := from.ClusterMyID(ctx).Val(), to.ClusterMyID(ctx).Val()
	steps := [][2]any{{to, "importing " + fromID}, {from, "migrating " + toID}, {to, "node " + toID}, {from, "node " + toID}}
	for _, s := range steps {
		args := append([]any{"cluster", "setslot", slot}, anys(strings.Fields(s[1].(string)))...)
		if err := s[0].(*redis.Client).Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	// A bucket the store's map puts on the same master comes first, so that the script
	// over that master's buckets runs there, and meets the moved one.
	var near []byte
	for i := 0; near == nil; i++ {
		k := fmt.Appendf(nil, "e%d", i)
		nb, _ := db.postingBucket(1, k)
		if n, err := db.c.MasterForKey(ctx, nb); err == nil && n == from && db.c.ClusterKeySlot(ctx, nb).Val() != slot {
			near = k
		}
	}
	var b store.Batch
	b.Add(1, near, 42)
	b.Add(1, key, 42)
	b.PutRecord(42, []byte("rec"))
	if err := db.Apply(&b); err != nil {
		t.Fatalf("Apply with a stale map of slots: %v", err)
	}
	for _, s := range []*DB{db, other} {
		ids, err := s.IDsMany([]store.Key{{Namespace: 1, Key: near}, {Namespace: 1, Key: key}})
		if err != nil || fmt.Sprint(ids) != "[[42] [42]]" {
			t.Errorf("IDsMany after the slot moved = %v, %v; want [[42] [42]]", ids, err)
		}
	}
	if n := to.HLen(ctx, bucket).Val(); n != 1 {
		t.Errorf("the moved slot's bucket has %d fields on its new master, want 1", n)
	}
	testStaleCoalesced(t, db2, key, near)
}

// testStaleCoalesced prepares two transactions in one coalesced call through db, whose
// map of slots still puts moved's bucket on the master of near's: the call fails there,
// and each transaction's buckets go again one script each, which follow MOVED; both
// commit, and both postings hold their ids. moved holds 42 already.
func testStaleCoalesced(t *testing.T, db *DB, moved, near []byte) {
	mk := func(key []byte, id uint64, held ...uint64) *txn {
		var b store.Batch
		b.Add(1, key, id)
		ws, maxID, _, err := db.plan(&b, []store.Cond{{Namespace: 1, Key: key, IDs: held}})
		if err != nil {
			t.Fatal(err)
		}
		return &txn{db: db, id: newTxn(time.Now()), ws: ws, placed: make([]bool, len(ws)), maxID: maxID}
	}
	ts := []*txn{mk(moved, 43, 42), mk(near, 44, 42)}
	rs := []*prepReq{{t: ts[0], pending: []int{0}}, {t: ts[1], pending: []int{0}}}
	calls := &scriptCalls{sha: prepScript.sha}
	db.c.AddHook(calls)
	db.sendPrepares(rs)
	if n := calls.n.Load(); n != 2 {
		t.Errorf("%d prepares a bucket after a coalesced call on a stale map, want 2 (one a transaction's bucket)", n)
	}
	for i, r := range rs {
		if _, err := r.t.placedBy(r.answers, r.pending); err != nil || r.err != nil || !r.t.placed[0] {
			t.Fatalf("transaction %d of a coalesced prepare with a stale map: %q, %v, %v, placed %v", i, r.answers, err, r.err, r.t.placed)
		}
		if ok, err := r.t.commit(); !ok || err != nil {
			t.Fatalf("commit of transaction %d: %v, %v", i, ok, err)
		}
		if err := (resolutions{{txn: r.t.id, commit: true, ws: r.t.ws}}).run(t.Context(), db); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := db.IDsMany([]store.Key{{Namespace: 1, Key: moved}, {Namespace: 1, Key: near}})
	if err != nil || fmt.Sprint(ids) != "[[42 43] [42 44]]" {
		t.Errorf("IDsMany after the coalesced prepare = %v, %v; want [[42 43] [42 44]]", ids, err)
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// scriptCalls counts the calls of the script sha that pipelines send.
type scriptCalls struct {
	sha string
	n   atomic.Int64
}

func (h *scriptCalls) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *scriptCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *scriptCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if a := c.Args(); len(a) > 1 && a[1] == h.sha {
				h.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}
