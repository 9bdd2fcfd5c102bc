package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup/client"
	"github.com/neardup/neardup/cmd/neardup/internal/bench"
	"github.com/neardup/neardup/internal/procstat"
)

var benchServiceCommand = &command{
	name:    "bench service",
	args:    "",
	summary: "load-test a running neardup service over HTTP: throughput, latency, errors",
	about: `Measures a running neardup service (neardup serve) over its HTTP API: --clients
concurrent clients send check-and-add requests (--mode add: POST /v1/documents), checks
(check: POST /v1/check), raw fingerprint queries (query: POST /v1/fingerprints/query), or
the three in turn (mixed), for --duration or --requests, after a --warmup whose requests
are not counted. With --batch B > 1, each request carries B: adds and checks go B
documents to a request to /v1/documents:batch, queries B queries to a request to
/v1/fingerprints/query:batch. Latencies stay per request; the documents and queries per
second count what the requests carried.

--batcher (with --mode query) has each client ask one query at a time through the Go
client's Batcher (package client), as a crawler's workers would: the Batcher sends the
queries that wait together, in batch requests of its own, at most --in-flight at a
time. The report then counts queries as requests, with the latency of each call, and
says how many HTTP requests carried them.

--rate 0 runs a closed loop: each client sends its next request when the last one is
answered, so the rate is what the service sustains. --rate R > 0 runs an open loop:
request n is due n/R seconds into the run, the next free client sends it, and its
latency is measured from when it was due, so a service that falls behind shows the
queueing in its latencies instead of being sent fewer requests (coordinated omission).

The documents are bench dedup's synthetic English (its word model is learnt from
the Clang manual's text embedded in this program): about --size bytes of text, a share
--dup-rate of them near copies of earlier documents (3 words changed), and a share
--url-dup-rate of those at their original's URL too. Document i has id "doc-i" and URL
"https://bench.example/s<i mod 1000>/i" and is made from (--seed, i) alone, so --start
says exactly which documents a run sends, and the report prints the --start that follows
them. Query mode sends the SimHash and MinHash of documents --start onwards, fingerprinted
here with the default options (after a preload, documents the service holds). Up to
--pool request bodies are encoded before the timed phase (the service should measure,
not this generator); a longer add or check run encodes the rest as it goes, and the
report counts those.

Reports the requests, the errors by HTTP status (the first few error responses go to
standard error), requests, documents and queries per second, the latency p50, p90, p99,
p99.9 and max of each kind of request (2xx responses; a log-linear histogram, within
1%), the verdicts, and the CPU time of this process over the measured phase (user+sys,
from getrusage), as the generator shares the machine with the service. With --json the
report goes to standard error and standard output gets one JSON object. A progress bar
shows on standard error when it is a terminal.

--emit FILE writes the bodies of --requests requests (of --mode add, check or query)
to FILE, one a line, instead of sending them, and beside it FILE.lua, a script for wrk
(Debian's wrk) that sends each once, in order, and stops when they run out; it prints
the wrk command. wrk's event loop in C takes less than half of this generator's CPU per
request (0.03 against 0.065 ms here), so on a machine shared with the service a closed
loop measures more of the service; wrk reports throughput and latency percentiles but
not the verdicts.

--preload N fills the service instead: N documents from --start, 500 to a batch
request from 8 clients (--batch and --clients change that), showing the documents per
second. When a batch fails it stops and names the --start to resume from. A batch
is answered once its last document is added, one after the other: on a Redis store
send smaller batches from more clients (--batch 100 --clients 16).

The workload of the figures in docs/performance.md (2 cores, loopback, 1M documents of
2 KB in the store):

  neardup serve --data DIR &
  neardup bench service --preload 1000000
  neardup bench service --mode add --start 1000000 --pool 450000 --duration 60s
  neardup bench service --mode query --duration 30s
  neardup bench service --mode add --start 1000000 --rate 2500 --duration 60s
  neardup bench service --mode query --rate 15000 --duration 30s
  neardup bench service --emit adds.jsonl --requests 900000 --start 1000000
  wrk -t1 -c32 -d60s --latency -s adds.jsonl.lua http://127.0.0.1:8080

The two closed loops measure throughput (goals: 5000 documents/s, 30000 queries/s), the
two open loops the p99 latency at half those rates (goal: 10 ms). This generator's own
CPU time, in the report, is taken from the same 2 cores; so is wrk's. Run each add
run on a fresh copy of the preloaded store, or give it a --start past the documents
earlier runs added (the next --start each prints), so that they are new to the
service. A --start far past the preloaded documents changes the workload: the near
copies' originals are then mostly not in the store.
`,
	new: func() runner { return &benchServiceCmd{} },
}

