package simhash

import (
	"crypto/md5"
	"encoding/binary"
	"unicode"
	"unicode/utf8"
)

//go:generate python3 internal/pytables/gen.py

// Classes of ASCII code points in pyASCII.
const (
	pyFlagWord          = 1 << iota // Python's str.isalnum() or '_': kept by PyFingerprint
	pyFlagCaseIgnorable             // skipped by the final sigma rule
	pyFlagCased                     // Cased and not Case_Ignorable
)

// lowerRange is an entry of pyLowerRanges.
type lowerRange struct {
	lo, hi rune
	delta  int32 // added to the code point; an index into pyLowerMulti when stride is 0
	stride uint8
}

// UnsignedHash returns simhash-py's unsigned_hash(b): the first 8 bytes of the MD5 digest
// of b, read as a big-endian integer. It does not allocate and does not keep b.
func UnsignedHash(b []byte) uint64 {
	sum := md5.Sum(b)
	return binary.BigEndian.Uint64(sum[:8])
}

// PyFingerprint returns the fingerprint that simhash-py's own functional test computes for
// text, bit for bit:
//
//	tokens = re.split(r'\W+', text.lower(), flags=re.UNICODE)
//	shingles = [''.join(s) for s in simhash.shingle(''.join(tokens), 4)]
//	hashes = [simhash.unsigned_hash(s.encode('utf8')) for s in shingles]
//	return simhash.compute(hashes)
//
// That is: Python 3's full lower-casing (U+0130 becomes "i̇", U+03A3 becomes final sigma ς
// at the end of a word), then deletion of every code point that is not a word character of
// Python's re (str.isalnum() or '_'), then one MD5-based hash (UnsignedHash) per 4 code
// points, stride 1, of what remains, each encoded as UTF-8, combined with Compute. Text with
// fewer than 4 word characters gets 0. Python's Unicode data is that of Python 3.11 (Unicode
// 14.0.0), kept in generated tables; Go's unicode package is not used. Invalid UTF-8 bytes
// count as U+FFFD, which is not a word character, as Python does after
// bytes.decode("utf-8", "replace").
//
// PyFingerprint does not allocate. Its cost is one MD5 of 4 to 16 bytes per word character.
func PyFingerprint(text string) uint64 {
	var w pyWindow
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			if f := pyASCII[c]; f&pyFlagWord != 0 {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				w.push(rune(c))
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == 'Σ':
			if pyFinalSigma(text, i, size) {
				w.push('ς') // a word character, like σ
			} else {
				w.push('σ')
			}
		default:
			l, multi := pyLower(r)
			if multi != "" {
				for _, m := range multi {
					if pyIsWord(m) {
						w.push(m)
					}
				}
			} else if pyIsWord(l) {
				w.push(l)
			}
		}
		i += size
	}
	return w.c.sum64()
}

// pyWindow holds the last 4 word characters of PyFingerprint and counts the hash of each
// full window.
type pyWindow struct {
	last [4]rune // the last 4 word characters, oldest first, once n >= 4
	n    int
	c    counter
}

func (w *pyWindow) push(r rune) {
	w.last[0], w.last[1], w.last[2], w.last[3] = w.last[1], w.last[2], w.last[3], r
	if w.n++; w.n < 4 {
		return
	}
	var buf [4 * utf8.UTFMax]byte
	b := buf[:0]
	for _, r := range w.last {
		if r < utf8.RuneSelf {
			b = append(b, byte(r))
		} else {
			b = utf8.AppendRune(b, r)
		}
	}
	w.c.add(UnsignedHash(b))
}

// pyIsWord reports whether r is a word character of Python's re: str.isalnum() or '_'.
func pyIsWord(r rune) bool {
	if r < utf8.RuneSelf {
		return pyASCII[r]&pyFlagWord != 0
	}
	return unicode.Is(pyWord, r)
}

// pyCaseIgnorableRune and pyCasedRune give the classes of the final sigma rule.
func pyCaseIgnorableRune(r rune) bool {
	if r < utf8.RuneSelf {
		return pyASCII[r]&pyFlagCaseIgnorable != 0
	}
	return unicode.Is(pyCaseIgnorable, r)
}

func pyCasedRune(r rune) bool {
	if r < utf8.RuneSelf {
		return pyASCII[r]&pyFlagCased != 0
	}
	return unicode.Is(pyCased, r)
}

// pyFinalSigma reports whether Python's str.lower() turns the U+03A3 at text[i:i+size] into
// final sigma: when, skipping case-ignorable code points, the nearest code point before it
// exists and is cased, and the nearest one after it is not cased or does not exist
// (CPython's handle_capital_sigma). The scans stop at the first code point that is not
// case-ignorable, so over a whole text they cost O(len(text)).
func pyFinalSigma(text string, i, size int) bool {
	before := false
	for j := i; j > 0; {
		r, n := utf8.DecodeLastRuneInString(text[:j])
		if !pyCaseIgnorableRune(r) {
			before = pyCasedRune(r)
			break
		}
		j -= n
	}
	if !before {
		return false
	}
	for j := i + size; j < len(text); {
		r, n := utf8.DecodeRuneInString(text[j:])
		if !pyCaseIgnorableRune(r) {
			return !pyCasedRune(r)
		}
		j += n
	}
	return true
}

// pyLower returns Python's str.lower() of r, for r other than U+03A3: either one code
// point, or, when multi is not empty, the code points of multi.
func pyLower(r rune) (lower rune, multi string) {
	t := pyLowerRanges
	lo, hi := 0, len(t)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t[m].hi < r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(t) && t[lo].lo <= r {
		e := t[lo]
		switch {
		case e.stride == 0:
			return r, pyLowerMulti[e.delta]
		case (r-e.lo)%rune(e.stride) == 0:
			return r + e.delta, ""
		}
	}
	return r, ""
}
