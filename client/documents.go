package client

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/minhash"
)

// wireDocument is a document in a request.
type wireDocument struct {
	ID          string  `json:"id"`
	URL         string  `json:"url,omitempty"`
	HTML        string  `json:"html,omitempty"`
	HTMLBase64  []byte  `json:"html_base64,omitempty"` // HTML that is not UTF-8, as base64
	Text        string  `json:"text,omitempty"`
	ContentType string  `json:"content_type,omitempty"`
	Priority    float64 `json:"priority,omitempty"`
	FetchTime   string  `json:"fetch_time,omitempty"`
}

// encode returns the document's wire form, or an error wrapping ErrNotUTF8. HTML in
// UTF-8 travels as a JSON string; other HTML (a page in Latin-1, Shift JIS...) as its
// bytes in base64, which a JSON string could not carry unchanged.
func encode(doc *api.Document) (wireDocument, error) {
	for _, f := range []struct{ name, s string }{
		{"ID", doc.ID}, {"URL", doc.URL}, {"Text", doc.Text}, {"ContentType", doc.ContentType},
	} {
		if !utf8.ValidString(f.s) {
			return wireDocument{}, fmt.Errorf("%w: %s of document %q", ErrNotUTF8, f.name, doc.ID)
		}
	}
	w := wireDocument{
		ID: doc.ID, URL: doc.URL, Text: doc.Text,
		ContentType: doc.ContentType, Priority: doc.Priority,
	}
	if utf8.Valid(doc.HTML) {
		w.HTML = string(doc.HTML)
	} else {
		w.HTMLBase64 = doc.HTML
	}
	if !doc.FetchTime.IsZero() {
		w.FetchTime = doc.FetchTime.Format(time.RFC3339Nano)
	}
	return w, nil
}

// Add checks the document against the stored ones and stores it (POST /v1/documents):
// neardup.Detector.Check on the service, with the same verdict. An acknowledged add is
// durable.
//
// Add is retried like every call (see Client). When an attempt was applied but its
// answer lost, the retry re-adds the same id, which the service treats as a replacement
// of the stored copy, never as its own match; the document ends up stored exactly once,
// but the retry's verdict differs from the lost one: a document with a URL is then a
// URL duplicate of itself (Kind URLDuplicate, Matches[0].ID == doc.ID, Survivor doc.ID,
// Added false, although it is stored); one without a URL gets the verdict the lost
// answer had, less any changes other clients made in between, with Added true.
func (c *Client) Add(ctx context.Context, doc api.Document) (api.Verdict, error) {
	return c.verdict(ctx, "/v1/documents", &doc)
}

// Check returns the verdict the document would get now, without storing it (POST
// /v1/check): neardup.Detector.Peek on the service.
func (c *Client) Check(ctx context.Context, doc api.Document) (api.Verdict, error) {
	return c.verdict(ctx, "/v1/check", &doc)
}

func (c *Client) verdict(ctx context.Context, path string, doc *api.Document) (api.Verdict, error) {
	var v api.Verdict
	w, err := encode(doc)
	if err != nil {
		return v, err
	}
	err = c.call(ctx, http.MethodPost, path, &w, &v)
	return v, err
}

// Result is one document's outcome in a batch: its verdict, or the error that kept it
// from one.
type Result struct {
	Verdict api.Verdict
	// Err is the document's own error (an *APIError with Status 0 from the service, or
	// one wrapping ErrNotUTF8 from the client, which then does not send the document),
	// or the error of the request that carried it.
	Err error
}

// AddBatch adds the documents (POST /v1/documents:batch) and returns one Result for each,
// in the order given. The documents go in requests of at most Options.BatchSize, sent
// one after another, so the service sees them in order, as Add one by one would. A
// repeated request is answered as a repeated Add is (see Add).
//
// The error is the first request that failed as a whole (after its retries); its
// documents' Results carry it too and the others are good. A document that cannot be
// encoded fails alone. Results are always len(docs) long.
func (c *Client) AddBatch(ctx context.Context, docs []api.Document) ([]Result, error) {
	return c.batch(ctx, docs, true)
}