// Limits of bench service's flags.
const (
	maxLoadClients = 10_000
	maxLoadBatch   = 1000 // the service's default batch limit
	preloadBatch   = 500
	preloadClients = 8
)

// benchServiceCmd is "neardup bench service".
type benchServiceCmd struct {
	fs                         *flag.FlagSet // to tell flags given from defaults
	addr, token, mode, emit    string
	clients, size, batch, pool int
	html                       stringList // --html paths
	requests, start, preload   int
	duration, warmup           time.Duration
	rate, dupRate, urlDupRate  float64
	seed                       uint64
	json                       bool
	batcher                    bool
	inFlight                   int
	output                     outputFlags
}

func (c *benchServiceCmd) define(fs *flag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.addr, "addr", "http://127.0.0.1:8080", "the service's base `URL` (default http://127.0.0.1:8080)")
	fs.StringVar(&c.token, "token", "", "send `T` as the bearer token (write scope for add, mixed and --preload)\n(default \"\": none)")
	fs.StringVar(&c.mode, "mode", "add", "send `MODE` requests: add, check, query or mixed (default add)")
	fs.IntVar(&c.clients, "clients", 32, "send from `N` concurrent clients (default 32: 8 with --preload)")
	fs.DurationVar(&c.duration, "duration", 30*time.Second, "measure for `D` (default 30s: not with --requests)")
	fs.IntVar(&c.requests, "requests", 0, "measure `N` requests instead of a duration (default 0: use --duration)")
	fs.Float64Var(&c.rate, "rate", 0, "send `R` requests/s in all, an open loop; 0 is a closed loop, as fast as\nthe clients go (default 0)")
	fs.DurationVar(&c.warmup, "warmup", 5*time.Second, "send requests for `D` before measuring, not counted (default 5s)")
	fs.IntVar(&c.size, "size", 2000, "make each document about `BYTES` of text (default 2000)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed the documents with `S` (default 1)")
	fs.IntVar(&c.start, "start", 0, "begin at document `I` (doc-I), to keep runs' documents apart (default 0)")
	fs.Float64Var(&c.dupRate, "dup-rate", 0.1, "make a share `RATE` of the documents near copies of earlier ones\n(default 0.1)")
	fs.Float64Var(&c.urlDupRate, "url-dup-rate", 0.25, "give a share `RATE` of the near copies their original's URL (default 0.25)")
	fs.IntVar(&c.batch, "batch", 1, "send `B` documents or queries to a request when B > 1, up to 1000, to\n/v1/documents:batch or /v1/fingerprints/query:batch (default 1: one a request;\n500 with --preload)")
	fs.IntVar(&c.pool, "pool", 100_000, "encode up to `N` documents or queries before the timed phase (2.2 KB\neach at --size 2000); queries are used round robin (default 100000)")
	fs.IntVar(&c.preload, "preload", 0, "add `N` documents from --start as fast as the service takes them, and\nmeasure nothing else (default 0: measure)")
	fs.StringVar(&c.emit, "emit", "", "write the bodies of --requests requests to `FILE`, one a line, and a wrk\nscript that sends them to FILE.lua, instead of sending them (default \"\": send)")
	fs.Var(&c.html, "html", "send the HTML pages of `PATH` (a directory tree of .html files, a WARC or\nJSONL file, as 'neardup dedup' reads them) instead of synthetic text, the pages\nin turn under new ids and URLs; repeat for more paths (add and check only)\n(default \"\": synthetic text)")
	fs.BoolVar(&c.json, "json", false, "write one JSON object to standard output and the report to standard\nerror (default false)")
	fs.BoolVar(&c.batcher, "batcher", false, "with --mode query: ask each query through the Go client's Batcher, which\ngathers the queries waiting into batch requests (default false)")
	fs.IntVar(&c.inFlight, "in-flight", client.DefaultConcurrency, "with --batcher: have at most `N` batch requests in flight (the client's\nOptions.Concurrency) (default 4)")
	c.output.define(fs)
}

