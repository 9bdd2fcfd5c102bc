package server_test

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/client"
)

// e2eOrdered crawls with one worker, in the pages' order, against an in-process
// detector fed the same pages, then restarts the service and deletes documents. Each
// step depends on the ones before it, through the orderedRun they share.
func e2eOrdered(t *testing.T, ctx context.Context, pages []crawlPage) {
	r := &orderedRun{t: t, ctx: ctx, dir: t.TempDir(), pages: pages}
	r.svc = startService(t, r.dir)
	defer func() {
		if !r.stopped {
			r.svc.stop(t)
		}
	}()
	r.cr = newCrawler(t, ctx, r.svc.c)
	r.crawl()
	r.checkVerdicts()
	r.snapshot()
	r.restart()
	r.deleteMatched()
}

// orderedRun is the state e2eOrdered's steps share.
type orderedRun struct {
	t       *testing.T
	ctx     context.Context
	dir     string // the service's store
	svc     *service
	stopped bool // svc is stopped (between the restart's stop and start)
	cr      *crawler
	pages   []crawlPage

	ref  *neardup.Detector // the in-process detector fed the same pages
	want []neardup.Verdict // its verdicts
	outs []outcome         // the service's answers

	stored map[string]client.Stored // every stored document before the restart
	sample []int                    // the pages re-checked
	before []neardup.Verdict        // their verdicts before the restart
	st0    client.Stats             // before the restart
	st1    client.Stats             // after it
}

// crawl sends the pages to the service while the reference detector checks the same
// pages in the same order, on the other core.
func (r *orderedRun) crawl() {
	t, ctx, pages := r.t, r.ctx, r.pages
	ref, err := neardup.NewDetector(e2eOptions())
	if err != nil {
		t.Fatal(err)
	}
	r.ref = ref
	want := make([]neardup.Verdict, len(pages))
	r.want = want
	refDone := make(chan error, 1)
	go func() {
		for i := range pages {
			var err error
			if want[i], err = ref.Check(pages[i].doc); err != nil {
				refDone <- err
				return
			}
		}
		refDone <- nil
	}()

	// Pages go in chunks of 6, every third chunk with AddBatch; the pre-screen is
	// refreshed before each page sent alone and before each batch.
	outs := make([]outcome, len(pages))
	r.outs = outs
	const chunk = 6
	for lo := 0; lo < len(pages); lo += chunk {
		hi := min(lo+chunk, len(pages))
		if (lo/chunk)%3 == 2 {
			if err := r.cr.refresh(ctx); err != nil {
				t.Fatal(err)
			}
			var ps []*crawlPage
			var bo []*outcome
			for i := lo; i < hi; i++ {
				outs[i] = r.cr.screen(&pages[i])
				ps, bo = append(ps, &pages[i]), append(bo, &outs[i])
			}
			r.cr.addBatch(ctx, ps, bo)
			continue
		}
		for i := lo; i < hi; i++ {
			if err := r.cr.refresh(ctx); err != nil {
				t.Fatal(err)
			}
			outs[i] = r.cr.screen(&pages[i])
			r.cr.add(ctx, &pages[i], &outs[i])
		}
	}
	if err := <-refDone; err != nil {
		t.Fatal(err)
	}
}

// checkVerdicts compares the service's verdicts with the reference detector's and with
// the pages' labels.
func (r *orderedRun) checkVerdicts() {
	t := r.t
	opt := r.ref.Options()
	kinds := map[neardup.Kind]int{}
	levels := map[neardup.Level]int{}
	recrawl := map[neardup.Kind]int{}
	byClass := map[string]map[neardup.Kind]int{}
	mismatch, seenAbsent, screenAbsent := 0, 0, 0
	hlsl := false
	for i := range r.pages {
		p, o := &r.pages[i], &r.outs[i]
		if o.err != nil {
			t.Fatalf("%s: %v", p.doc.ID, o.err)
		}
		kinds[o.v.Kind]++
		r.cr.honest(t, p, o)
		if p.doc.URL != "" && !o.seenURL {
			seenAbsent++
		}
		if !o.screen.Maybe() {
			screenAbsent++
		}
		if !sameVerdict(o.v, r.want[i]) {
			if mismatch++; mismatch <= 5 {
				t.Errorf("%s: the service answered %+v, the in-process detector %+v", p.doc.ID, o.v, r.want[i])
			}
		}
		if p.phase == 1 {
			recrawl[o.v.Kind]++
			if byClass[p.class] == nil {
				byClass[p.class] = map[neardup.Kind]int{}
			}
			byClass[p.class][o.v.Kind]++
			if o.v.Kind == neardup.URLDuplicate {
				levels[o.v.Matches[0].Level]++
			}
		}
		checkClass(t, p, o, opt)
		if strings.HasSuffix(p.doc.ID, "/b-16.0.6/HLSL/HLSLSupport.html") {
			hlsl = (o.v.Kind == neardup.NearDuplicate || o.v.Kind == neardup.ExactDuplicate) &&
				o.v.Matches[0].ID == "clang-15-vs-16/a-15.0.6/HLSLSupport.html"
			t.Logf("moved page %s: %v of %s (distance %d, similarity %.3f)", o.v.URL, o.v.Kind, o.v.Matches[0].URL, o.v.Matches[0].Distance, o.v.Matches[0].Similarity)
		}
	}
	t.Logf("verdicts %s; %d differ from the in-process detector's; pre-screen (refreshed before each request): SeenURL absent for %d pages, Screen absent for %d",
		kindCounts(kinds), mismatch, seenAbsent, screenAbsent)
	t.Logf("recrawl (release b): %s; url-duplicates at level raw %d, text %d, main %d, near %d",
		kindCounts(recrawl), levels[neardup.LevelRaw], levels[neardup.LevelText], levels[neardup.LevelMain], levels[neardup.LevelNone])
	for _, c := range slices.Sorted(maps.Keys(byClass)) {
		t.Logf("  %s: %s", c, kindCounts(byClass[c]))
	}
	if recrawl[neardup.Changed] == 0 {
		t.Error("no page of the recrawl is changed")
	}
	if !hlsl {
		t.Error("the moved page HLSL/HLSLSupport.html was not found as a duplicate of HLSLSupport.html")
	}
	if n := r.svc.counts.n5xx.Load(); n > 0 {
		t.Errorf("%d answers with a 5xx status", n)
	}
}

