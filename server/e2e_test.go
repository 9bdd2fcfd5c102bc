package server_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/client"
	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/store/pebblestore"
)

// The end-to-end test: a crawler-like client runs real pages of ../shared/eval through
// the service over loopback HTTP, with the service's index in a pebble store.
//
// The pages are a subset, to stay near a minute under -race on two cores, where
// extraction costs 40 ms (PostgreSQL manual) to 500 ms (Clang manual) a page and every
// page is fingerprinted four times (two runs, each by the client's pre-screen and by the
// service): every e2eAEBStride-th page of aeb-scrapinghub with its articleBody as a
// plain-text copy, and the debian-doc-versions paths of at most e2eMaxBytes in both
// releases (every changed one, every e2eSameStride-th with the same visible text), plus
// the moved Clang page. NEARDUP_E2E_FULL=1 runs every page instead (minutes).
const (
	e2eAEBStride  = 6
	e2eSameStride = 16
	e2eMaxBytes   = 16_000
	e2eToken      = "e2e-write-token"
)

// e2eOptions are the detector's options, the reference detector's and the pre-screen's:
// no extraction time budget, so that a page's main text, and so its keys, never depend
// on how busy the race detector keeps the two cores. The filter is sized for the test,
// so that a pre-screen snapshot is kilobytes.
func e2eOptions() neardup.Options {
	return neardup.Options{Pipeline: neardup.Pipeline{Extract: extract.Options{Timeout: -1}}, Expected: 20_000}
}

// crawlPage is one fetch of the crawl.
type crawlPage struct {
	doc   neardup.Document
	phase int    // 0: the first crawl (aeb, release a), 1: the recrawl (release b)
	class string // the aligned_pairs.tsv class of a release-b page
	prev  string // the id of its release-a page, same path
}

// e2eCorpus returns the pages of both crawls in their order, or skips the test without
// ../shared/eval.
func e2eCorpus(t *testing.T) []crawlPage {
	t.Helper()
	root, err := evaldata.Root()
	evaldata.Need(t, err)
	full := os.Getenv("NEARDUP_E2E_FULL") != ""
	aeb, err := evaldata.AEB(root)
	if err != nil {
		t.Fatal(err)
	}
	pages, _, err := evaldata.DebianPages(root)
	if err != nil {
		t.Fatal(err)
	}
	aligned, err := evaldata.DebianAligned(root)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	var out []crawlPage
	add := func(doc neardup.Document, phase int, class, prev string) {
		doc.FetchTime = base.Add(time.Duration(len(out)) * time.Second) // the keep policy's order
		out = append(out, crawlPage{doc: doc, phase: phase, class: class, prev: prev})
	}
	for i, a := range aeb {
		if full || i%e2eAEBStride == 0 {
			add(neardup.Document{ID: "aeb/" + a.ID, URL: a.URL, HTML: a.HTML, ContentType: "text/html; charset=utf-8"}, 0, "", "")
			// The article syndicated as plain text, without a URL: a near-duplicate of
			// the page's main text.
			add(neardup.Document{ID: "aeb-text/" + a.ID, Text: a.Body}, 0, "", "")
		}
	}
	byID := map[string][]byte{}
	for _, p := range pages {
		byID[p.ID] = p.HTML
	}
	sides := map[string][2]string{"postgresql-15.18-vs-15.20": {"a-15.18", "b-15.20"}, "clang-15-vs-16": {"a-15.0.6", "b-16.0.6"}}
	type pick struct{ a, b, class string }
	var picks []pick
	same := 0
	for _, al := range aligned {
		s := sides[al.Folder]
		a, b := al.Folder+"/"+s[0]+"/"+al.Path, al.Folder+"/"+s[1]+"/"+al.Path
		if !full {
			if len(byID[a]) > e2eMaxBytes || len(byID[b]) > e2eMaxBytes {
				continue
			}
			if al.Class == "same_visible_text" {
				if same++; same%e2eSameStride != 1 {
					continue
				}
			}
		}
		picks = append(picks, pick{a, b, al.Class})
	}
	hlslA, hlslB := "clang-15-vs-16/a-15.0.6/HLSLSupport.html", "clang-15-vs-16/b-16.0.6/HLSL/HLSLSupport.html"
	if !full {
		picks = append(picks, pick{hlslA, "", "only_a"}, pick{"", hlslB, "only_b"})
	}
	for _, p := range picks {
		if html, ok := byID[p.a]; ok {
			add(neardup.Document{ID: p.a, URL: e2eURL(p.a), HTML: html}, 0, "", "")
		}
	}
	for _, p := range picks {
		if html, ok := byID[p.b]; ok {
			prev := p.a
			if _, ok := byID[p.a]; !ok {
				prev = ""
			}
			add(neardup.Document{ID: p.b, URL: e2eURL(p.b), HTML: html}, 1, p.class, prev)
		}
	}
	return out
}

