package hamming

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// benchSizes returns the index sizes benchmarks use: 1M always, 10M unless -short. CI
// runs every benchmark once with -short -benchtime 1x, which keeps this file under a
// minute; run without -short for the 10M figures.
func benchSizes() []int {
	if testing.Short() {
		return []int{1_000_000}
	}
	return []int{1_000_000, 10_000_000}
}

// benchIndex is a built index cached across benchmarks, with the memory it took.
type benchIndex struct {
	x         *Index
	fps       []uint64
	heapPerFP float64
}

var (
	benchMu      sync.Mutex
	benchIndexes = map[int]*benchIndex{}
)

// randomIndex returns a default-design index of n random fingerprints with ids 0..n-1,
// built once per size and process.
func randomIndex(b *testing.B, n int) *benchIndex {
	benchMu.Lock()
	defer benchMu.Unlock()
	if bi := benchIndexes[n]; bi != nil {
		return bi
	}
	r := rand.New(rand.NewPCG(uint64(n), 42))
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	x := mustIndex(b, IndexOptions{})
	for i, fp := range fps {
		x.Add(uint64(i), fp)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	bi := &benchIndex{x: x, fps: fps, heapPerFP: float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / float64(n)}
	benchIndexes[n] = bi
	return bi
}

// BenchmarkIndexQuery measures k=3 queries on the default design: half are 1-3 bit
// variants of indexed fingerprints, half random. It reports queries/s and the memory per
// fingerprint, from MemoryUsage (B/fp) and from the heap (heapB/fp).
func BenchmarkIndexQuery(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("n=%dM", n/1_000_000), func(b *testing.B) {
			bi := randomIndex(b, n)
			r := rand.New(rand.NewPCG(1, 1))
			qs := make([]uint64, 1<<16)
			for i := range qs {
				if i%2 == 0 {
					qs[i] = flipBits(r, bi.fps[r.IntN(n)], 1+r.IntN(3))
				} else {
					qs[i] = r.Uint64()
				}
			}
			dst := make([]Match, 0, 64)
			hits := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				dst, _ = bi.x.AppendQuery(dst[:0], qs[i&(len(qs)-1)], 3)
				hits += len(dst)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(float64(bi.x.MemoryUsage())/float64(n), "B/fp")
			b.ReportMetric(bi.heapPerFP, "heapB/fp")
			if hits < b.N/2 {
				b.Fatalf("%d matches in %d queries: the planted half should all hit", hits, b.N)
			}
		})
	}
}

// BenchmarkIndexAdd measures building a default-design index of n random fingerprints
// from empty, with ids 0..n-1, reporting adds/s and the memory per fingerprint: by Add
// without and with Capacity n, and by AddBatch in batches of 4096 and of all n, without and
// with Capacity.
func BenchmarkIndexAdd(b *testing.B) {
	for _, n := range benchSizes() {
		r := rand.New(rand.NewPCG(2, 2))
		ids, fps := make([]uint64, n), make([]uint64, n)
		for i := range fps {
			ids[i], fps[i] = uint64(i), r.Uint64()
		}
		for _, bc := range []struct {
			name            string
			capacity, batch int
		}{
			{"Add", 0, 0},
			{"Add/Capacity", n, 0},
			{"AddBatch=4096", 0, 4096},
			{"AddBatch=4096/Capacity", n, 4096},
			{"AddBatch=all", 0, n},
			{"AddBatch=all/Capacity", n, n},
		} {
			b.Run(fmt.Sprintf("n=%dM/%s", n/1_000_000, bc.name), func(b *testing.B) {
				b.ReportAllocs()
				var x *Index
				for b.Loop() {
					x = mustIndex(b, IndexOptions{Capacity: bc.capacity})
					if bc.batch == 0 {
						for i, fp := range fps {
							x.Add(ids[i], fp)
						}
						continue
					}
					for lo := 0; lo < n; lo += bc.batch {
						hi := min(lo+bc.batch, n)
						x.AddBatch(ids[lo:hi], fps[lo:hi])
					}
				}
				b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds(), "adds/s")
				b.ReportMetric(float64(x.MemoryUsage())/float64(n), "B/fp")
			})
		}
	}
}

// BenchmarkIndexRemoveAdd measures steady-state churn on a 1M index: remove one id and
// add it back with a new fingerprint.
func BenchmarkIndexRemoveAdd(b *testing.B) {
	bi := randomIndex(b, 1_000_000)
	r := rand.New(rand.NewPCG(3, 3))
	b.ReportAllocs()
	for b.Loop() {
		id := r.Uint64N(1_000_000)
		bi.x.Remove(id)
		fp := r.Uint64()
		bi.x.Add(id, fp)
		bi.fps[id] = fp
	}
}
