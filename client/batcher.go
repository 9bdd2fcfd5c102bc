package client

import (
	"context"
	"sync"
	"time"

	"github.com/neardup/neardup/api"
)

// Batcher sends the raw queries that many goroutines ask one at a time in batch requests
// (POST /v1/fingerprints/query:batch), so that a process whose workers each query one
// page's fingerprints gets the throughput of batches without gathering them itself: the
// service answers about twice as many queries a second in batches of 16 as one a
// request, most of a lone query's cost being HTTP.
//
// It batches only what waits anyway, adding no delay: a query is sent at once while
// fewer than Options.Concurrency of the Batcher's requests are in flight; otherwise it
// waits for the next of them to end and goes in the next request with every query that
// arrived meanwhile (at most Options.BatchSize). A lone query is thus a batch of one,
// and under load each request carries about as many queries as there are callers
// waiting. Use one Batcher for the whole process; it is safe for concurrent use.
//
// A request carries the queries of several callers, so it is bounded by the latest of
// their deadlines (none if one of them has none), not by any one caller's
// cancellation. A caller whose context ends stops waiting at once and returns its error;
// a query whose caller has gone before its request was sent is not sent.
type Batcher struct {
	c *Client

	mu    sync.Mutex
	queue []*waiting // queries not yet sent, oldest first
	busy  int        // requests in flight
}

// waiting is a query in a Batcher and the caller waiting for its result.
type waiting struct {
	ctx  context.Context
	q    api.Query
	done chan QueryResult // buffered: the sender never waits for a caller that has gone
}

// Batcher returns a new Batcher that sends its queries with c.
func (c *Client) Batcher() *Batcher { return &Batcher{c: c} }

// Query returns what Client.Query returns for q, from a batch request shared with the
// queries of other goroutines. A query with neither fingerprint is an error without a
// request. The service's refusal of the query itself (a signature of another size) is
// an *APIError with Status 0, as in a QueryResult of QueryBatch; the failure of the
// request that carried it is that request's error.
func (b *Batcher) Query(ctx context.Context, q api.Query) ([]api.Match, error) {
	if err := checkQuery(&q); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &waiting{ctx: ctx, q: q, done: make(chan QueryResult, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, w)
	var batch []*waiting
	if b.busy < b.c.opt.Concurrency {
		b.busy++
		batch = b.take()
	}
	b.mu.Unlock()
	if batch != nil {
		go b.send(batch)
	}
	select {
	case r := <-w.done:
		return r.Matches, r.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// take removes the oldest queries from the queue, at most Options.BatchSize, and returns
// those whose callers still wait. b.mu is held.
func (b *Batcher) take() []*waiting {
	n := min(len(b.queue), b.c.opt.BatchSize)
	batch := make([]*waiting, 0, n)
	for _, w := range b.queue[:n] {
		if w.ctx.Err() == nil {
			batch = append(batch, w)
		}
	}
	clear(b.queue[:n])
	b.queue = b.queue[n:]
	if len(b.queue) == 0 {
		b.queue = nil // let the emptied array go
	}
	return batch
}

// send sends batch, and then the batches that queued behind it, one request after
// another, until the queue is empty.
func (b *Batcher) send(batch []*waiting) {
	for {
		if len(batch) > 0 {
			b.ask(batch)
		}
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.busy--
			b.mu.Unlock()
			return
		}
		batch = b.take()
		b.mu.Unlock()
	}
}

// ask sends one batch request and hands each caller its result.
func (b *Batcher) ask(batch []*waiting) {
	ctx, cancel := latestDeadline(batch)
	defer cancel()
	qs := make([]api.Query, len(batch))
	for i, w := range batch {
		qs[i] = w.q
	}
	res, _ := b.c.QueryBatch(ctx, qs) // each result carries its error
	for i, w := range batch {
		w.done <- res[i]
	}
}

// latestDeadline returns a context with the latest deadline of the batch's callers, or
// none if one of them has none.
func latestDeadline(batch []*waiting) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, w := range batch {
		d, ok := w.ctx.Deadline()
		if !ok {
			return context.WithCancel(context.Background())
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(context.Background(), latest)
}
