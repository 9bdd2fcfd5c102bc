package urlnorm

import "testing"

// benchURLs are typical crawled URLs: plain, with a query to sort and tracking parameters
// to drop, percent-encoded, and with an internationalized host.
var benchURLs = []string{
	"https://www.example.com/",
	"https://www.example.com/news/2024/05/some-article-title.html",
	"http://shop.example.org/product/view?id=12345&color=red&utm_source=newsletter&utm_medium=email",
	"https://en.wikipedia.org/wiki/Caf%C3%A9_%28disambiguation%29#History",
	"HTTP://Example.COM:80/a/./b/../c//d?b=2&a=1",
	"https://bücher.example/katalog/suche?q=Go+Programmierung",
}

// BenchmarkCanonicalize canonicalizes benchURLs under each profile; bytes are input bytes.
// All take the fast path.
func BenchmarkCanonicalize(b *testing.B) {
	n := 0
	for _, u := range benchURLs {
		n += len(u)
	}
	for _, p := range []Profile{WHATWG, Safe, Aggressive} {
		b.Run(p.String(), func(b *testing.B) {
			c, err := New(Options{Profile: p})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				for _, u := range benchURLs {
					if _, err := c.Canonicalize(u); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N*len(benchURLs))/b.Elapsed().Seconds(), "URLs/s")
		})
	}
}

// BenchmarkParse parses benchURLs, which the fast path takes, with it and with the
// standard's parser (nlnwa/whatwg-url), into the parts the profiles work on.
func BenchmarkParse(b *testing.B) {
	urls := benchURLs
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, u := range urls {
				if _, ok := fastParse(u); !ok {
					b.Fatal(u)
				}
			}
		}
		b.ReportMetric(float64(b.N*len(urls))/b.Elapsed().Seconds(), "URLs/s")
	})
	b.Run("whatwg-url", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, u := range urls {
				w, err := parse(u, nil, false)
				if err != nil {
					b.Fatal(err)
				}
				_ = fromWHATWG(w)
			}
		}
		b.ReportMetric(float64(b.N*len(urls))/b.Elapsed().Seconds(), "URLs/s")
	})
}
