package shingle

import (
	"fmt"
	"strconv"
)

// Unit is what a shingle is made of: words (the zero value) or characters.
type Unit int

const (
	// Words makes shingles of K consecutive words: UAX #29 word segments, with every
	// Han, Hiragana, Katakana and Hangul character a word of its own unless
	// Options.NoCJK is set.
	Words Unit = iota
	// Chars makes shingles of K consecutive code points of the normalized text, in which
	// the words are separated by single spaces wherever the input had whitespace or
	// removed punctuation between them.
	Chars
)

// Weighting selects the weights AppendWeighted gives to features.
type Weighting int

const (
	// Uniform (the zero value) gives every feature weight 1.
	Uniform Weighting = iota
	// TF gives each distinct feature the number of times it occurs in the text.
	TF
	// IDF gives each feature its weight in Options.IDF.
	IDF
	// TFIDF gives each distinct feature its number of occurrences times its weight in
	// Options.IDF.
	TFIDF
)

var (
	unitNames      = [...]string{Words: "words", Chars: "chars"}
	weightingNames = [...]string{Uniform: "uniform", TF: "tf", IDF: "idf", TFIDF: "tfidf"}
)

// String returns "words" or "chars", the names UnmarshalText accepts, or "Unit(n)" for an
// undeclared value.
func (u Unit) String() string {
	if u < 0 || int(u) >= len(unitNames) {
		return "Unit(" + strconv.Itoa(int(u)) + ")"
	}
	return unitNames[u]
}