// e2eURL places a debian-doc-versions page on one site for both releases, as
// documents_test.go's debianURL does for the recrawl: release b is fetched from the URLs
// of release a.
func e2eURL(id string) string {
	folder, rest, _ := strings.Cut(id, "/")
	_, path, _ := strings.Cut(rest, "/")
	return "http://docs.example/" + strings.SplitN(folder, "-", 2)[0] + "/" + path
}

// statusCount counts the service's answers by class, in front of it.
type statusCount struct {
	h               http.Handler
	n5xx, n429, all atomic.Int64
}

func (s *statusCount) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusWriter{ResponseWriter: w, code: http.StatusOK}
	s.h.ServeHTTP(rec, r)
	s.all.Add(1)
	switch {
	case rec.code >= 500:
		s.n5xx.Add(1)
	case rec.code == http.StatusTooManyRequests:
		s.n429.Add(1)
	}
}

type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// service is the service under test: a server over a detector over a pebble store, on
// a loopback httptest.Server, and a client of it.
type service struct {
	dir    string
	db     *pebblestore.DB
	det    *neardup.Detector
	srv    *server.Server
	counts *statusCount
	ts     *httptest.Server
	c      *client.Client
}

func startService(t *testing.T, dir string) *service {
	t.Helper()
	db, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	det, err := neardup.OpenDetector(db, e2eOptions())
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{
		Tokens:    []server.Token{{Scope: server.ScopeWrite, Value: e2eToken}},
		StorePath: dir, StoreKind: "pebble",
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetDetector(det)
	s := &service{dir: dir, db: db, det: det, srv: srv, counts: &statusCount{h: srv}}
	s.ts = httptest.NewServer(s.counts)
	if s.c, err = client.New(s.ts.URL, client.Options{Token: e2eToken, HTTPClient: s.ts.Client()}); err != nil {
		t.Fatal(err)
	}
	return s
}

// stop shuts the server down as neardup serve does (HTTP first, then the store).
func (s *service) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		t.Error(err)
	}
	s.ts.Close()
	if err := s.db.Close(); err != nil {
		t.Error(err)
	}
}

