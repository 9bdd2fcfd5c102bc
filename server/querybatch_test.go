package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/store"
)

// TestQueryBatch checks POST /v1/fingerprints/query:batch against the single endpoint,
// its oracle: every result is, byte for byte, what POST /v1/fingerprints/query answers
// for its query, matches or a 400's error; and the queries take one in-flight slot.
func TestQueryBatch(t *testing.T) {
	s, ts := start(t, Config{})
	edited := strings.Replace(article, "advertisement", "banner", 1)
	for _, doc := range []string{docJSON("p1", "", article), docJSON("p2", "", edited)} {
		if code, body, _ := call(t, ts, "POST", "/v1/documents", "", doc); code != 200 {
			t.Fatalf("add: %d %s", code, body)
		}
	}
	var p1 storedJSON
	if code, body, _ := call(t, ts, "GET", "/v1/documents/p1", "", ""); code != 200 || json.Unmarshal(body, &p1) != nil {
		t.Fatalf("get p1: %d %s", code, body)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := make(minhash.Signature, 128)
	for i := range random {
		random[i] = rng.Uint32()
	}
	queries := []struct {
		body   string
		status int    // of the single endpoint
		code   string // of its error
	}{
		{fmt.Sprintf(`{"simhash":%q,"minhash":%q}`, p1.SimHash, p1.MinHash), 200, ""},
		{fmt.Sprintf(`{"simhash":%q}`, p1.SimHash), 200, ""},
		{fmt.Sprintf(`{"minhash":%q}`, p1.MinHash), 200, ""},
		{fmt.Sprintf(`{"simhash":%q,"minhash":%q}`, formatSimHash(rng.Uint64()), formatMinHash(random)), 200, ""},
		{`{"simhash":"xyz"}`, 400, "invalid_document"},
		{`{"minhash":"0g000000"}`, 400, "invalid_document"},
		{`{}`, 400, "bad_request"},
		{`null`, 400, "bad_request"},
		{`{"minhash":"00000000"}`, 400, "bad_request"}, // a signature of 1 value, not 128
		{`{"simhash":"0123456789abcdef","bogus":1}`, 400, "invalid_json"},
		{`1`, 400, "invalid_json"},
	}
	var batch []string
	for _, q := range queries {
		batch = append(batch, q.body)
	}
	var slots atomic.Int64
	s.beforeWork = func() { slots.Add(1) }
	code, body, _ := call(t, ts, "POST", "/v1/fingerprints/query:batch", "", `{"queries":[`+strings.Join(batch, ",")+`]}`)
	var br struct{ Results []json.RawMessage }
	if code != 200 || json.Unmarshal(body, &br) != nil || len(br.Results) != len(queries) {
		t.Fatalf("batch: %d %s", code, body)
	}
	if slots.Load() != 1 {
		t.Errorf("%d queries took %d in-flight slots, want 1", len(queries), slots.Load())
	}
	for i, q := range queries {
		code, body, _ := call(t, ts, "POST", "/v1/fingerprints/query", "", q.body)
		if code != q.status {
			t.Fatalf("query %s: %d %s, want %d", q.body, code, body, q.status)
		}
		if q.code != "" {
			wantError(t, q.body, code, body, q.status, q.code)
		}
		if got := br.Results[i]; !bytes.Equal(got, bytes.TrimSpace(body)) {
			t.Errorf("result %d of %s: %s, the single query answers %s", i, q.body, got, body)
		}
	}
	var r0 struct{ Matches []neardup.Match }
	if json.Unmarshal(br.Results[0], &r0); len(r0.Matches) != 2 || r0.Matches[0].ID != "p1" || r0.Matches[1].ID != "p2" {
		t.Errorf("p1's fingerprints: %s, want p1 and p2", br.Results[0])
	}
	if got := string(br.Results[3]); got != `{"matches":[]}` {
		t.Errorf("random fingerprints: %s, want no match", got)
	}

	refusedBatches(t, ts)
}

// refusedBatches checks the batch query bodies the server at ts refuses whole.
func refusedBatches(t *testing.T, ts *httptest.Server) {
	t.Helper()
	for _, tc := range []struct{ body, code string }{
		{`{"queries":[]}`, "bad_request"},
		{`{"queries":null}`, "bad_request"},
		{`{}`, "bad_request"},
		{`{"queries":[{}],"bogus":1}`, "invalid_json"},
		{`{"queries":{}}`, "invalid_json"},
		{`{"queries":[{}]`, "invalid_json"},
		{`{"queries":[{}]} {}`, "invalid_json"},
		{"{\"queries\":[{\"simhash\":\"\xff\"}]}", "invalid_json"},
		{`{"simhash":"0123456789abcdef"}`, "invalid_json"},
	} {
		code, body, _ := call(t, ts, "POST", "/v1/fingerprints/query:batch", "", tc.body)
		wantError(t, tc.body, code, body, 400, tc.code)
	}
}

// TestQueryBatchAuth: a query batch needs the read scope, as a single query does.
func TestQueryBatchAuth(t *testing.T) {
	_, ts := start(t, Config{Tokens: []Token{{ScopeRead, "r3ad"}, {ScopeWrite, "wr1te"}}})
	body := `{"queries":[{"simhash":"0123456789abcdef"}]}`
	for token, want := range map[string]int{"": 401, "wrong": 401, "r3ad": 200, "wr1te": 200} {
		code, got, h := call(t, ts, "POST", "/v1/fingerprints/query:batch", token, body)
		if code != want || (code == 200 && string(got) != `{"results":[{"matches":[]}]}`+"\n") {
			t.Errorf("token %q: %d %s, want %d", token, code, got, want)
		}
		if code == 401 && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("token %q: 401 without WWW-Authenticate: Bearer", token)
		}
	}
}

// failingStore is a store whose Record fails once fail is set.
type failingStore struct {
	store.Store
	fail atomic.Bool
}

func (s *failingStore) Record(id uint64) ([]byte, bool, error) {
	if s.fail.Load() {
		return nil, false, errors.New("disk on fire")
	}
	return s.Store.Record(id)
}

// TestQueryBatchStoreFailure: a store failure fails the whole batch with 500, as it
// fails a single query, rather than one result.
func TestQueryBatchStoreFailure(t *testing.T) {
	st := &failingStore{Store: store.NewMemory()}
	d, err := neardup.OpenDetector(st, neardup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.SetDetector(d)
	ts := httptest.NewServer(s)
	defer ts.Close()
	if code, body, _ := call(t, ts, "POST", "/v1/documents", "", docJSON("p1", "", article)); code != 200 {
		t.Fatalf("add: %d %s", code, body)
	}
	// The query's match must be read from the store, so it is fingerprinted here: GET
	// /v1/documents/p1 would look up its near-duplicates, and the detector would keep
	// its record in its cache of near-duplicate candidates.
	fp, err := d.Fingerprinter().Fingerprint(neardup.Document{ID: "p1", Text: article})
	if err != nil {
		t.Fatal(err)
	}
	st.fail.Store(true)
	q := fmt.Sprintf(`{"simhash":"%016x"}`, fp.SimHash)
	code, body, _ := call(t, ts, "POST", "/v1/fingerprints/query", "", q)
	wantError(t, "query", code, body, 500, "internal")
	code, body, _ = call(t, ts, "POST", "/v1/fingerprints/query:batch", "", `{"queries":[{},`+q+`]}`)
	wantError(t, "batch", code, body, 500, "internal")
}
