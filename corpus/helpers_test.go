package corpus_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/corpus"
)

// warcPage is a page to pack into a test WARC.
type warcPage struct {
	ID, URL, ContentType string
	HTML                 []byte
}

// warcRecord returns one WARC 1.1 record with the given type, fields and block.
func warcRecord(typ, id, extra string, block []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <%s>\r\nWARC-Date: 2024-05-01T12:00:00Z\r\n%sContent-Length: %d\r\n\r\n", typ, id, extra, len(block))
	b.Write(block)
	b.WriteString("\r\n\r\n")
	return b.Bytes()
}

// responseRecord returns a response record holding an HTTP/1.1 200 response with page.
func responseRecord(p warcPage) []byte {
	http := fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", p.ContentType, len(p.HTML))
	http = append(http, p.HTML...)
	return warcRecord("response", p.ID, "WARC-Target-URI: "+p.URL+"\r\nContent-Type: application/http; msgtype=response\r\n", http)
}

// packWARC writes a WARC 1.1 file, gzip per record when gz is set: a warcinfo record,
// then a request and a response record per page. It returns the response records' bytes
// as stored.
func packWARC(t testing.TB, path string, gz bool, pages []warcPage) [][]byte {
	t.Helper()
	var out bytes.Buffer
	add := func(rec []byte) []byte {
		if !gz {
			out.Write(rec)
			return rec
		}
		var m bytes.Buffer
		z := gzip.NewWriter(&m)
		z.Write(rec)
		z.Close()
		out.Write(m.Bytes())
		return m.Bytes()
	}
	add(warcRecord("warcinfo", "urn:uuid:info", "Content-Type: application/warc-fields\r\n", []byte("software: neardup test\r\n")))
	var responses [][]byte
	for i, p := range pages {
		add(warcRecord("request", fmt.Sprintf("urn:uuid:req-%d", i), "WARC-Target-URI: "+p.URL+"\r\n", []byte("GET / HTTP/1.1\r\n\r\n")))
		responses = append(responses, add(responseRecord(p)))
	}
	writeFile(t, path, out.Bytes())
	return responses
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	z := gzip.NewWriter(&out)
	z.Write(b)
	z.Close()
	return out.Bytes()
}

func zstdBytes(b []byte) []byte {
	z, _ := zstd.NewWriter(nil)
	defer z.Close()
	return z.EncodeAll(b, nil)
}

// readAll reads paths with opt and returns the records and bad records.
func readAll(t testing.TB, paths []string, opt corpus.Options) ([]corpus.Record, []corpus.BadRecord, corpus.Stats) {
	t.Helper()
	var bad []corpus.BadRecord
	opt.OnError = func(b corpus.BadRecord) error {
		bad = append(bad, b)
		return nil
	}
	r, err := corpus.Open(paths, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []corpus.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs, bad, r.Stats()
}