// given reports whether the flag was on the command line.
func (c *benchServiceCmd) given(name string) bool {
	found := false
	c.fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

func isRate(r float64) bool { return r >= 0 && r <= 1 }

// validate checks the flags and settles the defaults that depend on others.
func (c *benchServiceCmd) validate(args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q: bench service generates its requests; the service is --addr", args[0])
	}
	u, err := url.Parse(c.addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--addr %q: give the service's base URL, e.g. http://127.0.0.1:8080", c.addr)
	}
	c.addr = strings.TrimRight(c.addr, "/")
	switch {
	case c.size < 1:
		return usagef("--size %d: use 1 or more bytes", c.size)
	case c.start < 0:
		return usagef("--start %d: use 0 or more", c.start)
	case !isRate(c.dupRate):
		return usagef("--dup-rate %v: use a share from 0 to 1", c.dupRate)
	case !isRate(c.urlDupRate):
		return usagef("--url-dup-rate %v: use a share from 0 to 1", c.urlDupRate)
	case c.preload < 0:
		return usagef("--preload %d: use 1 or more documents", c.preload)
	}
	if err := c.validateKinds(); err != nil {
		return err
	}
	ops := bench.ParseMode(c.mode)
	switch {
	case ops == nil:
		return usagef("--mode %q: use add, check, query or mixed", c.mode)
	case c.clients < 1 || c.clients > maxLoadClients:
		return usagef("--clients %d: use 1 to %d", c.clients, maxLoadClients)
	case c.batch < 1 || c.batch > maxLoadBatch:
		return usagef("--batch %d: use 1 to %d documents or queries a request", c.batch, maxLoadBatch)
	case c.requests < 0:
		return usagef("--requests %d: use 1 or more", c.requests)
	case c.requests > 0 && c.given("duration"):
		return usagef("--requests and --duration both given: a run ends after one of them")
	case c.requests == 0 && c.duration <= 0:
		return usagef("--duration %v: use a positive duration, e.g. 30s", c.duration)
	case c.warmup < 0:
		return usagef("--warmup %v: use 0 or a positive duration", c.warmup)
	case !(c.rate >= 0) || math.IsInf(c.rate, 1):
		return usagef("--rate %v: use 0 (closed loop) or requests per second", c.rate)
	case c.pool < 1:
		return usagef("--pool %d: use 1 or more", c.pool)
	}
	if err := c.validateBatcher(); err != nil {
		return err
	}
	if c.requests > 0 {
		c.duration = 0
	}
	return nil
}

