package neardup

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

	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/pebblestore"
)

// BenchmarkDetector measures the check-and-add of plain-text documents of about 2 KB (330
// words drawn from a 50,000-word vocabulary; one in ten a copy of a recent document with
// one word changed, so a near-duplicate) into a detector holding b.N of them, and the
// memory each stored document costs (bytes/doc: the live heap after the run divided by the
// documents stored), in memory and on a pebble store (whose memory is mostly off the Go
// heap, in its cache). There is no HTML, so no extraction: see package extract for that.
func BenchmarkDetector(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchDetector(b, store.NewMemory()) })
	b.Run("pebble", func(b *testing.B) { benchDetector(b, openPebble(b, b.TempDir())) })
}

func benchDetector(b *testing.B, s store.Store) {
	vocab := make([]string, 50_000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	d, err := OpenDetector(s, Options{Expected: max(b.N, 1)})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	// Texts are made 1000 at a time with the timer stopped: one in ten is a near copy of
	// one of the previous batch's texts.
	var batch, prev []string
	var sb strings.Builder
	makeBatch := func() {
		prev, batch = batch, make([]string, 1000)
		for j := range batch {
			if j%10 == 9 && prev != nil {
				w := strings.Fields(prev[r.IntN(len(prev))])
				w[r.IntN(len(w))] = "edited"
				batch[j] = strings.Join(w, " ")
				continue
			}
			sb.Reset()
			for range 330 {
				sb.WriteString(vocab[r.IntN(len(vocab))])
				sb.WriteByte(' ')
			}
			batch[j] = sb.String()
		}
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.SetBytes(2048)
	b.ReportAllocs()
	near := 0
	for i := 0; b.Loop(); i++ {
		if i%1000 == 0 {
			b.StopTimer()
			makeBatch()
			b.StartTimer()
		}
		v, err := d.Check(Document{ID: fmt.Sprint(i), URL: fmt.Sprint("http://example.com/", i), Text: batch[i%1000]})
		if err != nil {
			b.Fatal(err)
		}
		if v.Kind == NearDuplicate {
			near++
		}
	}
	b.StopTimer()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(d.Len()), "bytes/doc")
	b.ReportMetric(float64(near)/float64(b.N), "near/doc")
	runtime.KeepAlive(d)
}

var (
	openSizes = flag.String("opendetector.sizes", "100000", "BenchmarkOpenDetector: comma-separated store sizes (documents)")
	openDir   = flag.String("opendetector.dir", "", "BenchmarkOpenDetector: build the stores under this directory and keep them (for neardup serve --data DIR/N), instead of in temporary ones")
)

// BenchmarkOpenDetector measures how long a detector takes to open a pebble store of N
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
				d, err := OpenDetector(s, Options{})
				if err != nil {
					b.Fatal(err)
				}
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
	d, err := OpenDetector(s, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if newBandTable(d.opt.BandMemory, d.bands*n) == nil && !d.bandsStored {
		// A service would have moved the band postings to the store on the way to n
		// documents: write them there from the start.
		if err := d.storeBands(); err != nil {
			b.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(uint64(n), 3))
	var batch store.Batch
	for i := d.Len(); i < n; i++ {
		e := Entry{ID: fmt.Sprint("syn-", i), FetchTime: time.Unix(1_700_000_000, 0)}
		e.URL = fmt.Sprint("https://syn.example/", i)
		for _, h := range []*Hash{&e.Raw, &e.Text, &e.Main} {
			binary.LittleEndian.PutUint64(h[:], r.Uint64())
			binary.LittleEndian.PutUint64(h[8:], r.Uint64())
		}
		e.SimHash = r.Uint64()
		e.MinHash = make(minhash.Signature, d.opt.MinHashK)
		for j := range e.MinHash {
			e.MinHash[j] = r.Uint32()
		}
		e.Words = 300
		seq, err := s.NextID()
		if err != nil {
			b.Fatal(err)
		}
		d.putOps(&batch, &Stored{Entry: e, LastSeen: e.FetchTime, seq: seq})
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

// BenchmarkFingerprint measures Fingerprint on plain text of about 2 KB (330 words drawn
// from a 50,000-word vocabulary, as BenchmarkDetector's): the URL, the three SHA-256
// hashes, the SimHash and the MinHash signature of one document, with the default
// options; b.SetBytes counts the text.
func BenchmarkFingerprint(b *testing.B) {
	f, err := NewFingerprinter(Options{})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for range 330 {
		fmt.Fprintf(&sb, "w%d ", r.IntN(50_000))
	}
	doc := Document{ID: "d", URL: "https://example.com/a/b?utm_source=x", Text: sb.String()}
	b.SetBytes(int64(len(doc.Text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Fingerprint(doc); err != nil {
			b.Fatal(err)
		}
	}
}
