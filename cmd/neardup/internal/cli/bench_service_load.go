package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fastjson"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/client"
	"github.com/neardup/neardup/cmd/neardup/internal/bench"
)

// loadOp is the kind of one request of bench service.
type loadOp int

const (
	opAdd   loadOp = iota // POST /v1/documents, or /v1/documents:batch with "add": true
	opCheck               // POST /v1/check, or /v1/documents:batch with "add": false
	opQuery               // POST /v1/fingerprints/query, or /v1/fingerprints/query:batch
	numOps
)

var opNames = [numOps]string{"add", "check", "query"}

// loadTimeout bounds one request; a request that takes longer counts as a transport error.
const loadTimeout = 30 * time.Second

// maxErrorsShown is how many error responses and transport errors a run prints.
const maxErrorsShown = 3

// loadTarget is the service a run talks to: one shared client whose transport keeps a
// keep-alive connection per client goroutine.
type loadTarget struct {
	base   string // --addr without a trailing slash
	token  string
	client *http.Client
	stderr io.Writer
	mu     sync.Mutex   // held while writing to stderr, which clients share
	shown  atomic.Int64 // errors printed so far
	prefix string       // "neardup bench service: "

	httpRequests atomic.Int64 // sent by client, counted by its transport
}

// countingTransport counts the requests it sends.
type countingTransport struct {
	http.RoundTripper
	n *atomic.Int64
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.RoundTripper.RoundTrip(r)
}

func newLoadTarget(base, token string, conns int, stderr io.Writer) *loadTarget {
	tr := &http.Transport{
		// No proxy: the service is measured, not a proxy on the way to it.
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		// Large enough for a batch of 500 documents to go out in few writes.
		WriteBufferSize: 64 << 10,
		ReadBufferSize:  64 << 10,
	}
	t := &loadTarget{base: base, token: token, stderr: stderr, prefix: "neardup bench service: "}
	t.client = &http.Client{Transport: countingTransport{tr, &t.httpRequests}, Timeout: loadTimeout}
	return t
}

// post sends body to path and reads the whole response into resp (so the connection is
// reused). err is a transport error; a non-2xx status is not one.
func (t *loadTarget) post(ctx context.Context, path string, body []byte, resp *bytes.Buffer) (status int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	r, err := t.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Reset()
	_, err = resp.ReadFrom(r.Body)
	r.Body.Close()
	return r.StatusCode, err
}

// showError prints one failed request, the first maxErrorsShown of them.
func (t *loadTarget) showError(path string, status int, body []byte, err error) {
	n := t.shown.Add(1)
	if n > maxErrorsShown {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err != nil:
		fmt.Fprintf(t.stderr, "%sPOST %s: %v\n", t.prefix, path, t.describe(err))
	default:
		if len(body) > 300 {
			body = append(body[:300:300], "..."...)
		}
		fmt.Fprintf(t.stderr, "%sPOST %s: HTTP %d: %s\n", t.prefix, path, status, bytes.TrimSpace(body))
	}
	if n == maxErrorsShown {
		fmt.Fprintf(t.stderr, "%sfurther errors are only counted\n", t.prefix)
	}
}

// describe says what to do about a transport error.
func (t *loadTarget) describe(err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("no service listens at --addr %s (connection refused); start one with 'neardup serve --data DIR' or point --addr at it", t.base)
	}
	return err
}

