package mirror

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestSplitTail(t *testing.T) {
	for _, c := range []struct{ a, b, pa, pb string }{
		{"/a/15/x.html", "/b/16/x.html", "/a/15/", "/b/16/"},
		{"/x.html", "/y/x.html", "/", "/y/"},
		{"/p/x", "/p/x", "/", "/"},
		{"/ab.html", "/cb.html", "/ab.html", "/cb.html"},
		{"/d/", "/e/d/", "/", "/e/"},
	} {
		if pa, pb := splitTail(c.a, c.b); pa != c.pa || pb != c.pb {
			t.Errorf("splitTail(%q, %q) = %q, %q; want %q, %q", c.a, c.b, pa, pb, c.pa, c.pb)
		}
	}
}

func TestFind(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var pages []Page
	for i := range 40 {
		fp := r.Uint64()
		path := fmt.Sprintf("sec%d/page%d.html", i%4, i)
		pages = append(pages, Page{URL: "https://docs.example.org/v15/" + path, SimHash: fp})
		switch {
		case i < 30: // the same page on the mirror, a bit or two changed for some
			pages = append(pages, Page{URL: "http://mirror.net/pub/docs-15/" + path, SimHash: fp ^ uint64(i%3)})
		case i < 35: // present on the mirror with other content
			pages = append(pages, Page{URL: "http://mirror.net/pub/docs-15/" + path, SimHash: r.Uint64()})
		}
		// An unrelated site sharing one page by chance.
		if i == 7 {
			pages = append(pages, Page{URL: "http://blog.io/copied.html", SimHash: fp})
		}
	}
	// Boilerplate repeated everywhere votes for nothing.
	for i := range 50 {
		pages = append(pages, Page{URL: fmt.Sprintf("http://h%d.com/404", i), SimHash: 42})
	}
	got, err := Find(pages, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("mirrors %+v, want one", got)
	}
	m := got[0]
	want := Mirror{HostA: "docs.example.org", PrefixA: "/v15/", HostB: "mirror.net", PrefixB: "/pub/docs-15/",
		Shared: 35, Same: 30, Score: 30.0 / 35, Coverage: 1}
	if m != want {
		t.Fatalf("mirror %+v, want %+v", m, want)
	}
	// Exact content only: the pages with a changed bit no longer count.
	got, _ = Find(pages, Options{Distance: -1, MinScore: 0.2})
	if len(got) != 1 || got[0].Same != 10 {
		t.Fatalf("exact only: %+v", got)
	}
	if _, err := Find(pages, Options{MinScore: 2}); err == nil {
		t.Fatal("MinScore 2 accepted")
	}
}
