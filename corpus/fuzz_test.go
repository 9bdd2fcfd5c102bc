package corpus

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// sentinels are the errors a bad record may wrap.
var sentinels = []error{ErrSyntax, ErrField, ErrUTF8, ErrTooLarge, ErrTruncated, ErrDuplicateID, ErrEncoding}

// checkItem fails t unless it is a well-formed item: a bad record wraps a sentinel, a
// document has an id and UTF-8 text, nothing is larger than max.
func checkItem(t *testing.T, it *item, max int) {
	t.Helper()
	switch it.kind {
	case kindBad:
		for _, s := range sentinels {
			if errors.Is(it.err, s) {
				return
			}
		}
		t.Fatalf("bad record error %v wraps no sentinel", it.err)
	case kindDoc:
		if it.rec.ID == "" || !utf8.ValidString(it.rec.Text) || len(it.rec.HTML) > max || len(it.rec.Text) > max {
			t.Fatalf("document %+v", it.rec)
		}
	}
}

// FuzzJSONL reads arbitrary bytes as a JSONL file, plain and gzipped, with nested field
// paths. It must never panic, every bad record wraps a sentinel, and documents are
// well formed and within the limit. Seeds: testdata/fuzz/FuzzJSONL and those below.
func FuzzJSONL(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","text":"t","url":"u","m":{"p":1,"t":"2024-01-01T00:00:00Z"}}` + "\n",
		`{"id":1e3,"html":"<p>\u00e9\ud83d\ude00</p>"}` + "\r\n\n" + `{"text":"\ud800"}`,
		"\xef\xbb\xbf{\"text\":\"bom\"}\n[1,2]\n{\"text\":\"\xff\"}\nnull\n{\"id\":{},\"text\":1}",
		`{"a":` + string(bytes.Repeat([]byte("["), 400)),
	} {
		f.Add([]byte(s), false)
	}
	fields, err := newFields(Options{PriorityField: "m.p", TimeField: "m.t"}.withDefaults())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, gz bool) {
		if gz {
			data = encode(t, "gzip", data)
		}
		const max = 1 << 10
		drain(t, newJSONL("f", io.NopCloser(bytes.NewReader(data)), fields, max, new(atomic.Int64)), len(data), max, nil)
	})
}

// drain reads every item of a source over size bytes of input, checking each (and with
// check, if not nil): the source must end, with fewer items than bytes.
func drain(t *testing.T, s source, size, max int, check func(*item)) {
	defer s.close()
	for n := 0; ; n++ {
		var it item
		err := s.next(&it)
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if n > size+1 {
			t.Fatal("more items than bytes")
		}
		checkItem(t, &it, max)
		if check != nil {
			check(&it)
		}
	}
}

// FuzzWARC reads arbitrary bytes as a WARC file. It must never panic nor loop, bad
// records wrap a sentinel, documents are well formed and within the limit, and spans lie
// inside the file. Seeds: the files in testdata and testdata/fuzz/FuzzWARC.
func FuzzWARC(f *testing.F) {
	for _, name := range []string{"testdata/small.warc", "testdata/small.warc.gz"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 99999999999999999999\r\n\r\n"))
	f.Add([]byte("WARC/1.0\n\tcont\nX: y\n\nWARC/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 1 << 12
		drain(t, newWARC("f", io.NopCloser(bytes.NewReader(data)), max, new(atomic.Int64)), len(data), max, func(it *item) {
			if it.raw == nil && it.kind != kindBad && (it.start < 0 || it.end < it.start || it.end > int64(len(data))) {
				t.Fatalf("span [%d, %d) outside %d bytes", it.start, it.end, len(data))
			}
		})
	})
}

// FuzzHTTP parses arbitrary bytes as a stored HTTP response. It must never panic, errors
// wrap ErrSyntax or ErrEncoding, and the body stays within the limit. Seeds:
// testdata/fuzz/FuzzHTTP and those below.
func FuzzHTTP(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"))
	f.Add([]byte("HTTP/1.0 301\nLocation: /\nContent-Encoding: gzip\n\n\x1f\x8b"))
	f.Add([]byte("HTTP/2 200\r\nbroken header\r\n\r\nbody"))
	for _, c := range []string{"deflate", "raw deflate", "br", "zstd"} {
		header := strings.TrimPrefix(c, "raw ")
		f.Add(append([]byte("HTTP/1.1 200 OK\r\nContent-Encoding: "+header+"\r\n\r\n"), encode(f, c, []byte("<p>a page</p>"))...))
	}
	f.Fuzz(func(t *testing.T, block []byte) {
		const max = 1 << 12
		r, err := parseAndDecode(block, max)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrEncoding) {
				t.Fatalf("error %v wraps neither ErrSyntax nor ErrEncoding", err)
			}
			return
		}
		if r.status < 100 || r.status > 999 || len(r.body) > max && len(r.body) > len(block) {
			t.Fatalf("status %d, body of %d bytes from %d", r.status, len(r.body), len(block))
		}
	})
}

