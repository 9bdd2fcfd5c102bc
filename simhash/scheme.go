package simhash

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/neardup/neardup/shingle"
)

// Scheme is a text-to-fingerprint pipeline: how text is normalised, cut into features and
// hashed before Compute. Fingerprints are only comparable when made with the same Scheme.
// The zero value is SchemeNeardup.
type Scheme int

const (
	// SchemeNeardup is neardup's own pipeline, chosen by measurement: package shingle's
	// word 2-shingles with its default normalization and tokenization (NFKC, full case
	// folding, accents and punctuation removed, UAX #29 words, every CJK character a
	// word), as a set with unit weights, then Compute. That is,
	// Compute(shingle.Hashes(text, shingle.Options{K: 2})): each distinct pair of
	// consecutive words counts once, with package shingle's feature hash (seed 0) of the
	// two words; a text of one word has that word as its single feature, and a text
	// without words gets 0.
	//
	// It was chosen on labelled sets (debian-doc-versions and spamassassin-2003-subset,
	// best F1 against the pairs whose word 5-shingle Jaccard is at least 0.8, and the
	// ranking of Clough-Stevenson answers by distance to their source), as the best mean
	// over feature-hash seeds, over word 1-, 3-, 4- and 5-shingles, term-frequency
	// weights, masked numbers, removed stop words and character 4- and 5-grams; word
	// 4-shingles come closest. The application's TestSimHashChoice fails if another
	// candidate overtakes it, and docs/accuracy.md holds the tables.
	//
	// Users store these fingerprints, so golden vectors in this package and in package
	// shingle freeze the definition and the features it is made of.
	SchemeNeardup Scheme = iota
	// SchemeSimhashPy reproduces simhash-py bit for bit; see PyFingerprint.
	SchemeSimhashPy
)

var schemeNames = [...]string{
	SchemeNeardup:   "neardup",
	SchemeSimhashPy: "simhash-py",
}

// ParseScheme returns the Scheme named name: "neardup" or "simhash-py" (the names that
// String returns). Any other name gives an error wrapping ErrScheme that lists the valid
// names.
func ParseScheme(name string) (Scheme, error) {
	for s, n := range schemeNames {
		if n == name {
			return Scheme(s), nil
		}
	}
	return 0, fmt.Errorf("%w %q: use %q or %q", ErrScheme, name, schemeNames[0], schemeNames[1])
}

// valid reports whether s is one of the declared schemes.
func (s Scheme) valid() bool {
	return s >= 0 && int(s) < len(schemeNames)
}

// String returns the name of s, which ParseScheme accepts, or "Scheme(n)" for an undeclared
// value.
func (s Scheme) String() string {
	if !s.valid() {
		return "Scheme(" + strconv.Itoa(int(s)) + ")"
	}
	return schemeNames[s]
}

// MarshalText implements encoding.TextMarshaler with the name of s, so that a Scheme can be
// a flag (flag.TextVar) or a JSON field. It fails for an undeclared value.
func (s Scheme) MarshalText() ([]byte, error) {
	if !s.valid() {
		return nil, fmt.Errorf("%w: %v", ErrScheme, s)
	}
	return []byte(schemeNames[s]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseScheme.
func (s *Scheme) UnmarshalText(text []byte) error {
	v, err := ParseScheme(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Fingerprint returns the 64-bit SimHash of text under scheme s. It is safe for concurrent
// use and does not keep text. SchemeSimhashPy is PyFingerprint. SchemeNeardup costs
// shingling the text (normalization, segmentation, one hash per word and a hash set that
// keeps the distinct shingle hashes: shingle.Shingler.AppendDistinct) and a Compute of
// the distinct ones, which is about 1% of the time.
// It takes a Shingler and its buffers from a sync.Pool, so it allocates nothing once they
// have grown, except where package shingle allocates (it normalizes a character
// followed by combining marks, such as "e" and U+0301 or a Devanagari consonant and its
// vowel sign, through x/text, which allocates for some of them) and for texts of more
// than about 65,000 words, whose buffers (24 to 40 bytes per word) are dropped instead of being
// kept in the pool.
// Fingerprint panics if s is not a declared Scheme.
func (s Scheme) Fingerprint(text string) uint64 {
	switch s {
	case SchemeNeardup:
		return neardupFingerprint(text)
	case SchemeSimhashPy:
		return PyFingerprint(text)
	}
	panic("simhash: Fingerprint called on undeclared " + s.String())
}

// neardupOptions are SchemeNeardup's shingle options.
var neardupOptions = shingle.Options{K: 2}

// maxPooledFeatures is the capacity, in hashes, of the largest feature buffer that goes
// back to neardupPool: 512 KiB, enough for about 400 KB of English. The buffer holds every
// shingle of a text before they are made distinct, and the Shingler's hash set two to four
// times as much, so pooling the state of one huge text would keep its memory alive.
const maxPooledFeatures = 1 << 16

// neardupState is a Shingler with its feature buffer. A Shingler is not safe for
// concurrent use, so each call of neardupFingerprint takes one from neardupPool.
type neardupState struct {
	s        *shingle.Shingler
	features []uint64
}

var neardupPool = sync.Pool{New: func() any {
	s, err := shingle.New(neardupOptions)
	if err != nil {
		panic("simhash: SchemeNeardup's shingle options are invalid: " + err.Error())
	}
	return &neardupState{s: s}
}}

// ShingleOptions returns the shingle options whose distinct features (unit weights)
// SchemeNeardup passes to Compute, so that a caller that shingles the text anyway gets
// the same fingerprint with Compute(shingler.AppendDistinct(nil, text)); ok is false for
// schemes that are not made of shingle features (SchemeSimhashPy).
func (s Scheme) ShingleOptions() (opt shingle.Options, ok bool) {
	if s == SchemeNeardup {
		return neardupOptions, true
	}
	return shingle.Options{}, false
}

func neardupFingerprint(text string) uint64 {
	st := neardupPool.Get().(*neardupState)
	st.features = st.s.AppendDistinct(st.features[:0], text)
	fp := Compute(st.features)
	if cap(st.features) <= maxPooledFeatures {
		neardupPool.Put(st)
	}
	return fp
}
