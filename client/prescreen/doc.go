// Package prescreen is the crawler-side pre-screen of the neardup service: it answers
// some questions without a round trip. It is apart from package client because it
// computes a page's keys locally, which needs the extractor and the rest of the
// fingerprinting (package neardup); a crawler that only sends pages to the service
// imports package client alone.
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
//     maybe, and only the service (Client.Add or Client.Check after fetching) can tell.
//   - After fetching, Screen(doc) with URL and Exact false (Maybe() false): the service
//     would answer Unique or NearDuplicate, never URLDuplicate, Changed or
//     ExactDuplicate. Which of the two it is, only the service can say: near duplicates
//     are never answered locally. Client.Query with the Result's Fingerprints asks for
//     them without sending the page, and Client.QueryBatch for many pages in one request.
//
// So the pre-screen skips lookups, not stores: a page the crawler keeps must still be
// added (Client.Add, or later in a Client.AddBatch), or the service will not know it and later
// copies of it will not be found. What it saves is waiting on the service for a
// decision when the crawler's only question is "URL or exact copy?", and the fetch of a
// URL it already has.
//
// Exactly what "certainly absent" covers:
//
//   - Keys present when the snapshot was made: a key stored then is always found (no
//     false negatives).
//   - Not documents added since the snapshot, by this client or any other: until the
//     next refresh (Options.Every, or Refresh) their keys are missing, and a
//     copy of one of them is reported absent. A snapshot not confirmed by the service
//     for Options.Stale (by default five refresh intervals) answers "maybe" to
//     everything, so failing refreshes degrade to asking the service, never to ever
//     older answers.
//   - "Maybe" is wrong with the filter's false-positive rate (Info:
//     about 1% at the service's defaults when the filter is full, far less before);
//     keys of deleted or expired documents, and the old content of changed pages,
//     stay in the filter until the service rebuilds it, and answer "maybe" too. Both
//     only cost a round trip.
//   - The keys are computed locally: a Prescreen whose neardup.Options differ from the
//     service's in URL canonicalization, extraction or text normalization (or a client
//     on a version of neardup that fingerprints differently) computes other keys, and
//     its "absent" answers are wrong. Give Options.Neardup the service's
//     options.
//
// # Caveats
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
// it again. Choose Options.Every with that in mind.
package prescreen
