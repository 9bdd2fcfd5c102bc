package engine

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/pebblestore"
)

var (
	openSizes = flag.String("opendetector.sizes", "100000", "BenchmarkOpenDetector: comma-separated store sizes (documents)")
	openDir   = flag.String("opendetector.dir", "", "BenchmarkOpenDetector: build the stores under this directory and keep them (for neardup serve --data DIR/N), instead of in temporary ones")
)

// BenchmarkOpenDetector measures how long a detector's engine takes to open a pebble store of N
// documents (-opendetector.sizes; 100,000 by default), rebuilding its SimHash index, band
// filter and key filter from the postings, and the memory it then holds: heap-MB, and
// rss-MB, the process's resident set (pebble's block cache included). The store is built
// first, untimed, from synthetic entries with random fingerprints (each a unique
// document, so every posting is its own: the largest index for N documents), written
// straight into the store in batches of 1,000 without a sync per document, with the band
// postings in the store when the default band copy could not hold them (as a service
// would have moved them there), else only in the records.
func BenchmarkOpenDetector(b *testing.B) {
	for _, f := range strings.Split(*openSizes, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			b.Fatalf("-opendetector.sizes: %q is not a size", f)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "store")
			if *openDir != "" {
				dir = filepath.Join(*openDir, fmt.Sprint(n))
			}
			buildSyntheticStore(b, dir, n)
			for b.Loop() {
				s, err := pebblestore.Open(dir, pebblestore.Options{})
				if err != nil {
					b.Fatal(err)
				}
				d := mustOpen(b, s, testConfig())
				if d.Len() != n {
					b.Fatalf("opened %d documents, want %d", d.Len(), n)
				}
				b.StopTimer()
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				b.ReportMetric(float64(ms.HeapInuse)/1e6, "heap-MB")
				b.ReportMetric(float64(procstat.RSS())/1e6, "rss-MB")
				runtime.KeepAlive(d)
				s.Close()
				b.StartTimer()
			}
		})
	}
}

// buildSyntheticStore fills dir with n synthetic documents, unless it holds them already.
func buildSyntheticStore(b *testing.B, dir string, n int) {
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	d := mustOpen(b, s, testConfig())
	if newBandTable(d.cfg.BandMemory, d.bands*n) == nil && !d.bandsStored {
		// A service would have moved the band postings to the store on the way to n
		// documents: write them there from the start.
		if err := d.storeBands(); err != nil {
			b.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(uint64(n), 3))
	var batch store.Batch
	for i := d.Len(); i < n; i++ {
		e := api.Entry{ID: fmt.Sprint("syn-", i), FetchTime: time.Unix(1_700_000_000, 0)}
		e.URL = fmt.Sprint("https://syn.example/", i)
		for _, h := range []*api.Hash{&e.Raw, &e.Text, &e.Main} {
			binary.LittleEndian.PutUint64(h[:], r.Uint64())
			binary.LittleEndian.PutUint64(h[8:], r.Uint64())
		}
		e.SimHash = r.Uint64()
		e.MinHash = make(minhash.Signature, d.cfg.MinHashK)
		for j := range e.MinHash {
			e.MinHash[j] = r.Uint32()
		}
		e.Words = 300
		seq, err := s.NextID()
		if err != nil {
			b.Fatal(err)
		}
		d.putOps(&batch, &Record{Entry: e, LastSeen: e.FetchTime, seq: seq})
		if (i+1)%1000 == 0 || i == n-1 {
			if err := s.Write(&batch); err != nil {
				b.Fatal(err)
			}
			batch.Reset()
		}
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
}
