package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup/cmd/neardup/internal/bench"
)

// runPreload adds --preload documents from --start in batches, and stops at the first
// failed batch (a failed request, or a document the service refused) so that the report
// can name a --start from which every later document is missing at most.
func (c *benchServiceCmd) runPreload(ctx context.Context, e *env, target *bench.Target, docs *bench.Docs) error {
	var acked atomic.Int64
	t0 := time.Now()
	bar := newCountProgress(e.stderr, c.output.showProgress(e), int64(c.preload), acked.Load, func() string {
		n := acked.Load()
		return fmt.Sprintf("preload %d docs (%.0f/s)", n, float64(n)/max(time.Since(t0).Seconds(), 1e-3))
	})
	res := bench.Preload(ctx, target, docs, bench.PreloadConfig{Start: c.start, N: c.preload, Batch: c.batch, Clients: c.clients}, &acked)
	bar.done()
	return c.preloadDone(e, res)
}

// preloadDone reports a preload, and fails it when a batch was not added.
func (c *benchServiceCmd) preloadDone(e *env, res bench.PreloadResult) error {
	report := e.stdout
	if c.json {
		report = e.stderr
	}
	if err := bench.WritePreloadReport(report, res); err != nil {
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
