package client

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/server"
)

// queued returns how many queries wait in b's queue.
func (b *Batcher) queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestBatcher holds the first two requests at the service while 48 more callers queue
// behind them: those go in the next requests, 8 to a request, and every caller gets what
// the detector answers for its own query.
func TestBatcher(t *testing.T) {
	const n = 50
	s := newService(t, server.Config{}, stored(n))
	release := make(chan struct{})
	s.fail = func(k int) bool {
		if k <= 2 {
			<-release
		}
		return false
	}
	b := s.client(t, Options{BatchSize: 8, Concurrency: 2}).Batcher()
	qs := queries(t, n)
	got := make([]QueryResult, n)
	var wg sync.WaitGroup
	for i := range 2 { // the first two, one request each
		wg.Go(func() { got[i].Matches, got[i].Err = b.Query(context.Background(), qs[i]) })
	}
	waitFor(t, "the first two requests", func() bool { return len(s.requests()) == 2 })
	for i := 2; i < n; i++ {
		wg.Go(func() { got[i].Matches, got[i].Err = b.Query(context.Background(), qs[i]) })
	}
	waitFor(t, "48 queries to queue", func() bool { return b.queued() == n-2 })
	close(release)
	wg.Wait()
	for i, q := range qs {
		checkMatches(t, s.d, i, q, got[i])
	}
	sizes := s.requests()
	want := []int{1, 1, 8, 8, 8, 8, 8, 8}
	if len(sizes) != len(want) || sizes[0] != 1 || sizes[1] != 1 {
		t.Fatalf("requests of %v queries, want %v", sizes, want)
	}
	for _, k := range sizes[2:] {
		if k != 8 {
			t.Fatalf("requests of %v queries, want %v", sizes, want)
		}
	}
	if b.queued() != 0 || b.busy != 0 {
		t.Errorf("after the calls: %d queued, %d requests in flight", b.queued(), b.busy)
	}

	// Alone, a query is a request of its own, at once.
	if _, err := b.Query(context.Background(), qs[0]); err != nil {
		t.Fatal(err)
	}
	if sizes := s.requests(); len(sizes) != len(want)+1 || sizes[len(want)] != 1 {
		t.Errorf("a lone query: requests of %v queries", sizes)
	}
}

// TestBatcherErrors: a query with neither fingerprint fails without a request, the
// service's refusal of one query fails that query alone, and a failed request fails all
// of its queries.
func TestBatcherErrors(t *testing.T) {
	s := newService(t, server.Config{}, stored(4))
	b := s.client(t, Options{Retries: -1}).Batcher()
	if _, err := b.Query(context.Background(), neardup.Query{}); err == nil || len(s.requests()) != 0 {
		t.Errorf("a query with neither fingerprint: %v, requests %v", err, s.requests())
	}
	var api *APIError
	if _, err := b.Query(context.Background(), neardup.Query{MinHash: minhash.Signature{1}}); !errors.As(err, &api) || api.Status != 0 || api.Code != "bad_request" {
		t.Errorf("a signature of 1 value: %v, want the service's bad_request", err)
	}
	s.fail = func(int) bool { return true }
	if _, err := b.Query(context.Background(), queries(t, 2)[0]); !errors.As(err, &api) || api.Status != http.StatusForbidden {
		t.Errorf("a failed request: %v, want its 403", err)
	}
}

// TestBatcherCancel: a caller whose context ends returns at once, while its request is
// held; a queued query whose caller has gone is not sent; the others are answered.
func TestBatcherCancel(t *testing.T) {
	s := newService(t, server.Config{}, stored(10))
	release := make(chan struct{})
	s.fail = func(k int) bool {
		if k == 1 {
			<-release
		}
		return false
	}
	b := s.client(t, Options{Concurrency: 1}).Batcher()
	qs := queries(t, 10)
	ctx, cancel := context.WithCancel(context.Background())
	held := make(chan error, 1)
	go func() {
		_, err := b.Query(ctx, qs[0])
		held <- err
	}()
	waitFor(t, "the first request", func() bool { return len(s.requests()) == 1 })
	// Three more queue behind it; the second of them gives up.
	gone, goneCancel := context.WithCancel(context.Background())
	results := make([]chan error, 3)
	for i := range 3 {
		qctx := context.Background()
		if i == 1 {
			qctx = gone
		}
		results[i] = make(chan error, 1)
		go func() {
			_, err := b.Query(qctx, qs[1+i])
			results[i] <- err
		}()
		waitFor(t, "the query to queue", func() bool { return b.queued() == i+1 })
	}
	cancel()
	if err := <-held; !errors.Is(err, context.Canceled) {
		t.Errorf("the held caller: %v, want context.Canceled", err)
	}
	goneCancel()
	if err := <-results[1]; !errors.Is(err, context.Canceled) {
		t.Errorf("the queued caller that gave up: %v, want context.Canceled", err)
	}
	close(release)
	for _, i := range []int{0, 2} {
		if err := <-results[i]; err != nil {
			t.Errorf("queued caller %d: %v", i, err)
		}
	}
	if sizes := s.requests(); len(sizes) != 2 || sizes[1] != 2 {
		t.Errorf("requests of %v queries, want [1 2]: the query of the caller that left is not sent", sizes)
	}
}

// TestBatcherConcurrent has 64 goroutines query at once, some with deadlines that pass
// while they wait: every answer that comes is the detector's, and the Batcher ends idle.
// Run it with -race.
func TestBatcherConcurrent(t *testing.T) {
	const n = 30
	s := newService(t, server.Config{}, stored(n))
	b := s.client(t, Options{BatchSize: 5, Concurrency: 3}).Batcher()
	qs := queries(t, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered := 0
	for g := range 64 {
		wg.Go(func() {
			for k := range 20 {
				i := (g*20 + k) % n
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if k%7 == 3 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(k)*100*time.Microsecond)
				}
				m, err := b.Query(ctx, qs[i])
				cancel()
				if errors.Is(err, context.DeadlineExceeded) {
					continue
				}
				checkMatches(t, s.d, i, qs[i], QueryResult{Matches: m, Err: err})
				mu.Lock()
				answered++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	total := 0
	for _, k := range s.requests() {
		if k > 5 {
			t.Fatalf("a request of %d queries, more than BatchSize 5", k)
		}
		total += k
	}
	if answered < 64*17 || total < answered || total > 64*20 { // 3 of each 20 have deadlines
		t.Errorf("%d answered, %d sent in %d requests", answered, total, len(s.requests()))
	}
	waitFor(t, "the Batcher to be idle", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.busy == 0 && len(b.queue) == 0
	})
}
