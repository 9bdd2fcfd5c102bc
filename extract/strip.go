package extract

import (
	"strings"
)

// stripRaw returns page without the content of its script and style elements and
// without its comments, which Extract never reads: they are half the bytes of a typical
// news page, and the HTML tokenizer reads raw text a byte at a time, where this pass
// jumps from one "<" to the next. The elements' tags stay, so the tree is the one the
// parser builds from page, less comments and script and style text (TestStripRaw and
// FuzzStripRaw check it against the parser). It follows the tokenizer's data state:
// tags are copied whole, quoted attribute values included, and the content of the other
// raw-text and RCDATA elements (title, textarea, noscript...) is copied as it is. In
// foreign content (svg, math) script and style are not raw text; Extract drops svg
// whatever it holds.
func stripRaw(page string) string {
	var b strings.Builder
	b.Grow(len(page))
	for {
		i := strings.IndexByte(page, '<')
		if i < 0 || i+1 >= len(page) {
			b.WriteString(page)
			return b.String()
		}
		b.WriteString(page[:i])
		page = page[i:]
		switch c := page[1]; {
		case strings.HasPrefix(page, "<!--"):
			// "<!-->" and "<!--->" are whole (empty) comments to the tokenizer.
			if rest := page[4:]; strings.HasPrefix(rest, ">") || strings.HasPrefix(rest, "->") {
				page = rest[strings.IndexByte(rest, '>')+1:]
				continue
			}
			end := strings.Index(page[4:], "-->")
			if end < 0 {
				return b.String() // an unclosed comment runs to the end of the page
			}
			page = page[4+end+3:]
		case c == '!' || c == '?' || c == '/' && (len(page) < 3 || !isLetter(page[2])):
			// A doctype, a bogus comment or an empty end tag: up to the next ">".
			end := strings.IndexByte(page, '>')
			if end < 0 {
				b.WriteString(page)
				return b.String()
			}
			b.WriteString(page[:end+1])
			page = page[end+1:]
		case c == '/' || isLetter(c):
			end := tagLen(page)
			if end < 0 {
				b.WriteString(page)
				return b.String()
			}
			b.WriteString(page[:end])
			name := strings.ToLower(page[1:nameLen(page)])
			page = page[end:]
			if c == '/' {
				continue
			}
			switch name {
			case "script", "style":
				if e := indexEndTag(page, name); e >= 0 {
					page = page[e:]
				} else {
					return b.String() // unclosed: the rest of the page is its raw text
				}
			case "title", "textarea", "xmp", "iframe", "noembed", "noframes", "noscript":
				e := indexEndTag(page, name)
				if e < 0 {
					e = len(page)
				}
				b.WriteString(page[:e])
				page = page[e:]
			case "plaintext":
				b.WriteString(page)
				return b.String()
			}
		default:
			b.WriteByte('<')
			page = page[1:]
		}
	}
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// nameLen returns the index in tag (which starts with "<" or "</") where its name ends.
func nameLen(tag string) int {
	i := 1
	if tag[1] == '/' {
		i = 2
	}
	for i < len(tag) && !tagEnd(tag[i]) {
		i++
	}
	return i
}

// tagLen returns the length of the tag that starts s, up to and including its ">", or
// -1 when it does not end. Quoted attribute values may hold ">", as in the tokenizer;
// a quote opens one only after "=".
func tagLen(s string) int {
	afterEq := false
	for i := nameLen(s); i < len(s); i++ {
		switch c := s[i]; c {
		case '>':
			return i + 1
		case '=':
			afterEq = true
			continue
		case '"', '\'':
			if afterEq {
				j := strings.IndexByte(s[i+1:], c)
				if j < 0 {
					return -1
				}
				i += j + 1
			}
		case ' ', '\t', '\n', '\f', '\r':
			continue // white space between "=" and the value keeps afterEq
		}
		afterEq = false
	}
	return -1
}

// tagEnd reports whether c ends a tag name.
func tagEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\f', '\r', '/', '>':
		return true
	}
	return false
}

// indexEndTag returns the index of the first "</name" in s (any case) followed by the
// end of a tag name, or -1.
func indexEndTag(s, name string) int {
	for off := 0; ; {
		i := strings.Index(s[off:], "</")
		if i < 0 {
			return -1
		}
		j := off + i
		if len(s) > j+2+len(name) && strings.EqualFold(s[j+2:j+2+len(name)], name) && tagEnd(s[j+2+len(name)]) {
			return j
		}
		off = j + 2
	}
}
