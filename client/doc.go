// Package client is the Go client of the neardup HTTP service (wire API v1): check-and-add
// of documents one at a time or in batches, lookups by id and by raw fingerprint, and
// the download of the key filter that package client/prescreen screens pages with.
//
// # The service
//
// A Client sends each call as one HTTP request (a batch as several), with the bearer
// token of Options.Token, and retries what is safe to retry: transport errors and 429,
// 502, 503 and 504 answers, with exponential backoff and full jitter, honouring
// Retry-After. Every method takes a context that bounds the call, retries included.
//
//	c, err := client.New("http://neardup.internal:8080", client.Options{Token: token})
//	v, err := c.Add(ctx, api.Document{ID: id, URL: u, HTML: body, ContentType: ct})
//	switch v.Kind {
//	case api.Unique, api.Changed: // index it
//	default: // a copy of v.Survivor: skip it, or keep it if v.Survivor == id
//	}
//
// Add is the service's neardup.Detector.Check and Check its Peek; AddBatch and CheckBatch
// take many documents and answer each in order. Documents travel as JSON, so their HTML
// must be valid UTF-8 (see Caveats).
//
// A fleet of replicas over one Redis Cluster (neardup serve --redis) is reached behind a
// load balancer with New, or without one with NewReplicas and each replica's URL: calls
// take the replicas in turn, and a call that one of them fails (a refused connection, a
// 503 while it stops or while the cluster fails over) goes to the next at once.
//
//	c, err := client.NewReplicas([]string{"http://10.0.0.5:8080", "http://10.0.0.6:8080"}, client.Options{Token: token})
//
// A process whose workers each ask raw fingerprint queries one at a time shares one
// Batcher: its Query sends at once while the service is not busy with its earlier
// requests, and otherwise gathers the queries that wait into one batch request, so the
// workers get the throughput of batches (a query alone costs the service about 1.7 times
// the CPU it costs in a batch of 16) without collecting batches themselves.
//
//	b := c.Batcher() // one for the process
//	matches, err := b.Query(ctx, api.Query{SimHash: fp.SimHash, HasSimHash: true, MinHash: fp.MinHash})
//
// # The pre-screen
//
// Package client/prescreen answers some questions without a round trip, from a local
// copy of the service's Bloom filter of stored keys (which Client.KeyFilter downloads).
// It is a package of its own because it computes a page's keys locally, with the
// extractor and the rest of the fingerprinting; this package links none of that, so a
// crawler that only talks to the service stays small.
//
// # Caveats
//
// HTML that is not valid UTF-8 (a page in Latin-1, Shift JIS, ...) cannot go through a
// JSON string without its bytes being replaced, which would change its fingerprints, so
// the client sends such a page's bytes unchanged, in base64 (the html_base64 field; a
// service older than that field answers 400 invalid_json). Give the page as fetched,
// with its Content-Type: the service decodes its charset and hashes the raw bytes.
// Text, ID, URL and ContentType must be UTF-8 (ErrNotUTF8).
//
// A request whose answer is lost (a connection reset after the service applied it) is
// sent again. Every call is safe to repeat, but a repeated Add or Delete answers
// differently from the lost answer: see Add and Delete.
package client