// CheckBatch checks the documents without storing them, as Check does, and returns one
// Result for each, in order. Its requests are sent up to Options.Concurrency at a time.
// Results and the error are as AddBatch's.
func (c *Client) CheckBatch(ctx context.Context, docs []api.Document) ([]Result, error) {
	return c.batch(ctx, docs, false)
}

type wireBatch struct {
	Documents []wireDocument `json:"documents"`
	Add       bool           `json:"add"`
}

type wireResult struct {
	Verdict *api.Verdict `json:"verdict"`
	Error   *wireError   `json:"error"`
}

func (c *Client) batch(ctx context.Context, docs []api.Document, add bool) ([]Result, error) {
	res := make([]Result, len(docs))
	wire, at := encodeAll(docs, encode, func(i int, err error) { res[i].Err = err })
	const path = "/v1/documents:batch"
	post := func(lo, hi int) error {
		var out struct {
			Results []wireResult `json:"results"`
		}
		if err := c.call(ctx, http.MethodPost, path, &wireBatch{Documents: wire[lo:hi], Add: add}, &out); err != nil {
			return err
		}
		if len(out.Results) != hi-lo {
			return fmt.Errorf("client: POST %s: %d results for %d documents", path, len(out.Results), hi-lo)
		}
		for j, i := range at[lo:hi] {
			switch r := out.Results[j]; {
			case r.Error != nil:
				res[i].Err = r.Error.item()
			case r.Verdict != nil:
				res[i].Verdict = *r.Verdict
			default:
				res[i].Err = fmt.Errorf("client: POST %s: result %d has neither a verdict nor an error", path, j)
			}
		}
		return nil
	}
	failed := func(lo, hi int, err error) {
		for _, i := range at[lo:hi] {
			res[i].Err = err
		}
	}
	return res, c.chunks(len(wire), add, post, failed)
}

// encodeAll encodes the items of a batch: the wire forms of those that encode, and where
// each one's result goes (its index in items); failed is told the error of each item
// that does not, which fails alone, without a request.
func encodeAll[T, W any](items []T, encode func(*T) (W, error), failed func(i int, err error)) (wire []W, at []int) {
	for i := range items {
		w, err := encode(&items[i])
		if err != nil {
			failed(i, err)
			continue
		}
		wire = append(wire, w)
		at = append(at, i)
	}
	return wire, at
}

// chunks sends n items of a batch in requests of at most Options.BatchSize: one after
// another when inOrder, else up to Options.Concurrency at a time. post sends the items
// [lo, hi) in one request and fills their results, or returns the request's error;
// failed gives that error to the items' results. A request the service answers 413 is
// halved and its halves sent instead. chunks returns the error of the first failed
// request by position.
func (c *Client) chunks(n int, inOrder bool, post func(lo, hi int) error, failed func(lo, hi int, err error)) error {
	var (
		mu    sync.Mutex
		first error
		next  int // the lowest failed chunk's start, so that the error is deterministic
	)
	send := func(lo, hi int) {
		if err := split(lo, hi, post, failed); err != nil {
			mu.Lock()
			if first == nil || lo < next {
				first, next = err, lo
			}
			mu.Unlock()
		}
	}
	size := c.opt.BatchSize
	if inOrder || c.opt.Concurrency == 1 {
		for lo := 0; lo < n; lo += size {
			send(lo, min(lo+size, n))
		}
		return first
	}
	sem := make(chan struct{}, c.opt.Concurrency)
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += size {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			send(lo, min(lo+size, n))
		})
	}
	wg.Wait()
	return first
}

// split posts the items [lo, hi), halving the request, in order, when the service says
// it is too large, and returns the first error.
func split(lo, hi int, post func(lo, hi int) error, failed func(lo, hi int, err error)) error {
	err := post(lo, hi)
	var api *APIError
	if errors.As(err, &api) && api.Status == http.StatusRequestEntityTooLarge && hi-lo > 1 {
		h := lo + (hi-lo)/2
		err1 := split(lo, h, post, failed)
		err2 := split(h, hi, post, failed)
		if err1 != nil {
			return err1
		}
		return err2
	}
	if err != nil {
		failed(lo, hi, err)
	}
	return err
}

// Stored is a document as the service keeps it (GET /v1/documents/{id}).
// The fields are neardup.Stored's, but for RawURL, which the service does not send.
type Stored struct {
	ID        string
	Priority  float64
	FetchTime time.Time
	api.Fingerprints
	// LastSeen is what the service's MaxAge is measured from.
	LastSeen time.Time
	// Near are the stored documents near its fingerprints, itself excluded: what Query
	// with them answers.
	Near []api.Match
}

