package server

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/valyala/fastjson"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/minhash"
)

// maxIDBytes is the longest document id accepted.
const maxIDBytes = 1024

// apiError is an error with its HTTP status and wire code.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func errorf(status int, code, format string, a ...any) *apiError {
	return &apiError{status, code, fmt.Sprintf(format, a...)}
}

// documentJSON is a document in a request.
type documentJSON struct {
	ID          string  `json:"id"`
	URL         string  `json:"url"`
	HTML        string  `json:"html"`
	HTMLBase64  string  `json:"html_base64"` // the page's bytes, for a page not in UTF-8
	Text        string  `json:"text"`
	ContentType string  `json:"content_type"`
	Priority    float64 `json:"priority"`
	FetchTime   string  `json:"fetch_time"`
}

// batchJSON is the body of POST /v1/documents:batch.
type batchJSON struct {
	Documents []json.RawMessage `json:"documents"`
	Add       *bool             `json:"add"`
}

// queryJSON is the body of POST /v1/fingerprints/query.
type queryJSON struct {
	SimHash string `json:"simhash"`
	MinHash string `json:"minhash"`
}

// queryBatchJSON is the body of POST /v1/fingerprints/query:batch.
type queryBatchJSON struct {
	Queries []json.RawMessage `json:"queries"`
}

// compareJSON is the body of POST /v1/compare.
type compareJSON struct {
	A    string `json:"a"`
	B    string `json:"b"`
	HTML bool   `json:"html"`
}

// readBody reads the request body, at most max bytes, gunzipped when its
// Content-Encoding is gzip: a longer one, before or after gunzip, is 413 too_large; one
// that does not gunzip is 400 bad_request; another Content-Encoding is 415
// unsupported_encoding. Its bytes, and the gunzipped ones, are taken from the request's
// body memory (see grantBody), 429 overloaded when they do not fit in time.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return readRaw(w, r, max)
	case "gzip", "x-gzip":
		z, err := readRaw(w, r, max)
		if err != nil {
			return nil, err
		}
		return gunzip(z, max, grantOf(r))
	default:
		return nil, errorf(http.StatusUnsupportedMediaType, "unsupported_encoding", "Content-Encoding %q: send the body plain or gzip-compressed", enc)
	}
}

// gunzip decompresses a gzip body, to at most max bytes: a compressed bomb stops there.
// Its output is taken from g's body memory as it grows, unless g is nil.
func gunzip(z []byte, max int64, g *bodyGrant) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "bad_request", "the gzip body does not decode: %v", err)
	}
	b, err := io.ReadAll(budgetReader{io.LimitReader(zr, max+1), g})
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return nil, ae
	case err != nil:
		return nil, errorf(http.StatusBadRequest, "bad_request", "the gzip body does not decode: %v", err)
	case int64(len(b)) > max:
		return nil, errorf(http.StatusRequestEntityTooLarge, "too_large", "the body is over %d bytes once gunzipped (the server's --max-body); send less", max)
	}
	return b, nil
}

// readRaw reads the request body as sent, at most max bytes.
func readRaw(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	var b []byte
	var err error
	if n := r.ContentLength; n >= 0 && n <= max {
		// A body that gives its length is read into one slice of that length (net/http
		// ends it there); io.ReadAll would grow one from 512 bytes, copying as it goes,
		// to up to twice the length. The length is taken from the body memory before
		// (grantBody), so a client that announces a large body and sends nothing holds
		// no more than it announced, for --timeout at most.
		b = make([]byte, n)
		_, err = io.ReadFull(r.Body, b)
	} else {
		b, err = io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	}
	var tooLarge *http.MaxBytesError
	var ae *apiError
	switch {
	case errors.As(err, &tooLarge):
		return nil, errorf(http.StatusRequestEntityTooLarge, "too_large", "the body is over %d bytes (the server's --max-body); send less", max)
	case errors.As(err, &ae):
		return nil, ae
	case err != nil:
		return nil, errorf(http.StatusBadRequest, "bad_request", "reading the body: %v", err)
	}
	return b, nil
}

