package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/extract"
)

func newPrescreen(t *testing.T, c *Client, opt PrescreenOptions) *Prescreen {
	t.Helper()
	p, err := c.Prescreen(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestPrescreenRefreshETag(t *testing.T) {
	ctx := context.Background()
	f := newFake(t, neardup.Options{})
	c := newClient(t, f, fast)
	f.d.Check(article("a", "http://example.com/a", 1))
	p := newPrescreen(t, c, PrescreenOptions{Every: -1})
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
	fail, _ := failTimes(1, nil, 500, nil, `{"error":{"code":"internal","message":"store"}}`)
	f.setFail(fail)
	var api *APIError
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
	fail, _ = failTimes(1, nil, 200, map[string]string{"ETag": `"x"`}, "NDKEYFLT garbage")
	f.setFail(fail)
	if _, err := p.Refresh(ctx); !errors.Is(err, neardup.ErrFilter) || p.Info().ETag == `"x"` {
		t.Errorf("corrupt snapshot: %v, %+v", err, p.Info())
	}
}

// TestPrescreenAnswers pins what the package documentation promises: "absent" is
// certain as of the snapshot, "maybe" goes to the service, and the gaps (documents added
// since, deleted ones, near duplicates) are as said.
func TestPrescreenAnswers(t *testing.T) {
	ctx := context.Background()
	f := newFake(t, neardup.Options{})
	c := newClient(t, f, fast)
	a := article("a", "http://example.com/a", 1)
	if _, err := c.Add(ctx, a); err != nil {
		t.Fatal(err)
	}
	p := newPrescreen(t, c, PrescreenOptions{Every: -1})

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

	// Pages: an exact copy at another URL, the same URL with new content, a new page.
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

	// A document added after the snapshot is not in it until a refresh.
	b := article("b", "http://example.com/b", 3)
	if _, err := c.Add(ctx, b); err != nil {
		t.Fatal(err)
	}
	if maybe, _ := p.SeenURL(b.URL); maybe {
		t.Skip("false positive on b's URL") // 1 in millions at the defaults
	}
	p.Refresh(ctx)
	if maybe, _ := p.SeenURL(b.URL); !maybe {
		t.Error("a refreshed snapshot lacks a stored URL")
	}
	// A deleted document's keys stay.
	if ok, err := c.Delete(ctx, "b"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	p.Refresh(ctx)
	if maybe, _ := p.SeenURL(b.URL); !maybe {
		t.Error("a deleted document's URL left the filter; the documentation says it stays")
	}
}

func TestPrescreenStale(t *testing.T) {
	f := newFake(t, neardup.Options{})
	c := newClient(t, f, fast)
	p := newPrescreen(t, c, PrescreenOptions{Every: -1, Stale: time.Hour})
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

func TestPrescreenOptions(t *testing.T) {
	f := newFake(t, neardup.Options{})
	c := newClient(t, f, fast)
	if _, err := c.Prescreen(context.Background(), PrescreenOptions{Neardup: neardup.Options{Threshold: 2}}); !errors.Is(err, neardup.ErrOptions) {
		t.Errorf("bad options: %v", err)
	}
	f.setFail(func(w http.ResponseWriter, r *http.Request) bool {
		writeError(w, 403, "forbidden", "no read scope")
		return true
	})
	var api *APIError
	if _, err := c.Prescreen(context.Background(), PrescreenOptions{}); !errors.As(err, &api) || api.Status != 403 {
		t.Errorf("no first snapshot: %v", err)
	}
	f.setFail(nil)
	p := newPrescreen(t, c, PrescreenOptions{})
	if p.opt.Every != DefaultPrescreenEvery || p.opt.Stale != 5*DefaultPrescreenEvery || p.budget == 0 {
		t.Errorf("defaults: %+v, budget %v", p.opt, p.budget)
	}
	p.Close()
	p.Close() // idempotent
}

// TestConcurrent uses one Client and one Prescreen from many goroutines while the
// background refresh runs; -race checks it.
func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	f := newFake(t, neardup.Options{})
	c := newClient(t, f, fast)
	p := newPrescreen(t, c, PrescreenOptions{Every: 5 * time.Millisecond})
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
	f := newFake(t, neardup.Options{})
	c := newClient(t, f, fast)
	page := neardup.Document{ID: "p", HTML: []byte("<html><body><article><p>" + article("", "", 1).Text + "</p></article></body></html>")}
	p := newPrescreen(t, c, PrescreenOptions{Every: -1})
	if r, err := p.Screen(page); err != nil || r.Exact {
		t.Fatalf("in time: %+v %v", r, err)
	}
	p = newPrescreen(t, c, PrescreenOptions{Every: -1, Neardup: neardup.Options{Extract: extract.Options{Timeout: time.Nanosecond}}})
	if r, err := p.Screen(page); err != nil || !r.Exact || r.Fingerprints.Method != extract.MethodVisibleText {
		t.Errorf("out of time: %+v %v", r, err)
	}
}
