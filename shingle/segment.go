package shingle

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/words"
)

// Limits of the token stage.
const (
	// maxSegment is the longest segment in bytes: longer words (base64 blobs, long
	// runs without boundaries) are cut into pieces of at most this many bytes, so that
	// memory stays bounded on any input.
	maxSegment = 256
	// maskLookahead is how many bytes a date or time may need, including the character
	// after it.
	maskLookahead = 40
)

// Classes of ASCII bytes for the word-boundary fast path.
const (
	cLetter    = 1 << iota // A-Z a-z: ALetter
	cDigit                 // 0-9: Numeric
	cUnder                 // _: ExtendNumLet
	cPunct                 // other printable non-alphanumerics: punctuation or symbols
	cMidLetter             // . ' : (MidNumLet, Single_Quote, MidLetter): join letters
	cMidNum                // . ' , ; (MidNumLet, Single_Quote, MidNum): join digits
	cMaskStart             // a digit or the first letter of an English month name
	cHigh                  // not ASCII

	cWord = cLetter | cDigit | cUnder
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			t[c] = cLetter
		case '0' <= c && c <= '9':
			t[c] = cDigit | cMaskStart
		case c == '_':
			t[c] = cUnder | cPunct
		case '!' <= c && c <= '~':
			t[c] = cPunct
		}
	}
	for _, c := range ".':" {
		t[c] |= cMidLetter
	}
	for _, c := range ".',;" {
		t[c] |= cMidNum
	}
	for _, c := range "adfjmnosADFJMNOS" {
		t[c] |= cMaskStart
	}
	return t
}()

// byteClass is asciiClass extended to every byte value: cHigh for the non-ASCII ones.
var byteClass = func() (t [256]uint8) {
	copy(t[:], asciiClass[:])
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = cHigh
	}
	return t
}()

// Flags of a word segment that tell whether it needs editing.
const (
	fPunct = 1 << iota // contains punctuation, symbols or format characters
	fDigit             // contains a decimal digit
	fCJK               // contains a Han, Hiragana, Katakana or Hangul character
)

// segment consumes the normalized text s.norm[s.np:] segment by segment, passing words,
// punctuation and separators on, and stops where it needs more text to decide (unless
// atEOF) or when the consumer asked to stop. Segments are UAX #29 word-boundary
// segments: an ASCII fast path finds them where the text around is ASCII, and the uax29
// package everywhere else (TestASCIIFastPath checks that the two agree).
//
// segment is one long function on purpose: it is the tokenizer's hot loop, run once per
// segment of every text, and its cases share the cursor p, the text b and the stop flag.
// Split into functions (which the compiler would not inline, having loops), every segment
// would pass them through a call and reload them from memory, where one loop keeps them in
// registers; each case is short and commented where it starts.
func (s *Shingler) segment(atEOF bool) {
	b := s.norm
	p := s.np
	skip := uint8(cMaskStart) // letters that may start a date need the slow path
	if !s.opt.MaskNumbers {
		skip = 0
	}
	// fast: words are pushed as they are, and pushing never stops the loop (no Tokens).
	fast := s.plainWords && s.yield == nil
	for p < len(b) && !s.stopped {
		// The common case in English: a word of letters, then a space and more ASCII; a
		// loop of its own, which keeps its state in registers.
		for fast && p < len(b) {
			cl := byteClass[b[p]]
			if cl&cLetter == 0 || cl&skip != 0 {
				break
			}
			i := p + 1
			for {
				if i+8 > len(b) {
					for i < len(b) && byteClass[b[i]]&cLetter != 0 {
						i++
					}
					break
				}
				if n := nonLetters(binary.LittleEndian.Uint64(b[i:])); n != 0 {
					i += bits.TrailingZeros64(n) >> 3 // the first byte that is not a letter
					break
				}
				i += 8
			}
			if i+1 >= len(b) || i-p >= maxSegment {
				break
			}
			if c, n := b[i], b[i+1]; c == ' ' && n < utf8.RuneSelf {
				s.push(b[p:i])
				p = i + 1
			} else if cl, ncl := byteClass[c], byteClass[n]; cl&(cWord|cHigh) == 0 && ncl&cHigh == 0 &&
				(cl&cMidLetter == 0 || ncl&cLetter == 0) {
				// Punctuation, whitespace or a control character that ends the word:
				// only . ' : join letters, and only when a letter follows (WB6/WB7).
				s.push(b[p:i])
				p = i
			} else if ok, joins := typoPunct(b, i); ok && (!joins || byteClass[b[i+3]]&cLetter == 0) {
				// A typographic dash or quote that ends the word: ‘ and ’ join letters
				// like ' (WB6/WB7), the others never do.
				s.push(b[p:i])
				p = i
			} else {
				break
			}
		}
		if p == len(b) {
			break
		}
		if ok, _ := typoPunct(b, p); ok {
			// A segment of its own: nothing joins it to the ASCII character after it, and
			// p is a boundary.
			s.punct(b[p : p+3])
			p += 3
			continue
		}
		if c := b[p]; c < utf8.RuneSelf {
			cl := asciiClass[c]
			if cl&cWord != 0 {
				if s.opt.MaskNumbers && cl&cMaskStart != 0 {
					if !atEOF && len(b)-p < maskLookahead {
						break
					}
					if n, ph := matchMask(b[p:]); n > 0 {
						s.tok = append(s.tok[:0], ph...)
						s.token(s.tok)
						p += n
						continue
					}
				}
				end, flags := scanASCIIWord(b, p, atEOF)
				if end == len(b) && !atEOF && end-p < maxSegment {
					break // the word may go on
				}
				if end > 0 {
					if flags == 0 && s.plainWords {
						s.push(b[p:end]) // the common case, without the checks of word and token
					} else {
						s.word(b[p:end], flags)
					}
					p = end
					continue
				}
				// end < 0: a non-ASCII character is involved; fall through to UAX #29.
			} else {
				if p+1 == len(b) && !atEOF {
					break // a combining mark may follow
				}
				if p+1 == len(b) || b[p+1] < utf8.RuneSelf {
					if cl&cPunct != 0 {
						s.punct(b[p : p+1])
					} else {
						s.separator()
						if c == ' ' && p+1 < len(b) && b[p+1] == ' ' {
							for p+2 < len(b) && b[p+2] == ' ' {
								p++ // a run of spaces: only the last needs a look at what follows
							}
						}
					}
					p++
					continue
				}
			}
		}
		adv, _, _ := words.SplitFunc(b[p:], atEOF)
		if adv == 0 {
			if !atEOF && len(b)-p < maxSegment {
				break
			}
			adv = len(b) - p
		}
		if adv > maxSegment {
			adv = runeCut(b[p:], maxSegment)
		}
		s.general(b[p : p+adv])
		p += adv
	}
	s.np = p
}

