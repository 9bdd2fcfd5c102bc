package pebblestore

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup/store"
)

// BenchmarkApply makes one document's batch (its record and three postings, as
// TestCrash) durable per operation from 1 and 32 goroutines, in the three ways: Apply;
// Write under a shared lock, then Sync outside it (the service's pattern); and Write
// alone, not durable, for comparison. ops/s counts batches. With 32 writers, durable
// batches exceed 1/fsync latency only if concurrent Applies, or Syncs, share an fsync.
func BenchmarkApply(b *testing.B) {
	for _, mode := range []string{"apply", "write+sync", "write"} {
		for _, writers := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/writers=%d", mode, writers), func(b *testing.B) {
				benchApply(b, openDB(b, b.TempDir(), Options{}), mode, writers)
			})
		}
	}
	b.Run("memory", func(b *testing.B) { benchApply(b, store.NewMemory(), "apply", 1) })
}

func benchApply(b *testing.B, s store.Store, mode string, writers int) {
	var next atomic.Uint64
	var mu sync.Mutex
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range writers {
		wg.Go(func() {
			var batch store.Batch
			for {
				id := next.Add(1)
				if id > uint64(b.N) {
					return
				}
				crashBatch(&batch, id)
				var err error
				switch mode {
				case "apply":
					err = s.Apply(&batch)
				case "write":
					err = s.Write(&batch)
				case "write+sync":
					mu.Lock()
					err = s.Write(&batch)
					mu.Unlock()
					if err == nil {
						err = s.Sync()
					}
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkIDs looks up postings in a store of 100,000 documents: keys with 1 id, keys
// with about 100 ids, and keys with none (most lookups of a dedup service).
func BenchmarkIDs(b *testing.B) {
	const docs = 100_000
	setup := map[string]func(b *testing.B) store.Store{
		"memory": func(b *testing.B) store.Store { return store.NewMemory() },
		"pebble": func(b *testing.B) store.Store { return openDB(b, b.TempDir(), Options{}) },
	}
	for _, name := range []string{"memory", "pebble"} {
		b.Run(name, func(b *testing.B) {
			s := setup[name](b)
			var batch store.Batch
			for id := range uint64(docs) {
				crashBatch(&batch, id) // ns 1: id%1021, about 100 ids; ns 2: one id
				if err := s.Write(&batch); err != nil {
					b.Fatal(err)
				}
			}
			for _, c := range []struct {
				name string
				ns   store.Namespace
				key  func(i uint64) []byte
			}{
				{"one", 2, func(i uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 24), i%docs) }},
				{"hundred", 1, func(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i%1021) }},
				{"none", 2, func(i uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 24), docs+i) }},
			} {
				b.Run(c.name, func(b *testing.B) {
					b.ReportAllocs()
					n := 0
					for i := uint64(0); b.Loop(); i++ {
						if err := s.IDs(c.ns, c.key(i*7919), func(uint64) bool { n++; return true }); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
				})
			}
		})
	}
}
