package client_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net/http/httptest"
	"sync"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/client"
	"github.com/neardup/neardup/client/prescreen"
	"github.com/neardup/neardup/server"
)

// A crawler adds every page it fetches and keeps a pre-screen to skip what it can.
func Example() {
	srv := client.NewFakeService() // a neardup service; in production its address
	defer srv.Close()
	ctx := context.Background()

	c, err := client.New(srv.URL, client.Options{Token: ""})
	if err != nil {
		log.Fatal(err)
	}
	page := neardup.Document{
		ID:   "1",
		URL:  "http://example.com/news/42",
		HTML: []byte("<html><body><article><p>The council approved the new bridge on Monday after a long debate about its cost.</p></article></body></html>"),
	}
	v, err := c.Add(ctx, page)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("first copy:", v.Kind)

	// The pre-screen: the service's key filter, refreshed every minute.
	p, err := prescreen.New(ctx, c, prescreen.Options{}) // Neardup: the service's options
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	// Before fetching: is the URL certainly new?
	for _, u := range []string{"https://www.example.com/news/42?utm_source=feed", "http://example.com/news/43"} {
		maybe, err := p.SeenURL(u)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: maybe seen %v\n", u, maybe)
	}

	// After fetching: could it be a URL or exact duplicate? If so, ask the service.
	mirror := page
	mirror.ID, mirror.URL = "2", "http://mirror.example.org/42"
	r, err := p.Screen(mirror)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("mirror: URL maybe", r.URL, "exact maybe", r.Exact)
	if r.Maybe() {
		v, err := c.Add(ctx, mirror)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("mirror:", v.Kind, "of", v.Matches[0].ID, "at level", v.Matches[0].Level)
	}
	// Output:
	// first copy: unique
	// https://www.example.com/news/42?utm_source=feed: maybe seen true
	// http://example.com/news/43: maybe seen false
	// mirror: URL maybe false exact maybe true
	// mirror: exact-duplicate of 1 at level raw
}

// Workers that each ask one raw fingerprint query share a Batcher: the queries that wait
// while the service is busy go to it together, in one batch request.
func ExampleBatcher() {
	d, err := neardup.NewDetector(neardup.Options{})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := server.New(server.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	srv.SetDetector(d)
	ts := httptest.NewServer(srv) // a neardup service; in production its address
	defer ts.Close()
	ctx := context.Background()

	c, err := client.New(ts.URL, client.Options{Concurrency: 2})
	if err != nil {
		log.Fatal(err)
	}
	article := "The council approved the new bridge on Monday after a long debate about its cost, its design and the years of work it will take."
	if _, err := c.Add(ctx, neardup.Document{ID: "bridge", Text: article}); err != nil {
		log.Fatal(err)
	}

	// Each worker fingerprints its page locally, with the service's options, and asks.
	f, err := neardup.NewFingerprinter(neardup.Options{})
	if err != nil {
		log.Fatal(err)
	}
	pages := []string{article + " Updated.", "A recipe for bread: flour, water, salt and a long, slow rise overnight."}
	b := c.Batcher() // one for the process
	found := make([]string, len(pages))
	var wg sync.WaitGroup
	for i, text := range pages {
		wg.Go(func() {
			fp, err := f.Fingerprint(neardup.Document{ID: "page", Text: text})
			if err != nil {
				log.Fatal(err)
			}
			matches, err := b.Query(ctx, neardup.Query{SimHash: fp.SimHash, HasSimHash: true, MinHash: fp.MinHash})
			if err != nil {
				log.Fatal(err)
			}
			found[i] = fmt.Sprint(len(matches), " near")
			if len(matches) > 0 {
				found[i] += ": " + matches[0].ID
			}
		})
	}
	wg.Wait()
	for i, s := range found {
		fmt.Printf("page %d: %s\n", i, s)
	}
	// Output:
	// page 0: 1 near: bridge
	// page 1: 0 near
}