// validateKinds checks the flags of the kinds of run other than a measured one
// (--preload, --emit, --html), and sets the defaults that differ for them.
func (c *benchServiceCmd) validateKinds() error {
	if c.preload > 0 {
		for _, f := range []string{"mode", "duration", "requests", "rate", "warmup", "pool"} {
			if c.given(f) {
				return usagef("--%s is for measuring runs; --preload only adds documents", f)
			}
		}
		if !c.given("batch") {
			c.batch = preloadBatch
		}
		if !c.given("clients") {
			c.clients = preloadClients
		}
	}
	if c.emit != "" {
		for _, f := range []string{"preload", "duration", "rate", "warmup", "pool", "json"} {
			if c.given(f) {
				return usagef("--%s is for runs that send requests; --emit only writes their bodies", f)
			}
		}
		switch {
		case c.requests < 1:
			return usagef("--emit needs --requests N: how many request bodies to write")
		case c.mode == "mixed":
			return usagef("--emit writes the bodies of one kind of request: use --mode add, check or query")
		}
		c.warmup, c.pool = 0, c.requests*c.batch
	}
	if len(c.html) > 0 && c.mode != "add" && c.mode != "check" {
		return usagef("--html sends pages: use --mode add or check")
	}
	return nil
}

// validateBatcher checks --batcher and --in-flight.
func (c *benchServiceCmd) validateBatcher() error {
	if c.batcher {
		switch {
		case c.mode != "query" || c.batch != 1:
			return usagef("--batcher asks queries one at a time: use it with --mode query and no --batch")
		case c.emit != "" || c.preload > 0:
			return usagef("--batcher is for runs that send queries; not with --emit or --preload")
		case c.inFlight < 1 || c.inFlight > maxLoadClients:
			return usagef("--in-flight %d: use 1 to %d", c.inFlight, maxLoadClients)
		}
	} else if c.given("in-flight") {
		return usagef("--in-flight is the Batcher's: give --batcher too")
	}
	return nil
}

// poolSize returns how many documents and queries to encode before the timed phase:
// what the run will use when that is known, at most --pool.
func (c *benchServiceCmd) poolSize(ops []bench.Op) (docs, queries int) {
	est := -1.0 // requests in warmup and measurement; -1: unknown
	switch {
	case c.rate > 0 && c.requests > 0:
		est = math.Ceil(c.rate*c.warmup.Seconds()) + float64(c.requests)
	case c.rate > 0:
		est = math.Ceil(c.rate * (c.warmup + c.duration).Seconds())
	case c.requests > 0 && c.warmup == 0:
		est = float64(c.requests)
	}
	docs, queries = c.pool, c.pool
	if est >= 0 {
		docs = int(min(float64(c.pool), est*float64(c.batch)))
		queries = docs
	}
	if !slices.Contains(ops, bench.OpQuery) {
		queries = 0
	}
	if ops[0] == bench.OpQuery {
		docs = 0
	}
	return docs, queries
}

