package simhash

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// Scheme is a text-to-fingerprint pipeline: how text is normalised, cut into features and
// hashed before Compute. Fingerprints are only comparable when made with the same Scheme.
// The zero value is SchemeNeardup.
type Scheme int

const (
	// SchemeNeardup is neardup's own pipeline: text lower-cased rune by rune with Go's
	// unicode.ToLower; tokens are maximal runs of letters and numbers (unicode.IsLetter or
	// unicode.IsNumber); features are the word 3-shingles, each hashed with xxhash.Sum64
	// (XXH64, seed 0) over its tokens joined by single spaces, so "a b c d" has the features
	// "a b c" and "b c d". Text with one or two tokens has a single feature of all its tokens;
	// text without tokens gets 0. Repeated features count as often as they occur.
	//
	// This definition is provisional: a later issue will re-choose the normalisation and
	// the features by measuring them on labelled near-duplicates. Until then golden vectors
	// freeze it, so that it changes only deliberately; fingerprints stored with it will
	// have to be recomputed when it does.
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
// use and does not keep text. SchemeNeardup costs one XXH64 of three words per word and
// allocates only when three consecutive words are longer than 254 bytes together;
// SchemeSimhashPy is PyFingerprint.
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

// neardupFingerprint implements SchemeNeardup. buf holds the lower-cased last three tokens
// (at most), separated by single spaces, starting at off[0], off[1], off[2]; each token that
// completes a 3-shingle hashes buf.
func neardupFingerprint(text string) uint64 {
	var (
		c      counter
		arr    [256]byte
		buf    = arr[:0]
		off    [3]int
		held   int  // tokens in buf
		tokens int  // tokens completed
		in     bool // inside a token
	)
	for i := 0; i < len(text); {
		var (
			r    rune
			word bool
		)
		if b := text[i]; b < utf8.RuneSelf {
			switch {
			case 'a' <= b && b <= 'z', '0' <= b && b <= '9':
				r, word = rune(b), true
			case 'A' <= b && b <= 'Z':
				r, word = rune(b+'a'-'A'), true
			}
			i++
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(text[i:])
			r = unicode.ToLower(r)
			word = unicode.IsLetter(r) || unicode.IsNumber(r)
			i += size
		}
		if !word {
			if in {
				in = false
				if tokens++; tokens >= 3 {
					c.add(xxhash.Sum64(buf))
				}
			}
			continue
		}
		if !in {
			in = true
			if held == 3 {
				// Drop the oldest token and its space.
				s := off[1]
				buf = buf[:copy(buf, buf[s:])]
				off[0], off[1] = 0, off[2]-s
				held = 2
			}
			if held > 0 {
				buf = append(buf, ' ')
			}
			off[held] = len(buf)
			held++
		}
		if r < utf8.RuneSelf {
			buf = append(buf, byte(r))
		} else {
			buf = utf8.AppendRune(buf, r)
		}
	}
	if in {
		if tokens++; tokens >= 3 {
			c.add(xxhash.Sum64(buf))
		}
	}
	switch {
	case tokens == 0:
		return 0
	case tokens < 3:
		return xxhash.Sum64(buf) // Compute of a single hash is the hash itself.
	}
	return c.sum64()
}
