package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/server"
)

// service is the real server (package server) over a detector, behind a handler that
// records how many queries every query batch request carries and may answer one itself.
type service struct {
	*httptest.Server
	d *neardup.Detector

	mu    sync.Mutex
	sizes []int            // queries of each query batch request, in arrival order
	fail  func(n int) bool // answer the n-th query batch request (from 1) 403 forbidden
}

// newService starts a service with the config, its detector holding the documents.
func newService(t *testing.T, cfg server.Config, docs []neardup.Document) *service {
	t.Helper()
	d, err := neardup.NewDetector(neardup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		if _, err := d.Check(doc); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetDetector(d)
	s := &service{d: d}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/fingerprints/query:batch" {
			body, _ := io.ReadAll(r.Body)
			var in struct{ Queries []json.RawMessage }
			json.Unmarshal(body, &in)
			s.mu.Lock()
			s.sizes = append(s.sizes, len(in.Queries))
			n := len(s.sizes)
			s.mu.Unlock()
			if s.fail != nil && s.fail(n) {
				writeError(w, http.StatusForbidden, "forbidden", "test")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// requests returns the number of queries of every query batch request so far.
func (s *service) requests() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sizes)
}

func (s *service) client(t *testing.T, opt Options) *Client {
	t.Helper()
	c, err := New(s.URL, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// queries returns n queries: the fingerprints of articles, of which the service holds
// some and near copies of others, alternately both fingerprints, the SimHash alone and
// the signature alone, and last random fingerprints that match nothing.
func queries(t *testing.T, n int) []neardup.Query {
	t.Helper()
	f, err := neardup.NewFingerprinter(neardup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	qs := make([]neardup.Query, n)
	for i := range n - 1 {
		fp, err := f.Fingerprint(article(fmt.Sprint("q", i), "", i))
		if err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 0:
			qs[i] = neardup.Query{SimHash: fp.SimHash, HasSimHash: true, MinHash: fp.MinHash}
		case 1:
			qs[i] = neardup.Query{SimHash: fp.SimHash, HasSimHash: true}
		case 2:
			qs[i] = neardup.Query{MinHash: fp.MinHash}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := make(minhash.Signature, 128)
	for i := range random {
		random[i] = rng.Uint32()
	}
	qs[n-1] = neardup.Query{SimHash: rng.Uint64(), HasSimHash: true, MinHash: random}
	return qs
}

// stored returns the documents the service holds: the articles of every other seed.
func stored(n int) []neardup.Document {
	var docs []neardup.Document
	for i := 0; i < n; i += 2 {
		docs = append(docs, article(fmt.Sprint("d", i), "", i))
	}
	return docs
}

// checkMatches checks a valid query's result against the detector's own answer.
func checkMatches(t *testing.T, d *neardup.Detector, i int, q neardup.Query, got QueryResult) {
	t.Helper()
	want, err := d.Near(q)
	if err != nil {
		t.Fatal(err)
	}
	if got.Err != nil || len(got.Matches) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got.Matches, want)) {
		t.Errorf("query %d: %+v, want matches %+v", i, got, want)
	}
}

func TestQueryBatch(t *testing.T) {
	const n = 40
	s := newService(t, server.Config{}, stored(n))
	qs := queries(t, n)
	qs = append(qs, neardup.Query{}, neardup.Query{MinHash: minhash.Signature{1}}) // neither; a signature of 1 value
	got, err := s.client(t, Options{BatchSize: 7, Concurrency: 3}).QueryBatch(context.Background(), qs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(qs) {
		t.Fatalf("%d results for %d queries", len(got), len(qs))
	}
	matched := 0
	for i, q := range qs[:n] {
		checkMatches(t, s.d, i, q, got[i])
		if len(got[i].Matches) > 0 {
			matched++
		}
	}
	if matched < n/2 || len(got[n-1].Matches) != 0 {
		t.Errorf("%d queries with matches, the random one %d: want the stored articles found, and nothing for random fingerprints", matched, len(got[n-1].Matches))
	}
	var api *APIError
	if got[n].Err == nil || errors.As(got[n].Err, &api) {
		t.Errorf("a query with neither fingerprint: %v, want the client's error", got[n].Err)
	}
	if !errors.As(got[n+1].Err, &api) || api.Status != 0 || api.Code != "bad_request" {
		t.Errorf("a signature of 1 value: %v, want the service's bad_request in its result", got[n+1].Err)
	}
	// 41 queries sent (not the empty one): 7 to a request.
	if sizes := s.requests(); len(sizes) != 6 {
		t.Errorf("requests of %v queries, want 6 requests", sizes)
	}
}

// TestQueryBatchTooMany: a service whose maximum is below BatchSize answers 413, and the
// client halves its requests until they fit.
func TestQueryBatchTooMany(t *testing.T) {
	const n = 40
	s := newService(t, server.Config{MaxBatch: 5}, stored(n))
	qs := queries(t, n)
	got, err := s.client(t, Options{BatchSize: 16}).QueryBatch(context.Background(), qs)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range qs {
		checkMatches(t, s.d, i, q, got[i])
	}
	// 16 queries, then two requests of 8, then four of 4, the ones answered.
	over, sent := 0, 0
	sizes := s.requests()
	for _, k := range sizes {
		if k > 5 {
			over++
		} else {
			sent += k
		}
	}
	if over == 0 || sent != n {
		t.Errorf("requests of %v queries: want some refused and every query answered once", sizes)
	}
}

// TestQueryBatchRequestFails: a request that fails as a whole fails its queries and only
// them, and is the call's error.
func TestQueryBatchRequestFails(t *testing.T) {
	const n = 20
	s := newService(t, server.Config{}, stored(n))
	s.fail = func(k int) bool { return k == 2 }
	qs := queries(t, n)
	got, err := s.client(t, Options{BatchSize: 5, Concurrency: 1}).QueryBatch(context.Background(), qs)
	var api *APIError
	if !errors.As(err, &api) || api.Code != "forbidden" || api.Status != http.StatusForbidden {
		t.Fatalf("error %v", err)
	}
	for i, q := range qs {
		if i >= 5 && i < 10 {
			if !errors.As(got[i].Err, &api) || api.Code != "forbidden" {
				t.Errorf("query %d of the failed request: %v", i, got[i].Err)
			}
			continue
		}
		checkMatches(t, s.d, i, q, got[i])
	}
}

func TestQueryBatchEmpty(t *testing.T) {
	s := newService(t, server.Config{}, nil)
	got, err := s.client(t, Options{}).QueryBatch(context.Background(), nil)
	if err != nil || len(got) != 0 || len(s.requests()) != 0 {
		t.Errorf("empty batch: %v %v, requests %v", got, err, s.requests())
	}
}
