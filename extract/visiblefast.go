package extract

import (
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// visibleFast is visibleTokens without the tokenizer, which reads a page a byte at a
// time and copies every attribute: it jumps from one "<" to the next, reads tags as
// stripRaw does (scanTag) and raw text elements as the tokenizer does, and runs
// visibleTokens' state machine on what it finds. Where the tokenizer's reading is
// subtle it gives up (ok false) rather than copy it: NUL bytes (replaced in raw text),
// a tag or comment that does not end, a comment closed by "--!>" or opened as "<!-->",
// a script whose text holds "<!--" (the tokenizer's escaped script states), plaintext,
// and "</" at the end. FuzzVisibleFast holds it to visibleTokens wherever ok.
func visibleFast(page string) (text, title string, ok bool) {
	if strings.IndexByte(page, 0) >= 0 {
		return "", "", false
	}
	sc := getScratch()
	defer sc.put()
	v := visibleState{b: slices.Grow(sc.vis, len(page)/4)}
	defer func() { sc.vis = v.b }()
	for {
		i := tokenStart(page)
		if i > 0 && v.skip == 0 {
			v.b = appendUnescaped(v.b, page[:i])
		}
		page = page[i:]
		if page == "" {
			return normalizeBytes(v.b), normalize(v.title), true
		}
		var n int
		switch c := page[1]; {
		case isLetter(c):
			if n = tagLen(page); n < 0 {
				return "", "", false
			}
			a := tagAtom(page[:n])
			v.start(a)
			if page, ok = v.rawText(a, page[n:]); !ok {
				return "", "", false
			}
			continue
		case c == '/' && len(page) > 2 && isLetter(page[2]):
			if n = tagLen(page); n < 0 {
				return "", "", false
			}
			v.end(tagAtom(page[:n]))
		case strings.HasPrefix(page, "<!--"):
			rest := page[4:]
			e := strings.Index(rest, "-->")
			if e < 0 || strings.HasPrefix(rest, ">") || strings.HasPrefix(rest, "->") || strings.Contains(rest[:e+2], "--!") {
				return "", "", false
			}
			n = 4 + e + 3
		case c == '/' && len(page) < 3:
			return "", "", false
		default: // "<!", "<?", "</" and no letter: a comment up to the next ">"
			if n = strings.IndexByte(page, '>') + 1; n == 0 {
				return "", "", false
			}
		}
		page = page[n:]
	}
}

// visibleState is visibleTokens' state machine, for visibleFast.
type visibleState struct {
	b     []byte
	skip  atom.Atom // the element whose content is being skipped
	depth int       // how many skip elements are open (templates nest)
	title string
	ok    bool // buildTree's: the state machine read the whole page
}

// start takes a start tag of element a.
func (v *visibleState) start(a atom.Atom) {
	switch {
	case v.skip != 0:
		if a == v.skip {
			v.depth++
		}
	case skipped(a):
		v.skip, v.depth = a, 1
	default:
		v.b = append(v.b, separator(a)...)
	}
}

// end takes an end tag of element a.
func (v *visibleState) end(a atom.Atom) {
	switch {
	case v.skip == 0:
		v.b = append(v.b, separator(a)...)
	case a == v.skip:
		if v.depth--; v.depth == 0 {
			v.skip = 0
		}
	}
}

// rawText reads, after a start tag of element a, the raw text the tokenizer reads when a
// is a raw text element, and returns the page after it; ok is false where visibleFast
// gives up.
func (v *visibleState) rawText(a atom.Atom, page string) (rest string, ok bool) {
	if a == atom.Plaintext {
		return "", false
	}
	if !rawText(a) {
		return page, true
	}
	e := indexEndTag(page, a.String())
	if e < 0 {
		e = len(page)
	}
	if a == atom.Script && strings.Contains(page[:e], "<!--") {
		return "", false
	}
	// Every raw text element is skipped: its text is only ever a title.
	if e > 0 && v.skip == atom.Title && v.title == "" {
		v.title = html.UnescapeString(page[:e])
	}
	return page[e:], true
}

// tokenStart returns the index of the first "<" of page that starts a tag, an end tag, a
// comment or a doctype for the tokenizer (one followed by a letter, "/", "!" or "?"), or
// len(page).
func tokenStart(page string) int {
	for i := 0; ; {
		j := strings.IndexByte(page[i:], '<')
		if j < 0 || i+j+1 >= len(page) {
			return len(page)
		}
		i += j
		switch c := page[i+1]; {
		case isLetter(c), c == '/', c == '!', c == '?':
			return i
		}
		i++
	}
}

// appendUnescaped appends the text s with its character references decoded, as the
// tokenizer's text tokens are.
func appendUnescaped(b []byte, s string) []byte {
	if strings.IndexByte(s, '&') < 0 {
		return append(b, s...)
	}
	return append(b, html.UnescapeString(s)...)
}

// rawText reports whether the tokenizer reads the content of element a as raw text or
// RCDATA, up to its end tag, whatever markup it holds.
func rawText(a atom.Atom) bool {
	switch a {
	case atom.Iframe, atom.Noembed, atom.Noframes, atom.Noscript, atom.Plaintext,
		atom.Script, atom.Style, atom.Textarea, atom.Title, atom.Xmp:
		return true
	}
	return false
}
