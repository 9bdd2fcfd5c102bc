// Package minhash estimates the Jaccard similarity of documents from short signatures, and
// computes the exact similarities (Jaccard, containment, cosine, edit) that verify a match.
//
// A document enters as a set of 64-bit feature hashes, typically its word shingles from
// package shingle; this package does not tokenize. Two documents are as similar as their
// sets: J(A, B) = |A ∩ B| / |A ∪ B|.
//
// # MinHash
//
// Broder ("On the resemblance and containment of documents", 1997) observed that for a
// random permutation h of the feature space, P[min h(A) = min h(B)] = J(A, B). A signature
// keeps K such minima; the fraction of positions where two signatures agree estimates J
// with standard error sqrt(J(1-J)/K): 0.035 at J = 0.8 for the default K = 128. Package lsh
// finds, among millions of signatures, those that agree with a query often enough.
//
// # The scheme: one permutation hashing with optimal densification
//
// The classic signature applies K independent hash functions to every feature: at K = 128
// that is 128 multiply-adds per feature, which would make the signature the slowest step
// of a text pipeline by far. This package instead hashes each feature once (one
// permutation hashing: Li, Owen and Zhang, "One Permutation Hashing", NIPS 2012): a
// seeded 64-bit mix of the feature (the splitmix64 finalizer applied to feature ^ seed'),
// whose high 32 bits choose one of K bins and whose low 32 bits are the value; each bin
// keeps its smallest value. That is one mix and one compare per feature
// (BenchmarkSignature), and K only sets the signature's size.
//
// A bin that no feature reaches, which happens when a set has fewer than a few times K
// features, is filled by optimal densification (Shrivastava, "Optimal Densification for
// Fast and Accurate Minwise Hashing", ICML 2017): it copies the first originally non-empty
// bin of its own fixed random probe sequence. Two sets probe alike, so they copy the same
// bin with the right probability and the estimate stays unbiased, with a variance close to
// that of K independent permutations.
//
// Measured on the real near-duplicate pairs of ../shared/eval/debian-doc-versions (every
// pair of HTML pages with exact word-5-shingle Jaccard in [0.5, 1), 128 pairs, 100 seeds
// each; TestEvalEstimator), at K = 128:
//
//	Jaccard     pairs x seeds   bias      RMSE     sqrt(J(1-J)/K)
//	[0.5, 0.7)       1500      -0.0012   0.0384   0.0436
//	[0.7, 0.9)       1800      -0.0010   0.0330   0.0344
//	[0.9, 1.0)       9500      -0.0001   0.0131   0.0137
//	[0.5, 1.0)      12800      -0.0003   0.0213   0.0230
//
// The 1137 pairs of identical sets estimate exactly 1. K independent permutations
// (the same measurement, 10 seeds) give RMSE 0.0236 over [0.5, 1); one permutation
// hashing is a little better because it samples bins without replacement. On small
// synthetic sets, where densification fills most bins, the mean estimate stays within
// 0.002 of J (TestUnbiased), but the RMSE grows: 0.052 instead of 0.042 for two sets of two
// features.
//
// Values are 32 bits (see Signature). The scheme, its constants and its seeds are frozen
// by golden tests (testdata/signatures.json).
//
// # Example
//
//	var h minhash.Hasher // K = 128, seed 0
//	a := h.Signature(featuresOfPage1)
//	b := h.Signature(featuresOfPage2)
//	if minhash.Similarity(a, b) >= 0.8 {
//		// probably near-duplicates; verify with the exact measure when the features are kept
//		exact := minhash.Jaccard(minhash.SortUnique(featuresOfPage1), minhash.SortUnique(featuresOfPage2))
//	}
//
//	sig := make(minhash.Signature, 0, 128) // reused: AppendSignature then allocates nothing
//	for _, doc := range docs {
//		sig = h.AppendSignature(sig[:0], doc.Features)
//		...
//	}
//
// # From text
//
// A bin keeps the minimum of what reaches it, so repeats change nothing: a bag of
// features has the signature of its set. Text is therefore signed fastest as a bag of
// shingles, which skips making them distinct and sorted (TestSignatureOfBag checks the
// equality on real text):
//
//	s, _ := shingle.New(shingle.Options{Bag: true}) // word 5-shingles, every occurrence
//	features = s.AppendHashes(features[:0], text)
//	sig = h.AppendSignature(sig[:0], features)
//
// Keep the sorted set (the default Options) where an exact measure will verify a match.
//
// # Exact measures
//
// Jaccard and Containment compare sorted sets of feature hashes by a linear merge (prepare
// them with SortUnique); Cosine compares weighted sparse vectors; EditSimilarity compares
// short strings by Levenshtein distance. They are the verifiers behind an estimate.
//
// Every function and method of this package is safe for concurrent use: none keeps or
// changes its arguments (SortUnique and UnmarshalBinary change only what they document).
//
// # Caveats
//
//   - Signatures are comparable only when made with the same K and Seed. Neither the
//     signature nor its binary encoding records the seed, and signatures of different
//     seeds estimate about 0 instead of failing: keep one Hasher per collection.
//   - An empty set's signature is all Empty; two empty sets estimate 1 (as Jaccard says of
//     two empty sets), an empty and a non-empty set 0. Documents with no features are
//     therefore all near-duplicates of each other: skip or handle them before indexing.
//   - Sets smaller than K have fewer distinct bins than K, so their estimates are coarser
//     than sqrt(J(1-J)/K); a one-feature set's signature is one value repeated.
//   - DefaultK = 128 is provisional: it may be re-chosen by measurement, which changes every
//     default signature. Fix K explicitly in anything stored.
//   - Estimates of similarity are for sets: how often a shingle repeats does not count.
//     Cosine is the exact measure for weighted features; there is no weighted MinHash here.
package minhash