// checkClass checks the verdict o of page p against the page's label.
func checkClass(t *testing.T, p *crawlPage, o *outcome, opt neardup.Options) {
	t.Helper()
	switch {
	case (p.class == "same_visible_text" || p.class == "exact_bytes") && (o.v.Kind != neardup.URLDuplicate || o.v.Matches[0].ID != p.prev):
		t.Errorf("%s (%s): %v, want url-duplicate of %s", p.doc.ID, p.class, o.v.Kind, p.prev)
	case o.v.Kind == neardup.Changed && (o.v.Matches[0].ID != p.prev || o.v.Matches[0].Level != neardup.LevelNone ||
		o.v.Matches[0].Distance <= opt.Distance || o.v.Matches[0].Similarity >= opt.Threshold):
		// The labels' changed_lt0.5 pages (release notes indexes) are not this: their
		// whole pages differ in the navigation, their main texts are equal.
		t.Errorf("%s (%s): changed, but its first match is %+v, not a different text under the URL of %s", p.doc.ID, p.class, o.v.Matches[0], p.prev)
	case p.class == "only_b" && (o.v.Kind == neardup.URLDuplicate || o.v.Kind == neardup.Changed):
		t.Errorf("%s (new in release b): %v", p.doc.ID, o.v.Kind)
	}
}

// snapshot records what the service holds before the restart: every stored document,
// and the verdicts of a sample re-checked (not added).
func (r *orderedRun) snapshot() {
	t, ctx, pages := r.t, r.ctx, r.pages
	r.stored = map[string]client.Stored{}
	for i := range pages {
		id := pages[i].doc.ID
		s, ok, err := r.svc.c.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		ref, refOK, err := r.ref.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if ok != refOK {
			t.Errorf("get %s: found %t, the in-process detector %t", id, ok, refOK)
		}
		if ok {
			r.stored[id] = s
			if s.SimHash != ref.SimHash || s.Main != ref.Main || !slices.Equal(s.MinHash, ref.MinHash) || s.URL != ref.URL {
				t.Errorf("get %s: the stored fingerprints are not the in-process detector's", id)
			}
		}
	}
	for i := range pages {
		if i%9 == 4 || strings.HasSuffix(pages[i].doc.ID, "HLSLSupport.html") {
			r.sample = append(r.sample, i)
		}
	}
	r.before = r.recheck()
	for j, i := range r.sample {
		v, err := r.ref.Peek(pages[i].doc)
		if err != nil {
			t.Fatal(err)
		}
		if !sameVerdict(r.before[j], v) {
			t.Errorf("re-check %s: the service answered %+v, the in-process detector %+v", pages[i].doc.ID, r.before[j], v)
		}
	}
	var err error
	if r.st0, err = r.svc.c.Stats(ctx); err != nil {
		t.Fatal(err)
	}
}

// recheck checks (without adding) the sample's pages with the service.
func (r *orderedRun) recheck() []neardup.Verdict {
	out := make([]neardup.Verdict, len(r.sample))
	for j, i := range r.sample {
		v, err := r.svc.c.Check(r.ctx, r.pages[i].doc)
		if err != nil {
			r.t.Fatal(err)
		}
		out[j] = v
	}
	return out
}

