package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// testShortScan checks that Postings reads the shared buckets for a namespace that has
// had a short key, through another process's store (b, opened before a wrote), and
// only then: a scan of URLs must not read every band posting of the store.
func testShortScan(t *testing.T, a, b *DB) {
	long := []byte("https://example.com/a/long/url")
	var w store.Batch
	w.Add(9, []byte("short"), 1) // a short key of namespace 9
	w.Add(9, long, 2)
	w.Add(10, long, 3) // namespace 10 has long keys alone
	w.Add(11, []byte("band"), 4)
	if err := a.Apply(&w); err != nil {
		t.Fatal(err)
	}
	reads := &sharedReads{}
	b.c.AddHook(reads)
	for _, c := range []struct {
		ns     store.Namespace
		want   []string
		shared bool
	}{
		{9, []string{string(long) + " 2", "short 1"}, true},
		{10, []string{string(long) + " 3"}, false},
	} {
		reads.n.Store(0)
		var got []string
		if err := b.Postings(c.ns, func(key []byte, id uint64) bool {
			got = append(got, fmt.Sprint(string(key), " ", id))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("Postings(%d) = %q, want %q", c.ns, got, c.want)
		}
		if n := reads.n.Load(); (n > 0) != c.shared {
			t.Errorf("Postings(%d) read %d shared buckets; want some: %v", c.ns, n, c.shared)
		}
	}
	got, err := a.c.SMembers(context.Background(), a.shortMetaKey()).Result()
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"11", "9"}) {
		t.Errorf("{meta}:short = %q, %v; want [11 9]", got, err)
	}
}

// sharedReads counts the commands sent in pipelines that read a shared bucket.
type sharedReads struct{ n atomic.Int64 }

func (h *sharedReads) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *sharedReads) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *sharedReads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if a := c.Args(); len(a) > 1 && strings.Contains(c.Name(), "hgetall") && strings.Contains(a[1].(string), ":{s") {
				h.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

// testListBuckets checks that the buckets listBuckets names are those postings go to:
// every bucket a SCAN finds after some writes is among them.
func testListBuckets(t *testing.T, db *DB) {
	var w store.Batch
	for i := range 200 {
		w.Add(store.Namespace(i%3), []byte(fmt.Sprint("https://example.com/", i)), uint64(i+1))
		w.Add(store.Namespace(i%3), []byte(fmt.Sprint(i)), uint64(i+1))
	}
	if err := db.Apply(&w); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		n       int
		name    func(k []byte, b uint64) []byte
		pattern string
		kind    byte
	}{
		{db.longBuckets(), func(k []byte, b uint64) []byte { return db.appendLongBucket(k, 1, b) }, ":{p1.*}", kindPosting},
		{db.buckets, db.appendSharedBucket, ":{s*}", kindShared},
	} {
		keep := func(kind byte, ns store.Namespace) bool { return kind == c.kind && (kind == kindShared || ns == 1) }
		found, err := db.listBuckets(ctx, 0, c.n, c.name, c.pattern, keep)
		if err != nil {
			t.Fatal(err)
		}
		named, err := db.listBuckets(ctx, 4*int64(c.n), c.n, c.name, c.pattern, keep)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) == 0 || len(named) != c.n {
			t.Fatalf("%s: SCAN found %d buckets, listBuckets named %d of %d", c.pattern, len(found), len(named), c.n)
		}
		for _, k := range found {
			if !slices.Contains(named, k) {
				t.Errorf("%s: bucket %q is not among those named %q", c.pattern, k, named)
			}
		}
	}
}

// testCloseStopsScan checks that Close stops a scan under way rather than wait for the
// rest of the store: the scan's first read of buckets is held until its context ends,
// which only Close's cancelling can do.
func testCloseStopsScan(t *testing.T, db *DB) {
	var w store.Batch
	w.Add(10, []byte("https://example.com/a/long/url"), 1)
	if err := db.Apply(&w); err != nil {
		t.Fatal(err)
	}
	held := make(chan struct{})
	db.c.AddHook(holdReads{held})
	scanned := make(chan error, 1)
	go func() { scanned <- db.Postings(10, func([]byte, uint64) bool { return true }) }()
	<-held
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-scanned:
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("a scan stopped by Close: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not stop the scan under way")
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
}

// holdReads holds each pipeline of HGETALLs until its context ends, once it has said so
// on held.
type holdReads struct{ held chan struct{} }

func (h holdReads) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h holdReads) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h holdReads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "hgetall" {
			close(h.held)
			<-ctx.Done()
			for _, c := range cmds { // as go-redis does when a pipeline fails
				c.SetErr(ctx.Err())
			}
			return ctx.Err()
		}
		return next(ctx, cmds)
	}
}