// typoPunct reports whether b[i:] starts with a typographic dash or quote (U+2013,
// U+2014, U+2018, U+2019, U+201C or U+201D, the non-ASCII punctuation of most English
// text after NFKC) followed by an ASCII character, and whether it is U+2018 or U+2019,
// which UAX #29 lets join letters (MidNumLet). Without this, each of them would take the
// uax29 package and the Unicode tables; TestASCIIFastPath checks the two agree.
func typoPunct(b []byte, i int) (ok, joins bool) {
	if i+3 >= len(b) || b[i] != 0xE2 || b[i+1] != 0x80 || b[i+3] >= utf8.RuneSelf {
		return false, false
	}
	switch b[i+2] {
	case 0x93, 0x94, 0x9C, 0x9D:
		return true, false
	case 0x98, 0x99:
		return true, true
	}
	return false, false
}

// nonLetters returns the high bit of each of the eight bytes of x (little-endian) that
// is not an ASCII letter.
func nonLetters(x uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	y := x&^high | ones*0x20 // folded to lower case; the high bit is tested below
	geA := y + ones*(0x80-'a')
	gtZ := y + ones*(0x80-'z'-1)
	letter := geA &^ gtZ &^ x & high
	return letter ^ high
}

// runeCut returns the largest n <= max at which b can be cut between two runes.
func runeCut(b []byte, max int) int {
	n := max
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	if n == 0 {
		return max // no rune start at all: invalid bytes, each a rune of its own
	}
	return n
}