// TestEndToEnd runs a crawler-like client with real pages through the service over
// HTTP: concurrently (every page answered, no 5xx, counts add up, every stored page
// retrievable, the pre-screen honest), then in order against an in-process detector fed
// the same pages (the same verdicts; the recrawl's url-duplicates, changed pages and the
// moved page), then restarts the service on its store (the same documents and verdicts),
// then deletes documents (gone, and no longer matched).
func TestEndToEnd(t *testing.T) {
	start := time.Now()
	pages := e2eCorpus(t)
	phase := [2]int{}
	for _, p := range pages {
		phase[p.phase]++
	}
	t.Logf("%d pages: %d in the first crawl (aeb pages and their texts, release a), %d in the recrawl (release b); loaded in %v",
		len(pages), phase[0], phase[1], time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("concurrent", func(t *testing.T) {
		t0 := time.Now()
		e2eConcurrent(t, ctx, pages)
		t.Logf("took %v", time.Since(t0).Round(time.Millisecond))
	})
	t.Run("ordered", func(t *testing.T) {
		t0 := time.Now()
		e2eOrdered(t, ctx, pages)
		t.Logf("took %v", time.Since(t0).Round(time.Millisecond))
	})
}

// e2eOrdered crawls with one worker, in the pages' order, against an in-process
// detector fed the same pages, then restarts the service and deletes documents.
func e2eOrdered(t *testing.T, ctx context.Context, pages []crawlPage) {
	dir := t.TempDir()
	svc := startService(t, dir)
	stopped := false
	defer func() {
		if !stopped {
			svc.stop(t)
		}
	}()
	cr := newCrawler(t, ctx, svc.c)

	// The reference detector checks the same pages in the same order, on the other core.
	ref, err := neardup.NewDetector(e2eOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := make([]neardup.Verdict, len(pages))
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
	const chunk = 6
	for lo := 0; lo < len(pages); lo += chunk {
		hi := min(lo+chunk, len(pages))
		if (lo/chunk)%3 == 2 {
			if err := cr.refresh(ctx); err != nil {
				t.Fatal(err)
			}
			var ps []*crawlPage
			var bo []*outcome
			for i := lo; i < hi; i++ {
				outs[i] = cr.screen(&pages[i])
				ps, bo = append(ps, &pages[i]), append(bo, &outs[i])
			}
			cr.addBatch(ctx, ps, bo)
			continue
		}
		for i := lo; i < hi; i++ {
			if err := cr.refresh(ctx); err != nil {
				t.Fatal(err)
			}
			outs[i] = cr.screen(&pages[i])
			cr.add(ctx, &pages[i], &outs[i])
		}
	}
	if err := <-refDone; err != nil {
		t.Fatal(err)
	}

	opt := ref.Options()
	kinds := map[neardup.Kind]int{}
	levels := map[neardup.Level]int{}
	recrawl := map[neardup.Kind]int{}
	byClass := map[string]map[neardup.Kind]int{}
	mismatch, seenAbsent, screenAbsent := 0, 0, 0
	hlsl := false
	for i := range pages {
		p, o := &pages[i], &outs[i]
		if o.err != nil {
			t.Fatalf("%s: %v", p.doc.ID, o.err)
		}
		kinds[o.v.Kind]++
		cr.honest(t, p, o)
		if p.doc.URL != "" && !o.seenURL {
			seenAbsent++
		}
		if !o.screen.Maybe() {
			screenAbsent++
		}
		if !sameVerdict(o.v, want[i]) {
			if mismatch++; mismatch <= 5 {
				t.Errorf("%s: the service answered %+v, the in-process detector %+v", p.doc.ID, o.v, want[i])
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
	if n := svc.counts.n5xx.Load(); n > 0 {
		t.Errorf("%d answers with a 5xx status", n)
	}

	// What the service holds before the restart: every stored document, and the
	// verdicts of a sample re-checked (not added).
	stored := map[string]client.Stored{}
	for i := range pages {
		id := pages[i].doc.ID
		s, ok, err := svc.c.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		r, refOK, err := ref.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if ok != refOK {
			t.Errorf("get %s: found %t, the in-process detector %t", id, ok, refOK)
		}
		if ok {
			stored[id] = s
			if s.SimHash != r.SimHash || s.Main != r.Main || !slices.Equal(s.MinHash, r.MinHash) || s.URL != r.URL {
				t.Errorf("get %s: the stored fingerprints are not the in-process detector's", id)
			}
		}
	}
	var sample []int
	for i := range pages {
		if i%9 == 4 || strings.HasSuffix(pages[i].doc.ID, "HLSLSupport.html") {
			sample = append(sample, i)
		}
	}
	recheck := func(svc *service) []neardup.Verdict {
		out := make([]neardup.Verdict, len(sample))
		for j, i := range sample {
			v, err := svc.c.Check(ctx, pages[i].doc)
			if err != nil {
				t.Fatal(err)
			}
			out[j] = v
		}
		return out
	}
	before := recheck(svc)
	for j, i := range sample {
		v, err := ref.Peek(pages[i].doc)
		if err != nil {
			t.Fatal(err)
		}
		if !sameVerdict(before[j], v) {
			t.Errorf("re-check %s: the service answered %+v, the in-process detector %+v", pages[i].doc.ID, before[j], v)
		}
	}
	st0, err := svc.c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// The restart: the server and the store close; a new detector opens the directory.
	t0 := time.Now()
	svc.stop(t)
	stopped = true
	svc = startService(t, dir)
	defer svc.stop(t)
	t.Logf("restart: reopened %d documents in %v", svc.det.Len(), time.Since(t0).Round(time.Millisecond))
	st1, err := svc.c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st1.Documents != st0.Documents || st1.Documents != int64(len(stored)) {
		t.Errorf("after the restart %d documents, before %d (%d retrieved)", st1.Documents, st0.Documents, len(stored))
	}
	for i := range pages {
		id := pages[i].doc.ID
		s, ok, err := svc.c.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		old, was := stored[id]
		if ok != was || (ok && !reflect.DeepEqual(s, old)) {
			t.Errorf("get %s after the restart: %t %+v, before %t %+v", id, ok, s, was, old)
		}
	}
	after := recheck(svc)
	for j, i := range sample {
		if !sameVerdict(after[j], before[j]) {
			t.Errorf("re-check %s after the restart: %+v, before %+v", pages[i].doc.ID, after[j], before[j])
		}
	}
	t.Logf("restart: %d documents the same, %d re-checked pages with the same verdicts", len(stored), len(sample))

	// Deletion: documents that others matched, deleted through the client, are gone and
	// no longer matched.
	matchedBy := map[string][]int{} // a stored id -> the pages whose verdicts matched it
	for i := range pages {
		for _, m := range outs[i].v.Matches {
			if _, ok := stored[m.ID]; ok && m.ID != pages[i].doc.ID {
				matchedBy[m.ID] = append(matchedBy[m.ID], i)
			}
		}
	}
	// The moved page's original, and five more spread over the sorted ids.
	ids := slices.Sorted(maps.Keys(matchedBy))
	victims := []string{"clang-15-vs-16/a-15.0.6/HLSLSupport.html"}
	for k := 0; k < 5 && k < len(ids); k++ {
		if id := ids[k*len(ids)/5]; !slices.Contains(victims, id) {
			victims = append(victims, id)
		}
	}
	for _, id := range victims {
		ok, err := svc.c.Delete(ctx, id)
		if err != nil || !ok {
			t.Fatalf("delete %s: %t, %v", id, ok, err)
		}
		if ok, err := svc.c.Delete(ctx, id); err != nil || ok {
			t.Errorf("delete %s again: %t, %v; want false (404)", id, ok, err)
		}
		if _, ok, err := svc.c.Get(ctx, id); err != nil || ok {
			t.Errorf("get %s after its deletion: %t, %v; want not found", id, ok, err)
		}
	}
	rechecked := 0
	for _, id := range victims {
		s := stored[id]
		ms, err := svc.c.Query(ctx, neardup.Query{SimHash: s.SimHash, HasSimHash: true, MinHash: s.MinHash})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if slices.Contains(victims, m.ID) {
				t.Errorf("query by the fingerprints of deleted %s: matches deleted %s", id, m.ID)
			}
		}
		for _, i := range matchedBy[id] {
			rechecked++
			v, err := svc.c.Check(ctx, pages[i].doc)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range v.Matches {
				if slices.Contains(victims, m.ID) {
					t.Errorf("re-check %s after deleting %s: still matches %s (%v)", pages[i].doc.ID, id, m.ID, v.Kind)
				}
			}
			if other, ok := stored[pages[i].doc.ID]; ok && !slices.Contains(victims, other.ID) {
				got, _, err := svc.c.Get(ctx, other.ID)
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
	}
	st2, err := svc.c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st2.Documents != st1.Documents-int64(len(victims)) {
		t.Errorf("after deleting %d documents: %d, before %d", len(victims), st2.Documents, st1.Documents)
	}
	t.Logf("deleted %d documents (%v); %d pages that had matched them re-checked", len(victims), victims, rechecked)
	if n := svc.counts.n5xx.Load(); n > 0 {
		t.Errorf("%d answers with a 5xx status after the restart", n)
	}
}

// sameVerdict compares verdicts as JSON carries them (no matches is nil or empty).
func sameVerdict(a, b neardup.Verdict) bool {
	if len(a.Matches) == 0 && len(b.Matches) == 0 {
		a.Matches, b.Matches = nil, nil
	}
	return reflect.DeepEqual(a, b)
}