// FuzzParquet reads arbitrary bytes as a Parquet file, with a nested url column, a
// priority and a time, then copies its documents' rows with annotations as Copy would.
// It must never panic nor loop, bad records wrap a sentinel, documents are well formed
// and within the limit, and no input makes the reading allocate more than
// fuzzAllocBound. Seeds: small files written with each codec and their truncations (see
// parquetSeeds), and testdata/fuzz/FuzzParquet.
func FuzzParquet(f *testing.F) {
	for _, seed := range parquetSeeds(f) {
		f.Add(seed)
	}
	fields, err := newFields(Options{URLField: "meta.url", PriorityField: "p", TimeField: "t"}.withDefaults())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 1 << 12
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s, err := newParquet("f", bytes.NewReader(data), io.NopCloser(nil), int64(len(data)), fields, max, new(atomic.Int64))
		if err != nil {
			t.Fatal(err)
		}
		var rows []int64
		for n := 0; n < 1e5; n++ {
			var it item
			if err := s.next(&it); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			checkItem(t, &it, max)
			if it.kind == kindDoc {
				rows = append(rows, int64(it.rec.Source.Line-1))
			}
		}
		s.close()
		if s.file != nil {
			c, err := newParquetWriter(io.NopCloser(nil), s.file, io.Discard, true)
			for _, row := range rows {
				if err != nil {
					break
				}
				if c.write(row, &Annotation{Cluster: row, HasCluster: row%2 == 0, Method: "exact"}) != nil {
					break
				}
			}
			if c != nil {
				c.close()
			}
		}
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > fuzzAllocBound {
			t.Fatalf("%d MB allocated for %d bytes", n>>20, len(data))
		}
	})
}

// fuzzAllocBound is what reading and copying a fuzzed Parquet file may allocate.
const fuzzAllocBound = 64 << 20

// parquetSeeds returns small Parquet files: one per codec with every column FuzzParquet
// reads (some null), and truncations of one of them.
func parquetSeeds(f *testing.F) [][]byte {
	type meta struct {
		URL string `parquet:"url,optional"`
	}
	type row struct {
		ID   int64     `parquet:"id"`
		Text *string   `parquet:"text,optional"`
		HTML []byte    `parquet:"html,optional"`
		Meta meta      `parquet:"meta"`
		P    float64   `parquet:"p"`
		T    time.Time `parquet:"t,timestamp(microsecond)"`
		Tags []string  `parquet:"tags,list"`
	}
	text := "a text"
	rows := []row{{ID: 1, Text: &text, Meta: meta{URL: "https://a.example/"}, P: 2, T: time.Unix(1e9, 0)},
		{ID: 2, HTML: []byte("<p>a page</p>"), Tags: []string{"x", "y"}}, {ID: 3}}
	var seeds [][]byte
	for _, codec := range []compress.Codec{&parquet.Uncompressed, &parquet.Snappy, &parquet.Gzip, &parquet.Zstd, &parquet.Brotli, &parquet.Lz4Raw} {
		var b bytes.Buffer
		w := parquet.NewGenericWriter[row](&b, parquet.Compression(codec), parquet.MaxRowsPerRowGroup(2))
		if _, err := w.Write(rows); err != nil {
			f.Fatal(err)
		}
		if err := w.Close(); err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b.Bytes())
	}
	whole := seeds[1]
	for _, n := range []int{0, 4, len(whole) / 2, len(whole) - 9, len(whole) - 1} {
		seeds = append(seeds, whole[:n])
	}
	return seeds
}
