package extract

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
)

// decode returns page as valid UTF-8 with the name of the encoding it was read in. The
// encoding is, in order: the one a byte order mark names; the charset of contentType;
// UTF-8 when the whole page is valid UTF-8 (unless a <meta> tag declares ISO-2022-JP
// and every byte is 7-bit); the one a <meta> tag in the first 1024 bytes declares;
// windows-1252. Bytes that are invalid in the encoding become U+FFFD.
func decode(page []byte, contentType string) (string, string) {
	if contentType == "" && !hasBOM(page) && !mayDeclare2022(page) && utf8.Valid(page) {
		// Valid UTF-8 wins over whatever else a <meta> tag declares: the page is read
		// without DetermineEncoding's look for one, which runs the HTML tokenizer over
		// the first 1024 bytes.
		return string(page), "utf-8"
	}
	return determine(page, contentType)
}

// determine is decode by charset.DetermineEncoding, whatever the page: what decode's
// shortcut is held to (FuzzDecode).
func determine(page []byte, contentType string) (string, string) {
	enc, name, certain := charset.DetermineEncoding(page, contentType)
	valid := !certain && utf8.Valid(page)
	if valid && (name != "iso-2022-jp" || !sevenBit(page)) {
		// A page mislabelled by its <meta> tag, or whose first 1024 bytes are ASCII, is
		// far more often UTF-8 than a legacy text that happens to be valid UTF-8. But
		// ISO-2022-JP is all 7-bit bytes, always valid UTF-8: its declaration stands
		// unless the page has other bytes, as one transcoded to UTF-8 has.
		enc, name = encoding.Nop, "utf-8"
	}
	var s string
	if enc == encoding.Nop {
		s = string(page)
		if valid {
			return s, name // checked above: the copy needs no second pass
		}
	} else if b, err := enc.NewDecoder().Bytes(page); err == nil {
		s = string(b)
	} else {
		// x/text decoders replace what they cannot read; keep the page's bytes rather
		// than nothing should one ever fail.
		s = string(page)
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s, name
}

// hasBOM reports whether page starts with a byte order mark that DetermineEncoding
// reads (UTF-8, UTF-16BE or UTF-16LE).
func hasBOM(page []byte) bool {
	return bytes.HasPrefix(page, []byte("\xef\xbb\xbf")) || bytes.HasPrefix(page, []byte("\xfe\xff")) ||
		bytes.HasPrefix(page, []byte("\xff\xfe"))
}

// mayDeclare2022 reports whether a <meta> tag in the first 1024 bytes of page, the ones
// DetermineEncoding reads, may declare ISO-2022-JP: every name of it has "2022" in it,
// unless a digit is written as a character reference ("&#").
func mayDeclare2022(page []byte) bool {
	head := page[:min(len(page), 1024)]
	return bytes.Contains(head, []byte("2022")) || bytes.Contains(head, []byte("&#"))
}

// sevenBit reports whether every byte of b is below 0x80.
func sevenBit(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// normalize returns s as Result.Text holds it: every run of white space that contains a
// line break becomes one "\n" and every other run one space; white space at the start and
// end goes; control characters, soft hyphens (U+00AD) and byte order marks (U+FEFF) are
// dropped; invalid UTF-8 becomes U+FFFD.
//
// It runs on the visible text and the main text of every page, so ASCII, most of the
// bytes of most pages, is read a byte at a time and printable runs copied whole; other
// runes are classified as unicode does (normalizeRef in the tests is the rune-by-rune
// definition, and FuzzNormalize holds the two to the same output). What it returns is
// always a new string, never s or a part of it: normalizeBytes relies on that.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	var space, line bool // a pending separator, written before the next visible rune
	pending := func() {
		if line {
			b.WriteByte('\n')
		} else if space {
			b.WriteByte(' ')
		}
		line, space = false, false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			switch {
			case isLineBreak(r):
				line = b.Len() > 0
			case unicode.IsSpace(r):
				space = b.Len() > 0
			case r == '\u00ad' || r == '\ufeff' || unicode.IsControl(r):
			default:
				pending()
				b.WriteRune(r)
			}
			continue
		}
		switch {
		case c == '\n' || c == '\r' || c == '\v' || c == '\f':
			line = b.Len() > 0
			i++
		case c == ' ' || c == '\t':
			space = b.Len() > 0
			i++
		case c < ' ' || c == 0x7f:
			i++
		default:
			// A run of printable ASCII, with the single spaces between its words, which
			// stay as they are: copied whole, not a word at a time.
			pending()
			j := i + 1
			for j < len(s) {
				if c := s[j]; c > ' ' && c < 0x7f {
					j++
				} else if c == ' ' && j+1 < len(s) && s[j+1] > ' ' && s[j+1] < 0x7f {
					j += 2
				} else {
					break
				}
			}
			b.WriteString(s[i:j])
			i = j
		}
	}
	return b.String()
}

func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}
