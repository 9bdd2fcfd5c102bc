// Package hamming finds 64-bit fingerprints within k bits of each other: every such pair in
// a batch (FindAll), or every indexed fingerprint near a query (Index).
//
// It follows Manku, Jain and Das Sarma, "Detecting Near-Duplicates for Web Crawling"
// (WWW 2007): cut the 64 bits into m > k blocks; two fingerprints that differ in at most k
// bits agree on at least m-k whole blocks, so for one of the C(m,k) combinations of m-k
// blocks they share a prefix once those blocks are permuted to the top. Each combination is
// a table; candidates that share a table's prefix are verified with the real distance.
//
// The permutations are bit-identical to seomoz simhash-cpp's (and so simhash-py's and
// simhash-db style stores'): block i covers bits [floor(i*64/m), floor((i+1)*64/m)), block
// 0 the lowest; combinations of m-k blocks come in lexicographic order; the chosen blocks
// go on top in ascending order, then the rest ascending (see Permutations).
//
//	pairs, err := hamming.FindAll(fingerprints, 0, 3) // 0 blocks: automatic design
//	if err != nil { ... }
//	for _, p := range pairs {
//		fmt.Println(p.A, p.B) // A < B, sorted, each pair once
//	}
//
// # Batch search
//
// FindAll returns the same set as simhash-py's find_all(hashes, blocks, k), sorted. It
// does not sort the fingerprints once per table as upstream does. A pair is reported only
// by the table of the first m-k blocks it agrees on (its owner), so no set of seen pairs is
// kept; fingerprints are partitioned by a counting sort once per distinct leading block
// (k+1 passes), and within each partition, small enough for the L1 cache, a chained hash of
// each table's key pairs the few fingerprints that share it. Finder.FindAllDocs is the
// document-level form, which also reports identical fingerprints; ClusterDocs and
// ClusterValues turn pairs into connected components.
//
// Choosing m: more blocks mean more tables (C(m,k) passes) but longer prefixes, so fewer
// fingerprints share one by chance. AutoBlocks picks m from n and k with a cost model
// measured on this implementation; for k = 3 it picks 4 blocks below about 20,000
// fingerprints, 5 up to about 3 million, then 6.
//
// # Online index
//
// Index holds (id, fingerprint) pairs for add, remove and query with any distance up to
// its MaxDistance. Its default design is MaxDistance+1 blocks, the fewest tables and so the
// least memory; see Index for its layout and costs, and WriteTo/ReadIndex for its
// snapshot format.
//
// # Caveats
//
//   - FindAll reports pairs of distinct values, as upstream: identical fingerprints are not
//     pairs there (use FindAllDocs). k = 0 therefore returns nothing.
//   - A design has at most MaxTables tables; (64, 3) has 41,664 and is allowed, (64, 4) is
//     refused.
//   - The work grows with the number of pairs that share a prefix by chance, so fingerprints
//     that are far from uniform (for example the SimHash of many near-empty documents) cost
//     more than random ones; repeated values cost nothing extra.
package hamming
