package corpus

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// encode returns b in the HTTP content coding named, as a server sends it: deflate in
// the zlib format RFC 9110 specifies, or raw for "raw deflate", as some servers send it.
func encode(t testing.TB, coding string, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	var w io.WriteCloser
	switch coding {
	case "gzip":
		w = gzip.NewWriter(&out)
	case "deflate":
		w = zlib.NewWriter(&out)
	case "raw deflate":
		w, _ = flate.NewWriter(&out, flate.DefaultCompression)
	case "br":
		w = brotli.NewWriter(&out)
	case "zstd":
		z, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		return z.EncodeAll(b, nil)
	default:
		t.Fatalf("no coding %q", coding)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// parseAndDecode is parseHTTP then decodeBody, as the WARC reader calls them for a
// response that is a document.
func parseAndDecode(block []byte, max int) (httpResponse, error) {
	r, err := parseHTTP(block)
	if err == nil {
		err = r.decodeBody(max)
	}
	return r, err
}

func TestHTTPContentEncoding(t *testing.T) {
	page := bytes.Repeat([]byte("<p>A page of text, sent compressed.</p>\n"), 100)
	response := func(coding string, body []byte) []byte {
		return append([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: "+coding+"\r\n\r\n"), body...)
	}
	const max = 1 << 20
	bomb := make([]byte, 4*max)
	for _, c := range []struct{ header, coding string }{
		{"gzip", "gzip"}, {"x-gzip", "gzip"}, {"deflate", "deflate"}, {"deflate", "raw deflate"},
		{"br", "br"}, {"BR", "br"}, {"zstd", "zstd"},
	} {
		t.Run(c.header+" "+c.coding, func(t *testing.T) {
			body := encode(t, c.coding, page)
			r, err := parseAndDecode(response(c.header, body), max)
			if err != nil || !bytes.Equal(r.body, page) || r.contentType != "text/html" {
				t.Fatalf("body of %d bytes, %v; want the page's %d", len(r.body), err, len(page))
			}
			_, err = parseAndDecode(response(c.header, body[:len(body)/2]), max)
			if !errors.Is(err, ErrEncoding) || !errors.Is(err, ErrTruncated) {
				t.Errorf("truncated: %v, want ErrEncoding and ErrTruncated", err)
			}
			_, err = parseAndDecode(response(c.header, encode(t, c.coding, bomb)), max)
			if !errors.Is(err, ErrEncoding) || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 1048576 bytes once decompressed") {
				t.Errorf("%d bytes compressed to a bomb: %v, want ErrEncoding over the limit", len(bomb), err)
			}
		})
	}
	for _, body := range []string{"identity", ""} {
		r, err := parseAndDecode(response(body, page), max)
		if err != nil || !bytes.Equal(r.body, page) {
			t.Errorf("Content-Encoding %q: body of %d bytes, %v", body, len(r.body), err)
		}
	}
	_, err := parseAndDecode(response("compress", page), max)
	if !errors.Is(err, ErrEncoding) || !strings.Contains(err.Error(), `"compress"`) {
		t.Errorf("Content-Encoding compress: %v, want ErrEncoding naming it", err)
	}
	_, err = parseAndDecode(response("deflate", page), max)
	if !errors.Is(err, ErrEncoding) {
		t.Errorf("deflate that is not: %v, want ErrEncoding", err)
	}
}
