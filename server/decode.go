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

// parsers are the fastjson parsers of decodeDocumentJSON.
var parsers fastjson.ParserPool

// maxPooledBody is the largest body whose parser goes back to the pool: a parser keeps
// its copy of the largest body it has parsed, and pooled parsers of 31 MiB bodies held
// hundreds of megabytes past their requests, outside the body memory.
const maxPooledBody = 1 << 20

// decodeDocumentJSON is decodeStrict for a document, the service's commonest body, in
// a fraction of its time (encoding/json scans a body twice and was 8% of the server's
// CPU under a closed loop of adds). It takes what fastjson validates and parses when
// every field is as decodeStrict would take it; anything else, and every body with an
// escaped UTF-16 surrogate (which fastjson decodes otherwise), goes to decodeStrict,
// which then decodes it or says what is wrong. FuzzDecodeDocumentJSON holds the two
// to the same results.
func decodeDocumentJSON(body []byte, dj *documentJSON) error {
	if withObject(body, dj.setFast) {
		return nil
	}
	*dj = documentJSON{}
	if err := decodeStrict(body, dj); err != nil {
		return err
	}
	if hasSurrogateEscape(body) {
		return checkKeyEscapes(body)
	}
	return nil
}

// checkKeyEscapes refuses a document whose id or url escapes a lone UTF-16 surrogate:
// encoding/json turns every one into U+FFFD, so "a\ud800" and "a\udbff" would become
// the same id and the second would silently replace the first. body has been decoded
// by decodeStrict; its id and url are found as it found them (names matched ignoring
// case, the last one kept).
func checkKeyEscapes(body []byte) error {
	var keys struct {
		ID  json.RawMessage `json:"id"`
		URL json.RawMessage `json:"url"`
	}
	if err := json.Unmarshal(body, &keys); err != nil {
		return errorf(http.StatusBadRequest, "invalid_json", "%v", err)
	}
	for _, k := range []struct {
		name string
		lit  json.RawMessage
	}{{"id", keys.ID}, {"url", keys.URL}} {
		if loneSurrogate(k.lit) {
			return errorf(http.StatusBadRequest, "invalid_document", "the %s %s escapes a UTF-16 surrogate that is not half of a pair: give it as Unicode text", k.name, k.lit)
		}
	}
	return nil
}

// loneSurrogate reports whether the JSON string literal lit escapes a UTF-16 surrogate
// (\uD800 to \uDFFF) that is not half of a high-low pair.
func loneSurrogate(lit []byte) bool {
	high := false // the previous escape was a high surrogate awaiting its low half
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			if high {
				return true
			}
			continue
		}
		if i+1 >= len(lit) || lit[i+1] != 'u' || i+6 > len(lit) {
			if high {
				return true
			}
			i++
			continue
		}
		u, err := strconv.ParseUint(string(lit[i+2:i+6]), 16, 16)
		if err != nil {
			return false // not JSON: decodeStrict has refused it
		}
		i += 5
		switch {
		case u >= 0xD800 && u < 0xDC00:
			if high {
				return true
			}
			high = true
		case u >= 0xDC00 && u < 0xE000:
			if !high {
				return true
			}
			high = false
		default:
			if high {
				return true
			}
		}
	}
	return high
}

// withObject parses body with fastjson and calls fn with its object, when the body is
// valid UTF-8 and JSON nested at most maxDepth deep (fastjson recurses once a level),
// an object, and holds no escaped UTF-16 surrogate: what decodeStrict would read as
// fastjson does. It returns fn's result, or false without
// calling fn. The object is the parser's: fn must copy what it keeps.
func withObject(body []byte, fn func(o *fastjson.Object) bool) bool {
	if !utf8.Valid(body) || hasSurrogateEscape(body) || tooDeep(body) || fastjson.ValidateBytes(body) != nil {
		return false
	}
	p := parsers.Get()
	if len(body) <= maxPooledBody {
		defer parsers.Put(p)
	}
	v, err := p.ParseBytes(body)
	if err != nil || v.Type() != fastjson.TypeObject {
		return false
	}
	return fn(v.GetObject())
}

