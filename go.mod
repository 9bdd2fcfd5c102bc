module github.com/neardup/neardup

go 1.26.8

require (
	github.com/cespare/xxhash/v2 v2.3.0
	// uax29: Unicode word boundaries (UAX #29) for package shingle, conformance-tested
	// against the Unicode test suite, allocation-free, maintained; hand-writing the
	// rules (extend/format chars, Katakana, Hebrew, emoji, regional indicators) is how
	// tokenizers go wrong. shingle's ASCII fast path is checked against it.
	github.com/clipperhouse/uax29/v2 v2.7.0
	// x/net/idna: UTS #46 mapping and Punycode for package urlnorm's hosts ("faß.example"
	// -> "xn--fa-hia.example"), from the Go team, table-driven from the Unicode data;
	// IDNA is too large and subtle to hand-write.
	golang.org/x/net v0.62.0
	// x/text: NFKC/NFD (unicode/norm) and full Unicode case folding (cases.Fold) for
	// package shingle.
	golang.org/x/text v0.43.0
)
