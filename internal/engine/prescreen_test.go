package engine

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/keyfilter"
	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/store/redisstore"
)

// TestSharedPrescreen runs the pre-screen of engines on a real Redis Cluster (a shared
// store): its snapshot, refilled in the background, one fill at a time.
func TestSharedPrescreen(t *testing.T) {
	c := redistest.Start(t)
	// open opens an engine over the index under prefix, with the refresh interval and
	// the clock (nil: time.Now).
	open := func(t *testing.T, prefix string, refresh time.Duration, now func() time.Time) *Engine {
		t.Helper()
		s, err := redisstore.Open(redisstore.Options{Addrs: c.Addrs, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		cfg := testConfig()
		cfg.Expected, cfg.PrescreenRefresh = 16, refresh
		if now != nil {
			cfg.Now = now
		}
		d := mustOpen(t, s, cfg)
		t.Cleanup(func() { d.Wait(); s.Close() })
		return d
	}
	t.Run("Across", func(t *testing.T) {
		testPrescreenAcross(t, open(t, "across", time.Hour, nil), open(t, "across", time.Hour, nil), open(t, "across", 50*time.Millisecond, nil))
	})
	t.Run("SingleFlight", func(t *testing.T) {
		var clk clock
		testPrescreenSingleFlight(t, open(t, "flight", time.Hour, clk.now), &clk)
	})
	t.Run("Failed", func(t *testing.T) {
		var clk clock
		testPrescreenFailed(t, open(t, "failed", time.Hour, clk.now), &clk)
	})
}

// clock is a test's Config.Now: the time, moved on by hand.
type clock struct{ ahead atomic.Int64 }

func (c *clock) now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

// advance moves the clock on by d.
func (c *clock) advance(d time.Duration) { c.ahead.Add(int64(d)) }

// screenDoc is the i-th document of the pre-screen tests, added by engine tag.
func screenDoc(tag string, i int) testDoc {
	return testDoc{ID: fmt.Sprintf("%s%d", tag, i), URL: fmt.Sprintf("https://example.com/%s/%d", tag, i), Text: fmt.Sprintf("the text of document %d of %s", i, tag)}
}

// screenHas reports whether f holds both keys of doc.
func screenHas(f *keyfilter.Filter, doc testDoc) bool {
	e := entry(doc)
	return f.HasURL(e.URL) && f.HasExact(e.Main)
}

// testPrescreenAcross checks what three engines on one store see of each other's adds:
// a and slow (an hour's refresh) keep their first snapshot, with their own adds, and
// fast (50ms) sees a's adds once it has refilled, in a filter sized for the store.
func testPrescreenAcross(t *testing.T, a, slow, fast *Engine) {
	slow.Prescreen() // waits for the first fill
	fast.Prescreen()
	for i := range 40 {
		check(t, a, screenDoc("a", i))
	}
	own := screenDoc("slow", 0)
	check(t, slow, own)
	f := slow.Prescreen()
	if !screenHas(f, own) {
		t.Error("an engine's own add is not in its pre-screen at once")
	}
	if screenHas(f, screenDoc("a", 0)) && screenHas(f, screenDoc("a", 1)) {
		t.Error("another engine's adds are in the pre-screen of a snapshot an hour fresh: it scanned the store")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		f := fast.Prescreen()
		if screenHas(f, screenDoc("a", 39)) {
			for i := range 40 {
				if !screenHas(f, screenDoc("a", i)) {
					t.Fatalf("a refilled pre-screen lacks the keys of a's document %d", i)
				}
			}
			// 41 documents: 82 keys, with room for as many again; the store's count
			// may lag by the last add of each of the two writers.
			if want := 4 * (41 - 2); f.Capacity() < want {
				t.Errorf("a pre-screen of 41 documents has room for %d keys, want at least %d", f.Capacity(), want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("another engine's adds are not in the pre-screen 10s after them, with a refresh of 50ms")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testPrescreenSingleFlight calls Prescreen from 32 goroutines on a stale snapshot, the
// fill held: they must get the snapshot without waiting, and start one fill.
func testPrescreenSingleFlight(t *testing.T, d *Engine, c *clock) {
	check(t, d, screenDoc("f", 0))
	d.Prescreen()
	d.Wait()
	release := make(chan struct{})
	began := make(chan struct{}, 64) // a send a fill
	d.screen.mu.Lock()
	d.screen.hook = func() error {
		began <- struct{}{}
		<-release
		return nil
	}
	d.screen.mu.Unlock()
	c.advance(2 * time.Hour) // the snapshot is stale
	var calls sync.WaitGroup
	for range 32 {
		calls.Add(1)
		go func() {
			defer calls.Done()
			if !screenHas(d.Prescreen(), screenDoc("f", 0)) {
				t.Error("a pre-screen during a fill lacks the snapshot's keys")
			}
		}()
	}
	returned := make(chan struct{})
	go func() { calls.Wait(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Prescreen waits for the fill when there is a snapshot")
	}
	select {
	case <-began: // the fill under way
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("no fill began on a stale snapshot")
	}
	close(release)
	d.Wait()
	if n := 1 + len(began); n != 1 {
		t.Errorf("32 calls on a stale snapshot started %d fills, want 1", n)
	}
}

// testPrescreenFailed makes fills fail: a snapshot is kept, with the engine's adds,
// and retried after the refresh interval; with none, Prescreen holds every key.
func testPrescreenFailed(t *testing.T, d *Engine, c *clock) {
	check(t, d, screenDoc("x", 0))
	d.Prescreen()
	d.Wait()
	var mu sync.Mutex
	n := 0
	d.screen.mu.Lock()
	d.screen.hook = func() error { mu.Lock(); n++; mu.Unlock(); return errors.New("no fill") }
	d.screen.mu.Unlock()
	fills := func() int { mu.Lock(); defer mu.Unlock(); return n }
	c.advance(2 * time.Hour)
	d.Prescreen() // starts a fill, which fails
	d.Wait()
	check(t, d, screenDoc("x", 1))
	f := d.Prescreen()
	if fills() != 1 {
		t.Fatalf("%d fills, want 1", fills())
	}
	if !screenHas(f, screenDoc("x", 0)) || !screenHas(f, screenDoc("x", 1)) {
		t.Error("a failed fill lost the snapshot, or the add after it")
	}
	if f.HasURL("https://example.com/never-added") && f.HasURL("https://example.com/nor-this") {
		t.Error("a failed fill gave a filter that holds every key, with a snapshot to answer")
	}
	d.Wait()
	if fills() != 1 {
		t.Errorf("a fill was retried at once after one failed: %d fills", fills())
	}
	c.advance(2 * time.Hour)
	d.Prescreen()
	d.Wait()
	if fills() != 2 {
		t.Errorf("%d fills a refresh interval after one failed, want 2", fills())
	}

	d.screen.mu.Lock()
	d.screen.filter, d.screen.failed = nil, time.Time{} // as if no fill had succeeded yet
	d.screen.mu.Unlock()
	f = d.Prescreen()
	if fills() != 3 || !f.HasURL("https://example.com/never-added") {
		t.Errorf("with no snapshot and its fill failed, Prescreen (after %d fills) gives a filter that lacks keys, want one that holds every key", fills())
	}
}
