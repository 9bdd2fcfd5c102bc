package neardup

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkDetector measures the check-and-add of 2 KB plain-text documents (no
// extraction) into a detector holding b.N of them, and the memory each stored document
// costs (bytes/doc: the live heap after the run divided by the documents stored).
func BenchmarkDetector(b *testing.B) {
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = strings.Join(words(uint64(i), 330), " ") // about 2 KB
	}
	d, err := NewDetector(Options{Expected: max(b.N, 1)})
	if err != nil {
		b.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.SetBytes(int64(len(texts[0])))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		// Edit one word so that every document is new content near its base.
		text := texts[i%len(texts)] + fmt.Sprint(" n", i)
		if _, err := d.Check(Document{ID: fmt.Sprint(i), URL: fmt.Sprint("http://example.com/", i), Text: text}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(d.Len()), "bytes/doc")
	runtime.KeepAlive(d)
}
