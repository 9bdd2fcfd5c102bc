// Package neardupcolly plugs the neardup service into a colly collector
// (github.com/gocolly/colly/v2): a request filter that skips URLs the service already
// stores, asking the local pre-screen (client/prescreen) first so that most new URLs
// cost no round trip, and a response hook that posts each fetched page and marks the
// near and exact duplicates, so that OnHTML callbacks registered through Dedup.OnHTML
// never see them.
//
//	cl, _ := client.New("http://127.0.0.1:8080", client.Options{})
//	ps, _ := prescreen.New(ctx, cl, prescreen.Options{})
//	d := neardupcolly.New(cl, neardupcolly.Options{Prescreen: ps})
//	c := colly.NewCollector()
//	d.Attach(c)
//	d.OnHTML(c, "a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
//
// It is a module of its own so that the main neardup module does not depend on colly.
//
// # Caveats
//
// colly converts a page to UTF-8 before OnResponse when its Content-Type names another
// charset, so such a page is posted converted; its exact-duplicate hash is then the
// converted bytes'. A URL whose canonical form the service stores is skipped even if its
// page has changed since (Options.KeepKnownURLs fetches it, and the verdict is Changed).
package neardupcolly

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/client"
	"github.com/neardup/neardup/client/prescreen"
)

// DefaultTimeout bounds each call to the service when Options.Timeout is 0.
const DefaultTimeout = 30 * time.Second

// probeText is the text of the check that asks whether a URL is stored: a stored page
// with the same canonical URL makes its verdict Changed (or a URL duplicate).
const probeText = "neardup url probe: a text no crawled page has"

// Options configure a Dedup. The zero value is the documented default of every field.
type Options struct {
	// Prescreen, if not nil, answers for most new URLs without a round trip; a URL it
	// calls "maybe stored" is asked of the service. nil asks the service for every URL.
	Prescreen *prescreen.Prescreen
	// Keep are the verdicts whose responses pass to Dedup.OnHTML callbacks; nil means
	// Unique and Changed.
	Keep []api.Kind
	// CheckOnly checks pages without storing them (the service's Peek).
	CheckOnly bool
	// KeepKnownURLs fetches URLs the service stores instead of aborting them (they are
	// still counted as known).
	KeepKnownURLs bool
	// Timeout bounds each call to the service; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Stats counts what a Dedup did.
type Stats struct {
	// Verdicts counts the posted pages by verdict.
	Verdicts map[api.Kind]int64
	// URLNew counts the requests the pre-screen let through without a round trip,
	// URLAsked those it asked the service about, URLKnown those the service stores.
	URLNew, URLAsked, URLKnown int64
	// Errors counts the calls that failed; their pages and requests pass.
	Errors int64
}

// Dedup is the glue between one neardup client and any number of collectors. It is safe
// for concurrent use, as an Async collector needs.
type Dedup struct {
	c   *client.Client
	opt Options

	verdicts sync.Map // request ID (uint32) -> api.Verdict, from OnResponse to OnScraped

	mu     sync.Mutex
	counts map[api.Kind]int64

	urlNew, urlAsked, urlKnown, errs atomic.Int64
}

// New returns a Dedup that calls the service through c.
func New(c *client.Client, opt Options) *Dedup {
	if opt.Keep == nil {
		opt.Keep = []api.Kind{api.Unique, api.Changed}
	}
	if opt.Timeout == 0 {
		opt.Timeout = DefaultTimeout
	}
	return &Dedup{c: c, opt: opt, counts: make(map[api.Kind]int64)}
}

// Attach registers the request filter (OnRequest) and the page check (OnResponse) on c.
// Register them before any callback of your own that should see only new pages.
func (d *Dedup) Attach(c *colly.Collector) {
	c.OnRequest(d.filter)
	c.OnResponse(d.check)
	c.OnScraped(func(r *colly.Response) { d.verdicts.Delete(r.Request.ID) })
}

// OnHTML registers f on c for the responses that are not duplicates, as c.OnHTML does.
func (d *Dedup) OnHTML(c *colly.Collector, selector string, f colly.HTMLCallback) {
	c.OnHTML(selector, func(e *colly.HTMLElement) {
		if !d.Duplicate(e.Response) {
			f(e)
		}
	})
}

// Verdict returns the service's verdict for a response, from OnResponse until its
// OnScraped callbacks have run; ok is false if there is none (the call failed).
func (d *Dedup) Verdict(r *colly.Response) (v api.Verdict, ok bool) {
	x, ok := d.verdicts.Load(r.Request.ID)
	if !ok {
		return api.Verdict{}, false
	}
	return x.(api.Verdict), true
}

// Duplicate reports whether the service's verdict for a response is not one of
// Options.Keep. A response without a verdict is not a duplicate.
func (d *Dedup) Duplicate(r *colly.Response) bool {
	v, ok := d.Verdict(r)
	return ok && !slices.Contains(d.opt.Keep, v.Kind)
}

// Stats returns the counts so far.
func (d *Dedup) Stats() Stats {
	d.mu.Lock()
	s := Stats{Verdicts: make(map[api.Kind]int64, len(d.counts))}
	for k, n := range d.counts {
		s.Verdicts[k] = n
	}
	d.mu.Unlock()
	s.URLNew, s.URLAsked, s.URLKnown, s.Errors = d.urlNew.Load(), d.urlAsked.Load(), d.urlKnown.Load(), d.errs.Load()
	return s
}

// filter aborts a request whose URL the service stores.
func (d *Dedup) filter(r *colly.Request) {
	u := r.URL.String()
	if p := d.opt.Prescreen; p != nil {
		if maybe, err := p.SeenURL(u); err == nil && !maybe {
			d.urlNew.Add(1)
			return
		}
	}
	d.urlAsked.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), d.opt.Timeout)
	defer cancel()
	v, err := d.c.Check(ctx, api.Document{ID: "neardup-url-probe", URL: u, Text: probeText})
	if err != nil {
		d.errs.Add(1)
		return
	}
	known := v.Kind == api.Changed || v.Kind == api.URLDuplicate
	for _, m := range v.Matches {
		known = known || m.Kind == api.URLDuplicate
	}
	if known {
		d.urlKnown.Add(1)
		if !d.opt.KeepKnownURLs {
			r.Abort()
		}
	}
}

// check posts the page and keeps its verdict for Duplicate.
func (d *Dedup) check(r *colly.Response) {
	doc := api.Document{
		ID:   r.Request.URL.String(),
		URL:  r.Request.URL.String(),
		HTML: r.Body,
	}
	if r.Headers != nil {
		doc.ContentType = r.Headers.Get("Content-Type")
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.opt.Timeout)
	defer cancel()
	var v api.Verdict
	var err error
	if d.opt.CheckOnly {
		v, err = d.c.Check(ctx, doc)
	} else {
		v, err = d.c.Add(ctx, doc)
	}
	if err != nil {
		d.errs.Add(1) // the page passes: Duplicate is false without a verdict
		return
	}
	d.verdicts.Store(r.Request.ID, v)
	d.mu.Lock()
	d.counts[v.Kind]++
	d.mu.Unlock()
}
