package testsite

import (
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var hrefRE = regexp.MustCompile(`href="([^"]+)"`)

// TestSite crawls the site breadth first, as a crawler without deduplication would, and
// checks the planted truth: every link is a page of a known group, the groups and the
// distinct pages are as many as Groups and Pages say, mirrors are byte for byte their
// article and print copies are not.
func TestSite(t *testing.T) {
	s := New(7, 50)
	srv := httptest.NewServer(s)
	defer srv.Close()
	// "localhost", as the crawl tests use it, so that the host in capitals is another host.
	base, _ := url.Parse(strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/")
	get := func(u string) string {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", u, resp.StatusCode)
		}
		return string(b)
	}
	seen := map[string]bool{base.String(): true}
	queue := []string{base.String()}
	groups := map[string]bool{}
	bodies := map[string]bool{}
	variants := 0
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		g, ok := s.GroupOf(u)
		if !ok {
			t.Fatalf("the site links to %s, which is in no group", u)
		}
		groups[g] = true
		body := get(u)
		bodies[body] = true
		for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
			ref, err := url.Parse(html.UnescapeString(m[1]))
			if err != nil {
				t.Fatal(err)
			}
			next := base.ResolveReference(ref)
			next.Fragment = ""
			if next.Host != base.Host {
				variants++
				next.Host = base.Host // the host in capitals: the same server
			}
			if !seen[next.String()] {
				seen[next.String()] = true
				queue = append(queue, next.String())
			}
		}
	}
	if len(groups) != s.Groups() {
		t.Errorf("the crawl met %d groups, Groups says %d", len(groups), s.Groups())
	}
	if len(bodies) != s.Contents() {
		t.Errorf("the crawl met %d distinct pages, Contents says %d", len(bodies), s.Contents())
	}
	if variants == 0 {
		t.Errorf("no link with the host in capitals")
	}
	if get(srv.URL+"/mirror/3") != get(srv.URL+"/article/3") {
		t.Errorf("a mirror is not its article byte for byte")
	}
	if get(srv.URL+"/print/7") == get(srv.URL+"/article/7") {
		t.Errorf("a print copy is its article byte for byte")
	}
	if get(srv.URL+"/article/9/index.html?utm_source=x") != get(srv.URL+"/article/9") {
		t.Errorf("a URL variant is not the same page")
	}
}

func TestGroupOf(t *testing.T) {
	s := New(1, 30)
	for in, want := range map[string]string{
		"http://localhost:1/":                           "home",
		"http://localhost:1/index.html":                 "home",
		"http://localhost:1/section/2/":                 "section/2",
		"http://localhost:1/article/29?utm_source=feed": "article/29",
		"http://LOCALHOST:1/article/4/index.html#c":     "article/4",
		"http://localhost:1/mirror/2":                   "article/2",
		"http://localhost:1/print/4":                    "article/4",
		"http://localhost:1/print/2":                    "",
		"http://localhost:1/mirror/4":                   "",
		"http://localhost:1/article/30":                 "",
		"http://localhost:1/section/3/":                 "",
		"http://localhost:1/other/1":                    "",
	} {
		got, ok := s.GroupOf(in)
		if got != want && ok || !ok && want != "" {
			t.Errorf("GroupOf(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