// MarshalText implements encoding.TextMarshaler with the name of u, so that a Unit can be
// a flag (flag.TextVar) or a JSON field. It fails for an undeclared value.
func (u Unit) MarshalText() ([]byte, error) {
	if u < 0 || int(u) >= len(unitNames) {
		return nil, fmt.Errorf("%w: %v", ErrOptions, u)
	}
	return []byte(unitNames[u]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler for the names "words" and "chars".
func (u *Unit) UnmarshalText(text []byte) error {
	for i, n := range unitNames {
		if n == string(text) {
			*u = Unit(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unit %q: use %q or %q", ErrOptions, text, unitNames[Words], unitNames[Chars])
}

// String returns "uniform", "tf", "idf" or "tfidf", the names UnmarshalText accepts, or
// "Weighting(n)" for an undeclared value.
func (w Weighting) String() string {
	if w < 0 || int(w) >= len(weightingNames) {
		return "Weighting(" + strconv.Itoa(int(w)) + ")"
	}
	return weightingNames[w]
}

// MarshalText implements encoding.TextMarshaler with the name of w. It fails for an
// undeclared value.
func (w Weighting) MarshalText() ([]byte, error) {
	if w < 0 || int(w) >= len(weightingNames) {
		return nil, fmt.Errorf("%w: %v", ErrOptions, w)
	}
	return []byte(weightingNames[w]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler for the names String returns.
func (w *Weighting) UnmarshalText(text []byte) error {
	for i, n := range weightingNames {
		if n == string(text) {
			*w = Weighting(i)
			return nil
		}
	}
	return fmt.Errorf("%w: weighting %q: use uniform, tf, idf or tfidf", ErrOptions, text)
}

// Default shingle sizes, used when Options.K is 0.
const (
	// DefaultWordK is the default K for Words: five words, long enough that shared
	// shingles mean shared phrasing rather than shared common word pairs.
	DefaultWordK = 5
	// DefaultCharK is the default K for Chars: five code points, about one English word.
	DefaultCharK = 5
	// MaxK is the largest K that New accepts.
	MaxK = 1024
)

// Options configure a Shingler. The zero value is the recommended pipeline: NFKC, full
// case folding, accents and punctuation removed, CJK characters as words, word
// 5-shingles as a set, feature hash with seed 0, no sampling, weight 1. Each boolean switches
// one step off (Keep…, No…) or an optional step on, so that the zero value needs no
// setting. The package documentation explains every step and why it is the default.
type Options struct {
	// Unit is what shingles are made of: Words (the default) or Chars.
	Unit Unit
	// K is the number of units per shingle; 0 means DefaultWordK or DefaultCharK.
	// A text with fewer than K units (but at least one) gets a single shingle of all of
	// them, so that short texts still have a feature.
	K int

	// KeepCase disables full Unicode case folding ("Straße" and "STRASSE" both fold to
	// "strasse").
	KeepCase bool
	// KeepPunct keeps punctuation and symbols: segments without letters or digits
	// become tokens, and punctuation inside words ("don't", "e.g", "3.14") stays. By
	// default both are removed, so "don't" and "dont" are the same token.
	KeepPunct bool
	// SplitPunct splits words at the punctuation, symbols and format characters inside
	// them, the underscore excepted, instead of removing it: "scipy.special.jv" is three
	// words and "don't" two, as the regular expression \w+ finds words, which reference
	// similarities computed in Python often use. It has no effect with KeepPunct.
	SplitPunct bool
	// KeepAccents disables accent folding ("café" becomes "cafe" by default).
	KeepAccents bool
	// NoNFKC disables Unicode compatibility normalization (NFKC), which by default maps
	// ligatures ("ﬁ" to "fi"), full-width forms ("Ａ１" to "a1"), superscripts and the
	// like to their plain forms.
	NoNFKC bool
	// NoCJK keeps Han, Hiragana, Katakana and Hangul runs as UAX #29 gives them
	// (Katakana runs and Hangul words stay whole) instead of one word per character.
	// It has no effect on Chars.
	NoCJK bool
	// MaskNumbers replaces dates by the token "0-0-0", times by "0:0" and every other
	// run of digits by "0", so that texts differing only in numbers, dates and times
	// look alike.
	MaskNumbers bool
	// RemoveStopWords drops the words in StopWords, or in the English list shipped with
	// the package when StopWords is nil. The list is normalized with the same options
	// as the text.
	RemoveStopWords bool
	// StopWords replaces the shipped English list; each entry must be one word after
	// normalization. Setting it without RemoveStopWords is an error. New reads the
	// list once; changing it afterwards has no effect.
	StopWords []string

	// Bag keeps every occurrence of a shingle, in text order, instead of the default
	// set: each distinct shingle once, sorted by hash.
	Bag bool
	// Seed starts the chain of unit hashes that makes the feature hash (see the
	// package documentation). Features made with different seeds are unrelated.
	Seed uint64
	// SampleMod, when above 1, keeps only the features whose hash is 0 modulo
	// SampleMod (Broder's sampling), about one in SampleMod.
	SampleMod uint64
	// Weighting selects the weights of AppendWeighted; the default is Uniform.
	Weighting Weighting
	// IDF is the table that Weighting IDF and TFIDF need; LoadIDF reads one.
	IDF IDFTable
}

// ShingleK returns the shingle size o describes: K, or DefaultWordK or DefaultCharK for
// its Unit when K is 0.
func (o *Options) ShingleK() int {
	switch {
	case o.K > 0:
		return o.K
	case o.Unit == Chars:
		return DefaultCharK
	}
	return DefaultWordK
}

// validate reports the first problem with o, wrapping ErrOptions.
func (o *Options) validate() error {
	switch {
	case o.Unit != Words && o.Unit != Chars:
		return fmt.Errorf("%w: Unit is %v; use Words or Chars", ErrOptions, o.Unit)
	case o.K < 0:
		return fmt.Errorf("%w: K is %d; use 0 for the default or a positive size", ErrOptions, o.K)
	case o.K > MaxK:
		return fmt.Errorf("%w: K is %d; use at most %d", ErrOptions, o.K, MaxK)
	case o.StopWords != nil && !o.RemoveStopWords:
		return fmt.Errorf("%w: StopWords given but RemoveStopWords is false; set it to remove them", ErrOptions)
	case o.Weighting < Uniform || o.Weighting > TFIDF:
		return fmt.Errorf("%w: Weighting is %v; use Uniform, TF, IDF or TFIDF", ErrOptions, o.Weighting)
	case (o.Weighting == IDF || o.Weighting == TFIDF) && o.IDF.Weights == nil:
		return fmt.Errorf("%w: Weighting %v needs Options.IDF; load one with LoadIDF", ErrOptions, o.Weighting)
	case o.Bag && (o.Weighting == TF || o.Weighting == TFIDF):
		return fmt.Errorf("%w: Weighting %v counts occurrences itself; drop Bag or use Uniform or IDF", ErrOptions, o.Weighting)
	}
	return nil
}
