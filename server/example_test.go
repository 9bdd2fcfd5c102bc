package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/server"
)

// The service in a test: a Server with an in-memory detector behind httptest. One page
// is stored with POST /v1/documents; a copy with a sentence added is then checked with
// POST /v1/check, which answers whether it duplicates what is stored, without storing it.
func Example() {
	s, err := server.New(server.Config{})
	if err != nil {
		log.Fatal(err)
	}
	d, err := neardup.NewDetector(neardup.Options{}) // in memory; OpenDetector takes a store
	if err != nil {
		log.Fatal(err)
	}
	s.SetDetector(d) // until then the service answers 503 and /readyz says not ready
	ts := httptest.NewServer(s)
	defer ts.Close()

	post := func(path string, doc map[string]string) api.Verdict {
		body, err := json.Marshal(doc)
		if err != nil {
			log.Fatal(err)
		}
		resp, err := http.Post(ts.URL+path, "application/json", bytes.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			log.Fatalf("%s: %s", path, resp.Status)
		}
		var v api.Verdict
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			log.Fatal(err)
		}
		return v
	}
	text := "Near-duplicate detection finds documents that are almost the same: the same " +
		"article on two sites, a page with a new date or a changed advertisement, a copy " +
		"with a few words edited. Crawlers use it to avoid storing and indexing the same " +
		"content again, and curators to keep one copy of each text in a corpus."
	v := post("/v1/documents", map[string]string{"id": "original", "url": "https://example.com/a", "text": text})
	fmt.Println("original:", v.Kind, "added", v.Added)

	v = post("/v1/check", map[string]string{"id": "copy", "url": "https://mirror.example.org/a", "text": text + " It is fast."})
	fmt.Println("copy:", v.Kind, "added", v.Added)
	for _, m := range v.Matches {
		fmt.Println("  matches", m.ID, m.Kind)
	}
	// Output:
	// original: unique added true
	// copy: near-duplicate added false
	//   matches original near-duplicate
}
