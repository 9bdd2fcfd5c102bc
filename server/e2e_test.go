package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
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

// sameVerdict compares verdicts as JSON carries them (no matches is nil or empty).
func sameVerdict(a, b neardup.Verdict) bool {
	if len(a.Matches) == 0 && len(b.Matches) == 0 {
		a.Matches, b.Matches = nil, nil
	}
	return reflect.DeepEqual(a, b)
}