type wireStored struct {
	ID        string  `json:"id"`
	URL       string  `json:"url"`
	Priority  float64 `json:"priority"`
	FetchTime string  `json:"fetch_time"`
	LastSeen  string  `json:"last_seen"`
	Title     string  `json:"title"`
	Words     int     `json:"words"`
	Method    string  `json:"method"`
	SimHash   string  `json:"simhash"`
	MinHash   string  `json:"minhash"`
	Hashes    struct {
		Raw  api.Hash `json:"raw"`
		Text api.Hash `json:"text"`
		Main api.Hash `json:"main"`
	} `json:"hashes"`
	Near []api.Match `json:"near"`
}

// Get returns the stored document with the id; ok is false when there is none (404
// not_found).
func (c *Client) Get(ctx context.Context, id string) (s Stored, ok bool, err error) {
	var w wireStored
	err = c.call(ctx, http.MethodGet, "/v1/documents/"+url.PathEscape(id), nil, &w)
	if isNotFound(err) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	sim, err := parseSimHash(w.SimHash)
	if err != nil {
		return s, false, err
	}
	sig, err := parseMinHash(w.MinHash)
	if err != nil {
		return s, false, err
	}
	if s.FetchTime, err = parseTime("fetch_time", w.FetchTime); err != nil {
		return s, false, err
	}
	if s.LastSeen, err = parseTime("last_seen", w.LastSeen); err != nil {
		return s, false, err
	}
	s.ID, s.Priority = w.ID, w.Priority
	s.URL, s.Title, s.Words, s.Method = w.URL, w.Title, w.Words, w.Method
	s.Raw, s.Text, s.Main = w.Hashes.Raw, w.Hashes.Text, w.Hashes.Main
	s.SimHash, s.MinHash, s.Near = sim, sig, w.Near
	return s, true, nil
}

// Delete deletes the stored document with the id (DELETE /v1/documents/{id}) and reports
// whether there was one. When an attempt was applied but its answer lost, the retry
// finds nothing and Delete reports false: the document is gone either way. The
// pre-screen keeps the document's keys until the service rebuilds its filter.
func (c *Client) Delete(ctx context.Context, id string) (bool, error) {
	var out struct {
		Deleted bool `json:"deleted"`
	}
	err := c.call(ctx, http.MethodDelete, "/v1/documents/"+url.PathEscape(id), nil, &out)
	if isNotFound(err) {
		return false, nil
	}
	return out.Deleted, err
}

func isNotFound(err error) bool {
	var api *APIError
	return errors.As(err, &api) && api.Status == http.StatusNotFound && api.Code == "not_found"
}

// wireQuery is a fingerprint query in a request.
type wireQuery struct {
	SimHash string `json:"simhash,omitempty"`
	MinHash string `json:"minhash,omitempty"`
}

// checkQuery returns the error of a query with neither fingerprint, which is never sent.
func checkQuery(q *api.Query) error {
	if !q.HasSimHash && len(q.MinHash) == 0 {
		return errors.New("client: a query needs a SimHash (HasSimHash), a MinHash signature or both")
	}
	return nil
}

