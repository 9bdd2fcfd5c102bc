// Package testsite serves a generated website with planted duplicates, for the crawler
// integration tests (the Scrapy crawl in clients/python and the colly crawl in
// integrations/colly): a home page, section pages and articles, with exact copies of
// some articles at other paths, near copies of others (the same text with another
// navigation, another date and a print footer), and links to the articles in URL
// variants (tracking parameters, the host in capitals, a trailing slash, an index page,
// a fragment).
//
// Every page belongs to one group: an article with its copies and variants, a section
// page, or the home page. A crawl that deduplicates right keeps exactly one page of each
// group, whatever order it fetched them in (the first one the service saw is the
// unique one). GroupOf names the group of any URL the site links to.
//
// The site is served on "localhost" by the tests: the Python client's canonicalizer
// leaves IP-address hosts to the service, so a site at 127.0.0.1 would never be
// pre-screened.
package testsite

import (
	"fmt"
	"html"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Site is a generated website. Its pages are fixed at New; ServeHTTP is safe for
// concurrent use and counts the requests it answers.
type Site struct {
	// Articles, Sections, ExactCopies and NearCopies are the page counts: the articles
	// 0..ExactCopies-1 have an exact copy at /mirror/N, the next NearCopies a near copy
	// at /print/N.
	Articles, Sections, ExactCopies, NearCopies int

	titles []string
	paras  [][]string

	mu   sync.Mutex
	hits map[string]int // request path and query -> requests
}

// New returns a site of the given number of articles (at least 10), generated from seed.
// A tenth of the articles get an exact copy and another tenth a near copy.
func New(seed uint64, articles int) *Site {
	articles = max(articles, 10)
	r := rand.New(rand.NewPCG(seed, 30))
	vocab := make([]string, 4000)
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "qua", "bri", "den", "gor", "hul", "jem", "pix", "ster", "wan"}
	for i := range vocab {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		vocab[i] = b.String()
	}
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	s := &Site{Articles: articles, Sections: (articles + 9) / 10, ExactCopies: articles / 10, NearCopies: articles / 10,
		hits: make(map[string]int)}
	for range articles {
		s.titles = append(s.titles, words(5))
		var ps []string
		for range 4 {
			ps = append(ps, words(60+r.IntN(30))+".")
		}
		s.paras = append(s.paras, ps)
	}
	return s
}

// Groups returns the number of groups: one a page that a deduplicating crawl keeps.
func (s *Site) Groups() int { return 1 + s.Sections + s.Articles }

// Contents returns the number of distinct page bodies the site has: one a group, and
// the near copies (an exact copy has its article's bytes).
func (s *Site) Contents() int { return s.Groups() + s.NearCopies }

// GroupOf returns the group of a URL the site links to ("home", "section/N" or
// "article/N"), or ok false for a URL that is not the site's.
func (s *Site) GroupOf(rawURL string) (group string, ok bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", false
	}
	p := strings.TrimSuffix(strings.TrimSuffix(u.Path, "index.html"), "/")
	if p == "" {
		return "home", true
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(parts) != 2 {
		return "", false
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n < 0 {
		return "", false
	}
	switch parts[0] {
	case "section":
		return "section/" + parts[1], n < s.Sections
	case "article":
		return "article/" + parts[1], n < s.Articles
	case "mirror":
		return "article/" + parts[1], n < s.ExactCopies
	case "print":
		return "article/" + parts[1], n >= s.ExactCopies && n < s.ExactCopies+s.NearCopies
	}
	return "", false
}

// Requests returns a copy of the request URIs the site has answered, with how many
// times each.
func (s *Site) Requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.hits)
}

// ServeHTTP answers the site's pages; a path of the site with a query, a trailing slash
// or index.html is the same page, as on most servers.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.RequestURI()]++
	s.mu.Unlock()
	group, ok := s.GroupOf(r.URL.String())
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	kind, num, _ := strings.Cut(group, "/")
	n, _ := strconv.Atoi(num)
	switch {
	case kind == "home":
		s.home(w)
	case kind == "section":
		s.section(w, r, n)
	case strings.HasPrefix(r.URL.Path, "/print/"):
		s.article(w, n, true)
	default: // the article, its mirror (the same bytes) or one of its variants
		s.article(w, n, false)
	}
}

