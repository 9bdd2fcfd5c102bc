package client

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/minhash"
)

// fake is an httptest server that implements the wire API (spec-api.md) on a
// neardup.Detector, as far as the tests need it, with hooks to inject failures.
type fake struct {
	*httptest.Server
	d        *neardup.Detector
	token    string // "" accepts any request
	maxBatch int    // 0 means 1000

	// fail, when set, runs first and may answer the request itself (returning true).
	mu   sync.Mutex
	fail func(w http.ResponseWriter, r *http.Request) bool

	requests atomic.Int64 // every request that reached the fake
	batches  atomic.Int64 // batch requests answered 200
	sizes    sync.Map     // batch size -> count, for the split tests
	full     atomic.Int64 // prescreen answers with a body
	notMod   atomic.Int64 // prescreen answers 304
}

func newFake(t testing.TB, opt neardup.Options) *fake {
	t.Helper()
	f, err := startFake(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// startFake starts a fake; the caller closes it.
func startFake(opt neardup.Options) (*fake, error) {
	d, err := neardup.NewDetector(opt)
	if err != nil {
		return nil, err
	}
	f := &fake{d: d}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/documents", func(w http.ResponseWriter, r *http.Request) { f.check(w, r, true) })
	mux.HandleFunc("POST /v1/check", func(w http.ResponseWriter, r *http.Request) { f.check(w, r, false) })
	mux.HandleFunc("POST /v1/documents:batch", f.batch)
	mux.HandleFunc("GET /v1/documents/{id}", f.get)
	mux.HandleFunc("DELETE /v1/documents/{id}", f.delete)
	mux.HandleFunc("POST /v1/fingerprints/query", f.query)
	mux.HandleFunc("GET /v1/stats", f.stats)
	mux.HandleFunc("GET /v1/prescreen", f.prescreen)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		f.mu.Lock()
		fail := f.fail
		f.mu.Unlock()
		if fail != nil && fail(w, r) {
			return
		}
		if f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeError(w, http.StatusUnauthorized, "unauthorized", "no or unknown token")
			return
		}
		mux.ServeHTTP(w, r)
	}))
	return f, nil
}

func (f *fake) setFail(fn func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	f.fail = fn
	f.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// decodeDocument is the server's side of the document JSON.
func decodeDocument(raw json.RawMessage) (neardup.Document, error) {
	if !utf8.Valid(raw) {
		return neardup.Document{}, errors.New("bad UTF-8")
	}
	var w wireDocument
	if err := json.Unmarshal(raw, &w); err != nil {
		return neardup.Document{}, err
	}
	if w.ID == "" {
		return neardup.Document{}, errors.New("missing id")
	}
	doc := neardup.Document{ID: w.ID, URL: w.URL, Text: w.Text, ContentType: w.ContentType, Priority: w.Priority}
	if w.HTML != "" {
		doc.HTML = []byte(w.HTML)
	}
	if w.HTMLBase64 != nil {
		doc.HTML = w.HTMLBase64
	}
	if w.FetchTime != "" {
		t, err := time.Parse(time.RFC3339, w.FetchTime)
		if err != nil {
			return doc, fmt.Errorf("fetch_time: %v", err)
		}
		doc.FetchTime = t
	}
	return doc, nil
}

func (f *fake) verdict(raw json.RawMessage, add bool) (neardup.Verdict, error) {
	doc, err := decodeDocument(raw)
	if err != nil {
		return neardup.Verdict{}, err
	}
	if add {
		return f.d.Check(doc)
	}
	return f.d.Peek(doc)
}

func (f *fake) check(w http.ResponseWriter, r *http.Request, add bool) {
	var raw json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		writeError(w, 400, "invalid_json", err.Error())
		return
	}
	v, err := f.verdict(raw, add)
	if err != nil {
		writeError(w, 400, "invalid_document", err.Error())
		return
	}
	writeJSON(w, 200, v)
}