// encodeQuery returns the query's wire form, or checkQuery's error.
func encodeQuery(q *api.Query) (wireQuery, error) {
	var w wireQuery
	if err := checkQuery(q); err != nil {
		return w, err
	}
	if q.HasSimHash {
		w.SimHash = fmt.Sprintf("%016x", q.SimHash)
	}
	if len(q.MinHash) > 0 {
		b := make([]byte, 0, 4*len(q.MinHash))
		for _, v := range q.MinHash {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
		w.MinHash = hex.EncodeToString(b)
	}
	return w, nil
}

// Query returns the stored documents near raw fingerprints (POST
// /v1/fingerprints/query), as neardup.Detector.Near does: a SimHash when q.HasSimHash, a
// MinHash signature when q.MinHash is not empty, or both. The fingerprints must come
// from a Fingerprinter with the service's options. A query with neither is an error
// without a request.
func (c *Client) Query(ctx context.Context, q api.Query) ([]api.Match, error) {
	in, err := encodeQuery(&q)
	if err != nil {
		return nil, err
	}
	var out struct {
		Matches []api.Match `json:"matches"`
	}
	err = c.call(ctx, http.MethodPost, "/v1/fingerprints/query", &in, &out)
	return out.Matches, err
}

// QueryResult is one query's outcome in a QueryBatch: its matches, or the error that
// kept it from them.
type QueryResult struct {
	// Matches are what Query answers for the query: the stored documents near its
	// fingerprints, strongest first.
	Matches []api.Match
	// Err is the query's own error (an *APIError with Status 0 from the service, for a
	// query that Query would get a 400 for, or the client's for a query with neither
	// fingerprint, which it then does not send), or the error of the request that
	// carried it.
	Err error
}

type wireQueryResult struct {
	Matches []api.Match `json:"matches"`
	Error   *wireError  `json:"error"`
}

// QueryBatch asks many queries (POST /v1/fingerprints/query:batch) and returns one
// QueryResult for each, in the order given: what Query would answer for it. The queries
// go in requests of at most Options.BatchSize, up to Options.Concurrency at a time, and
// a service with a lower maximum makes the client halve them, as for CheckBatch.
//
// The error is the first request that failed as a whole (after its retries); its
// queries' results carry it too and the others are good. A query with neither
// fingerprint fails alone, without a request. Results are always len(qs) long.
func (c *Client) QueryBatch(ctx context.Context, qs []api.Query) ([]QueryResult, error) {
	res := make([]QueryResult, len(qs))
	wire, at := encodeAll(qs, encodeQuery, func(i int, err error) { res[i].Err = err })
	const path = "/v1/fingerprints/query:batch"
	post := func(lo, hi int) error {
		in := struct {
			Queries []wireQuery `json:"queries"`
		}{wire[lo:hi]}
		var out struct {
			Results []wireQueryResult `json:"results"`
		}
		if err := c.call(ctx, http.MethodPost, path, &in, &out); err != nil {
			return err
		}
		if len(out.Results) != hi-lo {
			return fmt.Errorf("client: POST %s: %d results for %d queries", path, len(out.Results), hi-lo)
		}
		for j, i := range at[lo:hi] {
			switch r := out.Results[j]; {
			case r.Error != nil:
				res[i].Err = r.Error.item()
			case r.Matches != nil:
				res[i].Matches = r.Matches
			default:
				res[i].Err = fmt.Errorf("client: POST %s: result %d has neither matches nor an error", path, j)
			}
		}
		return nil
	}
	failed := func(lo, hi int, err error) {
		for _, i := range at[lo:hi] {
			res[i].Err = err
		}
	}
	return res, c.chunks(len(wire), false, post, failed)
}

// parseTime reads an RFC 3339 time; "" is the zero time.
func parseTime(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, fmt.Errorf("client: %s: %w", name, err)
	}
	return t, nil
}

func parseSimHash(s string) (uint64, error) {
	if len(s) != 16 {
		return 0, fmt.Errorf("client: simhash %q: want 16 hex digits", s)
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("client: simhash %q: %w", s, err)
	}
	return v, nil
}

func parseMinHash(s string) (minhash.Signature, error) {
	if s == "" {
		return nil, nil // NoMinHash
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		return nil, fmt.Errorf("client: minhash of %d hex digits: want 8 for each value", len(s))
	}
	sig := make(minhash.Signature, len(b)/4)
	for i := range sig {
		sig[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return sig, nil
}

// Stats is the service's GET /v1/stats.
type Stats struct {
	// Documents is the number of stored documents.
	Documents int64 `json:"documents"`
	// UptimeSeconds is how long the service has run.
	UptimeSeconds float64 `json:"uptime_seconds"`
	// Verdicts counts the verdicts given since start, by kind name ("unique", ...).
	Verdicts map[string]int64 `json:"verdicts"`
	// Options are the detector's options as the service reports them ("near",
	// "distance", "threshold", "minhash_k", "max_age", ...).
	Options map[string]any `json:"options"`
	// Store says where the index lives.
	Store struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"store"`
}

// Stats returns the service's statistics.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	err := c.call(ctx, http.MethodGet, "/v1/stats", nil, &s)
	return s, err
}
