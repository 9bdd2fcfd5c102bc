package corpus_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/evaldata"
)

// BenchmarkJSONL reads 100,000 JSONL records of about 2 KB (id, url, text: debian
// documentation's visible text, cut into pieces) plain, gzip and zstd; MB/s is of the
// decompressed JSONL. The input is built outside the timer.
func BenchmarkJSONL(b *testing.B) {
	root, err := evaldata.Root()
	evaldata.Need(b, err)
	docs, _, err := evaldata.Debian(root)
	if err != nil {
		b.Fatal(err)
	}
	var all strings.Builder
	for _, d := range docs {
		all.WriteString(strings.Join(strings.Fields(d.Text), " "))
		all.WriteByte(' ')
	}
	text := all.String()
	const n, size = 100_000, 2000
	var lines []byte
	for i := range n {
		at := i * 997 % (len(text) - size)
		rec := map[string]string{"id": fmt.Sprint("doc-", i), "url": fmt.Sprint("https://example.com/", i), "text": strings.ToValidUTF8(text[at:at+size], "")}
		line, _ := json.Marshal(rec)
		lines = append(append(lines, line...), '\n')
	}
	dir := b.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
	}{{"plain", lines}, {"gzip", gzipBytes(lines)}, {"zstd", zstdBytes(lines)}} {
		path := filepath.Join(dir, "docs.jsonl."+tc.name)
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(lines)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := corpus.Open([]string{path}, corpus.Options{})
				if err != nil {
					b.Fatal(err)
				}
				count := 0
				for {
					_, err := r.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					count++
				}
				r.Close()
				if count != n {
					b.Fatalf("%d records, want %d", count, n)
				}
			}
		})
	}
}
