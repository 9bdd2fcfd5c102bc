package neardupcolly_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocolly/colly/v2"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/client"
	"github.com/neardup/neardup/client/prescreen"
	neardupcolly "github.com/neardup/neardup/integrations/colly"
	"github.com/neardup/neardup/internal/testsite"
	"github.com/neardup/neardup/server"
)

// TestCrawl crawls the generated site (internal/testsite) with an Async collector and
// the Dedup attached, against the real server over an in-memory detector, and checks
// the planted truth as clients/python's Scrapy crawl does: exactly one page of each group
// reaches the OnHTML callbacks, with the planted verdict counts; then a second crawl of
// the grown site fetches none of the pages the service stores and keeps exactly the new
// ones, most of its new URLs let through by the pre-screen without a round trip.
func TestCrawl(t *testing.T) {
	cl := startService(t)
	site := testsite.New(1, 200)
	siteURL, serve := testsite.Serve(t, site)

	kept, st := crawl(t, cl, nil, siteURL)
	checkKept(t, site, kept, site.Groups())
	for kind, want := range map[api.Kind]int64{
		api.Unique:         int64(site.Groups()),
		api.NearDuplicate:  int64(site.NearCopies),
		api.ExactDuplicate: int64(site.ExactCopies),
		api.Changed:        0,
	} {
		if got := st.Verdicts[kind]; got != want {
			t.Errorf("first crawl: %d %v verdicts, want %d", got, kind, want)
		}
	}
	if st.Errors != 0 {
		t.Errorf("first crawl: %d errors", st.Errors)
	}

	ps, err := prescreen.New(context.Background(), cl, prescreen.Options{Every: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	grown := testsite.New(1, 220)
	serve(grown)
	kept, st = crawl(t, cl, ps, siteURL+"section/20/", siteURL+"section/21/")
	checkKept(t, grown, kept, 22)
	for u := range kept {
		if g, _ := grown.GroupOf(u); g != "section/20" && g != "section/21" && !strings.HasPrefix(g, "article/2") {
			t.Errorf("second crawl kept %s (%s), which the first crawl stored", u, g)
		}
	}
	for uri := range grown.Requests() {
		if g, _ := grown.GroupOf(uri); g == "home" || g < "section/20" && strings.HasPrefix(g, "section/") {
			t.Errorf("second crawl fetched %s, whose URL the service stores", uri)
		}
	}
	if st.URLKnown < 21 || st.URLNew < 22 {
		t.Errorf("second crawl: %d known URLs aborted (want the home page and 20 sections at least), %d pre-screened as new (want 22 at least)",
			st.URLKnown, st.URLNew)
	}
}

// crawl runs an Async collector from start with a Dedup and returns the URLs whose pages
// reached a Dedup.OnHTML callback (each with how many times) and the Dedup's counts.
func crawl(t *testing.T, cl *client.Client, ps *prescreen.Prescreen, start ...string) (map[string]int, neardupcolly.Stats) {
	t.Helper()
	c := colly.NewCollector(colly.Async(true))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8}); err != nil {
		t.Fatal(err)
	}
	d := neardupcolly.New(cl, neardupcolly.Options{Prescreen: ps})
	d.Attach(c)
	var mu sync.Mutex
	kept := make(map[string]int)
	d.OnHTML(c, "html", func(e *colly.HTMLElement) {
		mu.Lock()
		kept[e.Request.URL.String()]++
		mu.Unlock()
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	var failed atomic.Int64
	c.OnError(func(r *colly.Response, err error) {
		failed.Add(1)
		t.Errorf("GET %s: %v", r.Request.URL, err)
	})
	for _, u := range start {
		if err := c.Visit(u); err != nil {
			t.Fatal(err)
		}
	}
	c.Wait()
	return kept, d.Stats()
}

// checkKept checks that the kept URLs are exactly one page of each of n groups.
func checkKept(t *testing.T, site *testsite.Site, kept map[string]int, n int) {
	t.Helper()
	seen := make(map[string]string)
	for u, times := range kept {
		g, ok := site.GroupOf(u)
		if !ok || times != 1 {
			t.Errorf("kept %s %d times (group %q)", u, times, g)
			continue
		}
		if prev, dup := seen[g]; dup {
			t.Errorf("kept both %s and %s of group %s: a planted duplicate was not dropped", prev, u, g)
		}
		seen[g] = u
	}
	if len(seen) != n {
		t.Errorf("kept pages of %d groups, want %d: a unique page was dropped", len(seen), n)
	}
}

// startService serves the real server over an in-memory detector and returns a client.
func startService(t *testing.T) *client.Client {
	t.Helper()
	det, err := neardup.NewDetector(neardup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetDetector(det)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	cl, err := client.New(hs.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}
