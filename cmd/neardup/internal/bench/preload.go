package bench

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// PreloadResult is the JSON report of bench service --preload.
type PreloadResult struct {
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

// PreloadConfig describes a preload: documents Start to Start+N-1 added in batches of
// Batch from Clients concurrent clients.
type PreloadConfig struct {
	Start, N, Batch, Clients int
}

// Preload adds the documents of cfg to the target as fast as it takes them, and stops
// at the first failed batch (a failed request, or a document the service refused) so
// that NextStart in the result names a document from which every later one is missing
// at most. acked counts the documents acknowledged, for a progress bar; ctx interrupts.
func Preload(ctx context.Context, target *Target, docs *Docs, cfg PreloadConfig, acked *atomic.Int64) PreloadResult {
	w := NewWorkload(WorkloadConfig{Target: target, Docs: docs, Ops: []Op{OpAdd}, Start: cfg.Start, Batch: cfg.Batch, Clients: cfg.Clients})
	defer w.Close()
	batches := (cfg.N + cfg.Batch - 1) / cfg.Batch
	var (
		seq      atomic.Int64
		stopped  atomic.Bool // a batch failed: send no more
		mu       sync.Mutex
		resumeAt = cfg.Start + cfg.N // the first document of the first failed batch
		wg       sync.WaitGroup
	)
	t0 := time.Now()
	for _, cl := range w.clients {
		cl.stats = newLoadStats()
		wg.Go(func() {
			for ctx.Err() == nil && !stopped.Load() {
				b := int(seq.Add(1) - 1)
				if b >= batches {
					return
				}
				first := cfg.Start + b*cfg.Batch
				n := min(cfg.Batch, cfg.Start+cfg.N-first)
				if !sendPreload(ctx, cl, target, docs, first, n) {
					mu.Lock()
					resumeAt = min(resumeAt, first)
					mu.Unlock()
					stopped.Store(true)
					continue
				}
				acked.Add(int64(n))
			}
		})
	}
	wg.Wait()
	return w.preloadResult(ctx, cfg, resumeAt, time.Since(t0))
}

// preloadResult returns the report of a preload.
func (w *Workload) preloadResult(ctx context.Context, cfg PreloadConfig, resumeAt int, elapsed time.Duration) PreloadResult {
	s := newLoadStats()
	for _, cl := range w.clients {
		s.merge(&cl.stats)
	}
	res := PreloadResult{
		Addr: w.target.base, Clients: cfg.Clients, Batch: cfg.Batch, Start: cfg.Start, Preload: cfg.N,
		Docs: s.items[OpAdd], NextStart: resumeAt, Seconds: elapsed.Seconds(),
		DocsPerSecond: float64(s.items[OpAdd]) / max(elapsed.Seconds(), 1e-9),
		Status:        map[string]int64{}, Errors: s.errors(), ItemErrors: s.itemErrors,
		Verdicts: s.verdicts, Added: s.added, Interrupted: ctx.Err() != nil,
	}
	for code, n := range s.status {
		res.Status[strconv.Itoa(code)] = n
	}
	return res
}

// sendPreload adds documents first to first+n-1 in one request and reports whether
// the service added them all; an interrupted request counts as not added.
func sendPreload(ctx context.Context, cl *loadClient, target *Target, docs *Docs, first, n int) bool {
	cl.body = append(cl.body[:0], `{"add":true,"documents":[`...)
	for i := range n {
		if i > 0 {
			cl.body = append(cl.body, ',')
		}
		cl.body, cl.text = docs.appendJSON(cl.body, cl.corpus, first+i, cl.text)
	}
	cl.body = append(cl.body, "]}"...)
	itemErrs := sumCounts(cl.stats.itemErrors)
	status, err := cl.conn.post(ctx, target, "/v1/documents:batch", cl.body, &cl.resp)
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
	cl.count(OpAdd, true)
	if sumCounts(cl.stats.itemErrors) > itemErrs {
		target.showError("/v1/documents:batch", status, cl.resp.Bytes(), nil)
		return false
	}
	cl.stats.items[OpAdd] += int64(n)
	return true
}

func sumCounts(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// WritePreloadReport writes the human-readable report of a preload to w, as a table.
func WritePreloadReport(w io.Writer, r PreloadResult) error {
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
