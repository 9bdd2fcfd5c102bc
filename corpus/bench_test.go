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

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/evaldata"
)

// benchDoc is a record of the benchmark corpus.
type benchDoc struct {
	ID   string `json:"id" parquet:"id"`
	URL  string `json:"url" parquet:"url"`
	Text string `json:"text" parquet:"text"`
}

// benchCorpus returns the benchmark corpus, 100,000 records of about 2 KB (id, url, text:
// debian documentation's visible text, cut into pieces), as JSONL lines, and the bytes
// of its texts.
func benchCorpus(b *testing.B) (docs []benchDoc, lines []byte, textBytes int64) {
	root, err := evaldata.Root()
	evaldata.Need(b, err)
	debian, _, err := evaldata.Debian(root)
	if err != nil {
		b.Fatal(err)
	}
	var all strings.Builder
	for _, d := range debian {
		all.WriteString(strings.Join(strings.Fields(d.Text), " "))
		all.WriteByte(' ')
	}
	text := all.String()
	const n, size = 100_000, 2000
	for i := range n {
		at := i * 997 % (len(text) - size)
		d := benchDoc{ID: fmt.Sprint("doc-", i), URL: fmt.Sprint("https://example.com/", i), Text: strings.ToValidUTF8(text[at:at+size], "")}
		line, _ := json.Marshal(d)
		lines = append(append(lines, line...), '\n')
		docs = append(docs, d)
		textBytes += int64(len(d.Text))
	}
	return docs, lines, textBytes
}

// readCount reads path whole and fails b unless it holds n records.
func readCount(b *testing.B, path string, n int) {
	r, err := corpus.Open([]string{path}, corpus.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
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
	if count != n {
		b.Fatalf("%d records, want %d", count, n)
	}
}

// BenchmarkJSONL reads the benchmark corpus (see benchCorpus) as JSONL, plain, gzip and
// zstd; MB/s is of the decompressed JSONL. The input is built outside the timer.
func BenchmarkJSONL(b *testing.B) {
	docs, lines, _ := benchCorpus(b)
	n := len(docs)
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
				readCount(b, path, n)
			}
		})
	}
}

// BenchmarkParquet reads the benchmark corpus (see benchCorpus) as zstd JSONL and as
// Parquet with snappy and zstd pages (parquet-go's defaults otherwise: 1 MiB pages,
// row groups of 100,000 rows here), side by side; MB/s is of the records' text, the
// same bytes for every format, and MB/cpu-s the same per second of the process's CPU
// time, which a loaded machine disturbs less. The goal is Parquet at least as fast as
// zstd JSONL.
func BenchmarkParquet(b *testing.B) {
	docs, lines, textBytes := benchCorpus(b)
	dir := b.TempDir()
	paths := map[string]string{"jsonl-zstd": filepath.Join(dir, "docs.jsonl.zst")}
	if err := os.WriteFile(paths["jsonl-zstd"], zstdBytes(lines), 0o644); err != nil {
		b.Fatal(err)
	}
	for name, codec := range map[string]compress.Codec{"parquet-snappy": &parquet.Snappy, "parquet-zstd": &parquet.Zstd} {
		paths[name] = filepath.Join(dir, name+".parquet")
		writeParquet(b, paths[name], codec, len(docs), docs)
	}
	for _, name := range []string{"jsonl-zstd", "parquet-snappy", "parquet-zstd"} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(textBytes)
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				readCount(b, paths[name], len(docs))
			}
			if cpu := cpuTime() - start; cpu > 0 {
				b.ReportMetric(float64(textBytes)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
			}
		})
	}
}
