package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/text/encoding/japanese"

	"github.com/neardup/neardup"
)

const article = `Near-duplicate detection finds documents that are almost the same: the same
article on two sites, a page with a new date or a changed advertisement, a copy with a few
words edited. Crawlers use it to avoid storing and indexing the same content again.`

// newDetector returns an empty in-memory detector.
func newDetector(t *testing.T) *neardup.Detector {
	t.Helper()
	d, err := neardup.NewDetector(neardup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// start returns a ready server with the config and an httptest server in front of it.
func start(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.SetDetector(newDetector(t))
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

// call sends a request and returns the status and body; token "" sends none.
func call(t *testing.T, ts *httptest.Server, method, path, token, body string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}

// wantError checks an error answer's status and code.
func wantError(t *testing.T, what string, status int, body []byte, wantStatus int, wantCode string) {
	t.Helper()
	var e errorBody
	if status != wantStatus || json.Unmarshal(body, &e) != nil || e.Error.Code != wantCode || e.Error.Message == "" {
		t.Errorf("%s: %d %s, want %d with code %q", what, status, body, wantStatus, wantCode)
	}
}

func docJSON(id, url, text string) string {
	b, _ := json.Marshal(map[string]any{"id": id, "url": url, "text": text})
	return string(b)
}

func TestLifecycle(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	if code, body, _ := call(t, ts, "GET", "/healthz", "", ""); code != 200 || !bytes.Contains(body, []byte(`"ok"`)) {
		t.Errorf("healthz before load: %d %s", code, body)
	}
	if code, body, _ := call(t, ts, "GET", "/readyz", "", ""); code != 503 || !bytes.Contains(body, []byte(`"loading"`)) {
		t.Errorf("readyz before load: %d %s", code, body)
	}
	code, body, _ := call(t, ts, "POST", "/v1/documents", "", docJSON("a", "", "x"))
	wantError(t, "POST /v1/documents before load", code, body, 503, "not_ready")
	code, body, _ = call(t, ts, "GET", "/v1/stats", "", "")
	wantError(t, "GET /v1/stats before load", code, body, 503, "not_ready")

	s.SetDetector(newDetector(t))
	if code, body, _ := call(t, ts, "GET", "/readyz", "", ""); code != 200 || !bytes.Contains(body, []byte(`"ready"`)) {
		t.Errorf("readyz after load: %d %s", code, body)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, body, _ := call(t, ts, "GET", "/readyz", "", ""); code != 503 || !bytes.Contains(body, []byte(`"stopping"`)) {
		t.Errorf("readyz stopping: %d %s", code, body)
	}
	code, body, _ = call(t, ts, "POST", "/v1/check", "", docJSON("a", "", "x"))
	wantError(t, "POST /v1/check while stopping", code, body, 503, "not_ready")
}

func TestEndpoints(t *testing.T) {
	s, ts := start(t, Config{})
	var v neardup.Verdict
	code, body, _ := call(t, ts, "POST", "/v1/documents", "", docJSON("p1", "http://example.com/a", article))
	decodeOK(t, "add p1", code, body, &v)
	if v.Kind != neardup.Unique || !v.Added {
		t.Errorf("p1: %+v", v)
	}
	edited := strings.Replace(article, "advertisement", "banner", 1)
	code, body, _ = call(t, ts, "POST", "/v1/check", "", docJSON("p2", "http://example.org/b", edited))
	decodeOK(t, "check p2", code, body, &v)
	if v.Kind != neardup.NearDuplicate || v.Added || len(v.Matches) != 1 || v.Matches[0].ID != "p1" {
		t.Errorf("check p2: %+v", v)
	}

	batch := fmt.Sprintf(`{"documents":[%s,{"id":""},%s,{"id":"p5","fetch_time":"yesterday"}]}`,
		docJSON("p2", "http://example.org/b", edited), docJSON("p3", "http://example.com/a", article))
	var br struct {
		Results []struct {
			Verdict *neardup.Verdict
			Error   *errorDetail
		}
	}
	code, body, _ = call(t, ts, "POST", "/v1/documents:batch", "", batch)
	decodeOK(t, "batch", code, body, &br)
	if len(br.Results) != 4 || br.Results[0].Verdict == nil || br.Results[0].Verdict.Kind != neardup.NearDuplicate ||
		br.Results[1].Error == nil || br.Results[1].Error.Code != "invalid_document" ||
		br.Results[2].Verdict == nil || br.Results[2].Verdict.Kind != neardup.URLDuplicate ||
		br.Results[3].Error == nil || br.Results[3].Error.Code != "invalid_document" {
		t.Errorf("batch: %s", body)
	}

	var doc storedJSON
	code, body, _ = call(t, ts, "GET", "/v1/documents/p1", "", "")
	decodeOK(t, "get p1", code, body, &doc)
	if doc.ID != "p1" || doc.URL == "" || len(doc.SimHash) != 16 || len(doc.MinHash) != 8*128 || len(doc.Near) != 1 || doc.Near[0].ID != "p2" {
		t.Errorf("get p1: %s", body)
	}
	code, body, _ = call(t, ts, "GET", "/v1/documents/nope", "", "")
	wantError(t, "get nope", code, body, 404, "not_found")

	var mr struct{ Matches []neardup.Match }
	code, body, _ = call(t, ts, "POST", "/v1/fingerprints/query", "", fmt.Sprintf(`{"simhash":%q,"minhash":%q}`, doc.SimHash, doc.MinHash))
	decodeOK(t, "query", code, body, &mr)
	if len(mr.Matches) != 2 || mr.Matches[0].ID != "p1" {
		t.Errorf("query: %s", body)
	}
	code, body, _ = call(t, ts, "POST", "/v1/fingerprints/query", "", `{"minhash":"00000000"}`)
	wantError(t, "query with a short signature", code, body, 400, "bad_request")

	checkCompare(t, ts, edited)

	var st statsJSON
	code, body, _ = call(t, ts, "GET", "/v1/stats", "", "")
	decodeOK(t, "stats", code, body, &st)
	if st.Documents != 2 || st.Verdicts["unique"] != 1 || st.Verdicts["near-duplicate"] != 2 || st.Options.Near != "any" || st.Options.MinHashK != 128 {
		t.Errorf("stats: %s", body)
	}
	d, err := s.detector()
	if err != nil {
		t.Fatal(err)
	}
	if active, bytes := d.BandCopy(); st.BandCopy != (bandCopyJSON{active, bytes, d.BandPostings()}) {
		t.Errorf("stats: band copy %+v, the detector's %v %d %s", st.BandCopy, active, bytes, d.BandPostings())
	}

	checkPrescreenDelete(t, ts, v.URL)
}

// decodeOK decodes the JSON body of a 200 answer to what into v.
func decodeOK(t *testing.T, what string, code int, body []byte, v any) {
	t.Helper()
	if code != 200 {
		t.Fatalf("%s: %d %s", what, code, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s: %v: %s", what, err, body)
	}
}

// checkCompare checks /v1/compare on article and its edited copy, and on two pages of
// one text.
func checkCompare(t *testing.T, ts *httptest.Server, edited string) {
	t.Helper()
	var c comparison
	code, body, _ := call(t, ts, "POST", "/v1/compare", "", fmt.Sprintf(`{"a":%q,"b":%q}`, article, edited))
	decodeOK(t, "compare", code, body, &c)
	if c.Levels.Raw || !c.Near || c.Measures == nil || c.Measures.Jaccard <= 0.5 || c.Measures.Jaccard >= 1 || c.Diff.Deleted != 1 || c.Diff.Inserted != 1 {
		t.Errorf("compare: %s", body)
	}
	code, body, _ = call(t, ts, "POST", "/v1/compare", "", `{"a":"<p>Hello <b>world</b></p>","b":"<div>Hello world</div>","html":true}`)
	decodeOK(t, "compare html", code, body, &c)
	if c.Levels.Raw || !c.Levels.Main {
		t.Errorf("compare html: %s", body)
	}
}

// checkPrescreenDelete checks that the pre-screen of the server at ts, which holds p1
// and p2, has url and answers If-None-Match, and that deleting p1 leaves it unchanged.
func checkPrescreenDelete(t *testing.T, ts *httptest.Server, url string) {
	t.Helper()
	code, body, h := call(t, ts, "GET", "/v1/prescreen", "", "")
	f, err := neardup.ReadKeyFilter(bytes.NewReader(body))
	if code != 200 || err != nil || h.Get("ETag") == "" || !f.HasURL(url) {
		t.Errorf("prescreen: %d, %v, ETag %q", code, err, h.Get("ETag"))
	}
	req, _ := http.NewRequest("GET", ts.URL+"/v1/prescreen", nil)
	req.Header.Set("If-None-Match", h.Get("ETag"))
	if resp, err := ts.Client().Do(req); err != nil || resp.StatusCode != 304 {
		t.Errorf("prescreen with If-None-Match: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	code, body, _ = call(t, ts, "DELETE", "/v1/documents/p1", "", "")
	if code != 200 || !bytes.Contains(body, []byte(`"deleted":true`)) {
		t.Errorf("delete p1: %d %s", code, body)
	}
	code, body, _ = call(t, ts, "DELETE", "/v1/documents/p1", "", "")
	wantError(t, "delete p1 again", code, body, 404, "not_found")
	// The filter still has p1's keys (a filter cannot forget), p2's too: unchanged ETag.
	if _, _, h2 := call(t, ts, "GET", "/v1/prescreen", "", ""); h2.Get("ETag") != h.Get("ETag") {
		t.Errorf("prescreen ETag changed from %s to %s with no key added", h.Get("ETag"), h2.Get("ETag"))
	}
	// An add changes the filter: the encoding kept for the last answer must not be
	// answered again.
	var v neardup.Verdict
	code, body, _ = call(t, ts, "POST", "/v1/documents", "", docJSON("p6", "http://example.net/fresh", "a page of words that no other document of this test has"))
	decodeOK(t, "add p6", code, body, &v)
	code, body, h3 := call(t, ts, "GET", "/v1/prescreen", "", "")
	if f, err := neardup.ReadKeyFilter(bytes.NewReader(body)); code != 200 || err != nil || !f.HasURL(v.URL) || h3.Get("ETag") == h.Get("ETag") {
		t.Errorf("prescreen after an add: %d, %v, ETag %s (before %s): the add's URL %q missing or the ETag unchanged", code, err, h3.Get("ETag"), h.Get("ETag"), v.URL)
	}
}

func TestRoutes(t *testing.T) {
	s, ts := start(t, Config{MaxBatch: 2})
	// The colon routes to the batch handlers, not to /v1/documents or
	// /v1/fingerprints/query.
	for _, path := range []string{"/v1/documents:batch", "/v1/fingerprints/query:batch"} {
		r := httptest.NewRequest("POST", path, nil)
		if _, p := s.mux.Handler(r); p != "POST "+path {
			t.Errorf("POST %s routes to %q", path, p)
		}
	}
	code, body, _ := call(t, ts, "POST", "/v1/documents:batch", "", `{"documents":[{"id":"a"},{"id":"b"},{"id":"c"}]}`)
	wantError(t, "batch of 3", code, body, 413, "too_many_documents")
	code, body, _ = call(t, ts, "POST", "/v1/fingerprints/query:batch", "", `{"queries":[{},{},{}]}`)
	wantError(t, "query batch of 3", code, body, 413, "too_many_queries")
	if code, body, _ := call(t, ts, "POST", "/v1/fingerprints/query:batch", "", `{"queries":[{},{}]}`); code != 200 {
		t.Errorf("query batch of 2, the maximum: %d %s", code, body)
	}
	code, body, _ = call(t, ts, "GET", "/v1/nothing", "", "")
	wantError(t, "unknown path", code, body, 404, "not_found")
	code, body, h := call(t, ts, "PUT", "/v1/documents/x", "", "")
	wantError(t, "PUT a document", code, body, 405, "method_not_allowed")
	if h.Get("Allow") != "GET, DELETE" {
		t.Errorf("Allow: %q", h.Get("Allow"))
	}
	code, body, _ = call(t, ts, "GET", "/v1/documents", "", "")
	wantError(t, "GET /v1/documents", code, body, 405, "method_not_allowed")
	if code, body, _ := call(t, ts, "GET", "/v1/documents/a%2Fb%3Ac", "", ""); code != 404 || !bytes.Contains(body, []byte(`a/b:c`)) {
		t.Errorf("escaped id: %d %s", code, body)
	}
}

func TestAuth(t *testing.T) {
	_, ts := start(t, Config{Tokens: []Token{{ScopeRead, "r3ad"}, {ScopeWrite, "wr1te"}}})
	for _, tc := range []struct {
		method, path, token string
		want                int
	}{
		{"GET", "/healthz", "", 200},
		{"GET", "/readyz", "", 200},
		{"GET", "/metrics", "", 200},
		{"GET", "/openapi.json", "", 200},
		{"GET", "/v1/stats", "", 401},
		{"GET", "/v1/stats", "wrong", 401},
		{"GET", "/v1/stats", "r3ad", 200},
		{"GET", "/v1/stats", "wr1te", 200},
		{"GET", "/", "", 401},
		{"GET", "/", "r3ad", 200},
		{"POST", "/v1/check", "r3ad", 200},
		{"POST", "/v1/documents", "r3ad", 403},
		{"POST", "/v1/documents", "wr1te", 200},
		{"DELETE", "/v1/documents/a", "r3ad", 403},
		{"DELETE", "/v1/documents/a", "wr1te", 200},
	} {
		code, body, h := call(t, ts, tc.method, tc.path, tc.token, docJSON("a", "", "some text"))
		if code != tc.want {
			t.Errorf("%s %s with %q: %d %s, want %d", tc.method, tc.path, tc.token, code, body, tc.want)
		}
		if code == 401 && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s %s: 401 without WWW-Authenticate: Bearer", tc.method, tc.path)
		}
	}
	// A browser sends the token as the password of Basic authentication.
	req, _ := http.NewRequest("GET", ts.URL+"/", nil)
	req.SetBasicAuth("me", "r3ad")
	if resp, err := ts.Client().Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("GET / with Basic: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

func TestParseTokens(t *testing.T) {
	toks, err := ParseTokens(strings.NewReader("# tokens\nread abc\n\n  write  def  \n"))
	if err != nil || len(toks) != 2 || toks[0] != (Token{ScopeRead, "abc"}) || toks[1] != (Token{ScopeWrite, "def"}) {
		t.Errorf("ParseTokens: %v %v", toks, err)
	}
	for _, bad := range []string{"admin abc\n", "read\n", "read a b\n"} {
		if _, err := ParseTokens(strings.NewReader(bad)); !errors.Is(err, ErrTokens) || strings.Contains(err.Error(), "abc") {
			t.Errorf("ParseTokens(%q): %v", bad, err)
		}
	}
	toks, err = ParseTokensEnv("write:tok1, read:tok2,")
	if err != nil || len(toks) != 2 || toks[0] != (Token{ScopeWrite, "tok1"}) || toks[1] != (Token{ScopeRead, "tok2"}) {
		t.Errorf("ParseTokensEnv: %v %v", toks, err)
	}
	for _, bad := range []string{"tok1", "admin:x", "read:"} {
		if _, err := ParseTokensEnv(bad); !errors.Is(err, ErrTokens) {
			t.Errorf("ParseTokensEnv(%q): %v", bad, err)
		}
	}
}

// TestHTMLBase64 adds a page in Shift JIS as html_base64, then the same page in UTF-8 as
// html: the service decoded the first from its bytes, so the second is an exact duplicate
// of its text, not of its bytes.
func TestHTMLBase64(t *testing.T) {
	_, ts := start(t, Config{})
	const page = `<html><head><meta charset="%s"><title>川の町</title></head><body><article><h1>川の町</h1>` +
		`<p>二つの川が出会う場所に町があり、その町は二千年にわたって川とともに育ってきました。人々は橋を架け、市場を開き、祭りを続けてきました。</p>` +
		`<p>今日、合流点の地区は美術館と事務所と住宅の街になり、かつての鉄道の操車場や倉庫の跡地に新しい建物が並んでいます。</p></article></body></html>`
	sjis, err := japanese.ShiftJIS.NewEncoder().String(fmt.Sprintf(page, "shift_jis"))
	if err != nil {
		t.Fatal(err)
	}
	post := func(body string) neardup.Verdict {
		t.Helper()
		code, b, _ := call(t, ts, "POST", "/v1/documents", "", body)
		var v neardup.Verdict
		if err := json.Unmarshal(b, &v); code != 200 || err != nil {
			t.Fatalf("%d %s", code, b)
		}
		return v
	}
	b64 := base64.StdEncoding.EncodeToString([]byte(sjis))
	if v := post(`{"id":"sjis","html_base64":"` + b64 + `"}`); v.Kind != neardup.Unique {
		t.Fatalf("the Shift JIS page: %+v", v)
	}
	utf8Page, _ := json.Marshal(fmt.Sprintf(page, "utf-8"))
	v := post(`{"id":"utf8","html":` + string(utf8Page) + `}`)
	if v.Kind != neardup.ExactDuplicate || len(v.Matches) != 1 || v.Matches[0].ID != "sjis" || v.Matches[0].Level != neardup.LevelText {
		t.Errorf("the same page in UTF-8: %+v; want an exact duplicate of sjis by its text", v)
	}
	for _, tc := range []struct{ body, message string }{
		{`{"id":"a","html_base64":"not base64!"}`, "html_base64 is not standard base64"},
		{`{"id":"a","html_base64":"PHA+eDwvcD4"}`, "html_base64 is not standard base64"}, // unpadded
		{`{"id":"a","html_base64":"PHA+eDwvcD4=","html":"<p>x</p>"}`, "html_base64 and html or text: give one"},
		{`{"id":"a","html_base64":"PHA+eDwvcD4=","text":"x"}`, "html_base64 and html or text: give one"},
	} {
		code, body, _ := call(t, ts, "POST", "/v1/documents", "", tc.body)
		wantError(t, tc.body, code, body, 400, "invalid_document")
		if !strings.Contains(string(body), tc.message) {
			t.Errorf("%s: %s does not say %q", tc.body, body, tc.message)
		}
	}
}

// gzipBytes returns b gzip-compressed.
func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// TestGzipBody sends request bodies gzip-compressed: decoded within MaxBody, before and
// after gunzip; a bomb, a corrupt stream and another coding are client errors.
func TestGzipBody(t *testing.T) {
	_, ts := start(t, Config{MaxBody: 64 << 10})
	post := func(encoding string, body []byte) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest("POST", ts.URL+"/v1/documents", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Encoding", encoding)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	doc := []byte(docJSON("gz", "http://example.com/gz", article))
	code, body := post("gzip", gzipBytes(doc))
	var v neardup.Verdict
	if err := json.Unmarshal(body, &v); code != 200 || err != nil || v.Kind != neardup.Unique || !v.Added {
		t.Fatalf("a gzip body: %d %s", code, body)
	}
	bomb := gzipBytes([]byte(`{"id":"b","text":"` + strings.Repeat("a", 1<<20) + `"}`)) // 1 MiB from about 1 KB
	code, body = post("gzip", bomb)
	wantError(t, "gzip bomb", code, body, 413, "too_large")
	code, body = post("gzip", gzipBytes(doc)[:40])
	wantError(t, "truncated gzip", code, body, 400, "bad_request")
	code, body = post("br", doc)
	wantError(t, "br", code, body, 415, "unsupported_encoding")
	code, body = post("identity", []byte(docJSON("plain", "", "plain text")))
	if code != 200 {
		t.Errorf("identity: %d %s", code, body)
	}
}

func TestMetrics(t *testing.T) {
	_, ts := start(t, Config{})
	call(t, ts, "POST", "/v1/documents", "", docJSON("a", "", article))
	call(t, ts, "GET", "/v1/nothing", "", "")
	_, body, _ := call(t, ts, "GET", "/metrics", "", "")
	for _, want := range []string{
		`neardup_http_requests_total{code="200",route="POST /v1/documents"} 1`,
		`neardup_http_requests_total{code="404",route="unmatched"} 1`,
		`neardup_http_request_duration_seconds_bucket{route="POST /v1/documents",le="+Inf"} 1`,
		`neardup_verdicts_total{kind="unique"} 1`,
		`neardup_index_documents 1`,
		`neardup_http_in_flight_requests 1`,
		`neardup_http_rejected_total 0`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// goroutineID returns the id of the calling goroutine, from the header of its stack
// trace ("goroutine 42 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// TestWorkers checks that requests one after another reuse their worker goroutines, which
// live on through a panic in the work (answered 500 internal). A worker answers before it
// is back waiting for work, so the next request may find it busy and start a second one;
// never a third, as the first is then waiting.
func TestWorkers(t *testing.T) {
	s, ts := start(t, Config{})
	var mu sync.Mutex
	ids := map[string]int{}
	panicNext := false
	s.beforeWork = func() {
		mu.Lock()
		ids[goroutineID()]++
		p := panicNext
		panicNext = false
		mu.Unlock()
		if p {
			panic("test")
		}
	}
	for i := range 20 {
		if i == 10 {
			mu.Lock()
			panicNext = true
			mu.Unlock()
			code, body, _ := call(t, ts, "POST", "/v1/check", "", docJSON("p", "", "x"))
			wantError(t, "panicking work", code, body, 500, "internal")
		}
		if code, body, _ := call(t, ts, "POST", "/v1/check", "", docJSON(fmt.Sprint(i), "", "x")); code != 200 {
			t.Fatalf("request %d: %d %s", i, code, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) > 2 {
		t.Errorf("21 requests one after another ran on %d goroutines, want 1 or 2: %v", len(ids), ids)
	}
}
