// Package simhash computes 64-bit SimHash fingerprints of documents, compatible bit for bit
// with seomoz's simhash-py and simhash-cpp.
//
// # SimHash
//
// Charikar's SimHash ("Similarity estimation techniques from rounding algorithms", STOC
// 2002), as used for web-scale near-duplicate detection by Manku, Jain and Das Sarma
// ("Detecting near-duplicates for web crawling", WWW 2007), turns a document into a set of
// features (words, shingles, character n-grams), hashes each feature to 64 bits, and keeps
// one counter per bit position: every feature adds its weight to the counters of the bits
// set in its hash and subtracts it from the others. Bit i of the fingerprint is set when
// counter i ends above zero. Documents that share most of their features get fingerprints
// that differ in few bits, so near-duplicates are found by Hamming distance (Distance)
// instead of by comparing documents; package hamming finds all pairs within k bits.
//
// The bit convention is simhash-cpp's: bit i is the bit of value 1<<i, a set bit counts +1
// and a clear bit -1, and a counter of exactly zero (a tie, or no input at all) gives a
// clear bit. Compute does this for unit weights; ComputeWeighted and Accumulator.AddWeighted
// take a weight per hash (for example a term frequency or an IDF), and Accumulator builds a
// fingerprint from a stream.
//
// # Text schemes
//
// A Scheme fixes the text pipeline, so that fingerprints made by different programs can be
// compared: SchemeNeardup (the zero value) is neardup's own and SchemeSimhashPy is
// simhash-py's. ParseScheme and Scheme.String convert them to and from the names "neardup"
// and "simhash-py".
//
// SchemeNeardup is Compute over package shingle's features with its default normalization
// (NFKC, case and accent folding, punctuation removed, UAX #29 words, CJK characters as
// words) and word 2-shingles, as a set with unit weights. It was chosen by measurement on
// labelled near-duplicates (cmd/neardup/internal/accuracy; docs/accuracy.md has the tables), each figure the mean over feature-hash seeds: best F1 0.995 on
// debian-doc-versions and 0.850 on spamassassin-2003-subset against word 5-shingle
// Jaccard >= 0.8, and AUC 0.870 (0.775 to 0.921 by seed) on Clough-Stevenson, the best
// mean of the candidates tried (word 1- to 5-shingles, TF weights, masked numbers,
// stop-word removal, character n-grams), though only just: word 4-shingles come within
// 0.009. The Clough AUC of any one seed, including SchemeNeardup's seed
// 0 (0.858), is a draw from that range.
//
// # simhash-py compatibility
//
// simhash-py's compute, num_differing_bits, unsigned_hash and shingle are Compute,
// Distance, UnsignedHash and Shingle. simhash-py does not ship a text pipeline: its
// functional test builds one (Python 3 str.lower(), deletion of the non-word characters of
// re's \W, character 4-grams, MD5 of each, compute), and that is what PyFingerprint and
// SchemeSimhashPy reproduce, including Python's full Unicode lower-casing (U+0130 İ becomes
// "i̇", a final capital sigma becomes ς) and Python's notion of a word character, which is
// wider than Go's regexp \w. The Unicode tables for this come from Python itself and are
// generated into pytables.go by internal/pytables/gen.py; testdata/pyfingerprint.jsonl
// holds fingerprints computed by Python for texts in many scripts.
//
// # Example
//
//	a := simhash.SchemeNeardup.Fingerprint(page1)
//	b := simhash.SchemeNeardup.Fingerprint(page2)
//	if simhash.Distance(a, b) <= 7 {
//		// near-duplicates: package hamming finds such pairs among millions
//	}
//
//	var acc simhash.Accumulator
//	for _, f := range features {
//		acc.AddWeighted(xxhash.Sum64String(f.Text), f.Weight)
//	}
//	fp := acc.Sum64()
//
// # Caveats
//
//   - Fingerprints are only comparable within one Scheme. SchemeNeardup fingerprints also
//     depend on package shingle's features, which follow golang.org/x/text's and the
//     uax29 package's Unicode tables: golden vectors here and in package shingle pin
//     both, and fingerprints stored before SchemeNeardup was re-defined as word
//     2-shingles (it used word 3-shingles of a simpler tokenizer) must be recomputed.
//   - The distance that means "near-duplicate" depends on the texts. With SchemeNeardup
//     the best F1 was at 7 bits on versions of documentation pages and at 6 on spam; at
//     3 bits, the usual choice for web pages, recall fell to 0.98 and 0.60. Measure on
//     labelled pairs of your own.
//   - SchemeSimhashPy is pinned to Python 3.11 (Unicode 14.0.0). simhash-py under another
//     Python (3.12 has Unicode 15.0, for example) gives other fingerprints for text with
//     code points whose properties changed between the two Unicode versions: newly assigned
//     letters, new case pairs. Regenerating the tables with go generate requires Python
//     3.11; the generator refuses any other version.
//   - SimHash with 64 bits is for documents of at least a few dozen features. Short texts
//     have few features, so a single changed word moves many bits: the nine-word sentences
//     "The quick brown fox jumps over the lazy dog" and the same with "jumped" are 14 bits
//     apart under SchemeNeardup.
//   - Compute and ComputeWeighted count with the bits of the hashes as given: weak feature
//     hashes (for example small integers) make weak fingerprints.
package simhash
