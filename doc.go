// Package neardup finds exact and near-duplicate documents. This package is the map of the
// module; the work is done by one package per step of the data flow, each usable alone:
//
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
// The neardup command (cmd/neardup) exposes the same steps: simhash, minhash, compare,
// findall and bench. README.md has the measured accuracy and speed and how to reproduce
// them.
//
// # Caveats
//
// Feature hashes, fingerprints, signatures and snapshots are persisted by users, so their
// hash functions, seeds and formats are frozen and pinned by golden tests: a change to any
// of them is a change of format, never a silent one. The document layer (HTML extraction,
// URL canonicalization, the verdict), batch deduplication of corpora and the HTTP service
// are not built yet.
package neardup
