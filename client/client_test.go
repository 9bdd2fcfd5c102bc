package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/server"
)

// fast are options that keep retry tests quick.
var fast = Options{Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}

func newClient(t testing.TB, f *fake, opt Options) *Client {
	t.Helper()
	c, err := New(f.URL, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// article is a plain-text document with enough words to be compared for near duplicates.
func article(id, url string, seed int) neardup.Document {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "w%d ", (i*7+seed*13)%500)
	}
	return neardup.Document{ID: id, URL: url, Text: b.String()}
}

func isPost(path string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == path }
}

func TestNew(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://h/", "http://", "http://h/?x=1", "http://h/#f"} {
		if _, err := New(u, Options{}); err == nil || !strings.HasPrefix(err.Error(), "client: ") {
			t.Errorf("New(%q): %v", u, err)
		}
	}
	for _, o := range []Options{{BatchSize: -1}, {Concurrency: -1}, {Backoff: -1}, {Token: "a\nb"}} {
		if _, err := New("http://h", o); err == nil {
			t.Errorf("New with %+v: no error", o)
		}
	}
	c, err := New("https://h.example/prefix/", Options{Retries: -1})
	if err != nil || !slices.Equal(c.bases, []string{"https://h.example/prefix"}) || c.opt.Retries != 0 || c.opt.BatchSize != DefaultBatchSize {
		t.Errorf("New: %+v %v", c, err)
	}
	for _, us := range [][]string{nil, {"http://a", "localhost:8080"}} {
		if _, err := NewReplicas(us, Options{}); err == nil || !strings.HasPrefix(err.Error(), "client: ") {
			t.Errorf("NewReplicas(%q): %v", us, err)
		}
	}
}

func TestAddCheckGetDelete(t *testing.T) {
	f := newFake(t, neardup.Options{})
	f.token = "tok"
	c := newClient(t, f, Options{Token: "tok"})
	ctx := context.Background()
	a := article("a/1", "http://example.com/a", 1)
	a.Priority, a.FetchTime = 2, time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)

	v, err := c.Check(ctx, a)
	if err != nil || v.Kind != neardup.Unique || v.Added {
		t.Fatalf("Check: %+v %v", v, err)
	}
	v, err = c.Add(ctx, a)
	if err != nil || v.Kind != neardup.Unique || !v.Added || v.URL != "http://example.com/a" {
		t.Fatalf("Add: %+v %v", v, err)
	}
	b := article("b", "http://example.com/b", 1)
	v, err = c.Add(ctx, b)
	if err != nil || v.Kind != neardup.ExactDuplicate || len(v.Matches) != 1 || v.Matches[0].ID != "a/1" || v.Matches[0].Level != neardup.LevelRaw {
		t.Fatalf("Add copy: %+v %v", v, err)
	}

	// The id has a slash: it travels path-escaped.
	s, ok, err := c.Get(ctx, "a/1")
	if err != nil || !ok {
		t.Fatalf("Get: %v %v", ok, err)
	}
	want, _, _ := f.d.Get("a/1")
	if s.ID != "a/1" || s.Priority != 2 || !s.FetchTime.Equal(a.FetchTime) || s.SimHash != want.SimHash ||
		s.Main != want.Main || s.Raw != want.Raw || len(s.MinHash) != len(want.MinHash) || s.MinHash[5] != want.MinHash[5] ||
		s.Words != want.Words || s.LastSeen.IsZero() {
		t.Errorf("Get = %+v, stored %+v", s, want)
	}
	if len(s.Near) != 1 || s.Near[0].ID != "b" {
		t.Errorf("Get near: %+v", s.Near)
	}

	m, err := c.Query(ctx, neardup.Query{SimHash: s.SimHash, HasSimHash: true, MinHash: s.MinHash})
	if err != nil || len(m) != 2 {
		t.Errorf("Query: %+v %v", m, err)
	}
	if _, err := c.Query(ctx, neardup.Query{}); err == nil {
		t.Error("an empty query was sent")
	}

	st, err := c.Stats(ctx)
	if err != nil || st.Documents != 2 || st.Store.Kind != "memory" || st.Options["minhash_k"] != float64(128) {
		t.Errorf("Stats: %+v %v", st, err)
	}

	if ok, err := c.Delete(ctx, "a/1"); !ok || err != nil {
		t.Errorf("Delete: %v %v", ok, err)
	}
	if ok, err := c.Delete(ctx, "a/1"); ok || err != nil {
		t.Errorf("Delete again: %v %v", ok, err)
	}
	if _, ok, err := c.Get(ctx, "a/1"); ok || err != nil {
		t.Errorf("Get deleted: %v %v", ok, err)
	}

	// A wrong token is a 401 APIError, not retried.
	bad := newClient(t, f, Options{Token: "nope"})
	before := f.requests.Load()
	_, err = bad.Check(ctx, a)
	var api *APIError
	if !errors.As(err, &api) || api.Status != 401 || api.Code != "unauthorized" || f.requests.Load()-before != 1 {
		t.Errorf("wrong token: %v (%d requests)", err, f.requests.Load()-before)
	}
}