// setFast sets dj's fields from o as decodeStrict would, or reports false (leaving dj
// partly set) when a field is one it leaves to decodeStrict.
func (dj *documentJSON) setFast(o *fastjson.Object) bool {
	ok := true
	var num []byte
	o.Visit(func(key []byte, v *fastjson.Value) {
		f := dj.field(key)
		priority := f == nil && asciiEqualFold(key, "priority")
		switch {
		case !ok:
		case f == nil && !priority:
			ok = false
		case v.Type() == fastjson.TypeNull: // null leaves a field as it is
		case priority:
			if v.Type() != fastjson.TypeNumber {
				ok = false
				return
			}
			num = v.MarshalTo(num[:0]) // the number as written
			p, err := strconv.ParseFloat(string(num), 64)
			ok = err == nil
			dj.Priority = p
		case v.Type() != fastjson.TypeString:
			ok = false
		default:
			*f = string(v.GetStringBytes())
		}
	})
	return ok
}

// field returns the string field of dj whose JSON name is key, matched as encoding/json
// matches an ASCII name (exactly or ignoring case), or nil: for "priority", another
// name, or a name not in ASCII, which decodeDocumentJSON leaves to encoding/json.
func (dj *documentJSON) field(key []byte) *string {
	for _, f := range [...]struct {
		name string
		p    *string
	}{{"id", &dj.ID}, {"url", &dj.URL}, {"html", &dj.HTML}, {"html_base64", &dj.HTMLBase64},
		{"text", &dj.Text}, {"content_type", &dj.ContentType}, {"fetch_time", &dj.FetchTime}} {
		if asciiEqualFold(key, f.name) {
			return f.p
		}
	}
	return nil
}

// asciiEqualFold reports whether key, all ASCII, equals the lower-case ASCII name
// ignoring case.
func asciiEqualFold(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i, c := range key {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// hasSurrogateEscape reports whether body may hold an escaped UTF-16 surrogate (\uD800
// to \uDFFF); an escaped backslash before "uD8" counts too, which only costs speed.
func hasSurrogateEscape(body []byte) bool {
	for {
		i := bytes.Index(body, []byte(`\u`))
		if i < 0 || i+3 >= len(body) {
			return false
		}
		if d, c := body[i+2], body[i+3]; (d == 'd' || d == 'D') && strings.IndexByte("89abcdefABCDEF", c) >= 0 {
			return true
		}
		body = body[i+2:]
	}
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

// setFast sets qj's fields from o as decodeStrict would, or reports false (leaving qj
// partly set) when a field is one it leaves to decodeStrict: another name, a name
// outside ASCII, a value not a string or null.
func (qj *queryJSON) setFast(o *fastjson.Object) bool {
	ok := true
	o.Visit(func(key []byte, v *fastjson.Value) {
		var f *string
		switch {
		case asciiEqualFold(key, "simhash"):
			f = &qj.SimHash
		case asciiEqualFold(key, "minhash"):
			f = &qj.MinHash
		}
		switch {
		case !ok:
		case f == nil:
			ok = false
		case v.Type() == fastjson.TypeNull: // null leaves a field as it is
		case v.Type() != fastjson.TypeString:
			ok = false
		default:
			*f = string(v.GetStringBytes())
		}
	})
	return ok
}

// setQueriesFast sets *qs from o, a query batch, as decodeStrict would, or reports false
// (leaving *qs partly set) when the batch holds anything it leaves to decodeStrict: a
// name other than "queries" or repeated (encoding/json would decode the second array
// into the first one's elements), an item not an object, a query setFast refuses. A
// null "queries" leaves *qs nil, as encoding/json does.
func setQueriesFast(o *fastjson.Object, qs *[]queryJSON) bool {
	ok, seen := true, false
	o.Visit(func(key []byte, v *fastjson.Value) {
		switch {
		case !ok:
		case !asciiEqualFold(key, "queries") || seen:
			ok = false
		case v.Type() == fastjson.TypeNull:
			seen = true
		case v.Type() != fastjson.TypeArray:
			ok = false
		default:
			seen = true
			items := v.GetArray()
			*qs = make([]queryJSON, len(items))
			for i, item := range items {
				if item.Type() != fastjson.TypeObject || !(*qs)[i].setFast(item.GetObject()) {
					ok = false
					return
				}
			}
		}
	})
	return ok
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
