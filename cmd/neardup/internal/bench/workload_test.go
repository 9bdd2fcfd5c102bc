package bench

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/server"
)

// startService returns the base URL of a real service over an in-memory detector.
func startService(t *testing.T) string {
	t.Helper()
	s, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := neardup.NewDetector(neardup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.SetDetector(d)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestWorkloadService preloads documents into a real service, then measures queries
// and checks of them: every request is counted once, none fails, each query finds at
// least its own document, and every check gets a verdict.
func TestWorkloadService(t *testing.T) {
	ctx := context.Background()
	base := startService(t)
	var stderr strings.Builder
	target := NewTarget(base, "", 4, &stderr)
	if err := target.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	// No URL duplicates, so that every preloaded document is stored under a URL of its
	// own and each query's own document is there to find: with them, which documents
	// stand depended on the sample text the corpus is generated from.
	docs := SyntheticDocs(NewCorpus(1, 400, 3, 0.2), 0)
	var acked atomic.Int64
	pre := Preload(ctx, target, docs, PreloadConfig{Start: 0, N: 120, Batch: 25, Clients: 3}, &acked)
	if pre.Docs != 120 || pre.NextStart != 120 || acked.Load() != 120 || pre.Errors != 0 || sumCounts(pre.Verdicts) != 120 {
		t.Fatalf("preload: %+v, acked %d; stderr %q", pre, acked.Load(), stderr.String())
	}
	for _, tc := range []struct {
		mode  string
		batch int
	}{{"query", 1}, {"query", 4}, {"check", 1}, {"check", 5}} {
		ops := ParseMode(tc.mode)
		w := NewWorkload(WorkloadConfig{Target: target, Docs: docs, Ops: ops, Start: 0, Batch: tc.batch, Clients: 3})
		if err := w.Prepare(60, 60, new(atomic.Int64)); err != nil {
			t.Fatal(err)
		}
		res := w.Measure(ctx, Phase{Requests: 12})
		items := int64(12 * tc.batch)
		if res.Requests != 12 || res.Errors != 0 || res.Status["200"] != 12 || res.Latency[tc.mode].Requests != 12 || w.Sent() != 12 {
			t.Fatalf("%s batch %d: %+v", tc.mode, tc.batch, res)
		}
		switch tc.mode {
		case "query":
			if res.Queries != items || res.QueriesMatched != items || res.Matches < items {
				t.Fatalf("query batch %d: %d queries, %d matched, %d matches; want %d each matching", tc.batch, res.Queries, res.QueriesMatched, res.Matches, items)
			}
		default:
			if res.Docs != items || sumCounts(res.Verdicts) != items || res.Added != 0 || res.FirstDoc != 0 || res.NextStart != int(items) {
				t.Fatalf("check batch %d: %+v", tc.batch, res)
			}
		}
	}
}

// TestWorkloadRefused measures against an address where nothing listens: WaitReady
// says what to do, and every request counts as a transport error, the first few
// printed.
func TestWorkloadRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	l.Close()
	var stderr strings.Builder
	target := NewTarget(base, "", 2, &stderr)
	if err := target.WaitReady(context.Background()); err == nil || !strings.Contains(err.Error(), "no service listens") {
		t.Fatalf("WaitReady: %v", err)
	}
	docs := SyntheticDocs(NewCorpus(1, 200, 3, 0.1), 0)
	w := NewWorkload(WorkloadConfig{Target: target, Docs: docs, Ops: ParseMode("add"), Batch: 1, Clients: 2})
	res := w.Measure(context.Background(), Phase{Requests: 10})
	if res.Requests != 10 || res.TransportErrors != 10 || res.Errors != 10 || w.Failed() != 10 || res.EncodedInRun != 10 {
		t.Fatalf("%+v", res)
	}
	if n := strings.Count(stderr.String(), "connection refused"); n != maxErrorsShown {
		t.Fatalf("%d errors printed, want %d: %q", n, maxErrorsShown, stderr.String())
	}
	if err := WriteServiceReport(io.Discard, res, false); err != nil {
		t.Fatal(err)
	}
}

// TestTimeoutAdvice: a request that gets no answer within the client's timeout is
// reported with the advice to send smaller batches, the cure when batches of adds on a
// slow store outlast it.
func TestTimeoutAdvice(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	var stderr strings.Builder
	target := NewTarget(srv.URL, "", 1, &stderr)
	target.client.Timeout = 50 * time.Millisecond
	docs := SyntheticDocs(NewCorpus(1, 200, 3, 0.1), 0)
	w := NewWorkload(WorkloadConfig{Target: target, Docs: docs, Ops: ParseMode("add"), Batch: 4, Clients: 1})
	res := w.Measure(context.Background(), Phase{Requests: 1})
	if res.TransportErrors != 1 {
		t.Fatalf("%+v", res)
	}
	if s := stderr.String(); !strings.Contains(s, "no answer within 50ms") || !strings.Contains(s, "send smaller batches") {
		t.Fatalf("stderr: %q", s)
	}
}
