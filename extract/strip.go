package extract

import (
	"strings"
)

// stripRaw returns page without the content of its script and style elements, without
// its comments, and with only the attributes Extract reads (writeTag), none of which
// Extract otherwise needs: they are most of the bytes of a typical news page, the HTML
// tokenizer reads raw text a byte at a time and copies every attribute, where this pass
// jumps from one "<" to the next. The elements' tags stay, so the tree is the one the
// parser builds from page, less comments, script and style text and those attributes
// (TestStripRaw and FuzzStripRaw check it against the parser). It follows the
// tokenizer's data state: tags are read as it reads them (scanTag), and the content of
// the other raw-text and RCDATA elements (title, textarea, noscript...) is copied as it
// is. In foreign content (svg, math) script and style are not raw text; Extract drops
// svg whatever it holds.
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
			name := strings.ToLower(page[1:nameLen(page)])
			if c == '/' {
				b.WriteString(page[:end])
				page = page[end:]
				continue
			}
			writeTag(&b, page[:end])
			page = page[end:]
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
// -1 when it does not end. Quoted attribute values may hold ">", as in the tokenizer.
func tagLen(s string) int {
	n, _ := scanTag(s, nil)
	return n
}

// scanTag reads the tag that starts s as the tokenizer does: its name, then attributes,
// each a name up to white space, "/", ">" or "=" (a leading "=" is part of the name) and
// an optional value, quoted or not. It calls attr with the bounds of each attribute, and
// returns the tag's length (-1 when it does not end) and whether it is self-closing.
func scanTag(s string, attr func(start, end, nameEnd int)) (n int, selfClosing bool) {
	i := nameLen(s)
	for i < len(s) {
		switch c := s[i]; c {
		case '>':
			return i + 1, selfClosing
		case ' ', '\t', '\n', '\f', '\r', '/':
			selfClosing = c == '/' && i+1 < len(s) && s[i+1] == '>'
			i++
			continue
		}
		selfClosing = false
		start := i
		i++
		for i < len(s) && !isSpace(s[i]) && s[i] != '/' && s[i] != '>' && s[i] != '=' {
			i++
		}
		nameEnd := i
		j := i
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		if j < len(s) && s[j] == '=' {
			j++
			for j < len(s) && isSpace(s[j]) {
				j++
			}
			if j < len(s) && (s[j] == '"' || s[j] == '\'') {
				k := strings.IndexByte(s[j+1:], s[j])
				if k < 0 {
					return -1, false
				}
				j += k + 2
			} else {
				for j < len(s) && !isSpace(s[j]) && s[j] != '>' {
					j++
				}
			}
			i = j
		}
		if attr != nil {
			attr(start, i, nameEnd)
		}
	}
	return -1, false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

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

// writeTag writes the start tag tag with only the attributes Extract reads (keptAttr):
// a page's tags carry hrefs, srcsets and data attributes by the kilobyte, which the
// tokenizer would copy one by one. The attributes kept are copied as they are.
func writeTag(b *strings.Builder, tag string) {
	name := tag[1:nameLen(tag)]
	b.WriteString(tag[:len(name)+1])
	_, selfClosing := scanTag(tag, func(start, end, nameEnd int) {
		if keptAttr(name, tag[start:nameEnd]) {
			b.WriteByte(' ')
			b.WriteString(tag[start:end])
		}
	})
	if selfClosing {
		b.WriteByte('/')
	}
	b.WriteByte('>')
}

// keptAttr reports whether Extract, or the parser's tree construction, reads the
// attribute key of element tag: class, id and the hiding ones for the scores; those of
// meta, link (its href) and html for the metadata; type (input type=hidden in a table),
// encoding (annotation-xml) and color, face and size (font in foreign content) for the
// tree.
func keptAttr(tag, key string) bool {
	key = strings.ToLower(key)
	if key == "href" {
		return strings.EqualFold(tag, "link")
	}
	switch key {
	case "class", "id", "style", "hidden", "aria-hidden", "itemprop", "rel", "name",
		"property", "content", "lang", "type", "charset", "http-equiv", "encoding",
		"color", "face", "size":
		return true
	}
	return false
}