func TestNotUTF8(t *testing.T) {
	f := newFake(t, neardup.Options{})
	c := newClient(t, f, Options{})
	for _, doc := range []neardup.Document{
		{ID: "t", Text: "caf\xe9"},
		{ID: "\xff", Text: "x"},
		{ID: "u", URL: "http://example.com/\xe9", Text: "x"},
		{ID: "c", HTML: []byte("<p>café</p>"), ContentType: "text/html; charset=\xe9"},
	} {
		_, err := c.Add(context.Background(), doc)
		if !errors.Is(err, ErrNotUTF8) {
			t.Errorf("%q: %v", doc.ID, err)
		}
	}
	if f.requests.Load() != 0 {
		t.Errorf("%d requests sent for documents that cannot be encoded", f.requests.Load())
	}
}

// TestHTMLNotUTF8 sends a page in Latin-1 to the real service: it travels unchanged (as
// html_base64), so the service's verdict is a local detector's, and the same page in
// UTF-8 is an exact duplicate of its text.
func TestHTMLNotUTF8(t *testing.T) {
	c := newService(t, server.Config{}, nil).client(t, Options{})
	words := strings.Repeat("Un café crème à la terrasse, près de la fenêtre, où l'été dure longtemps. ", 20)
	latin1, err := charmap.ISO8859_1.NewEncoder().String("<meta charset=iso-8859-1><p>" + words + "</p>")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	doc := neardup.Document{ID: "latin1", HTML: []byte(latin1)}
	local, _ := neardup.NewDetector(neardup.Options{})
	want, err := local.Check(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Add(ctx, doc)
	if err != nil || !reflect.DeepEqual(v, want) {
		t.Fatalf("Add: %+v, %v; want the local detector's %+v", v, err, want)
	}
	v, err = c.Add(ctx, neardup.Document{ID: "utf8", HTML: []byte("<meta charset=utf-8><p>" + words + "</p>")})
	if err != nil || v.Kind != neardup.ExactDuplicate || len(v.Matches) != 1 || v.Matches[0].ID != "latin1" || v.Matches[0].Level != neardup.LevelText {
		t.Errorf("the page in UTF-8: %+v, %v; want an exact duplicate of its text", v, err)
	}
	results, err := c.AddBatch(ctx, []neardup.Document{{ID: "latin1-again", HTML: []byte(latin1)}})
	if err != nil || results[0].Err != nil || results[0].Verdict.Kind != neardup.ExactDuplicate || results[0].Verdict.Matches[0].Level != neardup.LevelRaw {
		t.Errorf("the Latin-1 page again, in a batch: %+v, %v; want an exact duplicate of its bytes", results, err)
	}
}

// TestGzip sends documents gzip-compressed to the real service: a body of 1 KiB or more
// travels compressed, a smaller one plain, and the verdicts are a local detector's.
func TestGzip(t *testing.T) {
	d, _ := neardup.NewDetector(neardup.Options{})
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetDetector(d)
	var gzipped, plain atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Content-Encoding") {
		case "gzip":
			gzipped.Add(1)
		case "":
			plain.Add(1)
		}
		srv.ServeHTTP(w, r)
	}))
	defer ts.Close()
	c, err := New(ts.URL, Options{Gzip: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	local, _ := neardup.NewDetector(neardup.Options{})
	long := func(id string, seed int) neardup.Document { // over gzipMin
		doc := article(id, "http://example.com/"+id, seed)
		doc.Text += doc.Text
		return doc
	}
	docs := []neardup.Document{long("a", 1), long("b", 1), {ID: "small", Text: "a few words"}}
	for _, doc := range docs {
		want, _ := local.Check(doc)
		if v, err := c.Add(ctx, doc); err != nil || !reflect.DeepEqual(v, want) {
			t.Errorf("%s: %+v, %v; want %+v", doc.ID, v, err, want)
		}
	}
	if _, err := c.AddBatch(ctx, []neardup.Document{article("c", "", 2), article("d", "", 3)}); err != nil {
		t.Fatal(err)
	}
	if gzipped.Load() != 3 || plain.Load() != 1 {
		t.Errorf("%d requests gzipped and %d plain; want 3 (a, b, the batch) and 1 (small)", gzipped.Load(), plain.Load())
	}
}

func TestRetries(t *testing.T) {
	ctx := context.Background()
	doc := neardup.Document{ID: "a", Text: "some text"}
	retryAfter0 := map[string]string{"Retry-After": "0", "Content-Type": "application/json"}
	overloaded := `{"error":{"code":"overloaded","message":"try later"}}`
	proxy := "<html><body><h1>502 Bad Gateway</h1>\n<hr>nginx</body></html>"
	for _, c := range []struct {
		name     string
		fails    int
		status   int
		body     string
		retries  int
		attempts int64
		ok       bool
		code     string
	}{
		{"429 twice, then ok", 2, 429, overloaded, 0, 3, true, ""},
		{"503 four times, then ok", 4, 503, overloaded, 0, 5, true, ""},
		{"502 from a proxy, then ok", 1, 502, proxy, 0, 2, true, ""},
		{"504 gives up after Retries", 10, 504, "", 3, 4, false, ""},
		{"429 gives up after the default 4", 10, 429, overloaded, 0, 5, false, "overloaded"},
		{"no retries", 10, 429, overloaded, -1, 1, false, "overloaded"},
		{"400 is not retried", 10, 400, `{"error":{"code":"invalid_document","message":"missing id"}}`, 0, 1, false, "invalid_document"},
		{"404 is not retried", 10, 404, `{"error":{"code":"not_found","message":"x"}}`, 0, 1, false, "not_found"},
		{"500 is not retried", 10, 500, `{"error":{"code":"internal","message":"store"}}`, 0, 1, false, "internal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, neardup.Options{})
			fail, seen := failTimes(c.fails, isPost("/v1/documents"), c.status, retryAfter0, c.body)
			f.setFail(fail)
			opt := fast
			opt.Retries = c.retries
			v, err := newClient(t, f, opt).Add(ctx, doc)
			if seen.Load() != c.attempts {
				t.Errorf("%d attempts, want %d", seen.Load(), c.attempts)
			}
			if c.ok {
				if err != nil || v.Kind != neardup.Unique || !v.Added {
					t.Errorf("%+v %v", v, err)
				}
				return
			}
			var api *APIError
			if !errors.As(err, &api) || api.Status != c.status || api.Code != c.code {
				t.Fatalf("error %v, want an APIError %d %q", err, c.status, c.code)
			}
			if !strings.HasPrefix(err.Error(), "client: ") {
				t.Errorf("message %q", err)
			}
		})
	}
}

