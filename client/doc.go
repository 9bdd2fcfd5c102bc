// Package client is the Go client of the neardup HTTP service (wire API v1): check-and-add
// of documents one at a time or in batches, lookups by id and by raw fingerprint, and
// the crawler-side pre-screen that answers some questions without a round trip.
//
// # The service
//
// A Client sends each call as one HTTP request (a batch as several), with the bearer
// token of Options.Token, and retries what is safe to retry: transport errors and 429,
// 502, 503 and 504 answers, with exponential backoff and full jitter, honouring
// Retry-After. Every method takes a context that bounds the call, retries included.
//
//	c, err := client.New("http://neardup.internal:8080", client.Options{Token: token})
//	v, err := c.Add(ctx, neardup.Document{ID: id, URL: u, HTML: body, ContentType: ct})
//	switch v.Kind {
//	case neardup.Unique, neardup.Changed: // index it
//	default: // a copy of v.Survivor: skip it, or keep it if v.Survivor == id
//	}
//
// Add is the service's neardup.Detector.Check and Check its Peek; AddBatch and CheckBatch
// take many documents and answer each in order. Documents travel as JSON, so their HTML
// must be valid UTF-8 (see Caveats).
//
// A process whose workers each ask raw fingerprint queries one at a time shares one
// Batcher: its Query sends at once while the service is not busy with its earlier
// requests, and otherwise gathers the queries that wait into one batch request, so the
// workers get the throughput of batches (a query alone costs the service about 1.7 times
// the CPU it costs in a batch of 16) without collecting batches themselves.
//
//	b := c.Batcher() // one for the process
//	matches, err := b.Query(ctx, neardup.Query{SimHash: fp.SimHash, HasSimHash: true, MinHash: fp.MinHash})
//
// # The pre-screen
//
// The service keeps a Bloom filter (neardup.KeyFilter) of the canonical URL and the
// main-text hash of every document it stores. A Prescreen downloads it, keeps it fresh
// (ETag, so an unchanged filter costs a 304) and computes a page's two keys locally
// with a neardup.Fingerprinter made from the service's options. A Bloom filter has no
// false negatives, so each lookup answers "certainly absent" or "maybe present":
//
//   - Before fetching, SeenURL(u) false: no stored document had u's canonical URL when
//     the snapshot was taken, so the page will be neither a URL duplicate nor a changed
//     page. A crawler that wants only new URLs can fetch it without asking; true means
//     maybe, and only the service (Add or Check after fetching) can tell.
//   - After fetching, Screen(doc) with URL and Exact false (Maybe() false): the service
//     would answer Unique or NearDuplicate, never URLDuplicate, Changed or
//     ExactDuplicate. Which of the two it is, only the service can say: near duplicates
//     are never answered locally. Query with the ScreenResult's Fingerprints asks for
//     them without sending the page, and QueryBatch for many pages in one request.
//
// So the pre-screen skips lookups, not stores: a page the crawler keeps must still be
// added (Add, or later in an AddBatch), or the service will not know it and later
// copies of it will not be found. What it saves is waiting on the service for a
// decision when the crawler's only question is "URL or exact copy?", and the fetch of a
// URL it already has.
//
// Exactly what "certainly absent" covers:
//
//   - Keys present when the snapshot was made: a key stored then is always found (no
//     false negatives).
//   - Not documents added since the snapshot, by this client or any other: until the
//     next refresh (PrescreenOptions.Every, or Refresh) their keys are missing, and a
//     copy of one of them is reported absent. A snapshot not confirmed by the service
//     for PrescreenOptions.Stale (by default five refresh intervals) answers "maybe" to
//     everything, so failing refreshes degrade to asking the service, never to ever
//     older answers.
//   - "Maybe" is wrong with the filter's false-positive rate (PrescreenInfo:
//     about 1% at the service's defaults when the filter is full, far less before);
//     keys of deleted or expired documents, and the old content of changed pages,
//     stay in the filter until the service rebuilds it, and answer "maybe" too. Both
//     only cost a round trip.
//   - The keys are computed locally: a Prescreen whose neardup.Options differ from the
//     service's in URL canonicalization, extraction or text normalization (or a client
//     on a version of neardup that fingerprints differently) computes other keys, and
//     its "absent" answers are wrong. Give PrescreenOptions.Neardup the service's
//     options.
//
// # Caveats
//
// HTML that is not valid UTF-8 (a page in Latin-1, Shift JIS, ...) cannot go through a
// JSON string without its bytes being replaced, which would change its fingerprints, so
// the client sends such a page's bytes unchanged, in base64 (the html_base64 field; a
// service older than that field answers 400 invalid_json). Give the page as fetched,
// with its Content-Type: the service decodes its charset as Screen does, and both hash
// the same raw bytes. Text, ID, URL and ContentType must be UTF-8 (ErrNotUTF8).
//
// A request whose answer is lost (a connection reset after the service applied it) is
// sent again. Every call is safe to repeat, but a repeated Add or Delete answers
// differently from the lost answer: see Add and Delete.
//
// Extraction runs against a time budget (extract.Options.Timeout, 5 s by default) and
// falls back to the page's visible text, which changes the main-text hash. Screen
// answers Exact "maybe" when its own extraction may have run out of time; it cannot know
// that the service's did, under load, for the same page, and then the service may find
// an exact duplicate that Screen reported absent. With typical pages taking
// milliseconds this is rare.
//
// The pre-screen's snapshot is the whole filter, 1.2 MB at the service's defaults (a
// million keys) and 1.2 GB at a billion; every refresh that finds it changed downloads
// it again. Choose PrescreenOptions.Every with that in mind.
package client
