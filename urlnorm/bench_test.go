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
		})
	}
}