func TestAPIErrorDecoding(t *testing.T) {
	for _, c := range []struct {
		status       int
		body         string
		code, msg    string
		errorMessage string
	}{
		{400, `{"error":{"code":"invalid_document","message":"missing id"}}`, "invalid_document", "missing id", "client: 400 invalid_document: missing id"},
		{413, `{"error":{"code":"too_large","message":"body over 32 MiB"}}` + "\n", "too_large", "body over 32 MiB", "client: 413 too_large: body over 32 MiB"},
		{403, "<html>\n <body>Forbidden   by proxy</body></html>", "", "<html> <body>Forbidden by proxy</body></html>", "client: 403 Forbidden: <html> <body>Forbidden by proxy</body></html>"},
		{400, `{"error":"a string"}`, "", `{"error":"a string"}`, `client: 400 Bad Request: {"error":"a string"}`},
		{400, `{"error":{"message":"no code"}}`, "", `{"error":{"message":"no code"}}`, `client: 400 Bad Request: {"error":{"message":"no code"}}`},
		{401, "", "", "", "client: 401 Unauthorized"},
		{418, strings.Repeat("x", 1000), "", strings.Repeat("x", 200) + "...", "client: 418 I'm a teapot: " + strings.Repeat("x", 200) + "..."},
		{400, "caf\xe9", "", "caf\uFFFD", "client: 400 Bad Request: caf\uFFFD"},
	} {
		f := newFake(t, neardup.Options{})
		fail, _ := failTimes(1, nil, c.status, nil, c.body)
		f.setFail(fail)
		_, err := newClient(t, f, fast).Stats(context.Background())
		var api *APIError
		if !errors.As(err, &api) {
			t.Fatalf("%d %q: %v is not an APIError", c.status, c.body, err)
		}
		if api.Status != c.status || api.Code != c.code || api.Message != c.msg || err.Error() != c.errorMessage {
			t.Errorf("%d %q: %+v %q", c.status, c.body, *api, err)
		}
	}
	if got := (&APIError{Code: "invalid_document", Message: "m"}).Error(); got != "client: invalid_document: m" {
		t.Errorf("batch item error: %q", got)
	}
}

