// Package lsh finds, among millions of MinHash signatures (package minhash), those whose
// estimated Jaccard similarity to a query reaches a threshold, without comparing the query
// with every one: locality-sensitive hashing by banding.
//
// # Banding and the S-curve
//
// Cut each K-value signature into b bands of r values. Two signatures of sets with Jaccard
// similarity s agree on one value with probability s, on a whole band with probability
// s^r, and on at least one of the b bands with probability
//
//	P(s) = 1 - (1 - s^r)^b
//
// (Indyk and Motwani 1998; Broder, Charikar, Frieze and Mitzenmacher 1998; Leskovec,
// Rajaraman and Ullman, "Mining of Massive Datasets", chapter 3). Plotted against s this is
// an S-curve, steepest near (1/b)^(1/r): pairs well above it almost always share a band,
// pairs well below almost never do. Index keeps one hash table per band, takes the
// signatures that share a band with the query as candidates, and verifies each against the
// full signature estimate, so every returned match reaches the threshold and the only
// misses are the pairs the S-curve leaves out. Probability computes P(s).
//
// # Choosing the bands
//
// Params chooses (b, r) with b*r <= K from the threshold t by minimizing the weighted sum
// of the S-curve's area below t (false positives: candidates to verify) and the area above
// it that it misses (false negatives), as datasketch's MinHashLSH does, and returns the same
// answers. For the default threshold 0.8 and K = 128 with equal weights it chooses 9 bands
// of 13 rows:
//
//	s       0.6    0.7    0.75   0.8    0.85   0.9    0.95
//	P(s)    0.012  0.084  0.195  0.399  0.686  0.929  0.998
//
// so a pair at exactly 0.8 is found 40% of the time, and Recall, the mean over [0.8, 1],
// is 0.83. Weighting false negatives more buys recall near the threshold with more
// candidates: FPWeight 0.1, FNWeight 0.9 gives 14 bands of 9 rows, P(0.8) = 0.87.
//
// # Accuracy
//
// On ../shared/eval/debian-doc-versions (both versions of the PostgreSQL 15 and Clang
// manuals, 2,517 HTML pages, word 5-shingles; TestEvalRecallPrecision), with the default
// options, against the 1,240 pairs whose exact Jaccard is at least 0.8, over 20 seeds:
// recall 0.998 (min 0.997) and precision 0.9996 (min 0.998); of the 103 reference pairs
// below Jaccard 1, 98.1% are found. Query returns exactly the pairs that brute force over
// the signatures finds at the threshold and that share a band. With FNWeight 0.9 the
// recall is 0.9998 and the precision 0.999. Most pairs of this data set are identical
// pages; corpora with more pairs near the threshold see the S-curve's misses more.
//
// At the defaults a signature costs the index its 512 bytes and about 120 more for the
// band postings (MemoryUsage reports it); a query is a few band lookups and a comparison
// of the candidates' signatures (BenchmarkQuery times it).
//
// # Example
//
//	x, err := lsh.New(lsh.Options{}) // threshold 0.8, K = 128, 9 bands of 13 rows
//	if err != nil { ... }
//	var h minhash.Hasher
//	for id, doc := range docs {
//		if err := x.Add(uint64(id), h.Signature(doc.Features)); err != nil { ... }
//	}
//	matches, err := x.Query(h.Signature(newDoc.Features))
//	for _, m := range matches {
//		fmt.Println(m.ID, m.Similarity) // estimated similarity >= 0.8, best first
//	}
//
// To decide by the exact similarity instead of the estimate, keep the features and use
// QueryVerified with minhash.Jaccard, with the banding RecallParams chooses for recall
// (candidates below the threshold are verified away; 18 bands of 5 rows at 0.8 miss 1 pair
// in 1,000 at exactly 0.8, where Params' 9 of 13 miss 6 in 10). Index.WriteTo and Read save and load an index
// (a frozen format with magic, version and CRC-32C); AppendBandKeys gives the band keys to
// stores that keep the postings outside the process.
//
// # Caveats
//
//   - The threshold applies to the estimate, whose standard error is about
//     sqrt(J(1-J)/K) (0.035 at 0.8 for K = 128): pairs a little below the threshold can be
//     returned and pairs a little above it dropped. QueryVerified with an exact verifier
//     removes the first kind; only a wider S-curve (more bands) reduces the second.
//   - The S-curve assumes the signature values behave like independent permutations. For
//     sets with fewer features than K, densification repeats values across bins, which
//     makes agreement on a band more likely for similar and dissimilar pairs alike.
//   - Signatures of empty sets are all equal, so all empty documents match each other with
//     similarity 1; keep them out of the index or treat them apart.
//   - All signatures of an index must come from one minhash.Hasher (same K and seed). The
//     index checks K, but cannot see the seed, and the snapshot does not record it.
//   - Values after the first Bands*Rows are used only to verify candidates.
//   - Memory is not returned to the system when signatures are removed: freed slots are
//     reused by later additions.
package lsh