const head = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>%s</title></head><body>`

func (s *Site) nav(w http.ResponseWriter, print bool) {
	if print {
		fmt.Fprint(w, `<nav class="print"><a href="/">Front page</a> | Printer-friendly edition | <a href="/section/0/">Back to the news</a></nav>`)
		return
	}
	fmt.Fprint(w, `<header><nav><ul><li><a href="/">Home</a></li>`)
	for i := range s.Sections {
		fmt.Fprintf(w, `<li><a href="/section/%d/">Section %d</a></li>`, i, i)
	}
	fmt.Fprint(w, `</ul></nav></header>`)
}

func (s *Site) home(w http.ResponseWriter) {
	fmt.Fprintf(w, head, "Front page")
	s.nav(w, false)
	fmt.Fprint(w, `<main><h1>Front page</h1><p>Latest sections of the generated news site.</p><ul>`)
	for i := range s.Sections {
		fmt.Fprintf(w, `<li><a href="/section/%d/">%s</a></li>`, i, html.EscapeString(s.titles[i*10]))
	}
	fmt.Fprint(w, `</ul></main></body></html>`)
}

// section lists its ten articles, and links to each article's copies and to the article
// again in URL variants.
func (s *Site) section(w http.ResponseWriter, r *http.Request, n int) {
	fmt.Fprintf(w, head, fmt.Sprintf("Section %d", n))
	s.nav(w, false)
	fmt.Fprintf(w, `<main><h1>Section %d</h1><ul>`, n)
	host := strings.ToUpper(r.Host)
	for a := n * 10; a < min(n*10+10, s.Articles); a++ {
		t := html.EscapeString(s.titles[a])
		fmt.Fprintf(w, `<li><a href="/article/%d">%s</a>`, a, t)
		switch a % 5 {
		case 0:
			fmt.Fprintf(w, ` <a href="/article/%d?utm_source=feed&amp;utm_medium=rss">feed</a>`, a)
		case 1:
			fmt.Fprintf(w, ` <a href="//%s/article/%d">permalink</a>`, host, a)
		case 2:
			fmt.Fprintf(w, ` <a href="/article/%d/">share</a>`, a)
		case 3:
			fmt.Fprintf(w, ` <a href="/article/%d/index.html#comments">comments</a>`, a)
		}
		if a < s.ExactCopies {
			fmt.Fprintf(w, ` <a href="/mirror/%d">mirror</a>`, a)
		} else if a < s.ExactCopies+s.NearCopies {
			fmt.Fprintf(w, ` <a href="/print/%d">print</a>`, a)
		}
		fmt.Fprint(w, `</li>`)
	}
	fmt.Fprint(w, `</ul></main></body></html>`)
}

// article writes article n, or its near copy (print): the same text under another
// navigation, with another date and a footer.
func (s *Site) article(w http.ResponseWriter, n int, print bool) {
	t := html.EscapeString(s.titles[n])
	fmt.Fprintf(w, head, t)
	s.nav(w, print)
	date := fmt.Sprintf("Published on 2024-%02d-%02d.", 1+n%12, 1+n%28)
	if print {
		date = fmt.Sprintf("Updated on 2025-%02d-%02d.", 1+(n+5)%12, 1+(n+9)%28)
	}
	// The date opens the first paragraph, so that it is part of the main text however
	// an extractor treats a date line of its own.
	fmt.Fprintf(w, `<main><article><h1>%s</h1>`, t)
	for i, p := range s.paras[n] {
		if i == 0 {
			p = date + " " + p
		}
		fmt.Fprintf(w, `<p>%s</p>`, html.EscapeString(p))
	}
	fmt.Fprint(w, `</article></main>`)
	if print {
		fmt.Fprint(w, `<footer>Printed from the generated news site. All rights reserved.</footer>`)
	}
	fmt.Fprint(w, `</body></html>`)
}

// Serve serves site on a loopback port for the test's lifetime and returns its URL with
// the host "localhost" (see the package doc), and a function that serves another site
// in its place at the same URL, as a recrawl of a grown site needs.
func Serve(t testing.TB, site *Site) (string, func(*Site)) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var current atomic.Pointer[Site]
	current.Store(site)
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { current.Load().ServeHTTP(w, r) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return fmt.Sprintf("http://localhost:%d/", l.Addr().(*net.TCPAddr).Port), current.Store
}
