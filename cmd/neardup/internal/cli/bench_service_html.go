package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/neardup/neardup/cmd/neardup/internal/bench"
	"github.com/neardup/neardup/corpus"
)

// htmlPages reads the pages of the inputs of --html (directory trees of .html files,
// WARC files, JSONL with an html field: what 'neardup dedup' reads) and returns each as
// the JSON of its html and content_type fields, without the braces, ready to be put in
// a document: "html" when it is UTF-8, else "html_base64", as the Go client sends them.
// Records without HTML are skipped; none at all is an error.
func htmlPages(paths []string) ([][]byte, error) {
	r, err := corpus.Open(paths, corpus.Options{})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out [][]byte
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
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
	if len(out) == 0 {
		return nil, fmt.Errorf("--html %q: no HTML page found; give directories of .html files, WARC files or JSONL with an html field", paths)
	}
	return out, nil
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
func (d *loadDocs) appendHTMLJSON(dst []byte, i int) []byte {
	dst = append(dst, `{"id":"doc-`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `","url":"https://bench.example/p/`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `",`...)
	dst = append(dst, d.pages[i%len(d.pages)]...)
	return append(dst, '}')
}

// loadDocs returns the documents of the run: the pages of --html, else the synthetic
// corpus, which learns its words from the evaluation data.
func (c *benchServiceCmd) loadDocs() (*loadDocs, error) {
	if len(c.html) > 0 {
		pages, err := htmlPages(c.html)
		return &loadDocs{pages: pages}, err
	}
	corpus := bench.NewCorpus(c.seed, c.size, 3, c.dupRate)
	return &loadDocs{corpus: corpus, urlDupRate: c.urlDupRate}, nil
}
