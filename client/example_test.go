package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/client"
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
	p, err := c.Prescreen(ctx, client.PrescreenOptions{}) // Neardup: the service's options
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