// waitReady checks that a neardup service answers at the address, waiting while it
// reports itself loading (GET /readyz 503).
func (t *loadTarget) waitReady(ctx context.Context) error {
	said := false
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.base+"/readyz", nil)
		r, err := t.client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return t.describe(err)
		}
		io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		r.Body.Close()
		switch {
		case r.StatusCode == http.StatusOK:
			return nil
		case r.StatusCode != http.StatusServiceUnavailable:
			return fmt.Errorf("GET %s/readyz answered HTTP %d; is --addr a neardup service?", t.base, r.StatusCode)
		case !said:
			fmt.Fprintf(t.stderr, "%swaiting for the service at %s to be ready\n", t.prefix, t.base)
			said = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// loadDocs makes and encodes the documents of a run: document i is the synthetic
// corpus's document i, with id "doc-i" and URL "https://bench.example/s<i mod 1000>/i",
// except that a share urlDupRate of the near copies take their original's URL.
type loadDocs struct {
	corpus     *bench.Corpus // a template: each goroutine clones it
	urlDupRate float64
	pages      [][]byte // with --html, the pages' fields (htmlPages), used instead of corpus
}

// url returns document i's URL.
func (d *loadDocs) url(c *bench.Corpus, i int) string {
	u := i
	if o := c.Original(i); o >= 0 && d.urlDupRate > 0 {
		if rand.New(rand.NewPCG(c.Seed()^0x5851f42d4c957f2d, uint64(i))).Float64() < d.urlDupRate {
			u = o
		}
	}
	return "https://bench.example/s" + strconv.Itoa(u%1000) + "/" + strconv.Itoa(u)
}

// appendJSON appends document i as the JSON of a document in a request; c is the
// calling goroutine's corpus and text its scratch buffer, returned grown.
func (d *loadDocs) appendJSON(dst []byte, c *bench.Corpus, i int, text []byte) ([]byte, []byte) {
	if d.pages != nil {
		return d.appendHTMLJSON(dst, i), text
	}
	text = c.Text(text[:0], i)
	dst = append(dst, `{"id":"doc-`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `","url":"`...)
	dst = append(dst, d.url(c, i)...)
	dst = append(dst, `","text":`...)
	q, _ := json.Marshal(string(text)) // a string always marshals
	dst = append(dst, q...)
	return append(dst, '}'), text
}

// query returns a fingerprint query with document i's fingerprints.
func (d *loadDocs) query(c *bench.Corpus, f *neardup.Fingerprinter, i int, text []byte) (neardup.Query, []byte, error) {
	text = c.Text(text[:0], i)
	fp, err := f.Fingerprint(neardup.Document{ID: "doc-" + strconv.Itoa(i), Text: string(text)})
	if err != nil {
		return neardup.Query{}, text, err
	}
	return neardup.Query{SimHash: fp.SimHash, HasSimHash: true, MinHash: fp.MinHash}, text, nil
}

// queryBody returns the body of a request for the fingerprint query q.
func queryBody(q neardup.Query) []byte {
	mh := make([]byte, 0, 4*len(q.MinHash))
	for _, v := range q.MinHash {
		mh = binary.LittleEndian.AppendUint32(mh, v)
	}
	return fmt.Appendf(nil, `{"simhash":"%016x","minhash":"%s"}`, q.SimHash, hex.EncodeToString(mh))
}

// prepare encodes n items on every CPU: item k of the slice returned is what encode
// makes of k, given the goroutine's corpus and scratch text. done counts the items made.
func prepare[T any](n int, corpus *bench.Corpus, done *atomic.Int64, encode func(c *bench.Corpus, k int, text []byte) (T, []byte, error)) ([]T, error) {
	out := make([]T, n)
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			c := corpus.Clone()
			var text []byte
			for k := w; k < n; k += workers {
				var err error
				out[k], text, err = encode(c, k, text)
				if err != nil {
					errs[w] = err
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// loadWorkload is what the clients of a run share: the target, the operations, the
// prepared bodies and the counters that hand out documents and queries.
type loadWorkload struct {
	target  *loadTarget
	docs    *loadDocs
	ops     []loadOp        // request n does ops[n % len(ops)]
	start   int             // the first document index
	batch   int             // documents or queries per request
	bodies  [][]byte        // documents start, start+1, ... encoded
	queries [][]byte        // query bodies, used round robin
	asked   []neardup.Query // the queries of those bodies

	batcher *client.Batcher // with --batcher, what asks the queries

	docSeq   atomic.Int64 // documents handed out, from start
	querySeq atomic.Int64
	encoded  atomic.Int64 // documents encoded during the run (past the prepared ones)

	// live counts for the progress bar
	sent, failed atomic.Int64
}

// useBatcher makes w ask its queries through a client.Batcher with at most inFlight
// batch requests at a time, on the target's HTTP client. Errors are counted, not
// retried, as the requests of the other modes are.
func (w *loadWorkload) useBatcher(token string, inFlight int) error {
	c, err := client.New(w.target.base, client.Options{Token: token, HTTPClient: w.target.client, Retries: -1, Concurrency: inFlight})
	if err != nil {
		return err
	}
	w.batcher = c.Batcher()
	return nil
}

// loadStats are one client's counts, merged at the end of a phase.
type loadStats struct {
	requests   [numOps]int64 // sent
	items      [numOps]int64 // documents or queries in 2xx responses
	latency    [numOps]histogram
	status     map[int]int64 // responses by HTTP status
	transport  int64         // requests without a response
	verdicts   map[string]int64
	added      int64
	itemErrors map[string]int64 // batch results with an error, by code
	matched    int64            // queries with at least one match
	matches    int64
}

func newLoadStats() loadStats {
	return loadStats{status: map[int]int64{}, verdicts: map[string]int64{}, itemErrors: map[string]int64{}}
}

func (s *loadStats) merge(o *loadStats) {
	for op := range numOps {
		s.requests[op] += o.requests[op]
		s.items[op] += o.items[op]
		s.latency[op].merge(&o.latency[op])
	}
	for k, v := range o.status {
		s.status[k] += v
	}
	for k, v := range o.verdicts {
		s.verdicts[k] += v
	}
	for k, v := range o.itemErrors {
		s.itemErrors[k] += v
	}
	s.transport += o.transport
	s.added += o.added
	s.matched += o.matched
	s.matches += o.matches
}

// errors returns the requests that failed: non-2xx responses and transport errors.
func (s *loadStats) errors() int64 {
	n := s.transport
	for code, v := range s.status {
		if code < 200 || code > 299 {
			n += v
		}
	}
	return n
}

// loadClient is one client goroutine's state.
type loadClient struct {
	w      *loadWorkload
	corpus *bench.Corpus
	text   []byte
	body   []byte
	resp   bytes.Buffer
	parser fastjson.Parser
	stats  loadStats
}

// request returns the path and body of the next request of kind op, and how many
// documents or queries it carries.
func (c *loadClient) request(op loadOp) (path string, body []byte, items int) {
	w := c.w
	if op == opQuery {
		first := w.querySeq.Add(int64(w.batch)) - int64(w.batch)
		if w.batch == 1 {
			return "/v1/fingerprints/query", w.queries[first%int64(len(w.queries))], 1
		}
		c.body = append(c.body[:0], `{"queries":[`...)
		for k := first; k < first+int64(w.batch); k++ {
			if k > first {
				c.body = append(c.body, ',')
			}
			c.body = append(c.body, w.queries[k%int64(len(w.queries))]...)
		}
		return "/v1/fingerprints/query:batch", append(c.body, "]}"...), w.batch
	}
	first := int(w.docSeq.Add(int64(w.batch)) - int64(w.batch))
	if w.batch == 1 {
		path = "/v1/documents"
		if op == opCheck {
			path = "/v1/check"
		}
		if first < len(w.bodies) {
			return path, w.bodies[first], 1
		}
		w.encoded.Add(1)
		c.body, c.text = w.docs.appendJSON(c.body[:0], c.corpus, w.start+first, c.text)
		return path, c.body, 1
	}
	c.body = append(c.body[:0], `{"add":`...)
	c.body = strconv.AppendBool(c.body, op == opAdd)
	c.body = append(c.body, `,"documents":[`...)
	for k := first; k < first+w.batch; k++ {
		if k > first {
			c.body = append(c.body, ',')
		}
		if k < len(w.bodies) {
			c.body = append(c.body, w.bodies[k]...)
		} else {
			w.encoded.Add(1)
			c.body, c.text = w.docs.appendJSON(c.body, c.corpus, w.start+k, c.text)
		}
	}
	return "/v1/documents:batch", append(c.body, "]}"...), w.batch
}

// do sends one request of kind op and counts its outcome; its latency is measured from
// from, when it was due (open loop) or sent (closed loop).
func (c *loadClient) do(ctx context.Context, op loadOp, from time.Time) {
	if op == opQuery && c.w.batcher != nil {
		c.ask(ctx, from)
		return
	}
	path, body, items := c.request(op)
	c.stats.requests[op]++
	c.w.sent.Add(1)
	status, err := c.w.target.post(ctx, path, body, &c.resp)
	if err != nil {
		if ctx.Err() != nil { // interrupted: neither a success nor an error
			c.stats.requests[op]--
			return
		}
		c.stats.transport++
		c.w.failed.Add(1)
		c.w.target.showError(path, 0, nil, err)
		return
	}
	c.stats.status[status]++
	if status < 200 || status > 299 {
		c.w.failed.Add(1)
		c.w.target.showError(path, status, c.resp.Bytes(), nil)
		return
	}
	c.stats.latency[op].record(time.Since(from))
	c.stats.items[op] += int64(items)
	c.count(op, c.w.batch > 1)
}

// ask asks the next query through the Batcher, counted as a request: an answer as a
// 200, a query the service refused by its error code, a failed batch request by its
// status or as a transport error.
func (c *loadClient) ask(ctx context.Context, from time.Time) {
	w := c.w
	const path = "/v1/fingerprints/query:batch"
	q := w.asked[(w.querySeq.Add(1)-1)%int64(len(w.asked))]
	c.stats.requests[opQuery]++
	w.sent.Add(1)
	rctx, cancel := context.WithTimeout(ctx, loadTimeout)
	matches, err := w.batcher.Query(rctx, q)
	cancel()
	var api *client.APIError
	switch {
	case err == nil:
		c.stats.status[http.StatusOK]++
		c.stats.latency[opQuery].record(time.Since(from))
		c.stats.items[opQuery]++
		if len(matches) > 0 {
			c.stats.matched++
			c.stats.matches += int64(len(matches))
		}
	case ctx.Err() != nil: // interrupted: neither a success nor an error
		c.stats.requests[opQuery]--
	case errors.As(err, &api) && api.Status == 0:
		c.stats.status[http.StatusOK]++
		c.stats.itemErrors[api.Code]++
	case errors.As(err, &api):
		c.stats.status[api.Status]++
		w.failed.Add(1)
		w.target.showError(path, api.Status, []byte(api.Message), nil)
	default:
		c.stats.transport++
		w.failed.Add(1)
		w.target.showError(path, 0, nil, err)
	}
}

// count reads the verdicts or matches of a 2xx response. A response it cannot read
// counts as an item error "unreadable_response".
func (c *loadClient) count(op loadOp, batch bool) {
	v, err := c.parser.ParseBytes(c.resp.Bytes())
	if err != nil {
		c.stats.itemErrors["unreadable_response"]++
		return
	}
	switch {
	case batch:
		for _, r := range v.GetArray("results") {
			switch e := r.Get("error"); {
			case e != nil:
				c.stats.itemErrors[string(e.GetStringBytes("code"))]++
			case op == opQuery:
				c.countMatches(r)
			default:
				c.countVerdict(r.Get("verdict"))
			}
		}
	case op == opQuery:
		c.countMatches(v)
	default:
		c.countVerdict(v)
	}
}

func (c *loadClient) countMatches(v *fastjson.Value) {
	if n := len(v.GetArray("matches")); n > 0 {
		c.stats.matched++
		c.stats.matches += int64(n)
	}
}

func (c *loadClient) countVerdict(v *fastjson.Value) {
	if v == nil {
		c.stats.itemErrors["unreadable_response"]++
		return
	}
	c.stats.verdicts[string(v.GetStringBytes("verdict"))]++
	if v.GetBool("added") {
		c.stats.added++
	}
}

// loadPhase is one timed part of a run: for a duration or a number of requests, closed
// loop (rate 0) or open loop at rate requests/s.
type loadPhase struct {
	duration time.Duration // 0: until requests
	requests int64         // 0: until duration
	rate     float64
}

// run runs the phase on the clients (their stats reset first) and returns the elapsed
// time, from the start to the last response.
func (w *loadWorkload) run(ctx context.Context, clients []*loadClient, p loadPhase) time.Duration {
	var seq atomic.Int64
	var wg sync.WaitGroup
	t0 := time.Now()
	end := t0.Add(p.duration)
	for _, c := range clients {
		c.stats = newLoadStats()
		wg.Go(func() {
			for ctx.Err() == nil {
				n := seq.Add(1) - 1
				if p.requests > 0 && n >= p.requests {
					return
				}
				var from time.Time
				if p.rate > 0 {
					from = t0.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
					if p.duration > 0 && !from.Before(end) {
						return
					}
					if d := time.Until(from); d > 0 {
						time.Sleep(d)
					}
				} else {
					from = time.Now()
					if p.duration > 0 && !from.Before(end) {
						return
					}
				}
				c.do(ctx, w.ops[n%int64(len(w.ops))], from)
			}
		})
	}
	wg.Wait()
	return time.Since(t0)
}
