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
// compared: SchemeNeardup (the zero value) is neardup's own word-shingle pipeline and
// SchemeSimhashPy is simhash-py's. ParseScheme and Scheme.String convert them to and from
// the names "neardup" and "simhash-py".
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
//	if simhash.Distance(a, b) <= 3 {
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
//   - Fingerprints are only comparable within one Scheme. SchemeNeardup is provisional: a
//     later issue will re-choose its normalisation and features by measurement on
//     labelled near-duplicates, and fingerprints stored with the current definition will
//     then have to be recomputed. Golden vectors freeze it until then, so it cannot
//     change by accident.
//   - SchemeSimhashPy is pinned to Python 3.11 (Unicode 14.0.0). simhash-py under another
//     Python (3.12 has Unicode 15.0, for example) gives other fingerprints for text with
//     code points whose properties changed between the two Unicode versions: newly assigned
//     letters, new case pairs. Regenerating the tables with go generate requires Python
//     3.11; the generator refuses any other version.
//   - SchemeNeardup follows Go's unicode package (Unicode 15.0.0 in Go 1.26) and does no
//     Unicode normalisation: "é" as one code point and as "e" plus a combining accent are
//     different tokens (the accent splits the word), and full-width or ligature forms are
//     not folded. Text in scripts without spaces (Chinese, Japanese, Thai) becomes a few
//     long tokens, which suits word shingles poorly.
//   - SimHash with 64 bits is for documents of at least a few dozen features. Short texts
//     have few features, so a single changed word moves many bits: the nine-word sentences
//     "The quick brown fox jumps over the lazy dog" and the same with "jumped" are 20 bits
//     apart under SchemeNeardup.
//   - Compute and ComputeWeighted count with the bits of the hashes as given: weak feature
//     hashes (for example small integers) make weak fingerprints.
package simhash
