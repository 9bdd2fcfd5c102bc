package server_test

import (
	"context"
	"sync"
	"testing"

	"github.com/neardup/neardup"
)

// e2eConcurrent crawls with several workers, the recrawl after the first crawl.
func e2eConcurrent(t *testing.T, ctx context.Context, pages []crawlPage) {
	const workers = 4
	svc := startService(t, t.TempDir())
	defer svc.stop(t)
	cr := newCrawler(t, ctx, svc.c)
	outs := concurrentCrawl(t, ctx, cr, pages, workers)

	kinds := map[neardup.Kind]int{}
	stored := map[string]bool{}
	seenAbsent, screenAbsent := 0, 0
	for i := range pages {
		p, o := &pages[i], &outs[i]
		if o.err != nil {
			t.Errorf("%s: %v", p.doc.ID, o.err)
			continue
		}
		if o.v.ID != p.doc.ID {
			t.Errorf("%s: the verdict is for %q", p.doc.ID, o.v.ID)
		}
		kinds[o.v.Kind]++
		if o.v.Added != (o.v.Kind != neardup.URLDuplicate) {
			t.Errorf("%s: %v with Added %t", p.doc.ID, o.v.Kind, o.v.Added)
		}
		if o.v.Added {
			stored[p.doc.ID] = true
		}
		if p.doc.URL != "" && !o.seenURL {
			seenAbsent++
		}
		if !o.screen.Maybe() {
			screenAbsent++
		}
		cr.honest(t, p, o)
		// The recrawl's release-b pages with the visible text of their release-a page,
		// which the first crawl stored before: url-duplicates whatever the order.
		if (p.class == "same_visible_text" || p.class == "exact_bytes") && (o.v.Kind != neardup.URLDuplicate || o.v.Matches[0].ID != p.prev) {
			t.Errorf("%s (%s): %v, want url-duplicate of %s", p.doc.ID, p.class, o.v.Kind, p.prev)
		}
	}
	// A changed page replaces the stored one under its URL.
	for i := range pages {
		if o := &outs[i]; o.err == nil && o.v.Kind == neardup.Changed {
			delete(stored, o.v.Matches[0].ID)
		}
	}
	t.Logf("%d workers: verdicts %s; %d requests, %d answered 429 (retried), %d 5xx; pre-screen: SeenURL absent for %d pages, Screen absent (no URL or exact copy) for %d",
		workers, kindCounts(kinds), svc.counts.all.Load(), svc.counts.n429.Load(), svc.counts.n5xx.Load(), seenAbsent, screenAbsent)
	if n := svc.counts.n5xx.Load(); n > 0 {
		t.Errorf("%d answers with a 5xx status", n)
	}

	checkConcurrentStore(t, ctx, svc, pages, outs, kinds, stored)
}

// concurrentCrawl sends the pages to the service with workers crawlers at once, the
// first crawl (phase 0) before the recrawl (phase 1), and returns what each page got.
func concurrentCrawl(t *testing.T, ctx context.Context, cr *crawler, pages []crawlPage, workers int) []outcome {
	t.Helper()
	outs := make([]outcome, len(pages))
	for ph := range 2 {
		if err := cr.refresh(ctx); err != nil {
			t.Fatal(err)
		}
		next := make(chan int)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				// Worker 0 adds in batches of 4, after screening each page; the others
				// add one at a time. Every 8th page a worker refreshes the pre-screen.
				var batch []int
				flush := func() {
					if len(batch) == 0 {
						return
					}
					ps := make([]*crawlPage, len(batch))
					bo := make([]*outcome, len(batch))
					for j, i := range batch {
						ps[j], bo[j] = &pages[i], &outs[i]
					}
					cr.addBatch(ctx, ps, bo)
					batch = batch[:0]
				}
				n := 0
				for i := range next {
					if n++; n%8 == 0 {
						if err := cr.refresh(ctx); err != nil {
							t.Error(err)
						}
					}
					outs[i] = cr.screen(&pages[i])
					if w == 0 {
						if batch = append(batch, i); len(batch) == 4 {
							flush()
						}
						continue
					}
					cr.add(ctx, &pages[i], &outs[i])
				}
				flush()
			})
		}
		for i := range pages {
			if pages[i].phase == ph {
				next <- i
			}
		}
		close(next)
		wg.Wait()
	}
	return outs
}

// checkConcurrentStore checks the service's stats against the verdicts the crawl got
// (kinds) and its documents against those it should store.
func checkConcurrentStore(t *testing.T, ctx context.Context, svc *service, pages []crawlPage, outs []outcome, kinds map[neardup.Kind]int, stored map[string]bool) {
	t.Helper()
	st, err := svc.c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for k := neardup.Unique; k <= neardup.Changed; k++ {
		total += st.Verdicts[k.String()]
		if st.Verdicts[k.String()] != int64(kinds[k]) {
			t.Errorf("stats: %d %v verdicts, the crawler got %d", st.Verdicts[k.String()], k, kinds[k])
		}
	}
	if total != int64(len(pages)) || st.Documents != int64(len(stored)) {
		t.Errorf("stats: %d verdicts and %d documents, want %d pages and %d stored", total, st.Documents, len(pages), len(stored))
	}
	for i := range pages {
		id := pages[i].doc.ID
		s, ok, err := svc.c.Get(ctx, id)
		switch {
		case err != nil:
			t.Errorf("get %s: %v", id, err)
		case ok != stored[id]:
			t.Errorf("get %s: found %t, want %t (verdict %v)", id, ok, stored[id], outs[i].v.Kind)
		case ok && (s.ID != id || s.Main != outs[i].screen.Fingerprints.Main || s.SimHash != outs[i].screen.Fingerprints.SimHash):
			t.Errorf("get %s: the stored fingerprints are not the pre-screen's of the page", id)
		}
	}
}