func TestRetryAfter(t *testing.T) {
	ctx := context.Background()
	f := newFake(t, neardup.Options{})
	fail, seen := failTimes(1, nil, 429, map[string]string{"Retry-After": "1"}, `{"error":{"code":"overloaded","message":"m"}}`)
	f.setFail(fail)
	c := newClient(t, f, fast)
	start := time.Now()
	if _, err := c.Stats(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second || seen.Load() != 2 {
		t.Errorf("Retry-After: 1 honoured after %v and %d attempts", d, seen.Load())
	}

	// A Retry-After beyond the deadline ends the call at once with the service's error.
	fail, seen = failTimes(10, nil, 503, map[string]string{"Retry-After": "30"}, `{"error":{"code":"not_ready","message":"loading"}}`)
	f.setFail(fail)
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start = time.Now()
	_, err := c.Stats(dctx)
	var api *APIError
	if !errors.As(err, &api) || api.Code != "not_ready" || time.Since(start) > time.Second || seen.Load() != 1 {
		t.Errorf("Retry-After past the deadline: %v after %v, %d attempts", err, time.Since(start), seen.Load())
	}
	// So does one beyond MaxRetryAfter, without a deadline.
	fail, seen = failTimes(10, nil, 429, map[string]string{"Retry-After": "3600"}, "")
	f.setFail(fail)
	if _, err := c.Stats(ctx); !errors.As(err, &api) || api.Status != 429 || seen.Load() != 1 {
		t.Errorf("Retry-After of an hour: %v, %d attempts", err, seen.Load())
	}
	// An HTTP date is understood too.
	fail, seen = failTimes(1, nil, 503, map[string]string{"Retry-After": time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)}, "")
	f.setFail(fail)
	if _, err := c.Stats(ctx); err != nil || seen.Load() != 2 {
		t.Errorf("Retry-After date: %v, %d attempts", err, seen.Load())
	}
}

func TestContextStopsRetries(t *testing.T) {
	f := newFake(t, neardup.Options{})
	fail, seen := failTimes(1000, nil, 503, nil, "")
	f.setFail(fail)
	// Long backoffs: only the context can end the call early.
	c := newClient(t, f, Options{Retries: 100, Backoff: time.Second, MaxBackoff: time.Second})

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Stats(ctx)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "client: GET /v1/stats: context canceled") || time.Since(start) > 900*time.Millisecond {
		t.Errorf("cancelled: %v after %v", err, time.Since(start))
	}
	var api *APIError
	if !errors.As(err, &api) || api.Status != 503 {
		t.Errorf("the cancelled call's error does not carry the last response: %v", err)
	}
	if n := seen.Load(); n > 3 {
		t.Errorf("%d attempts in 100ms with 1s backoffs", n)
	}

	// A cancelled context sends nothing.
	before := f.requests.Load()
	if _, err := c.Stats(ctx); !errors.Is(err, context.Canceled) || f.requests.Load() != before {
		t.Errorf("cancelled before the call: %v, %d requests", err, f.requests.Load()-before)
	}

	// A deadline ends the call by its time, whether a wait would outlast it (the call
	// ends at once) or the deadline passes during one.
	c = newClient(t, f, Options{Retries: 100, Backoff: 10 * time.Second, MaxBackoff: 10 * time.Second})
	dctx, dcancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer dcancel()
	start = time.Now()
	_, err = c.Stats(dctx)
	if d := time.Since(start); d > time.Second || !errors.As(err, &api) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: %v after %v", err, d)
	}
}

// TestLostResponse drops the connection after the service applied the Add: the retry
// re-adds the same id, and its verdict is what Add's documentation says.
func TestLostResponse(t *testing.T) {
	f := newFake(t, neardup.Options{})
	c := newClient(t, f, fast)
	ctx := context.Background()
	var drop atomic.Bool // drop the next add's answer
	f.setFail(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/documents" || !drop.CompareAndSwap(true, false) {
			return false
		}
		raw, _ := io.ReadAll(r.Body)
		if _, err := f.verdict(raw, true); err != nil {
			t.Error(err)
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return false
		}
		conn.Close()
		return true
	})
	drop.Store(true)
	withURL := article("a", "http://example.com/a", 1)
	v, err := c.Add(ctx, withURL)
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind != neardup.URLDuplicate || v.Added || len(v.Matches) != 1 || v.Matches[0].ID != "a" || v.Survivor != "a" {
		t.Errorf("retried Add with a URL: %+v", v)
	}
	if f.d.Len() != 1 {
		t.Errorf("%d documents stored", f.d.Len())
	}

	drop.Store(true)
	noURL := article("b", "", 2)
	v, err = c.Add(ctx, noURL)
	if err != nil || v.Kind != neardup.Unique || !v.Added || len(v.Matches) != 0 {
		t.Errorf("retried Add without a URL: %+v %v", v, err)
	}
	if f.d.Len() != 2 {
		t.Errorf("%d documents stored", f.d.Len())
	}
}