// scanASCIIWord returns the end of the UAX #29 word segment that starts with the ASCII
// letter, digit or underscore b[p], and flags for its content. The rules that apply to
// ASCII are WB5, WB8-WB10 and WB13a/b (letters, digits and underscores join) and
// WB6/WB7 and WB11/WB12 (one . ' or : between letters, one . ' , or ; between digits
// joins). It returns -1 when a non-ASCII character decides the end, and len(b) when the
// end of b is reached before the end is known and atEOF is false. Segments are cut at
// maxSegment bytes.
func scanASCIIWord(b []byte, p int, atEOF bool) (end int, flags uint8) {
	lim := min(len(b), p+maxSegment)
	var acc uint8 // the classes seen
	i := p
	for {
		for i < lim {
			cl := byteClass[b[i]]
			if cl&cWord == 0 {
				break
			}
			acc |= cl
			i++
		}
		if acc&cDigit != 0 {
			flags |= fDigit
		}
		if acc&cUnder != 0 {
			flags |= fPunct
		}
		switch {
		case i == lim && lim-p == maxSegment:
			return i, flags
		case i == len(b):
			return i, flags // the caller knows whether the word may go on
		}
		cl := byteClass[b[i]]
		if cl&cHigh != 0 {
			return -1, 0
		}
		if cl&(cMidLetter|cMidNum) == 0 {
			return i, flags
		}
		if i+1 == len(b) {
			if atEOF {
				return i, flags
			}
			return len(b), flags
		}
		next := byteClass[b[i+1]]
		if next&cHigh != 0 {
			return -1, 0
		}
		prev := byteClass[b[i-1]]
		if prev&cLetter != 0 && cl&cMidLetter != 0 && next&cLetter != 0 ||
			prev&cDigit != 0 && cl&cMidNum != 0 && next&cDigit != 0 {
			flags |= fPunct
			i += 2
			if i > lim {
				return lim, flags
			}
			continue
		}
		return i, flags
	}
}

