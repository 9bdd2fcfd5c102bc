// Command example crawls a site with colly and a neardup service: it skips the URLs the
// service stores, prints each new page's URL and verdict, and at the end the counts.
//
//	go run ./example -service http://127.0.0.1:8080 https://example.com/
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"

	"github.com/gocolly/colly/v2"

	"github.com/neardup/neardup/client"
	"github.com/neardup/neardup/client/prescreen"
	neardupcolly "github.com/neardup/neardup/integrations/colly"
)

func main() {
	service := flag.String("service", "http://127.0.0.1:8080", "the neardup service's `URL`")
	token := flag.String("token", os.Getenv("NEARDUP_TOKEN"), "bearer `TOKEN` (default $NEARDUP_TOKEN)")
	pages := flag.Int("max", 1000, "fetch at most `N` pages")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: example [-service URL] [-token TOKEN] [-max N] START-URL")
	}
	start, err := url.Parse(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	cl, err := client.New(*service, client.Options{Token: *token})
	if err != nil {
		log.Fatal(err)
	}
	ps, err := prescreen.New(context.Background(), cl, prescreen.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer ps.Close()
	d := neardupcolly.New(cl, neardupcolly.Options{Prescreen: ps})

	c := colly.NewCollector(colly.AllowedDomains(start.Hostname()), colly.MaxRequests(uint32(*pages)))
	d.Attach(c)
	d.OnHTML(c, "html", func(e *colly.HTMLElement) {
		v, _ := d.Verdict(e.Response)
		fmt.Printf("%s\t%s\n", v.Kind, e.Request.URL)
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	if err := c.Visit(start.String()); err != nil {
		log.Fatal(err)
	}
	c.Wait()
	st := d.Stats()
	fmt.Fprintf(os.Stderr, "verdicts %v; URLs: %d pre-screened new, %d asked, %d known; %d errors\n",
		st.Verdicts, st.URLNew, st.URLAsked, st.URLKnown, st.Errors)
}
