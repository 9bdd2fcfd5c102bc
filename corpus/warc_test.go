package corpus_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/evaldata"
)

// TestWARCAEB packs the 181 AEB pages into a gzip-per-record WARC 1.1, reads them back,
// and copies a kept subset, whose records must be the input's bytes.
func TestWARCAEB(t *testing.T) {
	root, err := evaldata.Root()
	evaldata.Need(t, err)
	arts, err := evaldata.AEB(root)
	if err != nil {
		t.Fatal(err)
	}
	pages := make([]warcPage, len(arts))
	for i, a := range arts {
		pages[i] = warcPage{ID: "urn:uuid:" + a.ID, URL: a.URL, ContentType: "text/html; charset=utf-8", HTML: a.HTML}
	}
	for _, gz := range []bool{true, false} {
		t.Run(fmt.Sprint("gzip=", gz), func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "aeb.warc")
			if gz {
				in += ".gz"
			}
			stored := packWARC(t, in, gz, pages)
			recs, bad, st := readAll(t, []string{in}, corpus.Options{})
			if len(recs) != 181 || len(bad) != 0 || st.Skipped != 1+181 {
				t.Fatalf("%d records, %d bad (%v), Stats %+v; want 181, warcinfo and requests skipped", len(recs), len(bad), bad, st)
			}
			for i, r := range recs {
				if r.ID != pages[i].ID || r.URL != pages[i].URL || !bytes.Equal(r.HTML, pages[i].HTML) || r.ContentType != pages[i].ContentType || r.FetchTime.IsZero() {
					t.Fatalf("record %d: %s %s, want %s %s", i, r.ID, r.URL, pages[i].ID, pages[i].URL)
				}
			}
			out := filepath.Join(dir, "out")
			st, err := corpus.Copy([]string{in}, corpus.Options{}, out, corpus.CopyOptions{Keep: func(id string) bool { return id[len(id)-1] < '8' }})
			if err != nil {
				t.Fatal(err)
			}
			copied, err := os.ReadFile(filepath.Join(out, filepath.Base(in)))
			if err != nil {
				t.Fatal(err)
			}
			var kept []int
			for i, p := range pages {
				if p.ID[len(p.ID)-1] < '8' {
					kept = append(kept, i)
				}
			}
			if st.Kept != int64(len(kept)) {
				t.Errorf("Kept %d, want %d", st.Kept, len(kept))
			}
			for _, i := range kept {
				if !bytes.Contains(copied, stored[i]) {
					t.Fatalf("the copy does not hold page %d's record as stored", i)
				}
			}
			back, bad, st := readAll(t, []string{filepath.Join(out, filepath.Base(in))}, corpus.Options{})
			if len(back) != len(kept) || len(bad) != 0 || st.Skipped != 1 {
				t.Fatalf("read back %d records, bad %v, Stats %+v; want %d and the warcinfo", len(back), bad, st, len(kept))
			}
			for j, r := range back {
				if p := pages[kept[j]]; r.ID != p.ID || !bytes.Equal(r.HTML, p.HTML) {
					t.Fatalf("copy record %d is %s, want %s", j, r.ID, p.ID)
				}
			}
		})
	}
}

