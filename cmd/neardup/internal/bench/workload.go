package bench

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/client"
	"github.com/valyala/fastjson"
)

// Op is the kind of one request of bench service.
type Op int

// The kinds of request.

const (
	OpAdd   Op = iota // POST /v1/documents, or /v1/documents:batch with "add": true
	OpCheck           // POST /v1/check, or /v1/documents:batch with "add": false
	OpQuery           // POST /v1/fingerprints/query, or /v1/fingerprints/query:batch
	numOps
)

var opNames = [numOps]string{"add", "check", "query"}

// ParseMode returns the operations of a mode of bench service (add, check, query or
// mixed, which does the three in turn), or nil for an unknown one.
func ParseMode(mode string) []Op {
	switch mode {
	case "add":
		return []Op{OpAdd}
	case "check":
		return []Op{OpCheck}
	case "query":
		return []Op{OpQuery}
	case "mixed":
		return []Op{OpAdd, OpCheck, OpQuery}
	}
	return nil
}

// Workload is a run of bench service: its clients and what they share (the target, the
// operations, the prepared bodies and the counters that hand out documents and
// queries). Its methods are not safe for concurrent use with each other, except the
// live counts (Sent, Failed), which a progress bar reads while a phase runs.
type Workload struct {
	clients []*loadClient

	target  *Target
	docs    *Docs
	ops     []Op            // request n does ops[n % len(ops)]
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

// WorkloadConfig describes the requests of a run.
type WorkloadConfig struct {
	Target  *Target // the service; nil when the requests are only encoded (Emit)
	Docs    *Docs
	Ops     []Op // request n does Ops[n % len(Ops)]
	Start   int  // the index of the first document
	Batch   int  // documents or queries a request; 1 sends one a request
	Clients int  // concurrent clients, each a goroutine with a keep-alive connection
}

// NewWorkload returns the workload of cfg, with no bodies prepared yet.
func NewWorkload(cfg WorkloadConfig) *Workload {
	w := &Workload{target: cfg.Target, docs: cfg.Docs, ops: cfg.Ops, start: cfg.Start, batch: cfg.Batch}
	w.clients = make([]*loadClient, cfg.Clients)
	for i := range w.clients {
		w.clients[i] = &loadClient{w: w, corpus: cfg.Docs.corpus.Clone()}
	}
	return w
}

// Prepare encodes nDocs document bodies and nQueries query bodies (from Start on) on
// every CPU before the timed phases, so that the clients send them without encoding;
// made counts the bodies made, for a progress bar.
func (w *Workload) Prepare(nDocs, nQueries int, made *atomic.Int64) error {
	var err error
	w.bodies, err = prepare(nDocs, w.docs.corpus, made, func(s *Corpus, k int, text []byte) ([]byte, []byte, error) {
		b, text := w.docs.appendJSON(nil, s, w.start+k, text)
		return b, text, nil
	})
	if err != nil || nQueries == 0 {
		return err
	}
	f, err := neardup.NewFingerprinter(neardup.Options{})
	if err != nil {
		return err
	}
	w.asked, err = prepare(nQueries, w.docs.corpus, made, func(s *Corpus, k int, text []byte) (neardup.Query, []byte, error) {
		return w.docs.query(s, f, w.start+k, text)
	})
	w.queries = make([][]byte, len(w.asked))
	for i, q := range w.asked {
		w.queries[i] = queryBody(q)
	}
	return err
}

// Close closes the clients' connections. It is not safe to call while a phase runs.
func (w *Workload) Close() {
	for _, c := range w.clients {
		c.conn.close()
	}
}

// Sent returns the requests sent since ResetLive; safe to call while a phase runs.
func (w *Workload) Sent() int64 { return w.sent.Load() }

// Failed returns the requests failed since ResetLive; safe to call while a phase runs.
func (w *Workload) Failed() int64 { return w.failed.Load() }

// ResetLive sets the live counts (Sent, Failed) to zero, before a phase.
func (w *Workload) ResetLive() {
	w.sent.Store(0)
	w.failed.Store(0)
}

// UseBatcher makes w ask its queries through a client.Batcher with at most inFlight
// batch requests at a time, on the target's HTTP client. Errors are counted, not
// retried, as the requests of the other modes are.
func (w *Workload) UseBatcher(token string, inFlight int) error {
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
	w      *Workload
	corpus *Corpus
	text   []byte
	body   []byte
	conn   conn
	resp   bytes.Buffer
	parser fastjson.Parser
	stats  loadStats
}

// request returns the path and body of the next request of kind op, and how many
// documents or queries it carries.
func (c *loadClient) request(op Op) (path string, body []byte, items int) {
	w := c.w
	if op == OpQuery {
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
		if op == OpCheck {
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
	c.body = strconv.AppendBool(c.body, op == OpAdd)
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
func (c *loadClient) do(ctx context.Context, op Op, from time.Time) {
	if op == OpQuery && c.w.batcher != nil {
		c.ask(ctx, from)
		return
	}
	path, body, items := c.request(op)
	c.stats.requests[op]++
	c.w.sent.Add(1)
	status, err := c.conn.post(ctx, c.w.target, path, body, &c.resp)
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
	c.stats.requests[OpQuery]++
	w.sent.Add(1)
	rctx, cancel := context.WithTimeout(ctx, loadTimeout)
	matches, err := w.batcher.Query(rctx, q)
	cancel()
	var api *client.APIError
	switch {
	case err == nil:
		c.stats.status[http.StatusOK]++
		c.stats.latency[OpQuery].record(time.Since(from))
		c.stats.items[OpQuery]++
		if len(matches) > 0 {
			c.stats.matched++
			c.stats.matches += int64(len(matches))
		}
	case ctx.Err() != nil: // interrupted: neither a success nor an error
		c.stats.requests[OpQuery]--
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
func (c *loadClient) count(op Op, batch bool) {
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
			case op == OpQuery:
				c.countMatches(r)
			default:
				c.countVerdict(r.Get("verdict"))
			}
		}
	case op == OpQuery:
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

// Phase is one timed part of a run: for a duration or a number of requests, closed
// loop (Rate 0) or open loop at Rate requests/s.
type Phase struct {
	Duration time.Duration // 0: until Requests
	Requests int64         // 0: until Duration
	Rate     float64
}

// Warmup runs the phase p and counts nothing of it but the documents handed out.
func (w *Workload) Warmup(ctx context.Context, p Phase) { w.run(ctx, p) }

// Measure runs the phase p and returns what it measured: the counts, latencies and
// rates of ServiceResult, and the documents and bodies it used. The fields that
// describe the run's configuration are left for the caller to fill in.
func (w *Workload) Measure(ctx context.Context, p Phase) ServiceResult {
	firstDoc := w.docSeq.Load()
	w.encoded.Store(0)
	w.target.httpRequests.Store(0)
	elapsed := w.run(ctx, p)
	s := newLoadStats()
	for _, cl := range w.clients {
		s.merge(&cl.stats)
	}
	res := s.result(elapsed)
	res.FirstDoc = w.start + int(firstDoc)
	res.NextStart = w.start + int(w.docSeq.Load())
	res.Prepared = len(w.bodies) + len(w.queries)
	res.EncodedInRun = w.encoded.Load()
	if w.batcher != nil {
		res.HTTPRequests = w.target.httpRequests.Load()
	}
	return res
}

// run runs the phase on the clients (their stats reset first) and returns the elapsed
// time, from the start to the last response.
func (w *Workload) run(ctx context.Context, p Phase) time.Duration {
	var seq atomic.Int64
	var wg sync.WaitGroup
	t0 := time.Now()
	end := t0.Add(p.Duration)
	for _, c := range w.clients {
		c.stats = newLoadStats()
		wg.Go(func() {
			for ctx.Err() == nil {
				n := seq.Add(1) - 1
				if p.Requests > 0 && n >= p.Requests {
					return
				}
				var from time.Time
				if p.Rate > 0 {
					from = t0.Add(time.Duration(float64(n) / p.Rate * float64(time.Second)))
					if p.Duration > 0 && !from.Before(end) {
						return
					}
					if d := time.Until(from); d > 0 {
						time.Sleep(d)
					}
				} else {
					from = time.Now()
					if p.Duration > 0 && !from.Before(end) {
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