func (f *fake) batch(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Documents []json.RawMessage `json:"documents"`
		Add       *bool             `json:"add"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, 400, "invalid_json", err.Error())
		return
	}
	if max := orDefault(f.maxBatch, 1000); len(in.Documents) > max {
		writeError(w, 413, "too_many_documents", fmt.Sprintf("%d documents, at most %d", len(in.Documents), max))
		return
	}
	add := in.Add == nil || *in.Add
	type result struct {
		Verdict *neardup.Verdict `json:"verdict,omitempty"`
		Error   *wireError       `json:"error,omitempty"`
	}
	out := struct {
		Results []result `json:"results"`
	}{Results: []result{}}
	for _, raw := range in.Documents {
		v, err := f.verdict(raw, add)
		if err != nil {
			out.Results = append(out.Results, result{Error: &wireError{"invalid_document", err.Error()}})
			continue
		}
		out.Results = append(out.Results, result{Verdict: &v})
	}
	f.batches.Add(1)
	n, _ := f.sizes.LoadOrStore(len(in.Documents), new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	writeJSON(w, 200, out)
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func sigHex(sig minhash.Signature) string {
	b := make([]byte, 0, 4*len(sig))
	for _, v := range sig {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return hex.EncodeToString(b)
}

func (f *fake) get(w http.ResponseWriter, r *http.Request) {
	s, ok, err := f.d.Get(r.PathValue("id"))
	if err != nil {
		writeError(w, 500, "internal", err.Error())
		return
	}
	if !ok {
		writeError(w, 404, "not_found", "no document "+strconv.Quote(r.PathValue("id")))
		return
	}
	near, _ := f.d.Near(neardup.Query{SimHash: s.SimHash, HasSimHash: true, MinHash: s.MinHash})
	near = slices.DeleteFunc(near, func(m neardup.Match) bool { return m.ID == s.ID })
	writeJSON(w, 200, map[string]any{
		"id": s.ID, "url": s.URL, "priority": s.Priority,
		"fetch_time": s.FetchTime.Format(time.RFC3339Nano), "last_seen": s.LastSeen.Format(time.RFC3339Nano),
		"title": s.Title, "words": s.Words, "method": s.Method,
		"simhash": fmt.Sprintf("%016x", s.SimHash), "minhash": sigHex(s.MinHash),
		"hashes": map[string]neardup.Hash{"raw": s.Raw, "text": s.Text, "main": s.Main},
		"near":   near,
	})
}

func (f *fake) delete(w http.ResponseWriter, r *http.Request) {
	ok, err := f.d.Remove(r.PathValue("id"))
	if err != nil {
		writeError(w, 500, "internal", err.Error())
		return
	}
	if !ok {
		writeError(w, 404, "not_found", "no document "+strconv.Quote(r.PathValue("id")))
		return
	}
	writeJSON(w, 200, map[string]any{"id": r.PathValue("id"), "deleted": true})
}

func (f *fake) query(w http.ResponseWriter, r *http.Request) {
	var in struct{ SimHash, MinHash string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, 400, "invalid_json", err.Error())
		return
	}
	var q neardup.Query
	if in.SimHash != "" {
		v, err := strconv.ParseUint(in.SimHash, 16, 64)
		if err != nil || len(in.SimHash) != 16 {
			writeError(w, 400, "bad_request", "simhash: 16 hex digits")
			return
		}
		q.SimHash, q.HasSimHash = v, true
	}
	if in.MinHash != "" {
		sig, err := parseMinHash(in.MinHash)
		if err != nil {
			writeError(w, 400, "bad_request", err.Error())
			return
		}
		q.MinHash = sig
	}
	m, err := f.d.Near(q)
	if err != nil {
		writeError(w, 400, "bad_request", err.Error())
		return
	}
	writeJSON(w, 200, map[string]any{"matches": m})
}

func (f *fake) stats(w http.ResponseWriter, r *http.Request) {
	o := f.d.Options()
	writeJSON(w, 200, map[string]any{
		"documents": f.d.Len(), "uptime_seconds": 1.5, "verdicts": map[string]int{"unique": 1},
		"options": map[string]any{"near": o.Near.String(), "distance": o.Distance, "threshold": o.Threshold, "minhash_k": o.MinHashK},
		"store":   map[string]string{"path": "", "kind": "memory"},
	})
}

func (f *fake) prescreen(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if _, err := f.d.Prescreen().WriteTo(&buf); err != nil {
		writeError(w, 500, "internal", err.Error())
		return
	}
	sum := sha256.Sum256(buf.Bytes())
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		f.notMod.Add(1)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	f.full.Add(1)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(buf.Bytes())
}

// failTimes answers the first n requests for which match is true with the status, the
// header and the body, and lets the others through. It counts the requests it saw.
func failTimes(n int, match func(*http.Request) bool, status int, header map[string]string, body string) (func(http.ResponseWriter, *http.Request) bool, *atomic.Int64) {
	var seen atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) bool {
		if match != nil && !match(r) {
			return false
		}
		if seen.Add(1) > int64(n) {
			return false
		}
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		w.Write([]byte(body))
		return true
	}, &seen
}
