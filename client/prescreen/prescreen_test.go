package prescreen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/client"
	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/server"
)

// service is the real server over an in-memory detector, on a loopback listener, with
// a hook that can answer a request in its place and counts of the filter downloads.
type service struct {
	*httptest.Server
	d            *neardup.Detector
	full, notMod atomic.Int64 // GET /v1/prescreen answered 200, 304
	fail         atomic.Pointer[func(http.ResponseWriter, *http.Request) bool]
}

func newService(t *testing.T) *service {
	t.Helper()
	d, err := neardup.NewDetector(neardup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetDetector(d)
	s := &service{d: d}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := s.fail.Load(); f != nil && (*f)(w, r) {
			return
		}
		if r.URL.Path != "/v1/prescreen" {
			srv.ServeHTTP(w, r)
			return
		}
		srv.ServeHTTP(&statusWriter{ResponseWriter: w, s: s}, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// setFail makes f answer the requests it returns true for; nil removes it.
func (s *service) setFail(f func(http.ResponseWriter, *http.Request) bool) {
	if f == nil {
		s.fail.Store(nil)
		return
	}
	s.fail.Store(&f)
}

// statusWriter counts a filter download when its status is written, before the client
// can see the answer.
type statusWriter struct {
	http.ResponseWriter
	s *service
}

func (w *statusWriter) WriteHeader(code int) {
	switch code {
	case http.StatusOK:
		w.s.full.Add(1)
	case http.StatusNotModified:
		w.s.notMod.Add(1)
	}
	w.ResponseWriter.WriteHeader(code)
}

// failOnce answers the first request with the status, the header and the body.
func failOnce(status int, header map[string]string, body string) func(http.ResponseWriter, *http.Request) bool {
	var seen atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) bool {
		if seen.Add(1) > 1 {
			return false
		}
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		w.Write([]byte(body))
		return true
	}
}

func newClient(t *testing.T, s *service) *client.Client {
	t.Helper()
	c, err := client.New(s.URL, client.Options{Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, HTTPClient: s.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// article is a plain-text document with enough words to be compared for near duplicates.
func article(id, url string, seed int) neardup.Document {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "w%d ", (i*7+seed*13)%500)
	}
	return neardup.Document{ID: id, URL: url, Text: b.String()}
}

func newPrescreen(t *testing.T, c *client.Client, opt Options) *Prescreen {
	t.Helper()
	p, err := New(context.Background(), c, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestPrescreenRefreshETag(t *testing.T) {
	ctx := context.Background()
	f := newService(t)
	c := newClient(t, f)
	f.d.Check(article("a", "http://example.com/a", 1))
	p := newPrescreen(t, c, Options{Every: -1})
	first := p.Info()
	if f.full.Load() != 1 || first.ETag == "" || first.Keys != 2 || first.Err != nil || first.Stale {
		t.Fatalf("first snapshot: %+v, %d downloads", first, f.full.Load())
	}

	time.Sleep(time.Millisecond) // so that Confirmed moves
	changed, err := p.Refresh(ctx)
	if err != nil || changed || f.notMod.Load() != 1 || f.full.Load() != 1 {
		t.Fatalf("unchanged filter: changed %v, %v; %d 304s, %d downloads", changed, err, f.notMod.Load(), f.full.Load())
	}
	if i := p.Info(); i.ETag != first.ETag || !i.Fetched.Equal(first.Fetched) || !i.Confirmed.After(first.Confirmed) {
		t.Errorf("after a 304: %+v, before %+v", i, first)
	}

	f.d.Check(article("b", "http://example.com/b", 2))
	changed, err = p.Refresh(ctx)
	if err != nil || !changed || f.full.Load() != 2 {
		t.Fatalf("changed filter: changed %v, %v; %d downloads", changed, err, f.full.Load())
	}
	if i := p.Info(); i.ETag == first.ETag || i.Keys != 4 {
		t.Errorf("after a change: %+v", i)
	}

	// A failed refresh keeps the snapshot and says why; the next success clears it.
	f.setFail(failOnce(500, nil, `{"error":{"code":"internal","message":"store"}}`))
	var api *client.APIError
	if _, err := p.Refresh(ctx); !errors.As(err, &api) || !errors.As(p.Info().Err, &api) {
		t.Errorf("failed refresh: %v, Info.Err %v", err, p.Info().Err)
	}
	if maybe, _ := p.SeenURL("http://example.com/b"); !maybe {
		t.Error("a failed refresh lost the snapshot")
	}
	if _, err := p.Refresh(ctx); err != nil || p.Info().Err != nil {
		t.Errorf("refresh after the failure: %v, Info.Err %v", err, p.Info().Err)
	}

	// A corrupt snapshot is refused and the old one kept.
	f.setFail(failOnce(200, map[string]string{"ETag": `"x"`}, "NDKEYFLT garbage"))
	if _, err := p.Refresh(ctx); !errors.Is(err, neardup.ErrFilter) || p.Info().ETag == `"x"` {
		t.Errorf("corrupt snapshot: %v, %+v", err, p.Info())
	}
}

// TestPrescreenAnswers pins what the package documentation promises: "absent" is
// certain as of the snapshot, "maybe" goes to the service, and the gaps (documents added
// since, deleted ones, near duplicates) are as said.
func TestPrescreenAnswers(t *testing.T) {
	ctx := context.Background()
	f := newService(t)
	c := newClient(t, f)
	a := article("a", "http://example.com/a", 1)
	if _, err := c.Add(ctx, a); err != nil {
		t.Fatal(err)
	}
	p := newPrescreen(t, c, Options{Every: -1})

	// URLs: the stored one in any spelling that canonicalizes alike is "maybe".
	for _, u := range []string{"http://example.com/a", "HTTPS://www.Example.com/a/?utm_source=feed#top"} {
		if maybe, err := p.SeenURL(u); !maybe || err != nil {
			t.Errorf("SeenURL(%q) = %v, %v", u, maybe, err)
		}
	}
	absent := 0
	for i := range 1000 {
		maybe, err := p.SeenURL(fmt.Sprintf("http://example.com/new/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if !maybe {
			absent++
		}
	}
	if absent < 990 {
		t.Errorf("%d of 1000 new URLs certainly absent; the filter's rate is %g", absent, p.Info().FalsePositiveRate)
	}
	if _, err := p.SeenURL("http://[::1"); err == nil {
		t.Error("SeenURL of a URL that cannot be parsed")
	}

	screenPages(t, p, c, a)
}

// screenPages checks Screen against the service's verdict for pages related to a, the
// one document stored: an exact copy at another URL, the same URL with new content, a new
// page, and a near copy.
func screenPages(t *testing.T, p *Prescreen, c *client.Client, a neardup.Document) {
	t.Helper()
	ctx := context.Background()
	for _, c2 := range []struct {
		doc        neardup.Document
		url, exact bool
		kinds      []neardup.Kind // the service's possible verdicts
	}{
		{neardup.Document{ID: "copy", URL: "http://example.com/copy", Text: a.Text}, false, true, []neardup.Kind{neardup.ExactDuplicate}},
		{article("changed", "http://example.com/a", 7), true, false, []neardup.Kind{neardup.Changed}},
		{article("new", "http://example.com/new", 7), false, false, []neardup.Kind{neardup.Unique, neardup.NearDuplicate}},
		{article("same-text", "", 1), false, true, []neardup.Kind{neardup.ExactDuplicate}},
		{neardup.Document{ID: "nearer", Text: a.Text + " one more word"}, false, false, []neardup.Kind{neardup.NearDuplicate}},
	} {
		r, err := p.Screen(c2.doc)
		if err != nil {
			t.Fatal(err)
		}
		if r.URL != c2.url || r.Exact != c2.exact || r.Maybe() != (c2.url || c2.exact) || r.Fingerprints.Main == (neardup.Hash{}) {
			t.Errorf("Screen(%s) = URL %v Exact %v", c2.doc.ID, r.URL, r.Exact)
		}
		v, err := c.Check(ctx, c2.doc)
		if err != nil {
			t.Fatal(err)
		}
		ok := false
		for _, k := range c2.kinds {
			ok = ok || v.Kind == k
		}
		if !ok {
			t.Errorf("%s: the service says %v", c2.doc.ID, v.Kind)
		}
		if !r.Maybe() {
			// Near duplicates are the service's alone: Query finds them from the
			// local fingerprints without sending the page.
			m, err := c.Query(ctx, neardup.Query{SimHash: r.Fingerprints.SimHash, HasSimHash: true, MinHash: r.Fingerprints.MinHash})
			if err != nil || (v.Kind == neardup.NearDuplicate) != (len(m) > 0) {
				t.Errorf("%s: Query %+v %v for a %v", c2.doc.ID, m, err, v.Kind)
			}
		}
	}
}

// TestPrescreenSnapshotGaps pins the documented gaps of a snapshot: a document added
// after it is not in it until a refresh, and a deleted document's keys stay.
func TestPrescreenSnapshotGaps(t *testing.T) {
	ctx := context.Background()
	f := newService(t)
	c := newClient(t, f)
	if _, err := c.Add(ctx, article("a", "http://example.com/a", 1)); err != nil {
		t.Fatal(err)
	}
	p := newPrescreen(t, c, Options{Every: -1})
	b := article("b", "http://example.com/b", 3)
	if _, err := c.Add(ctx, b); err != nil {
		t.Fatal(err)
	}
	if maybe, _ := p.SeenURL(b.URL); maybe {
		t.Skip("false positive on b's URL") // 1 in millions at the defaults
	}
	if _, err := p.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if maybe, _ := p.SeenURL(b.URL); !maybe {
		t.Error("a refreshed snapshot lacks a stored URL")
	}
	// A deleted document's keys stay.
	if ok, err := c.Delete(ctx, "b"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, err := p.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if maybe, _ := p.SeenURL(b.URL); !maybe {
		t.Error("a deleted document's URL left the filter; the documentation says it stays")
	}
}

func TestPrescreenStale(t *testing.T) {
	f := newService(t)
	c := newClient(t, f)
	p := newPrescreen(t, c, Options{Every: -1, Stale: time.Hour})
	if maybe, _ := p.SeenURL("http://example.com/"); maybe || p.Info().Stale {
		t.Fatal("an empty filter answers maybe")
	}
	p.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	r, err := p.Screen(neardup.Document{ID: "x", URL: "http://example.com/", Text: "t"})
	if maybe, _ := p.SeenURL("http://example.com/"); !maybe || err != nil || !r.URL || !r.Exact || !p.Info().Stale {
		t.Error("a stale snapshot answers absent")
	}
	if r, _ := p.Screen(neardup.Document{ID: "x", Text: "t"}); r.URL {
		t.Error("a page without a URL is a URL duplicate")
	}
	p.now = time.Now
	if _, err := p.Refresh(context.Background()); err != nil || p.Info().Stale {
		t.Errorf("refreshed: %v %+v", err, p.Info())
	}
}

func TestOptions(t *testing.T) {
	f := newService(t)
	c := newClient(t, f)
	if _, err := New(context.Background(), c, Options{Neardup: neardup.Options{Pipeline: neardup.Pipeline{Threshold: 2}}}); !errors.Is(err, neardup.ErrOptions) {
		t.Errorf("bad options: %v", err)
	}
	f.setFail(func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(403)
		w.Write([]byte(`{"error":{"code":"forbidden","message":"no read scope"}}`))
		return true
	})
	var api *client.APIError
	if _, err := New(context.Background(), c, Options{}); !errors.As(err, &api) || api.Status != 403 {
		t.Errorf("no first snapshot: %v", err)
	}
	f.setFail(nil)
	p := newPrescreen(t, c, Options{})
	if p.opt.Every != DefaultEvery || p.opt.Stale != 5*DefaultEvery || p.budget == 0 {
		t.Errorf("defaults: %+v, budget %v", p.opt, p.budget)
	}
	p.Close()
	p.Close() // idempotent
}

// TestConcurrent uses one Client and one Prescreen from many goroutines while the
// background refresh runs; -race checks it.
func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	f := newService(t)
	c := newClient(t, f)
	p := newPrescreen(t, c, Options{Every: 5 * time.Millisecond})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				doc := article(fmt.Sprintf("g%d-%d", g, i), fmt.Sprintf("http://example.com/%d/%d", g, i), g*100+i)
				if _, err := p.Screen(doc); err != nil {
					t.Error(err)
				}
				if _, err := c.Add(ctx, doc); err != nil {
					t.Error(err)
				}
				if _, err := p.SeenURL(doc.URL); err != nil {
					t.Error(err)
				}
				if i%5 == 0 {
					if _, err := p.Refresh(ctx); err != nil {
						t.Error(err)
					}
					p.Info()
				}
			}
			if _, err := c.CheckBatch(ctx, []neardup.Document{article("x", "", g)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// The background refresh catches up with every add.
	deadline := time.Now().Add(5 * time.Second)
	for {
		maybe, _ := p.SeenURL("http://example.com/7/19")
		if maybe {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background refresh never brought the last add")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPrescreenExtractionTimeout: a page whose local extraction may have run out of time
// is keyed on its visible text, which the service may not have done: Exact is "maybe".
func TestPrescreenExtractionTimeout(t *testing.T) {
	f := newService(t)
	c := newClient(t, f)
	page := neardup.Document{ID: "p", HTML: []byte("<html><body><article><p>" + article("", "", 1).Text + "</p></article></body></html>")}
	p := newPrescreen(t, c, Options{Every: -1})
	if r, err := p.Screen(page); err != nil || r.Exact {
		t.Fatalf("in time: %+v %v", r, err)
	}
	p = newPrescreen(t, c, Options{Every: -1, Neardup: neardup.Options{Pipeline: neardup.Pipeline{Extract: extract.Options{Timeout: time.Nanosecond}}}})
	if r, err := p.Screen(page); err != nil || !r.Exact || r.Fingerprints.Method != extract.MethodVisibleText {
		t.Errorf("out of time: %+v %v", r, err)
	}
}