func (c *benchServiceCmd) run(e *env, args []string) error {
	if err := c.validate(args); err != nil {
		return err
	}
	if err := c.output.check(); err != nil {
		return err
	}
	if c.output.verbose {
		var given []string
		c.fs.VisitAll(func(f *flag.Flag) {
			if f.Name != "verbose" && f.Name != "token" {
				given = append(given, "--"+f.Name+" "+f.Value.String())
			}
		})
		fmt.Fprintf(e.stderr, "neardup bench service: with %s\n", strings.Join(given, " "))
	}
	if c.emit != "" {
		docs, err := c.loadDocs()
		if err != nil {
			return err
		}
		return c.runEmit(e, docs)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	target := bench.NewTarget(c.addr, c.token, c.clients, e.stderr)
	if err := target.WaitReady(ctx); err != nil {
		return err
	}
	docs, err := c.loadDocs()
	if err != nil {
		return err
	}
	if len(c.html) > 0 && !c.given("pool") {
		c.pool = min(c.pool, docs.Pages()) // later documents cost a copy to encode
	}
	if c.preload > 0 {
		return c.runPreload(ctx, e, target, docs)
	}
	return c.runLoad(ctx, e, target, docs)
}

// loadDocs returns the documents of the run: the pages of --html, else the synthetic
// corpus, which learns its words from the evaluation data.
func (c *benchServiceCmd) loadDocs() (*bench.Docs, error) {
	if len(c.html) > 0 {
		pages, err := bench.HTMLPages(c.html)
		return bench.PageDocs(pages), err
	}
	return bench.SyntheticDocs(bench.NewCorpus(c.seed, c.size, 3, c.dupRate), c.urlDupRate), nil
}

// result maps the flags of a measuring run onto its report, whose measured fields
// come from bench.
func (c *benchServiceCmd) result(res bench.ServiceResult) bench.ServiceResult {
	res.Mode, res.Addr, res.Clients, res.Rate, res.Batch, res.Size = c.mode, c.addr, c.clients, c.rate, c.batch, c.size
	res.Seed, res.DupRate, res.URLDupRate, res.Start, res.HTML = c.seed, c.dupRate, c.urlDupRate, c.start, c.html
	res.WarmupSeconds = c.warmup.Seconds()
	return res
}

// preparePool encodes the bodies and queries of w before the timed phase, as many as
// poolSize says, showing a progress bar.
func (c *benchServiceCmd) preparePool(e *env, w *bench.Workload, ops []bench.Op) error {
	nDocs, nQueries := c.poolSize(ops)
	var made atomic.Int64
	bar := newCountProgress(e.stderr, c.output.showProgress(e), int64(nDocs+nQueries), made.Load, func() string { return "preparing" })
	defer bar.done()
	return w.Prepare(nDocs, nQueries, &made)
}

// runLoad is a measuring run.
func (c *benchServiceCmd) runLoad(ctx context.Context, e *env, target *bench.Target, docs *bench.Docs) error {
	ops := bench.ParseMode(c.mode)
	w := bench.NewWorkload(bench.WorkloadConfig{Target: target, Docs: docs, Ops: ops, Start: c.start, Batch: c.batch, Clients: c.clients})
	defer w.Close()
	show := c.output.showProgress(e)
	if err := c.preparePool(e, w, ops); err != nil {
		return err
	}
	if c.batcher {
		if err := w.UseBatcher(c.token, c.inFlight); err != nil {
			return err
		}
	}
	phaseBar := func(name string, p bench.Phase) *progress {
		w.ResetLive()
		t0 := time.Now()
		total, done := p.Requests, w.Sent
		if total == 0 {
			total, done = p.Duration.Milliseconds(), func() int64 { return time.Since(t0).Milliseconds() }
		}
		return newCountProgress(e.stderr, show, total, done, func() string {
			n := w.Sent()
			return fmt.Sprintf("%-7s %d requests (%.0f/s), %d errors", name, n, float64(n)/max(time.Since(t0).Seconds(), 1e-3), w.Failed())
		})
	}
	if c.warmup > 0 {
		wp := bench.Phase{Duration: c.warmup, Rate: c.rate}
		bar := phaseBar("warmup", wp)
		w.Warmup(ctx, wp)
		bar.done()
	}
	phase := bench.Phase{Duration: c.duration, Requests: int64(c.requests), Rate: c.rate}
	user0, sys0, cpuOK := procstat.CPUTime()
	bar := phaseBar("measure", phase)
	res := c.result(w.Measure(ctx, phase))
	bar.done()
	user1, sys1, _ := procstat.CPUTime()
	if c.batcher {
		res.InFlight = c.inFlight
	}
	if cpuOK {
		res.CPUUserSeconds, res.CPUSysSeconds = (user1 - user0).Seconds(), (sys1 - sys0).Seconds()
	}
	res.Interrupted = ctx.Err() != nil
	return c.report(e, res, cpuOK)
}

// report writes the report of a measuring run, and with --json its JSON.
func (c *benchServiceCmd) report(e *env, res bench.ServiceResult, cpuOK bool) error {
	report := e.stdout
	if c.json {
		report = e.stderr
	}
	if err := bench.WriteServiceReport(report, res, cpuOK); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if c.json {
		b, _ := json.Marshal(res)
		if _, err := e.stdout.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
	}
	return nil
}
