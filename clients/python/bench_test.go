package python

import (
	"testing"
	"time"

	"github.com/neardup/neardup/internal/testsite"
	"github.com/neardup/neardup/internal/testtool"
)

// BenchmarkScrapyCrawl times a Scrapy crawl of the generated site (internal/testsite,
// 200 articles, 262 pages fetched) without neardup and with both neardup components
// against a fresh neardup serve, side by side: the wall time of the whole scrapy command
// (ns/op), and Scrapy's own elapsed time (crawl-s/op). The goal is that neardup adds at
// most 10%.
func BenchmarkScrapyCrawl(b *testing.B) {
	scrapy := testtool.Path(b, "scrapy")
	bin := buildNeardup(b)
	site := testsite.New(1, 200)
	siteURL, _ := testsite.Serve(b, site)
	for _, withNeardup := range []bool{false, true} {
		name := "plain"
		if withNeardup {
			name = "neardup"
		}
		b.Run(name, func(b *testing.B) {
			var elapsed float64
			for range b.N {
				b.StopTimer()
				service := ""
				if withNeardup {
					service = startServe(b, bin) // empty, so that every crawl does the same work
				}
				b.StartTimer()
				start := time.Now()
				c := runCrawl(b, scrapy, siteURL, service, withNeardup)
				b.StopTimer()
				if v, ok := c.stats["elapsed_time_seconds"].(float64); ok {
					elapsed += v
				}
				if got := c.stat("response_received_count"); withNeardup && got < site.Groups() {
					b.Fatalf("the crawl fetched %d pages in %v", got, time.Since(start))
				}
				b.StartTimer()
			}
			b.ReportMetric(elapsed/float64(b.N), "crawl-s/op")
		})
	}
}
