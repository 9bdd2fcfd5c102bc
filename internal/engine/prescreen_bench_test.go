package engine

import (
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/store/redisstore"
)

var screenBuckets = flag.Int("prescreen.buckets", 0, "BenchmarkSharedPrescreen: the store's buckets (redisstore.Options.Buckets; 0: its default, 2^20)")

// BenchmarkSharedPrescreen measures a pre-screen request on a real Redis Cluster of
// 20,000 documents, side by side: scan, the fill from the store that each request made
// before the engine kept a snapshot (and that a refill still makes, in the background),
// and snapshot, Prescreen's copy of the snapshot now. A scan reads every bucket of the
// store, so its cost follows -prescreen.buckets as much as the documents.
func BenchmarkSharedPrescreen(b *testing.B) {
	c := redistest.Start(b)
	s, err := redisstore.Open(redisstore.Options{Addrs: c.Addrs, Prefix: "bench", Buckets: *screenBuckets})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	d := mustOpen(b, s, testConfig())
	const docs, writers = 20_000, 8
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < docs; i += writers {
				doc := testDoc{ID: fmt.Sprint(i), URL: fmt.Sprintf("https://example.com/%d", i), Text: strings.Join(words(uint64(i), 60), " ")}
				if _, err := d.Check(entry(doc), true); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if d.Len() < docs-writers {
		b.Fatalf("%d documents stored, want %d", d.Len(), docs)
	}
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.fillFilter(d.screenSize()); err != nil {
				b.Fatal(err)
			}
		}
	})
	d.Prescreen()
	b.Run("snapshot", func(b *testing.B) {
		for b.Loop() {
			d.Prescreen()
		}
	})
	d.Wait()
}
