package bench

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/corpus"
)

// Docs makes and encodes the documents of a run (it is read-only, shared by the
// clients, each with a clone of the corpus): document i is the synthetic
// corpus's document i, with id "doc-i" and URL "https://bench.example/s<i mod 1000>/i",
// except that a share urlDupRate of the near copies take their original's URL.
type Docs struct {
	corpus     *Corpus // a template: each goroutine clones it
	urlDupRate float64
	pages      [][]byte // with --html, the pages' fields (HTMLPages), used instead of corpus
}

// SyntheticDocs returns the documents of corpus, a share urlDupRate of its near copies
// at their original's URL.
func SyntheticDocs(corpus *Corpus, urlDupRate float64) *Docs {
	return &Docs{corpus: corpus, urlDupRate: urlDupRate}
}

// PageDocs returns documents that are the pages (as HTMLPages returns them) in turn,
// document i the page i mod len(pages) under id "doc-i" and URL
// "https://bench.example/p/i".
func PageDocs(pages [][]byte) *Docs { return &Docs{pages: pages} }

// Pages returns the number of pages of PageDocs, 0 for synthetic documents.
func (d *Docs) Pages() int { return len(d.pages) }

// url returns document i's URL.
func (d *Docs) url(c *Corpus, i int) string {
	u := i
	if o := c.Original(i); o >= 0 && d.urlDupRate > 0 {
		if rand.New(rand.NewPCG(c.seed^0x5851f42d4c957f2d, uint64(i))).Float64() < d.urlDupRate {
			u = o
		}
	}
	return "https://bench.example/s" + strconv.Itoa(u%1000) + "/" + strconv.Itoa(u)
}

// appendJSON appends document i as the JSON of a document in a request; c is the
// calling goroutine's corpus and text its scratch buffer, returned grown.
func (d *Docs) appendJSON(dst []byte, c *Corpus, i int, text []byte) ([]byte, []byte) {
	if d.pages != nil {
		return d.appendHTMLJSON(dst, i), text
	}
	text = c.Text(text[:0], i)
	dst = append(dst, `{"id":"doc-`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `","url":"`...)
	dst = append(dst, d.url(c, i)...)
	dst = append(dst, `","text":`...)
	q, _ := json.Marshal(string(text)) // a string always marshals
	dst = append(dst, q...)
	return append(dst, '}'), text
}

// query returns a fingerprint query with document i's fingerprints.
func (d *Docs) query(c *Corpus, f *neardup.Fingerprinter, i int, text []byte) (neardup.Query, []byte, error) {
	text = c.Text(text[:0], i)
	fp, err := f.Fingerprint(neardup.Document{ID: "doc-" + strconv.Itoa(i), Text: string(text)})
	if err != nil {
		return neardup.Query{}, text, err
	}
	return neardup.Query{SimHash: fp.SimHash, HasSimHash: true, MinHash: fp.MinHash}, text, nil
}

// queryBody returns the body of a request for the fingerprint query q.
func queryBody(q neardup.Query) []byte {
	mh := make([]byte, 0, 4*len(q.MinHash))
	for _, v := range q.MinHash {
		mh = binary.LittleEndian.AppendUint32(mh, v)
	}
	return fmt.Appendf(nil, `{"simhash":"%016x","minhash":"%s"}`, q.SimHash, hex.EncodeToString(mh))
}

// prepare encodes n items on every CPU: item k of the slice returned is what encode
// makes of k, given the goroutine's corpus and scratch text. done counts the items made.
func prepare[T any](n int, corpus *Corpus, done *atomic.Int64, encode func(c *Corpus, k int, text []byte) (T, []byte, error)) ([]T, error) {
	out := make([]T, n)
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			c := corpus.Clone()
			var text []byte
			for k := w; k < n; k += workers {
				var err error
				out[k], text, err = encode(c, k, text)
				if err != nil {
					errs[w] = err
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// HTMLPages reads the pages of the inputs of --html (directory trees of .html files,
// WARC files, JSONL with an html field: what 'neardup dedup' reads) and returns each as
// the JSON of its html and content_type fields, without the braces, ready to be put in
// a document: "html" when it is UTF-8, else "html_base64", as the Go client sends them.
// Records without HTML are skipped; none at all is an error. Each input is read on its
// own, so that two directories of the same file names (two versions of a manual) give
// all their pages: read together, the second one's would repeat the first one's ids.
func HTMLPages(paths []string) ([][]byte, error) {
	var out [][]byte
	for _, p := range paths {
		var err error
		if out, err = appendHTMLPages(out, p); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--html %q: no HTML page found; give directories of .html files, WARC files or JSONL with an html field", paths)
	}
	return out, nil
}

// appendHTMLPages appends the pages of one input of --html to out, as HTMLPages
// returns them.
func appendHTMLPages(out [][]byte, path string) ([][]byte, error) {
	r, err := corpus.Open([]string{path}, corpus.Options{})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(rec.HTML) == 0 {
			continue
		}
		var b []byte
		if utf8.Valid(rec.HTML) {
			b = append(append(b, `"html":`...), quoteJSON(string(rec.HTML))...)
		} else {
			q, _ := json.Marshal(rec.HTML) // base64
			b = append(append(b, `"html_base64":`...), q...)
		}
		if rec.ContentType != "" {
			q, _ := json.Marshal(rec.ContentType)
			b = append(append(b, `,"content_type":`...), q...)
		}
		out = append(out, b)
	}
}

// quoteJSON returns s as a JSON string, without json.Marshal's escapes of "<", ">" and
// "&", as the Go client sends it.
func quoteJSON(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes, to a bytes.Buffer that does not fail
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// appendHTMLJSON appends document i of an --html run: id "doc-i", URL
// "https://bench.example/p/i" and the page i mod the number of pages, so that every
// document is a new id and URL whose page the service extracts and fingerprints, the
// pages' later rounds being exact duplicates of the first.
func (d *Docs) appendHTMLJSON(dst []byte, i int) []byte {
	dst = append(dst, `{"id":"doc-`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `","url":"https://bench.example/p/`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `",`...)
	dst = append(dst, d.pages[i%len(d.pages)]...)
	return append(dst, '}')
}