// TestTransportError: a service that is not there is retried, then reported.
func TestTransportError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, _ := New("http://"+addr, Options{Retries: 2, Backoff: time.Millisecond})
	_, err = c.Stats(context.Background())
	var api *APIError
	if err == nil || errors.As(err, &api) || !strings.HasPrefix(err.Error(), "client: GET /v1/stats: ") {
		t.Errorf("no service: %v", err)
	}
}

// TestMarshalKeepsHTML: request bodies carry "<", ">" and "&" as they are, not as
// json.Marshal's \u003c escapes, and decode to the same value.
func TestMarshalKeepsHTML(t *testing.T) {
	in := map[string]string{"html": "<p class=\"a\">x & y</p>\n\u2028"}
	b, err := marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"html":"<p class=\"a\">x & y</p>\n\u2028"}`; string(b) != want {
		t.Errorf("marshal = %s, want %s", b, want)
	}
	var out map[string]string
	if err := json.Unmarshal(b, &out); err != nil || out["html"] != in["html"] {
		t.Errorf("round trip = %q, %v; want %q", out["html"], err, in["html"])
	}
}

// TestReplicas checks a client of several replicas: calls take them in turn; a replica
// that refuses connections, or answers 503, costs a call no wait while another has not
// been tried (the backoff here is a minute: a wait would end the call's deadline); once
// every replica has failed, the client waits and goes round again, Retries attempts
// after the first in all.
func TestReplicas(t *testing.T) {
	ctx := context.Background()
	a, b := newFake(t, neardup.Options{}), newFake(t, neardup.Options{})
	var hits [2]atomic.Int64
	for i, f := range []*fake{a, b} {
		f.setFail(func(http.ResponseWriter, *http.Request) bool { hits[i].Add(1); return false })
	}
	slow := Options{Backoff: time.Minute, MaxBackoff: time.Minute}
	c, err := NewReplicas([]string{a.URL, b.URL + "/"}, slow)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := c.Stats(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if hits[0].Load() != 5 || hits[1].Load() != 5 {
		t.Errorf("10 calls over 2 replicas: %d and %d each, want 5 and 5", hits[0].Load(), hits[1].Load())
	}

	// A replica that refuses connections, and one that answers 503 with a Retry-After:
	// every call goes to b at once.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	busy, _ := failTimes(1000, nil, 503, map[string]string{"Retry-After": "30"}, `{"error":{"code":"store_unavailable","message":"m"}}`)
	notReady := newFake(t, neardup.Options{})
	notReady.setFail(busy)
	c, err = NewReplicas([]string{dead.URL, notReady.URL, b.URL}, slow)
	if err != nil {
		t.Fatal(err)
	}
	hits[1].Store(0)
	for i := range 6 {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := c.Add(cctx, neardup.Document{ID: fmt.Sprint("r", i), Text: "some text"})
		cancel()
		if err != nil {
			t.Fatalf("add %d with a dead and a busy replica: %v", i, err)
		}
	}
	if hits[1].Load() != 6 {
		t.Errorf("6 adds reached the live replica %d times", hits[1].Load())
	}

	// Every replica busy: the calls go round, wait, and give up after Retries.
	busy2, seen2 := failTimes(1000, nil, 503, map[string]string{"Retry-After": "0"}, `{"error":{"code":"store_unavailable","message":"m"}}`)
	b.setFail(busy2)
	busy3, seen3 := failTimes(1000, nil, 503, nil, `{"error":{"code":"store_unavailable","message":"m"}}`)
	notReady.setFail(busy3)
	opt := fast
	opt.Retries = 4
	c, err = NewReplicas([]string{notReady.URL, b.URL}, opt)
	if err != nil {
		t.Fatal(err)
	}
	var api *APIError
	if _, err := c.Stats(ctx); !errors.As(err, &api) || api.Status != 503 {
		t.Fatalf("every replica busy: %v; want the 503", err)
	}
	if got := seen2.Load() + seen3.Load(); got != 5 || min(seen2.Load(), seen3.Load()) != 2 {
		t.Errorf("every replica busy: %d and %d attempts; want 5 in all, going round", seen3.Load(), seen2.Load())
	}
}