// general classifies a segment found by the uax29 package: a word if it has a letter or
// a number, punctuation if it has punctuation or a symbol, else a separator (spaces,
// controls, stray marks).
func (s *Shingler) general(seg []byte) {
	// UAX #29 attaches an extending character (a combining mark, a format character, an
	// emoji modifier) to the white space before it (rule WB4): the space is a separator,
	// and what follows it is the segment.
	if i := len(seg) - len(bytes.TrimLeftFunc(seg, unicode.IsSpace)); i > 0 {
		s.separator()
		if seg = seg[i:]; len(seg) == 0 {
			return
		}
	}
	var word, punct bool
	var flags uint8
	for i := 0; i < len(seg); {
		c := seg[i]
		if c < utf8.RuneSelf {
			cl := asciiClass[c]
			switch {
			case cl&cDigit != 0:
				word = true
				flags |= fDigit
			case cl&cLetter != 0:
				word = true
			case cl&cPunct != 0:
				punct = true
				flags |= fPunct
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(seg[i:])
		i += size
		switch {
		case unicode.IsLetter(r):
			word = true
			if isCJK(r) {
				flags |= fCJK
			}
		case unicode.IsDigit(r):
			word = true
			flags |= fDigit
		case unicode.IsNumber(r):
			word = true
		case unicode.IsPunct(r) || unicode.IsSymbol(r):
			punct = true
			flags |= fPunct
		case unicode.Is(unicode.Cf, r):
			flags |= fPunct
		case isCJK(r): // the prolonged sound mark is not a letter
			flags |= fCJK
		}
	}
	switch {
	case word:
		s.word(seg, flags)
	case punct:
		s.punct(seg)
	default:
		s.separator()
	}
}

// isCJK reports whether r is written without spaces between words in Chinese, Japanese
// or Korean text: Han, Hiragana, Katakana (with the prolonged sound mark) or Hangul.
func isCJK(r rune) bool {
	return r >= 0x1100 && (unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 0x30FC)
}

// word passes on a word segment after removing punctuation (or splitting at it, with
// SplitPunct), masking digits and splitting CJK characters as configured.
func (s *Shingler) word(seg []byte, flags uint8) {
	if flags&fPunct != 0 && s.opt.SplitPunct && !s.opt.KeepPunct {
		s.splitPunct(seg, flags)
		return
	}
	s.wordPart(seg, flags)
}

// splitPunct passes on the parts of a word segment between its punctuation, symbols and
// format characters, the underscore excepted, as words: how the regular expression \w+
// cuts "scipy.special.jv" and "don't".
func (s *Shingler) splitPunct(seg []byte, flags uint8) {
	start := 0
	for i := 0; i < len(seg) && !s.stopped; {
		r, size := rune(seg[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(seg[i:])
		}
		if r != '_' && isPunct(r) {
			if start < i {
				s.wordPart(seg[start:i], flags)
			}
			start = i + size
		}
		i += size
	}
	if start < len(seg) && !s.stopped {
		s.wordPart(seg[start:], flags)
	}
}

// wordPart is word without SplitPunct.
func (s *Shingler) wordPart(seg []byte, flags uint8) {
	if flags&fPunct != 0 && !s.opt.KeepPunct || flags&fDigit != 0 && s.opt.MaskNumbers {
		seg = s.edit(seg)
		if len(seg) == 0 {
			s.separator()
			return
		}
	}
	if flags&fCJK != 0 && !s.opt.NoCJK {
		s.splitCJK(seg)
		return
	}
	s.token(seg)
}

// edit returns seg without punctuation, symbols and format characters (unless
// KeepPunct) and with every run of digits, including single separators between digits,
// replaced by "0" (if MaskNumbers). The result is in s.tok.
func (s *Shingler) edit(seg []byte) []byte {
	if !s.opt.MaskNumbers {
		return s.dropPunct(seg)
	}
	return s.editGeneral(seg)
}

// dropPunct is edit without MaskNumbers, the common case (a word with an apostrophe or a
// dot inside), a byte at a time for ASCII; TestEditFastPath checks it against
// editGeneral.
func (s *Shingler) dropPunct(seg []byte) []byte {
	t := s.tok[:0]
	for i := 0; i < len(seg); {
		c := seg[i]
		if c < utf8.RuneSelf {
			if s.opt.KeepPunct || asciiClass[c]&cPunct == 0 {
				t = append(t, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(seg[i:])
		if s.opt.KeepPunct || !isPunct(r) {
			t = append(t, seg[i:i+size]...)
		}
		i += size
	}
	s.tok = t
	return t
}

// editGeneral is edit, a rune at a time.
func (s *Shingler) editGeneral(seg []byte) []byte {
	t := s.tok[:0]
	mask, drop := s.opt.MaskNumbers, !s.opt.KeepPunct
	inNum := false
	for i := 0; i < len(seg); {
		r, size := rune(seg[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(seg[i:])
		}
		switch {
		case mask && ('0' <= r && r <= '9' || r >= utf8.RuneSelf && unicode.IsDigit(r)):
			if !inNum {
				t = append(t, '0')
				inNum = true
			}
		case mask && inNum && (r == '.' || r == ',' || r == '\'' || r == ';') && i+1 < len(seg) && '0' <= seg[i+1] && seg[i+1] <= '9':
			// a separator inside a number
		case drop && isPunct(r):
			inNum = false
		default:
			inNum = false
			t = append(t, seg[i:i+size]...)
		}
		i += size
	}
	s.tok = t
	return t
}

// isPunct reports whether r is punctuation, a symbol or an invisible format character.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&cPunct != 0
	}
	return unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.Is(unicode.Cf, r)
}

// splitCJK passes on each CJK character of seg (with any marks after it) as a word of
// its own, and the runs of other characters between them as words.
func (s *Shingler) splitCJK(seg []byte) {
	start := 0 // of the pending non-CJK run
	for i := 0; i < len(seg) && !s.stopped; {
		r, size := utf8.DecodeRune(seg[i:])
		if !isCJK(r) {
			i += size
			continue
		}
		if start < i {
			s.token(seg[start:i])
		}
		j := i + size
		for j < len(seg) {
			m, n := utf8.DecodeRune(seg[j:])
			if !unicode.IsMark(m) {
				break
			}
			j += n
		}
		s.token(seg[i:j])
		i, start = j, j
	}
	if start < len(seg) && !s.stopped {
		s.token(seg[start:])
	}
}

// punct passes on a segment of punctuation or symbols: a token if KeepPunct, else a
// separator.
func (s *Shingler) punct(seg []byte) {
	if s.opt.KeepPunct {
		s.token(seg)
		return
	}
	s.separator()
}

// separator records a word break: whitespace, or punctuation or a stop word removed.
// It matters only to Chars, where it becomes a single space before the next word.
func (s *Shingler) separator() {
	s.sep = true
}

// token passes on one word: dropped if it is a stop word, else pushed into the
// shingle window (Words) or pushed code point by code point (Chars).
func (s *Shingler) token(t []byte) {
	if s.stop != nil {
		if _, ok := s.stop[string(t)]; ok {
			s.separator()
			return
		}
	}
	if s.opt.Unit == Words {
		s.push(t)
		return
	}
	if s.sep && s.units > 0 {
		s.push(s.space[:])
	}
	s.sep = false
	for i := 0; i < len(t) && !s.stopped; {
		size := 1
		if t[i] >= utf8.RuneSelf {
			_, size = utf8.DecodeRune(t[i:])
		}
		s.push(t[i : i+size])
		i += size
	}
}
