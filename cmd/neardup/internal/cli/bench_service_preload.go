package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// benchPreloadResult is the JSON report of bench service --preload.
type benchPreloadResult struct {
	Addr          string           `json:"addr"`
	Clients       int              `json:"clients"`
	Batch         int              `json:"batch"`
	Start         int              `json:"start"`
	Preload       int              `json:"preload"`    // documents asked for
	Docs          int64            `json:"docs"`       // documents in 2xx batch responses
	NextStart     int              `json:"next_start"` // where to resume: every document before it was acknowledged
	Seconds       float64          `json:"seconds"`
	DocsPerSecond float64          `json:"docs_per_second"`
	Status        map[string]int64 `json:"status"`
	Errors        int64            `json:"errors"` // failed requests
	ItemErrors    map[string]int64 `json:"item_errors"`
	Verdicts      map[string]int64 `json:"verdicts"`
	Added         int64            `json:"added"`
	Interrupted   bool             `json:"interrupted"`
}

// runPreload adds --preload documents from --start in batches, and stops at the first
// failed batch (a failed request, or a document the service refused) so that the report
// can name a --start from which every later document is missing at most.
func (c *benchServiceCmd) runPreload(ctx context.Context, e *env, target *loadTarget, docs *loadDocs) error {
	w := &loadWorkload{target: target, docs: docs, ops: []loadOp{opAdd}, start: c.start, batch: c.batch}
	batches := (c.preload + c.batch - 1) / c.batch
	var (
		seq      atomic.Int64
		acked    atomic.Int64
		stopped  atomic.Bool // a batch failed: send no more
		mu       sync.Mutex
		resumeAt = c.start + c.preload // the first document of the first failed batch
		wg       sync.WaitGroup
	)
	fail := func(first int) {
		mu.Lock()
		resumeAt = min(resumeAt, first)
		mu.Unlock()
		stopped.Store(true)
	}
	t0 := time.Now()
	bar := newCountProgress(e.stderr, c.output.showProgress(e), int64(c.preload), acked.Load, func() string {
		n := acked.Load()
		return fmt.Sprintf("preload %d docs (%.0f/s)", n, float64(n)/max(time.Since(t0).Seconds(), 1e-3))
	})
	clients := make([]*loadClient, c.clients)
	for i := range clients {
		cl := &loadClient{w: w, corpus: docs.corpus.Clone(), stats: newLoadStats()}
		clients[i] = cl
		wg.Go(func() {
			for ctx.Err() == nil && !stopped.Load() {
				b := int(seq.Add(1) - 1)
				if b >= batches {
					return
				}
				first := c.start + b*c.batch
				n := min(c.batch, c.start+c.preload-first)
				if !sendPreload(ctx, cl, target, docs, first, n) {
					fail(first)
					continue
				}
				acked.Add(int64(n))
			}
		})
	}
	wg.Wait()
	bar.done()
	return c.preloadDone(ctx, e, clients, resumeAt, time.Since(t0))
}

// sendPreload adds documents first to first+n-1 in one request and reports whether
// the service added them all; an interrupted request counts as not added.
func sendPreload(ctx context.Context, cl *loadClient, target *loadTarget, docs *loadDocs, first, n int) bool {
	cl.body = append(cl.body[:0], `{"add":true,"documents":[`...)
	for i := range n {
		if i > 0 {
			cl.body = append(cl.body, ',')
		}
		cl.body, cl.text = docs.appendJSON(cl.body, cl.corpus, first+i, cl.text)
	}
	cl.body = append(cl.body, "]}"...)
	itemErrs := sumCounts(cl.stats.itemErrors)
	status, err := target.post(ctx, "/v1/documents:batch", cl.body, &cl.resp)
	switch {
	case err != nil && ctx.Err() != nil:
		return false // interrupted: this batch may not have been added
	case err != nil:
		cl.stats.transport++
		target.showError("/v1/documents:batch", 0, nil, err)
		return false
	case status < 200 || status > 299:
		cl.stats.status[status]++
		target.showError("/v1/documents:batch", status, cl.resp.Bytes(), nil)
		return false
	}
	cl.stats.status[status]++
	cl.count(opAdd, true)
	if sumCounts(cl.stats.itemErrors) > itemErrs {
		target.showError("/v1/documents:batch", status, cl.resp.Bytes(), nil)
		return false
	}
	cl.stats.items[opAdd] += int64(n)
	return true
}

// preloadDone reports a preload, and fails it when a batch was not added.
func (c *benchServiceCmd) preloadDone(ctx context.Context, e *env, clients []*loadClient, resumeAt int, elapsed time.Duration) error {
	s := newLoadStats()
	for _, cl := range clients {
		s.merge(&cl.stats)
	}
	res := benchPreloadResult{
		Addr: c.addr, Clients: c.clients, Batch: c.batch, Start: c.start, Preload: c.preload,
		Docs: s.items[opAdd], NextStart: resumeAt, Seconds: elapsed.Seconds(),
		DocsPerSecond: float64(s.items[opAdd]) / max(elapsed.Seconds(), 1e-9),
		Status:        map[string]int64{}, Errors: s.errors(), ItemErrors: s.itemErrors,
		Verdicts: s.verdicts, Added: s.added, Interrupted: ctx.Err() != nil,
	}
	for code, n := range s.status {
		res.Status[strconv.Itoa(code)] = n
	}
	report := e.stdout
	if c.json {
		report = e.stderr
	}
	if err := writePreloadReport(report, res); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if c.json {
		b, _ := json.Marshal(res)
		if _, err := e.stdout.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
	}
	if res.NextStart < c.start+c.preload {
		return fmt.Errorf("preload stopped: doc-%d and later may be missing; resume with --start %d --preload %d",
			res.NextStart, res.NextStart, c.start+c.preload-res.NextStart)
	}
	return nil
}

func sumCounts(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// writePreloadReport writes the human-readable report of a preload.
func writePreloadReport(w io.Writer, r benchPreloadResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "bench service\tpreload at %s, %d clients, batches of %d\n", r.Addr, r.Clients, r.Batch)
	fmt.Fprintf(tw, "documents\t%d of doc-%d to doc-%d acknowledged in %.2f s: %.0f documents/s; next --start %d\n",
		r.Docs, r.Start, r.Start+r.Preload-1, r.Seconds, r.DocsPerSecond, r.NextStart)
	fmt.Fprintf(tw, "status\t%s\n", sortedCounts(r.Status, ": "))
	errs := fmt.Sprintf("%d", r.Errors)
	if len(r.ItemErrors) > 0 {
		errs += "; batch items: " + sortedCounts(r.ItemErrors, " ")
	}
	fmt.Fprintf(tw, "errors\t%s\n", errs)
	fmt.Fprintf(tw, "verdicts\t%s; added %d\n", sortedCounts(r.Verdicts, " "), r.Added)
	return tw.Flush()
}