// decodeStrict decodes one JSON value of body into v: the body must be valid UTF-8 (JSON
// decoding would quietly turn bad bytes into U+FFFD), nest at most maxDepth deep, have no field v does not know
// (a misspelt "fetchtime" would otherwise be dropped without a word) and nothing after
// the value.
func decodeStrict(body []byte, v any) error {
	if !utf8.Valid(body) {
		return errorf(http.StatusBadRequest, "invalid_json", "the body is not valid UTF-8; send JSON in UTF-8 (send a page in another charset as html_base64)")
	}
	if tooDeep(body) {
		return errTooDeep
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(http.StatusBadRequest, "invalid_json", "%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errorf(http.StatusBadRequest, "invalid_json", "data after the JSON value")
	}
	return nil
}

// decodeDocument decodes the body of POST /v1/documents and /v1/check.
func decodeDocument(body []byte) (neardup.Document, error) {
	var dj documentJSON
	if err := decodeDocumentJSON(body, &dj); err != nil {
		return neardup.Document{}, err
	}
	return dj.document()
}

// document validates a decoded document.
func (dj *documentJSON) document() (neardup.Document, error) {
	bad := func(format string, a ...any) (neardup.Document, error) {
		return neardup.Document{}, errorf(http.StatusBadRequest, "invalid_document", format, a...)
	}
	switch {
	case dj.ID == "":
		return bad("no id: every document needs an \"id\" of 1 to %d bytes", maxIDBytes)
	case len(dj.ID) > maxIDBytes:
		return bad("id of %d bytes: use at most %d", len(dj.ID), maxIDBytes)
	case dj.HTML != "" && dj.Text != "":
		return bad("%s: both html and text: give one", strconv.Quote(dj.ID))
	case dj.HTMLBase64 != "" && (dj.HTML != "" || dj.Text != ""):
		return bad("%s: html_base64 and html or text: give one", strconv.Quote(dj.ID))
	case dj.HTML == "" && dj.Text == "" && dj.HTMLBase64 == "":
		// Content-less documents would all be exact duplicates of each other.
		return bad("%s: no content: give its \"text\", \"html\" or \"html_base64\"", strconv.Quote(dj.ID))
	}
	doc := neardup.Document{ID: dj.ID, URL: dj.URL, Text: dj.Text, ContentType: dj.ContentType, Priority: dj.Priority}
	if dj.HTML != "" {
		doc.HTML = []byte(dj.HTML)
	}
	if dj.HTMLBase64 != "" {
		page, err := base64.StdEncoding.DecodeString(dj.HTMLBase64)
		if err != nil {
			return bad("%s: html_base64 is not standard base64 with padding (RFC 4648 section 4): %v", strconv.Quote(dj.ID), err)
		}
		doc.HTML = page
	}
	if dj.FetchTime != "" {
		t, err := time.Parse(time.RFC3339Nano, dj.FetchTime)
		if err != nil {
			return bad("fetch_time %s: use RFC 3339, as in 2024-05-01T12:00:00Z", strconv.Quote(dj.FetchTime))
		}
		doc.FetchTime = t
	}
	return doc, nil
}

// decodeBatch decodes the body of POST /v1/documents:batch: the documents, each valid or
// the error that answers it, and whether to add them. More than max documents is 413
// too_many_documents.
func decodeBatch(body []byte, max int) (docs []neardup.Document, errs []error, add bool, err error) {
	var bj batchJSON
	if err := decodeStrict(body, &bj); err != nil {
		return nil, nil, false, err
	}
	if len(bj.Documents) > max {
		return nil, nil, false, errorf(http.StatusRequestEntityTooLarge, "too_many_documents", "%d documents: send at most %d a batch (the server's --max-batch)", len(bj.Documents), max)
	}
	docs = make([]neardup.Document, len(bj.Documents))
	errs = make([]error, len(bj.Documents))
	seen := make(map[string]int, len(bj.Documents))
	for i, raw := range bj.Documents {
		var dj documentJSON
		if errs[i] = decodeDocumentJSON(raw, &dj); errs[i] == nil {
			docs[i], errs[i] = dj.document()
		}
		if errs[i] != nil {
			continue
		}
		// A second document with an id would replace the first one's verdict in the
		// index while both are answered as if stored.
		if j, dup := seen[docs[i].ID]; dup {
			errs[i] = errorf(http.StatusBadRequest, "duplicate_id", "%s is the id of document %d of this batch too: give each id once a batch", strconv.Quote(docs[i].ID), j+1)
			continue
		}
		seen[docs[i].ID] = i
	}
	return docs, errs, bj.Add == nil || *bj.Add, nil
}

// decodeQuery decodes the body of POST /v1/fingerprints/query.
func decodeQuery(body []byte) (neardup.Query, error) {
	var qj queryJSON
	if !withObject(body, qj.setFast) {
		qj = queryJSON{}
		if err := decodeStrict(body, &qj); err != nil {
			return neardup.Query{}, err
		}
	}
	return qj.query()
}

// query checks and parses a decoded query.
func (qj *queryJSON) query() (neardup.Query, error) {
	var q neardup.Query
	if qj.SimHash == "" && qj.MinHash == "" {
		return q, errorf(http.StatusBadRequest, "bad_request", "give a \"simhash\", a \"minhash\" or both")
	}
	if qj.SimHash != "" {
		v, err := parseSimHash(qj.SimHash)
		if err != nil {
			return q, err
		}
		q.SimHash, q.HasSimHash = v, true
	}
	if qj.MinHash != "" {
		sig, err := parseMinHash(qj.MinHash)
		if err != nil {
			return q, err
		}
		q.MinHash = sig
	}
	return q, nil
}

// decodeQueryBatch decodes the body of POST /v1/fingerprints/query:batch: the queries,
// each valid or the error that answers it, as decodeQuery would. No query is 400
// bad_request, more than max 413 too_many_queries.
func decodeQueryBatch(body []byte, max int) (qs []neardup.Query, errs []error, err error) {
	// Most batches are well formed: the fast path (withObject) or else one strict
	// decode of the whole body into queries then does; the fast path in a fraction of
	// the time (encoding/json's decoding was a fifth of the server's CPU under batched
	// queries, and over half of what it allocated). Otherwise the body is decoded as raw
	// queries, each decoded alone, so that a bad one gets its own error.
	var typed struct {
		Queries []queryJSON `json:"queries"`
	}
	var raw queryBatchJSON
	n := 0
	if withObject(body, func(o *fastjson.Object) bool { return setQueriesFast(o, &typed.Queries) }) {
		n = len(typed.Queries)
	} else if typed.Queries = nil; decodeStrict(body, &typed) == nil {
		n = len(typed.Queries)
	} else if err := decodeStrict(body, &raw); err != nil {
		return nil, nil, err
	} else {
		n = len(raw.Queries)
	}
	switch {
	case n == 0:
		return nil, nil, errorf(http.StatusBadRequest, "bad_request", "no queries: give 1 to %d in \"queries\"", max)
	case n > max:
		return nil, nil, errorf(http.StatusRequestEntityTooLarge, "too_many_queries", "%d queries: send at most %d a batch (the server's --max-batch)", n, max)
	}
	qs, errs = make([]neardup.Query, n), make([]error, n)
	for i := range n {
		if raw.Queries == nil {
			qs[i], errs[i] = typed.Queries[i].query()
		} else {
			qs[i], errs[i] = decodeQuery(raw.Queries[i])
		}
	}
	return qs, errs, nil
}

// decodeCompare decodes the body of POST /v1/compare.
func decodeCompare(body []byte) (compareJSON, error) {
	var cj compareJSON
	err := decodeStrict(body, &cj)
	return cj, err
}

// parseSimHash reads 16 hex digits.
func parseSimHash(s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 16, 64)
	if len(s) != 16 || err != nil {
		return 0, errorf(http.StatusBadRequest, "invalid_document", "simhash %.40q: want 16 hex digits", s)
	}
	return v, nil
}

// formatSimHash writes 16 hex digits.
func formatSimHash(v uint64) string { return fmt.Sprintf("%016x", v) }

// parseMinHash reads a signature: the hex of its uint32 values, each little-endian.
func parseMinHash(s string) (minhash.Signature, error) {
	if len(s)%8 != 0 || len(s)/8 > minhash.MaxK {
		return nil, errMinHash()
	}
	sig := make(minhash.Signature, len(s)/8)
	var b [4]byte
	for i := range sig {
		if _, err := hex.Decode(b[:], []byte(s[8*i:8*i+8])); err != nil {
			return nil, errMinHash()
		}
		sig[i] = binary.LittleEndian.Uint32(b[:])
	}
	return sig, nil
}

// errMinHash is parseMinHash's error.
func errMinHash() error {
	return errorf(http.StatusBadRequest, "invalid_document", "minhash: want the hex of 1 to %d little-endian uint32 values (8 hex digits each)", minhash.MaxK)
}

// formatMinHash is parseMinHash's inverse.
func formatMinHash(sig minhash.Signature) string {
	b := make([]byte, 0, 4*len(sig))
	for _, v := range sig {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return hex.EncodeToString(b)
}
