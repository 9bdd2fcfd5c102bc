// Package dedup deduplicates a corpus in one batch: every document is fingerprinted once
// (in parallel), exact duplicates are grouped, near-duplicates are found among the rest,
// and the duplicates form clusters, each with one representative to keep. It is the
// engine of `neardup dedup`; package corpus reads the inputs and writes the deduplicated
// corpus.
//
// # Method
//
//  1. Fingerprint (neardup.Fingerprinter; HTML main content extracted unless NoExtract):
//     the SHA-256 of the normalized main text, and the SimHash or the MinHash signature
//     the method needs.
//  2. Exact: documents with the same hash form a group; each is paired with the group's
//     first document (method "exact"). Every method does this step.
//  3. Near, among the first document of each exact group, by the method: simhash finds
//     every pair within Distance bits with hamming's permuted tables (exact, no misses);
//     minhash and all query an lsh.Index built in input order, banded from Threshold
//     with misses weighted 9 to 1 against extra candidates, and every candidate is
//     verified against its full signature estimate (all K values). Documents without
//     words take part in the exact step only.
//  4. Clusters: the connected components of all pairs (hamming.ClusterDocs), whose
//     representative is chosen by the keep policy (default: highest priority, then first
//     in the input, then smallest id); every other member is dropped.
//
// The result is the same whatever Threads is: documents keep their input order and
// every later step is sequential and ordered.
//
//	res, err := dedup.Run(next, dedup.Options{Method: dedup.SimHash}, nil)
//	if err != nil { ... }
//	res.WriteClusters(clustersFile) // clusters.jsonl
//	res.WritePairs(pairsFile)       // pairs.jsonl
//	res.WriteIDs(keepFile, true)    // keep.txt
//	fmt.Printf("%+v\n", res.Summary())
//
// # Caveats
//
//   - Near pairs are verified by the fingerprints, not by the texts, which are not kept:
//     a SimHash pair by its exact distance, a MinHash pair by the estimate over all K
//     values (standard error about 0.035 at 0.8 for K = 128), so pairs a little on
//     either side of the threshold can go either way.
//   - Clusters are transitive: A near B and B near C put A and C in one cluster even when
//     A and C are far apart. Each member's score against the representative is reported
//     (WriteClusters) so that such chains show.
//   - pairs.jsonl is not every pair: an exact group of n documents gives n-1 pairs (each
//     to its first), and documents with equal SimHash fingerprints are linked through the
//     first of them; the clusters are the same as with every pair listed.
//   - Memory is about 200 bytes a document with SimHash plus its id, and 4*K bytes more
//     with MinHash (the signatures stay for the scores), plus one batch of documents'
//     texts being fingerprinted.
package dedup
