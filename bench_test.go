package neardup

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/neardup/neardup/store"
)

// BenchmarkDetector measures the check-and-add of plain-text documents of about 2 KB (330
// words drawn from a 50,000-word vocabulary; one in ten a copy of a recent document with
// one word changed, so a near-duplicate) into a detector holding b.N of them, and the
// memory each stored document costs (bytes/doc: the live heap after the run divided by the
// documents stored), in memory and on a pebble store (whose memory is mostly off the Go
// heap, in its cache). There is no HTML, so no extraction: see package extract for that.
// memory-no-verify is memory with Options.NoVerify, side by side: without the sketches
// that verify near candidates.
func BenchmarkDetector(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchDetector(b, store.NewMemory(), Options{}) })
	b.Run("memory-no-verify", func(b *testing.B) { benchDetector(b, store.NewMemory(), Options{NoVerify: true}) })
	b.Run("pebble", func(b *testing.B) { benchDetector(b, openPebble(b, b.TempDir()), Options{}) })
}

func benchDetector(b *testing.B, s store.Store, opt Options) {
	vocab := make([]string, 50_000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	opt.Expected = max(b.N, 1)
	d, err := OpenDetector(s, opt)
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
	// Signed: at a handful of documents the collector can leave less live heap than
	// before the run, and the difference of the unsigned counts would wrap.
	b.ReportMetric((float64(after.HeapAlloc)-float64(before.HeapAlloc))/float64(d.Len()), "bytes/doc")
	b.ReportMetric(float64(near)/float64(b.N), "near/doc")
	runtime.KeepAlive(d)
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
