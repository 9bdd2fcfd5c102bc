package cli

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/cmd/neardup/internal/bench"
)

// fakeService implements the five endpoints bench service sends to, plus /readyz, with
// canned verdicts: a document whose id ends in 7 is a near duplicate, every other one
// unique; every query has one match, but every fourth query of a batch is refused. It
// counts requests by path and keeps the ids and the SimHashes it was sent.
type fakeService struct {
	token string            // required when set
	fail  func(n int64) int // the status of the n-th request (from 0), 0 for a normal answer
	delay time.Duration     // before each answer

	n         atomic.Int64
	mu        sync.Mutex
	counts    map[string]int
	ids       []string
	simhashes []string
	bad       []string // what was wrong with a request
}

func (f *fakeService) start(t *testing.T) string {
	f.counts = map[string]int{}
	s := httptest.NewServer(f)
	t.Cleanup(s.Close)
	return s.URL
}

var hexRE = regexp.MustCompile(`^[0-9a-f]+$`)

type fakeDoc struct {
	ID   string `json:"id"`
	URL  string `json:"url"`
	Text string `json:"text"`
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/readyz" {
		fmt.Fprint(w, `{"status":"ready"}`)
		return
	}
	n := f.n.Add(1) - 1
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.counts[r.URL.Path]++
	f.mu.Unlock()
	rq := &fakeRequest{f: f, w: w, path: r.URL.Path}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		rq.bad("method %s, content type %q", r.Method, r.Header.Get("Content-Type"))
		return
	}
	if f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token {
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":{"code":"unauthorized","message":"no or unknown token"}}`)
		return
	}
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	if f.fail != nil {
		if code := f.fail(n); code != 0 {
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"error":{"code":"overloaded","message":"request %d"}}`, n)
			return
		}
	}
	rq.respond(body)
}

// fakeRequest is one request to a fakeService, past its checks of method, token and
// failures.
type fakeRequest struct {
	f    *fakeService
	w    http.ResponseWriter
	path string
}

// bad records a request the bench should not have sent and answers it with 400.
func (rq *fakeRequest) bad(format string, a ...any) {
	rq.f.mu.Lock()
	rq.f.bad = append(rq.f.bad, rq.path+": "+fmt.Sprintf(format, a...))
	rq.f.mu.Unlock()
	rq.w.WriteHeader(400)
	fmt.Fprint(rq.w, `{"error":{"code":"bad_request","message":"test"}}`)
}

// verdict checks a document, keeps its id and returns its verdict's JSON.
func (rq *fakeRequest) verdict(d fakeDoc, add bool) string {
	if d.ID == "" || d.Text == "" || !strings.HasPrefix(d.URL, "https://bench.example/s") {
		rq.bad("document %+v", d)
	}
	rq.f.mu.Lock()
	rq.f.ids = append(rq.f.ids, d.ID)
	rq.f.mu.Unlock()
	kind := "unique"
	if strings.HasSuffix(d.ID, "7") {
		kind = "near-duplicate"
	}
	return fmt.Sprintf(`{"id":%q,"verdict":%q,"survivor":%q,"added":%v}`, d.ID, kind, d.ID, add)
}

// query checks a query's fingerprints and keeps its SimHash.
func (rq *fakeRequest) query(body []byte) bool {
	var q struct{ SimHash, MinHash string }
	if err := json.Unmarshal(body, &q); err != nil || len(q.SimHash) != 16 || !hexRE.MatchString(q.SimHash) ||
		len(q.MinHash) != 128*8 || !hexRE.MatchString(q.MinHash) {
		rq.bad("%v: %.80s", err, body)
		return false
	}
	if _, err := hex.DecodeString(q.MinHash); err != nil {
		rq.bad("%v", err)
	}
	rq.f.mu.Lock()
	rq.f.simhashes = append(rq.f.simhashes, q.SimHash)
	rq.f.mu.Unlock()
	return true
}

// respond answers the request by its path.
func (rq *fakeRequest) respond(body []byte) {
	const match = `{"matches":[{"id":"doc-1","kind":"near-duplicate","distance":0,"similarity":1}]}`
	w := rq.w
	switch rq.path {
	case "/v1/documents", "/v1/check":
		var d fakeDoc
		if err := json.Unmarshal(body, &d); err != nil {
			rq.bad("%v", err)
			return
		}
		fmt.Fprint(w, rq.verdict(d, rq.path == "/v1/documents"))
	case "/v1/documents:batch":
		var b struct {
			Documents []fakeDoc `json:"documents"`
			Add       *bool     `json:"add"`
		}
		if err := json.Unmarshal(body, &b); err != nil || b.Add == nil {
			rq.bad("%v, add %v", err, b.Add)
			return
		}
		var results []string
		for _, d := range b.Documents {
			if d.ID == "doc-13" {
				results = append(results, `{"error":{"code":"invalid_document","message":"test"}}`)
				continue
			}
			results = append(results, `{"verdict":`+rq.verdict(d, *b.Add)+`}`)
		}
		fmt.Fprintf(w, `{"results":[%s]}`, strings.Join(results, ","))
	case "/v1/fingerprints/query":
		if !rq.query(body) {
			return
		}
		fmt.Fprint(w, match)
	case "/v1/fingerprints/query:batch":
		var b struct{ Queries []json.RawMessage }
		if err := json.Unmarshal(body, &b); err != nil || len(b.Queries) == 0 {
			rq.bad("%v: %.80s", err, body)
			return
		}
		var results []string
		for i, q := range b.Queries {
			switch {
			case !rq.query(q):
				return
			case i%4 == 3:
				results = append(results, `{"error":{"code":"bad_request","message":"test"}}`)
			default:
				results = append(results, match)
			}
		}
		fmt.Fprintf(w, `{"results":[%s]}`, strings.Join(results, ","))
	default:
		w.WriteHeader(404)
		fmt.Fprint(w, `{"error":{"code":"not_found","message":"test"}}`)
	}
}

func runService(t *testing.T, addr string, args ...string) (bench.ServiceResult, string) {
	t.Helper()
	stdout, stderr, code := run(t, "", append([]string{"bench", "service", "--addr", addr, "--warmup", "0", "--json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("%q: exit code %d: %s", args, code, stderr)
	}
	var res bench.ServiceResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%q: %v: %q", args, err, stdout)
	}
	return res, stderr
}

// TestBenchServiceClosedLoop: --requests N sends exactly N requests, of consecutive
// documents from --start, and counts the canned verdicts.
func TestBenchServiceClosedLoop(t *testing.T) {
	f := &fakeService{token: "s3cret"}
	addr := f.start(t)
	res, stderr := runService(t, addr, "--requests", "200", "--clients", "4", "--start", "1000", "--token", "s3cret")
	if f.counts["/v1/documents"] != 200 || len(f.counts) != 1 || len(f.bad) > 0 {
		t.Fatalf("the service saw %v, bad %q", f.counts, f.bad)
	}
	ids := slices.Clone(f.ids)
	slices.Sort(ids)
	var want []string
	for i := 1000; i < 1200; i++ {
		want = append(want, fmt.Sprintf("doc-%d", i))
	}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("ids sent %v", ids)
	}
	if res.Requests != 200 || res.Docs != 200 || res.Errors != 0 || res.Status["200"] != 200 ||
		res.Verdicts["unique"] != 180 || res.Verdicts["near-duplicate"] != 20 || res.Added != 200 ||
		res.FirstDoc != 1000 || res.NextStart != 1200 || res.Prepared != 200 || res.EncodedInRun != 0 ||
		res.Latency["add"].Requests != 200 || res.Latency["add"].P99 <= 0 || res.RequestsPerSecond <= 0 {
		t.Errorf("report %+v", res)
	}
	for _, s := range []string{"add at " + addr, "doc-1000 to doc-1199 measured", "next --start 1200", "latency add", "near-duplicate 20, unique 180; added 200", "generator"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("report on stderr lacks %q:\n%s", s, stderr)
		}
	}
	if strings.Contains(stderr, "pool ran out") {
		t.Errorf("the report says the pool ran out, but it held the run:\n%s", stderr)
	}

	// Batches, checks, and documents past the pool encoded during the run.
	f = &fakeService{}
	addr = f.start(t)
	res, stderr = runService(t, addr, "--mode", "check", "--batch", "10", "--requests", "7", "--pool", "25")
	if f.counts["/v1/documents:batch"] != 7 || len(f.ids) != 69 || len(f.bad) > 0 {
		t.Fatalf("the service saw %v, %d documents, bad %q", f.counts, len(f.ids), f.bad)
	}
	if res.Requests != 7 || res.Docs != 70 || res.Added != 0 || res.ItemErrors["invalid_document"] != 1 ||
		res.Prepared != 25 || res.EncodedInRun != 45 || res.NextStart != 70 {
		t.Errorf("report %+v", res)
	}
	if !strings.Contains(stderr, "the pool ran out") || !strings.Contains(stderr, "--pool 70 ") {
		t.Errorf("the report does not say the pool ran out, and which --pool holds the run:\n%s", stderr)
	}
}

// TestBenchServiceQueryAndMixed: query bodies carry the fingerprints; mixed sends the
// three kinds in turn.
func TestBenchServiceQueryAndMixed(t *testing.T) {
	f := &fakeService{}
	addr := f.start(t)
	res, _ := runService(t, addr, "--mode", "query", "--requests", "30", "--pool", "10")
	if f.counts["/v1/fingerprints/query"] != 30 || len(f.bad) > 0 {
		t.Fatalf("the service saw %v, bad %q", f.counts, f.bad)
	}
	if res.Queries != 30 || res.QueriesMatched != 30 || res.Matches != 30 || res.Prepared != 10 || res.Latency["query"].Requests != 30 ||
		res.QueriesPerSecond != res.RequestsPerSecond {
		t.Errorf("report %+v", res)
	}

	// Batched queries: 8 to a request, from the pool round robin, counted as queries in
	// the throughput and as requests in the latency.
	f = &fakeService{}
	addr = f.start(t)
	res, stderr := runService(t, addr, "--mode", "query", "--batch", "8", "--requests", "5", "--pool", "10", "--clients", "2")
	if f.counts["/v1/fingerprints/query:batch"] != 5 || len(f.counts) != 1 || len(f.simhashes) != 40 || len(f.bad) > 0 {
		t.Fatalf("the service saw %v, %d queries, bad %q", f.counts, len(f.simhashes), f.bad)
	}
	seen := map[string]int{}
	for _, h := range f.simhashes {
		seen[h]++
	}
	for h, n := range seen {
		if n != 4 {
			t.Errorf("query %s sent %d times, want 4 (40 queries round robin over a pool of 10)", h, n)
		}
	}
	if res.Requests != 5 || res.Queries != 40 || res.Latency["query"].Requests != 5 || res.Docs != 0 ||
		res.QueriesMatched != 30 || res.Matches != 30 || res.ItemErrors["bad_request"] != 10 || res.Errors != 0 ||
		res.Prepared != 10 || res.QueriesPerSecond < 7.99*res.RequestsPerSecond || res.QueriesPerSecond > 8.01*res.RequestsPerSecond {
		t.Errorf("report %+v", res)
	}
	for _, s := range []string{"query at " + addr, "batch 8", "requests/s, ", "queries/s", "batch items: bad_request 10", "latency query", "(mean ", "5 responses)", "40 answered, 30 with matches"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("report on stderr lacks %q:\n%s", s, stderr)
		}
	}
	f = &fakeService{}
	addr = f.start(t)
	res, _ = runService(t, addr, "--mode", "mixed", "--requests", "30", "--clients", "3")
	want := map[string]int{"/v1/documents": 10, "/v1/check": 10, "/v1/fingerprints/query": 10}
	if fmt.Sprint(f.counts) != fmt.Sprint(want) || len(f.bad) > 0 {
		t.Fatalf("the service saw %v, bad %q", f.counts, f.bad)
	}
	if len(res.Latency) != 3 || res.Added != 10 || res.Docs != 20 || res.Queries != 10 {
		t.Errorf("report %+v", res)
	}
}

// TestBenchServiceBatcher: with --batcher each client asks one query at a time through
// client.Batcher, which sends the queries that wait together; the report counts the
// queries as requests and says how many HTTP requests carried them.
func TestBenchServiceBatcher(t *testing.T) {
	f := &fakeService{delay: 20 * time.Millisecond} // slow answers, so that queries wait
	addr := f.start(t)
	res, stderr := runService(t, addr, "--mode", "query", "--batcher", "--in-flight", "2", "--requests", "40", "--pool", "10", "--clients", "8")
	sent := f.counts["/v1/fingerprints/query:batch"]
	if len(f.counts) != 1 || len(f.simhashes) != 40 || len(f.bad) > 0 || sent >= 40 {
		t.Fatalf("the service saw %v, %d queries, bad %q: want the 40 queries in fewer batch requests", f.counts, len(f.simhashes), f.bad)
	}
	if res.Requests != 40 || res.HTTPRequests != int64(sent) || res.InFlight != 2 || res.Errors != 0 ||
		res.Queries+res.ItemErrors["bad_request"] != 40 || res.Queries == 0 || res.QueriesMatched != res.Queries {
		t.Errorf("report %+v", res)
	}
	for _, s := range []string{"one query a call through the client's Batcher, 2 requests in flight", "the 40 queries went in " + fmt.Sprint(sent) + " HTTP requests"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("report on stderr lacks %q:\n%s", s, stderr)
		}
	}
}

// TestBenchServiceOpenLoop: an open loop sends rate x duration requests, and measures
// latency from when each was due, so a service slower than the rate shows queueing.
func TestBenchServiceOpenLoop(t *testing.T) {
	f := &fakeService{}
	addr := f.start(t)
	res, _ := runService(t, addr, "--rate", "400", "--duration", "250ms", "--clients", "8")
	if res.Requests != 100 || f.counts["/v1/documents"] != 100 {
		t.Errorf("%d requests sent, %v seen; want 100", res.Requests, f.counts)
	}
	// At most 100 requests over at least the 247.5 ms until the last was due.
	if res.RequestsPerSecond < 50 || res.RequestsPerSecond > 405 {
		t.Errorf("%.1f requests/s at --rate 400", res.RequestsPerSecond)
	}

	// One client, 40 requests due in 50 ms, 5 ms each: the last one is due at 48.75 ms
	// and sent after 195 ms at the earliest, and its latency counts that wait.
	f = &fakeService{delay: 5 * time.Millisecond}
	addr = f.start(t)
	res, _ = runService(t, addr, "--rate", "800", "--duration", "50ms", "--clients", "1")
	if l := res.Latency["add"]; res.Requests != 40 || l.Max < 140 {
		t.Errorf("%d requests, latency %+v; want 40, and the queueing counted", res.Requests, l)
	}
}

// TestBenchServiceErrors: failed requests are counted by status, the first are shown.
func TestBenchServiceErrors(t *testing.T) {
	f := &fakeService{fail: func(n int64) int {
		if n%4 == 3 {
			return 503
		}
		return 0
	}}
	addr := f.start(t)
	res, stderr := runService(t, addr, "--requests", "40", "--clients", "2")
	if res.Requests != 40 || res.Errors != 10 || res.Status["200"] != 30 || res.Status["503"] != 10 ||
		res.Docs != 30 || res.Latency["add"].Requests != 30 {
		t.Errorf("report %+v", res)
	}
	if strings.Count(stderr, "HTTP 503: {\"error\":{\"code\":\"overloaded\"") != 3 || !strings.Contains(stderr, "further errors are only counted") ||
		!strings.Contains(stderr, "200: 30, 503: 10") {
		t.Errorf("stderr:\n%s", stderr)
	}

	// A wrong token: every request answered 401.
	f = &fakeService{token: "right"}
	addr = f.start(t)
	res, _ = runService(t, addr, "--requests", "5", "--token", "wrong")
	if res.Errors != 5 || res.Status["401"] != 5 {
		t.Errorf("report %+v", res)
	}

	// Nothing listening: a clear message naming --addr.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	_, stderr, code := run(t, "", "bench", "service", "--addr", closed, "--requests", "5")
	if code != ExitError || !strings.Contains(stderr, "no service listens at --addr "+closed) {
		t.Errorf("exit code %d, stderr %q", code, stderr)
	}
}

// TestBenchServicePreload: a preload sends batches of every document once, and a
// refused document stops it with the --start to resume from.
func TestBenchServicePreload(t *testing.T) {
	f := &fakeService{}
	addr := f.start(t)
	stdout, stderr, code := run(t, "", "bench", "service", "--addr", addr, "--preload", "1200", "--start", "20", "--json")
	if code != ExitOK {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	var res bench.PreloadResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if f.counts["/v1/documents:batch"] != 3 || len(f.ids) != 1200 || len(f.bad) > 0 {
		t.Fatalf("the service saw %v, %d documents, bad %q", f.counts, len(f.ids), f.bad)
	}
	if res.Docs != 1200 || res.NextStart != 1220 || res.Added != 1200 || res.Errors != 0 || res.Batch != 500 || res.Clients != 8 {
		t.Errorf("report %+v", res)
	}
	if !strings.Contains(stderr, "1200 of doc-20 to doc-1219 acknowledged") {
		t.Errorf("report:\n%s", stderr)
	}

	// doc-13 is refused (the fake's invalid document): resume from its batch.
	f = &fakeService{}
	addr = f.start(t)
	_, stderr, code = run(t, "", "bench", "service", "--addr", addr, "--preload", "100", "--batch", "10", "--clients", "1")
	if code != ExitError || !strings.Contains(stderr, "resume with --start 10 --preload 90") || f.counts["/v1/documents:batch"] != 2 {
		t.Errorf("exit code %d, %v seen, stderr:\n%s", code, f.counts, stderr)
	}
}

func TestBenchServiceUsage(t *testing.T) {
	tests := []struct {
		args []string
		err  string
	}{
		{[]string{"--mode", "delete"}, `--mode "delete": use add, check, query or mixed`},
		{[]string{"--clients", "0"}, "--clients 0: use 1 to 10000"},
		{[]string{"--rate", "-1"}, "--rate -1: use 0 (closed loop)"},
		{[]string{"--rate", "NaN"}, "--rate NaN"},
		{[]string{"--requests", "10", "--duration", "5s"}, "--requests and --duration both given"},
		{[]string{"--duration", "0s"}, "--duration 0s: use a positive duration"},
		{[]string{"--batch", "1001"}, "--batch 1001: use 1 to 1000 documents or queries"},
		{[]string{"--mode", "query", "--batch", "0"}, "--batch 0: use 1 to 1000"},
		{[]string{"--size", "0"}, "--size 0"},
		{[]string{"--dup-rate", "1.5"}, "--dup-rate 1.5"},
		{[]string{"--url-dup-rate", "-0.1"}, "--url-dup-rate -0.1"},
		{[]string{"--start", "-1"}, "--start -1"},
		{[]string{"--warmup", "-1s"}, "--warmup -1s"},
		{[]string{"--pool", "0"}, "--pool 0"},
		{[]string{"--addr", "127.0.0.1:8080"}, `--addr "127.0.0.1:8080": give the service's base URL`},
		{[]string{"--preload", "10", "--rate", "5"}, "--rate is for measuring runs"},
		{[]string{"--preload", "-1"}, "--preload -1"},
		{[]string{"--clients", "x"}, `invalid value "x" for flag --clients`},
		{[]string{"docs.jsonl"}, `unexpected argument "docs.jsonl"`},
		{[]string{"--batcher"}, "--batcher asks queries one at a time: use it with --mode query"},
		{[]string{"--mode", "query", "--batcher", "--batch", "4"}, "--batcher asks queries one at a time"},
		{[]string{"--mode", "query", "--batcher", "--in-flight", "0"}, "--in-flight 0: use 1 to 10000"},
		{[]string{"--mode", "query", "--in-flight", "2"}, "--in-flight is the Batcher's: give --batcher too"},
	}
	for _, tt := range tests {
		stdout, stderr, code := run(t, "", append([]string{"bench", "service"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, "neardup bench service: "+tt.err) || stdout != "" {
			t.Errorf("%q: exit code %d, stderr %q; want %d and %q", tt.args, code, stderr, ExitUsage, tt.err)
		}
	}
}