// restart closes the server and the store, opens the directory with a new detector and
// checks it holds what the service held before.
func (r *orderedRun) restart() {
	t, ctx, pages := r.t, r.ctx, r.pages
	t0 := time.Now()
	r.svc.stop(t)
	r.stopped = true
	r.svc = startService(t, r.dir)
	r.stopped = false
	t.Logf("restart: reopened %d documents in %v", r.svc.det.Len(), time.Since(t0).Round(time.Millisecond))
	var err error
	if r.st1, err = r.svc.c.Stats(ctx); err != nil {
		t.Fatal(err)
	}
	if r.st1.Documents != r.st0.Documents || r.st1.Documents != int64(len(r.stored)) {
		t.Errorf("after the restart %d documents, before %d (%d retrieved)", r.st1.Documents, r.st0.Documents, len(r.stored))
	}
	for i := range pages {
		id := pages[i].doc.ID
		s, ok, err := r.svc.c.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		old, was := r.stored[id]
		if ok != was || (ok && !reflect.DeepEqual(s, old)) {
			t.Errorf("get %s after the restart: %t %+v, before %t %+v", id, ok, s, was, old)
		}
	}
	after := r.recheck()
	for j, i := range r.sample {
		if !sameVerdict(after[j], r.before[j]) {
			t.Errorf("re-check %s after the restart: %+v, before %+v", pages[i].doc.ID, after[j], r.before[j])
		}
	}
	t.Logf("restart: %d documents the same, %d re-checked pages with the same verdicts", len(r.stored), len(r.sample))
}

// deleteMatched deletes, through the client, documents that others matched, and checks
// they are gone and no longer matched.
func (r *orderedRun) deleteMatched() {
	t, ctx := r.t, r.ctx
	matchedBy, victims := r.victims()
	for _, id := range victims {
		ok, err := r.svc.c.Delete(ctx, id)
		if err != nil || !ok {
			t.Fatalf("delete %s: %t, %v", id, ok, err)
		}
		if ok, err := r.svc.c.Delete(ctx, id); err != nil || ok {
			t.Errorf("delete %s again: %t, %v; want false (404)", id, ok, err)
		}
		if _, ok, err := r.svc.c.Get(ctx, id); err != nil || ok {
			t.Errorf("get %s after its deletion: %t, %v; want not found", id, ok, err)
		}
	}
	rechecked := 0
	for _, id := range victims {
		rechecked += r.checkDeleted(id, victims, matchedBy[id])
	}
	st2, err := r.svc.c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st2.Documents != r.st1.Documents-int64(len(victims)) {
		t.Errorf("after deleting %d documents: %d, before %d", len(victims), st2.Documents, r.st1.Documents)
	}
	t.Logf("deleted %d documents (%v); %d pages that had matched them re-checked", len(victims), victims, rechecked)
	if n := r.svc.counts.n5xx.Load(); n > 0 {
		t.Errorf("%d answers with a 5xx status after the restart", n)
	}
}

// victims returns, for each stored id, the pages whose verdicts matched it, and the ids
// to delete: the moved page's original, and five more spread over the sorted ids.
func (r *orderedRun) victims() (matchedBy map[string][]int, victims []string) {
	matchedBy = map[string][]int{}
	for i := range r.pages {
		for _, m := range r.outs[i].v.Matches {
			if _, ok := r.stored[m.ID]; ok && m.ID != r.pages[i].doc.ID {
				matchedBy[m.ID] = append(matchedBy[m.ID], i)
			}
		}
	}
	ids := slices.Sorted(maps.Keys(matchedBy))
	victims = []string{"clang-15-vs-16/a-15.0.6/HLSLSupport.html"}
	for k := 0; k < 5 && k < len(ids); k++ {
		if id := ids[k*len(ids)/5]; !slices.Contains(victims, id) {
			victims = append(victims, id)
		}
	}
	return matchedBy, victims
}

// checkDeleted checks that no query by the fingerprints of deleted id, no re-check of
// the pages that had matched it (matched) and no stored neighbour of them still matches
// a deleted document; it returns the number of pages re-checked.
func (r *orderedRun) checkDeleted(id string, victims []string, matched []int) int {
	t, ctx := r.t, r.ctx
	s := r.stored[id]
	ms, err := r.svc.c.Query(ctx, neardup.Query{SimHash: s.SimHash, HasSimHash: true, MinHash: s.MinHash})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if slices.Contains(victims, m.ID) {
			t.Errorf("query by the fingerprints of deleted %s: matches deleted %s", id, m.ID)
		}
	}
	for _, i := range matched {
		doc := r.pages[i].doc
		v, err := r.svc.c.Check(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range v.Matches {
			if slices.Contains(victims, m.ID) {
				t.Errorf("re-check %s after deleting %s: still matches %s (%v)", doc.ID, id, m.ID, v.Kind)
			}
		}
		if other, ok := r.stored[doc.ID]; ok && !slices.Contains(victims, other.ID) {
			got, _, err := r.svc.c.Get(ctx, other.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range got.Near {
				if slices.Contains(victims, m.ID) {
					t.Errorf("get %s after deleting %s: near %s", other.ID, id, m.ID)
				}
			}
		}
	}
	return len(matched)
}
