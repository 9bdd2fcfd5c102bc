// Package neardup finds exact and near-duplicate documents. It is the façade a crawler
// or a corpus tool uses (Fingerprinter, Detector, KeyFilter) and the map of the module;
// the work is done by one package per step of the data flow, each usable alone:
//
//	page -> extract   HTML to main text: boilerplate removed, charset decoded, limits
//	url  -> urlnorm   canonical URL, the URL key
//	text -> shingle   normalize (NFKC, case, accents, punctuation), tokenize (UAX #29 words,
//	                  CJK characters), k-shingles hashed with a frozen seeded chain of word hashes
//	     -> simhash   64-bit SimHash of the features (simhash.SchemeNeardup is the measured
//	                  default text pipeline; simhash.SchemeSimhashPy is seomoz simhash-py's)
//	     -> minhash   MinHash signatures (one permutation hashing with optimal
//	                  densification) and the exact measures that verify a match
//	     -> hamming   every pair of fingerprints within k bits (FindAll, simhash-cpp
//	                  compatible) or an online index of them (Index)
//	     -> lsh       MinHash banding with (bands, rows) derived from a similarity threshold
//
// A document's text goes through shingle once; its features feed both simhash and minhash.
// SimHash fingerprints are searched by Hamming distance (hamming), MinHash signatures by
// estimated Jaccard similarity (lsh), and every candidate either index returns is verified
// against the real distance or similarity before it is reported.
//
//	s, _ := shingle.New(shingle.Options{})             // the default pipeline
//	features := s.AppendHashes(nil, text)              // sorted, distinct feature hashes
//	sig := minhash.Hasher{}.Signature(features)        // 128 values
//	fp := simhash.SchemeNeardup.Fingerprint(text)      // 64 bits
//
// # Documents and verdicts
//
// A Fingerprinter turns a Document (id, URL, HTML or text, priority, fetch time) into its
// Fingerprints: the canonical URL, SHA-256 at three levels (the raw bytes; the whole
// page's visible text, normalized; the main text, normalized), the SimHash of the main
// text and its MinHash signature, and a sketch of its shingle set (minhash.Sketch) that a
// Detector verifies MinHash candidates with, as it cannot read the documents again. A
// Detector is the crawler's check-and-add over them:
// URL seen, then exact content seen, then near-duplicate content, giving a Verdict
// (unique, url-duplicate, exact-duplicate, near-duplicate or changed) with the matches,
// their scores and the survivor under a KeepPolicy.
//
//	d, err := neardup.NewDetector(neardup.Options{}) // zero value: the defaults
//	v, err := d.Check(neardup.Document{ID: "p1", URL: u, HTML: body})
//	if v.Kind != neardup.Unique {
//		fmt.Println(v.Kind, v.Matches[0].ID, v.Survivor)
//	}
//
// # The index in a store
//
// A Detector keeps its documents in a store.Store: NewDetector in memory (store.Memory),
// OpenDetector in any backend, such as the persistent store/pebblestore that the service
// uses, so one query path serves every backend and a restart reads the stored
// fingerprints instead of recomputing them. Each document gets a record id in order of
// arrival; its record is its last-seen time and its Entry (Entry.AppendBinary), and it
// is posted under these keys, one namespace each:
//
//	document id           -> record id (one)
//	canonical URL          -> record id (one)
//	main-text SHA-256      -> record ids
//	last seen (time order) -> record ids, scanned by expiry up to MaxAge ago
//	SimHash                -> record ids
//	table i, prefix        -> permuted SimHashes: the Distance+1 permuted tables of
//	                          Manku et al. (hamming.Permutations(Distance+1, Distance)),
//	                          whose postings are the permuted fingerprints themselves, so
//	                          a bucket is checked against the distance without reading
//	                          a record, and only the fingerprints within Distance are
//	                          looked up by SimHash
//	LSH band key           -> record ids (lsh.AppendBandKeys over the Params banding),
//	                          once the detector's copy of them outgrows
//	                          Options.BandMemory (see Caveats)
//
// Record 0 holds the options that shape those keys; a store is opened only with them.
//
// Prescreen gives the Bloom filter (KeyFilter) of the stored URL and exact keys that a
// client keeps (package client/prescreen) to skip the round trip for pages that are
// certainly new; package mirror finds the sites that carry the same content under the
// same paths.
//
// The Detector is a façade: the store's keys and records, the in-memory accelerators,
// the background moves and the merge of concurrent adds are its engine's
// (internal/engine), which takes fingerprinted entries and knows nothing of documents.
//
// Document, Query, Verdict, Match, Kind, Level, Hash, Fingerprints, Entry and Candidate
// are aliases of package api's types: the service client (package client) names them from there, so
// that a crawler importing it links none of this package's extractor, indexes or store.
//
// # Corpora
//
// Package dedup deduplicates a whole corpus in one batch with the same fingerprints
// (exact groups, then SimHash or MinHash near pairs, clusters with a keep-policy
// representative); package corpus streams its JSONL, page directories and WARC files in
// and copies the kept records out.
//
// The neardup command (cmd/neardup) exposes all of it: dedup, eval, check, findall,
// simhash, minhash, compare, extract, urlnorm and bench. docs/accuracy.md and
// docs/performance.md have the measured accuracy and speed and how to reproduce them.
//
// # Caveats
//
// Feature hashes, fingerprints, signatures and snapshots are persisted by users, so their
// hash functions, seeds and formats are frozen and pinned by golden tests: a change to any
// of them is a change of format, never a silent one.
//
// A Detector's records keep each document's sketch: about 4 bytes a distinct shingle, at
// most 4 KB (minhash.DefaultSketchCap), which a store's records hold besides the
// fingerprints' 500-700 bytes; Options.NoVerify leaves it out and decides near pairs by
// the signatures' estimate (a standard error of 0.035 at 0.8), and a store's records
// from before sketches are compared by the estimate.
//
// A Detector on a store keeps accelerators in memory, rebuilt from the postings when it
// opens the store: a hamming.Index of the stored SimHashes (about 60 bytes a document),
// which finds SimHash candidates without a store lookup; a copy of the band postings
// (250-590 bytes a document at the default 26 bands) while it fits Options.BandMemory,
// which finds MinHash candidates without one; and a Bloom filter of the band keys that
// have postings in the store (about 30 bytes a document), which spares a unique
// document's band lookups once the copy is dropped; it is filled only once the store
// holds band postings. The key filter (the pre-screen) spares the URL and
// exact lookups of keys it rules out. A cache of the 16,384 records that near-duplicate
// checks read most (13 MB, up to 80 MB with sketches at their cap) spares most reads of candidates: text with common
// phrases makes a few thousand documents the band candidates of many checks.
//
// The band postings are 26 of an add's 32 keys, so while the copy holds them the
// detector writes them nowhere else: it rebuilds the copy from the records' signatures
// when it opens the store, and an add writes a fifth of the keys. When
// the copy outgrows Options.BandMemory, the detector writes every band posting to the
// store in the background (the copy answering meanwhile, and writes keeping theirs in
// the store too), marks the store as holding them, and drops the copy; from then on the
// store keeps them, as it does for a detector opened without a copy, or with one too
// small for the store's documents (which moves them before it opens). Stores written
// before this (format 1) hold them already, and keep them. They assume the detector is its store's only
// writer, as pebblestore's directory lock ensures; a store shared by several processes
// needs the postings alone. An exact-content key with more than 1024 stored
// documents is read up to the first 1024 of them: matches and survivor come from those.
//
// A Detector's MinHash candidates come from banding, so a pair just above the threshold
// can be missed (lsh.Recall); its SimHash candidates are exact.
package neardup