func TestWARCTestdata(t *testing.T) {
	for _, name := range []string{"small.warc", "small.warc.gz"} {
		t.Run(name, func(t *testing.T) {
			recs, bad, st := readAll(t, []string{filepath.Join("testdata", name)}, corpus.Options{})
			var got []string
			for _, r := range recs {
				got = append(got, fmt.Sprintf("%s %s %q %s", r.ID, r.URL, r.HTML, r.ContentType))
			}
			want := []string{
				`urn:uuid:1 http://example.com/ "<p>caf\xe9</p>" text/html; charset=iso-8859-1`,
				`urn:uuid:2 http://example.com/chunked "<p>chunked body</p>" text/html`,
				`urn:uuid:3 http://example.com/gz "<p>gzipped</p>" text/html`,
				`urn:uuid:6 file:///page.html "<p>resource</p>" text/html`,
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// warcinfo, request, 404 response, image response, metadata
			if len(bad) != 0 || st.Skipped != 5 {
				t.Errorf("bad %v, Stats %+v", bad, st)
			}
		})
	}
}

func TestWARCDamaged(t *testing.T) {
	good := responseRecord(warcPage{ID: "urn:uuid:g", URL: "http://g/", ContentType: "text/html", HTML: []byte("<p>g</p>")})
	other := responseRecord(warcPage{ID: "urn:uuid:h", URL: "http://h/", ContentType: "text/html", HTML: []byte("<p>h</p>")})
	// setLength replaces the WARC Content-Length, the record's first.
	setLength := func(rec []byte, v string) []byte {
		i := bytes.Index(rec, []byte("Content-Length: ")) + len("Content-Length: ")
		j := i + bytes.IndexByte(rec[i:], '\r')
		return bytes.Join([][]byte{rec[:i], []byte(v), rec[j:]}, nil)
	}
	short := setLength(good, "60")
	long := setLength(good, "7600")
	notNumber := setLength(good, "lots")
	noDate := bytes.Replace(good, []byte("WARC-Date: 2024-05-01T12:00:00Z\r\n"), nil, 1)
	emptyID := bytes.Replace(good, []byte("<urn:uuid:g>"), []byte("<>"), 1)
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, tc := range []struct {
		name   string
		data   []byte
		ids    []string
		bad    error
		offset int64
	}{
		{"short Content-Length", cat(short, other), []string{"urn:uuid:h"}, corpus.ErrSyntax, 0},
		{"bad Content-Length", cat(other, notNumber, good), []string{"urn:uuid:h", "urn:uuid:g"}, corpus.ErrSyntax, int64(len(other))},
		{"no WARC-Date", cat(noDate, other), []string{"urn:uuid:h"}, corpus.ErrSyntax, 0},
		{"empty WARC-Record-ID", cat(emptyID, other), []string{"urn:uuid:h"}, corpus.ErrSyntax, 0},
		{"long Content-Length", cat(other, long), []string{"urn:uuid:h"}, corpus.ErrTruncated, int64(len(other))},
		{"truncated", cat(other, good[:100]), []string{"urn:uuid:h"}, corpus.ErrTruncated, int64(len(other))},
		{"truncated gzip", cat(gzipBytes(other), gzipBytes(good)[:60]), []string{"urn:uuid:h"}, corpus.ErrTruncated, int64(len(gzipBytes(other)))},
		{"gzip bad member", cat(gzipBytes(short), gzipBytes(other)), []string{"urn:uuid:h"}, corpus.ErrSyntax, 0},
		{"too large", cat(other, warcRecord("response", "urn:uuid:big", "", bytes.Repeat([]byte("x"), 3000)), good), []string{"urn:uuid:h", "urn:uuid:g"}, corpus.ErrTooLarge, int64(len(other))},
		{"too large gzip", cat(gzipBytes(other), gzipBytes(warcRecord("response", "urn:uuid:big", "", make([]byte, 64<<10))), gzipBytes(good)), []string{"urn:uuid:h"}, corpus.ErrTooLarge, int64(len(gzipBytes(other)))},
		{"not HTTP", cat(warcRecord("response", "urn:uuid:x", "", []byte("hello")), other), []string{"urn:uuid:h"}, corpus.ErrSyntax, 0},
		{"duplicate id", cat(other, other), []string{"urn:uuid:h"}, corpus.ErrDuplicateID, int64(len(other))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.warc")
			writeFile(t, path, tc.data)
			recs, bad, _ := readAll(t, []string{path}, corpus.Options{Format: corpus.WARC, MaxRecordBytes: 2000})
			var ids []string
			for _, r := range recs {
				ids = append(ids, r.ID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tc.ids) {
				t.Errorf("ids %v, want %v", ids, tc.ids)
			}
			if len(bad) != 1 || !errors.Is(bad[0], tc.bad) || bad[0].Source.Offset != tc.offset {
				t.Errorf("bad %v; want one %v at offset %d", bad, tc.bad, tc.offset)
			} else if want := fmt.Sprintf("%s@%d: corpus: ", path, tc.offset); !strings.HasPrefix(bad[0].Error(), want) {
				t.Errorf("message %q does not start with %q", bad[0], want)
			}
		})
	}
}

// TestWARCWholeGzip reads a WARC gzipped whole (one member) and copies it: each kept
// record becomes a gzip member of its own.
func TestWARCWholeGzip(t *testing.T) {
	var plain bytes.Buffer
	for i := range 3 {
		plain.Write(responseRecord(warcPage{ID: fmt.Sprint("urn:uuid:", i), URL: "http://x/", ContentType: "text/html", HTML: []byte("<p>x</p>")}))
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "whole.warc.gz")
	writeFile(t, in, gzipBytes(plain.Bytes()))
	recs, bad, _ := readAll(t, []string{in}, corpus.Options{})
	if len(recs) != 3 || len(bad) != 0 || recs[2].Source.Offset != 0 {
		t.Fatalf("%v, %v", recs, bad)
	}
	out := filepath.Join(dir, "out")
	if _, err := corpus.Copy([]string{in}, corpus.Options{}, out, corpus.CopyOptions{Keep: func(id string) bool { return id != "urn:uuid:1" }}); err != nil {
		t.Fatal(err)
	}
	back, bad, _ := readAll(t, []string{filepath.Join(out, "whole.warc.gz")}, corpus.Options{})
	if len(back) != 2 || back[1].ID != "urn:uuid:2" || back[1].Source.Offset == 0 || len(bad) != 0 {
		t.Errorf("copy: %v, %v", back, bad)
	}
}

// TestWARCContentEncoding reads a response sent with Content-Encoding zstd: the record's
// HTML is the page, decoded. Responses that are not documents are skipped before their
// bodies are decoded, so a coding the reader does not know, or a corrupt body, does not
// make them bad records.
func TestWARCContentEncoding(t *testing.T) {
	page := []byte("<p>A page a server sent compressed with zstd.</p>")
	response := func(id, header string, body []byte) []byte {
		return warcRecord("response", id, "WARC-Target-URI: http://z/\r\nContent-Type: application/http; msgtype=response\r\n",
			append([]byte(header+"\r\n\r\n"), body...))
	}
	path := filepath.Join(t.TempDir(), "in.warc")
	writeFile(t, path, bytes.Join([][]byte{
		response("urn:uuid:z", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: zstd", zstdBytes(page)),
		response("urn:uuid:img", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Encoding: compress", []byte("\x1f\x9d...")),
		response("urn:uuid:moved", "HTTP/1.1 301 Moved\r\nContent-Type: text/html\r\nContent-Encoding: gzip", gzipBytes(page)[:10]),
		response("urn:uuid:bad", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: compress", []byte("\x1f\x9d...")),
	}, nil))
	recs, bad, st := readAll(t, []string{path}, corpus.Options{Format: corpus.WARC})
	if len(recs) != 1 || !bytes.Equal(recs[0].HTML, page) {
		t.Fatalf("records %+v; want the page decoded", recs)
	}
	if len(bad) != 1 || !errors.Is(bad[0], corpus.ErrEncoding) || st.Skipped != 2 {
		t.Errorf("bad %v, %d skipped; want the HTML page in an unknown coding bad, the image and the redirect skipped", bad, st.Skipped)
	}
}
