// Package shingle turns text into features: normalized, tokenized, shingled and hashed,
// ready for SimHash (package simhash) and MinHash (package minhash).
//
// # The pipeline
//
// Broder's shingling ("On the resemblance and containment of documents", 1997; Broder,
// Glassman, Manasse and Zweig, "Syntactic clustering of the Web", WWW 1997) represents a
// document by the set of its contiguous runs of K words, its K-shingles; two documents
// resemble each other as much as their shingle sets overlap. A Shingler does this in five
// steps:
//
//  1. Normalize: invalid UTF-8 becomes U+FFFD; then Unicode compatibility normalization
//     (NFKC), full case folding and accent folding, each of which an option switches off.
//  2. Tokenize: UAX #29 word boundaries (the Unicode word-segmentation rules) cut the
//     text into segments; whitespace separates, punctuation and symbols are removed,
//     digits optionally masked, stop words optionally dropped. Han, Hiragana, Katakana and
//     Hangul characters become one token each, since Chinese and Japanese put no spaces
//     between words. With Unit Chars, the tokens are instead the code points of the
//     normalized text, with a single space wherever words were separated.
//  3. Shingle: every run of K consecutive tokens is a shingle. A text with fewer than K
//     tokens, but at least one, is a single shingle of all of them, so that short texts
//     still have a feature; a text without tokens has no features.
//  4. Hash: each unit (a word, or a code point for Chars) is hashed once from its UTF-8
//     bytes: a unit of fewer than 8 bytes, read as a little-endian number x, hashes to
//     splitmix64(x | len<<56), a bijection, so short words never collide; longer units
//     go through wyhash's 128-bit multiply-fold over 16-byte blocks, then splitmix64
//     (unitHash in shingler.go states it exactly). A shingle's hash chains the hashes u
//     of its units in order: h = Options.Seed, then h = (h XOR u) * 0x9e3779b97f4a7c15
//     mod 2^64 for each unit, then the splitmix64 finalizer (Stafford's variant 13). The
//     chain is order-sensitive and the finalizer spreads every bit of it over the
//     feature; each unit is hashed once rather than once per shingle it is in, at a few
//     nanoseconds a word. TestUnitHash* check avalanche and collisions on a vocabulary of
//     about 700,000 real and structured units; testdata/check_golden.py recomputes the
//     features in plain Python.
//  5. Select and weigh: as a set (the default) each distinct hash once, sorted ascending;
//     as a bag every occurrence in text order. Broder's "0 mod m" sampling
//     (Options.SampleMod) keeps the hashes divisible by m. AppendWeighted attaches weights:
//     1, the term frequency, an IDF from a table (LoadIDF), or both.
//
// # Options and defaults
//
// The zero Options is the recommended pipeline; every field is documented on Options.
// In short, and why:
//
//   - NFKC on (NoNFKC switches it off): the same text typed on another keyboard or
//     copied from a PDF has ligatures (ﬁ), full-width letters and digits (Ａ１), no-break
//     spaces and superscripts; NFKC maps them to their plain forms.
//   - Case folding on (KeepCase): full Unicode folding, not just lower-casing: "ß" and
//     "ẞ" fold to "ss", so "Straße" = "STRASSE"; final sigma ς folds to σ; the Kelvin sign
//     to k. There is no Turkish tailoring: "İ" folds to "i" plus a combining dot, which
//     accent folding removes, and the dotless "ı" stays "ı".
//   - Accent folding on (KeepAccents): nonspacing marks after Latin, Greek, Cyrillic,
//     Hebrew and Arabic letters are removed ("café" = "cafe", pointed Hebrew = unpointed),
//     since writers drop them freely. Marks of other scripts are part of the spelling
//     (Devanagari and Thai vowel signs, the kana voicing marks of が) and stay.
//   - Punctuation and symbols removed (KeepPunct): they vary with editing and
//     typography more than words do. Segments without a letter or digit go, and so does
//     punctuation inside words, so "don't", "don’t" and "dont" are one token and "e.g."
//     is "eg". A removed segment separates words, so "e-mail" is "e mail". Emoji and the
//     U+FFFD of invalid UTF-8 are symbols. Invisible format characters (soft hyphen,
//     zero-width joiners) are removed with punctuation.
//   - Whitespace always separates and never makes a token; with Chars, any run of
//     whitespace or removed punctuation becomes a single space.
//   - Numbers kept (MaskNumbers masks them): masking helps for pages that differ in
//     counters, prices and timestamps, but merges texts that differ only in their
//     figures, so it is opt-in. It replaces dates (2024-01-31, 31/01/2024, 31.01.2024,
//     Jan 31, 2024, 31 January 2024) by "0-0-0", times (12:30, 12:30:45, 9:05 pm) by
//     "0:0" and every other run of digits, with the separators inside it, by "0"
//     ("1,000.50" and "3rd" become "0" and "0rd").
//   - Stop words kept (RemoveStopWords removes them, by default those of the shipped
//     English list): shingles that span stop words are what tells phrasing apart, so
//     removing them is for features of K = 1 or 2 words.
//   - CJK as characters (NoCJK keeps UAX #29 segments): UAX #29 already splits Han and
//     Hiragana into single characters but keeps Katakana runs and Hangul words whole.
//     One token per character for all four makes shingles of K characters, the
//     character n-grams that work for Chinese, Japanese and Korean. Thai, Lao, Khmer and
//     Myanmar are also split into single characters by UAX #29, which has no dictionary.
//   - K = 5 words (DefaultWordK) or 5 code points (DefaultCharK), as a set: five words
//     make shared shingles mean shared phrasing; sets make the features a fingerprint of
//     what the text says, not of how often. A later measurement on labelled
//     near-duplicates may change these defaults.
//   - Seed 0, no sampling, weight 1.
//
// # Example
//
//	s, err := shingle.New(shingle.Options{}) // words, K = 5, set
//	if err != nil {
//		return err
//	}
//	features := s.AppendHashes(nil, text) // distinct, sorted
//	unordered := s.AppendDistinct(nil, text) // the same set, in order of first occurrence
//	for tok := range s.Tokens(text) {
//		fmt.Printf("%s ", tok) // what the shingles are made of
//	}
//
//	// A weighted SimHash sums the features with their weights:
//	var acc simhash.Accumulator
//	for _, f := range s.AppendWeighted(nil, text) {
//		acc.AddWeighted(f.Hash, f.Weight)
//	}
//
// # Cost
//
// A reused Shingler allocates nothing per text once its buffers have grown (the output
// aside): ASCII goes through byte loops, other characters through a cache of their
// normal forms, and only combining sequences through x/text (one allocation each). Words
// are segmented by a hand-written ASCII fast path where the text is ASCII and by the
// uax29 package elsewhere (typographic quotes and dashes next to ASCII stay on the fast
// path); TestASCIIFastPath checks that they agree. On English, segmentation takes about
// a third of the instructions, hashing units and shingles a quarter, normalization a
// tenth and, for sorted sets, the radix sort a fifth; AppendDistinct (a hash set,
// unsorted) and bags skip the sort. The reader path works in windows of 32 KiB and keeps no more than two
// windows and the unit hashes of one (8 bytes a word), plus the output (for sets, at
// most 2^20 hashes or twice the distinct ones, whichever is more, before they are
// compacted).
//
// # Caveats
//
//   - The feature hash is frozen: the chain of unit hashes described above, and
//     golden vectors in testdata/golden.json pin it together with the normalization
//     and tokenization. Changing any of them changes every feature, and so every stored
//     SimHash and MinHash fingerprint, which would all have to be recomputed.
//   - Normalization and case folding follow golang.org/x/text's tables (Unicode 15.0.0
//     with Go 1.26), word boundaries the uax29 package's (Unicode 17), letters and
//     scripts Go's unicode package. Upgrading them can change the features of text that
//     uses characters whose properties changed; the golden vectors show when.
//   - CJK handling is character-based, not dictionary-based: it needs no word lists and
//     suits n-gram shingles, but a token is not a word, so K characters cover less text
//     than K English words.
//   - Tokens longer than 256 bytes (base64 blobs, long URLs without breaks) are cut into
//     pieces of at most 256 bytes, and x/text breaks runs of more than 30 combining marks
//     (its stream-safe format); text like that is not prose.
//   - The 32 KiB windows cut the input only before a character that starts a new
//     normalization segment, so the result does not depend on where the windows fall,
//     except in text with no such character for 32 KiB (a single 32 KiB run of
//     combining marks), which is then cut anyway.
package shingle
