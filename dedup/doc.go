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
//     minhash and all query an lsh.Index built in input order, banded for recall at
//     Threshold (lsh.RecallParams: 1 pair in 1,000 at exactly the threshold missed, 18
//     bands of 5 rows at 0.8), and every candidate is verified by the exact Jaccard
//     similarity (or Containment) of the two documents' shingle sets, which the run
//     keeps as 4 bytes a shingle, in memory up to VerifyMemory and in a temporary file
//     past it. The estimate only rejects candidates far below the threshold (six
//     standard errors) without reading their sets. Documents without words take part in
//     the exact step only.
//  4. Clusters: the connected components of all pairs (hamming.ClusterDocs), whose
//     representative is chosen by the keep policy (default: highest priority, then first
//     in the input, then smallest id); every other member is dropped.
//
// The result is the same whatever Threads is: documents keep their input order and
// every later step is sequential and ordered.
//
//	res, err := dedup.Run(next, dedup.Options{Pipeline: neardup.Pipeline{Near: dedup.SimHash}}, nil)
//	if err != nil { ... }
//	res.WriteClusters(clustersFile) // clusters.jsonl
//	res.WritePairs(pairsFile)       // pairs.jsonl
//	res.WriteIDs(keepFile, true)    // keep.txt
//	fmt.Printf("%+v\n", res.Summary())
//
// Options embed neardup.Pipeline, the fingerprinting configuration a neardup.Detector
// takes too, so that one setting means one thing in both; only the defaults of Near and
// Threshold differ, on purpose (see neardup.NearDefault and neardup.DefaultBatchThreshold).
//
// # The output directory
//
// WriteDir (or CreateDir, Dir.Bad while reading, then Dir.Write) writes the whole output
// set of `neardup dedup` into a directory: the four lists, bad.jsonl, the deduplicated
// corpus (when the documents came from corpus files, read again), summary.json and
// report.html, a self-contained page with the clusters' texts side by side. The files
// go into a hidden directory beside the target and are renamed into place at the end,
// so the target never mixes two runs and a failed run leaves nothing.
// DirOptions.Annotate writes every record into corpus/ with its cluster, keep decision
// and score against the representative (Result.Annotation) rather than the kept records
// only; DirOptions.Removed writes the dropped records into a directory of their own.
//
// # Caveats
//
//   - A MinHash pair is decided by the shingle sets, not the estimate (whose standard
//     error is about 0.035 at 0.8 for K = 128), so a pair just below the threshold is
//     never reported and one just above is missed only when the bands miss it. The sets
//     hold the low 32 bits of each 64-bit shingle hash: two sets of n shingles differ
//     from the 64-bit result by one shingle in about 2^32/n² pairs (see
//     minhash.Jaccard). A SimHash pair is decided by its exact distance.
//   - Clusters.jsonl and the report score each member against its representative by
//     the fingerprints (the estimate for MinHash), as those two need not be a pair.
//   - Clusters are transitive: A near B and B near C put A and C in one cluster even when
//     A and C are far apart. Each member's score against the representative is reported
//     (WriteClusters) so that such chains show.
//   - pairs.jsonl is not every pair: an exact group of n documents gives n-1 pairs (each
//     to its first), and documents with equal SimHash fingerprints are linked through the
//     first of them; the clusters are the same as with every pair listed.
//   - Memory is about 200 bytes a document with SimHash plus its id, and 4*K bytes more
//     with MinHash (the signatures stay for the scores), plus one batch of documents'
//     texts being fingerprinted. MinHash adds 8 bytes a document and the shingle sets
//     (4 bytes a shingle) up to VerifyMemory (256 MiB by default) while the run
//     searches; the rest of the sets go to a temporary file of the same size, read back
//     for candidates only.
package dedup
