package extract

import (
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/net/html"
	a "golang.org/x/net/html/atom"
)

// buildTree returns the tree html.Parse builds from stripRaw(page), for the markup it
// knows how to read; ok is false for the rest, which html.Parse reads. The parser's
// tokenizer copies every tag name, attribute and text and its tree construction
// allocates a node at a time: on a typical page that was a third of the service's CPU.
// buildTree reads the page as stripRaw and visibleFast do, from one "<" to the next
// with scanTag, skipping comments and the text of scripts and styles and keeping only
// the attributes Extract reads, and runs the parser's own insertion modes
// (golang.org/x/net/html's, divergences included) on what it finds, with nodes
// allocated in slabs and text left in place when it holds no character reference.
//
// It gives up where the parser's work is more than moving along the stack of open
// elements: MathML and HTML inside SVG, templates, framesets, foster parenting (text or
// elements misplaced in a table), the adoption agency algorithm with a block inside the
// formatting element, captions, ruby, plaintext, a second html or body tag, a table
// opened inside a paragraph (which depends on the doctype's quirks mode), bogus
// comments ("<?", "<!x>") after the doctype, NUL bytes, tags that do not end, attribute
// values with character references other than the common ones, and nesting deeper
// than the parser allows. FuzzBuildTree holds it to html.Parse wherever ok.
//
// When vis is not nil, buildTree also runs visibleFast's state machine on what it reads,
// and sets vis.ok when that gave the page's visible text: when buildTree read the page
// and visibleFast would not have given up on it.
func buildTree(page string, vis *visibleState, sc *scratch) (doc *html.Node, ok bool) {
	if strings.IndexByte(page, 0) >= 0 {
		return nil, false
	}
	b := &builder{vis: vis}
	if vis != nil {
		vis.ok = true
		vis.b = slices.Grow(vis.b[:0], len(page)/4)
	}
	b.alloc.init(page, sc)
	defer b.alloc.keep(sc)
	b.doc = b.alloc.node(html.DocumentNode, 0, "")
	var joined []byte // text on both sides of comments, which stripRaw joins
	for page != "" && !b.fail {
		i := tokenStart(page)
		text := page[:i]
		page = page[i:]
		b.visText(text)
		if strings.HasPrefix(page, "<!--") {
			joined = append(joined, text...)
			if len(joined) > 0 && joined[len(joined)-1] == '<' {
				b.fail = true // with the comment cut, that "<" may open a tag
			}
			page = b.skipComment(page)
			continue
		}
		if len(joined) > 0 {
			text = string(append(joined, text...))
			joined = joined[:0]
		}
		if text != "" {
			b.text(text)
		}
		if page != "" {
			page = b.markup(page)
		}
	}
	if len(joined) > 0 && !b.fail {
		b.text(string(joined))
	}
	if b.fail {
		return nil, false
	}
	b.eof()
	b.flush()
	return b.doc, !b.fail
}

// skipComment returns page, which starts with "<!--", after the comment, as stripRaw
// reads it: "<!-->" and "<!--->" are whole comments, and one that does not end runs to
// the end of the page. visibleFast gives up on those and on "--!" in a comment.
func (b *builder) skipComment(page string) string {
	if rest := page[4:]; strings.HasPrefix(rest, ">") || strings.HasPrefix(rest, "->") {
		b.visOff()
		return rest[strings.IndexByte(rest, '>')+1:]
	}
	end := strings.Index(page[4:], "-->")
	if end < 0 {
		b.visOff()
		return ""
	}
	if b.vis != nil && strings.Contains(page[4:4+end+2], "--!") {
		b.visOff()
	}
	return page[4+end+3:]
}

// markup reads the tag, end tag, doctype or bogus comment that starts page and returns
// the page after it.
func (b *builder) markup(page string) string {
	switch c := page[1]; {
	case isLetter(c):
		t, n := b.startToken(page)
		if n < 0 {
			b.fail = true
			return ""
		}
		foreign := b.top().Namespace != "" && b.foreign()
		if b.startTag(&t); b.fail {
			return ""
		}
		page = page[n:]
		b.visStart(t.a, page)
		if t.a == a.Script || t.a == a.Style {
			// stripRaw drops their text, in SVG too.
			if e := indexEndTag(page, t.name); e >= 0 {
				page = page[e:]
			} else {
				page = ""
			}
		}
		switch {
		case !rawText(t.a):
			return page
		case !foreign:
			return b.rawText(t.a, page)
		}
		// In SVG the element's text is not raw, but stripRaw copies it as it is.
		if e := indexEndTag(page, t.name); e < 0 || strings.IndexByte(page[:e], '<') >= 0 {
			b.fail = true
			return ""
		}
		return page
	case c == '/' && len(page) > 2 && isLetter(page[2]):
		n := tagLen(page)
		if n < 0 {
			b.fail = true
			return ""
		}
		name := lowerName(page[2:nameLen(page)])
		tag := a.Lookup([]byte(name))
		b.endTag(tag, name)
		b.visEnd(tag)
		return page[n:]
	}
	// A doctype or a bogus comment ("<!", "<?", "</" and no letter): up to the next ">".
	n := strings.IndexByte(page, '>') + 1
	if n == 0 {
		b.fail = true
		return ""
	}
	if len(page) >= 9 && strings.EqualFold(page[2:9], "doctype") {
		if b.im == initialIM {
			b.im = beforeHTMLIM
		}
		return page[n:]
	}
	// The parser's tree has a node for it. Only the document's own comments, which
	// nothing reads, are left out of this tree.
	if b.im > beforeHTMLIM {
		b.fail = true
	}
	return page[n:]
}

// rawText reads the text of raw text element tag, which startTag has just opened, up to
// its end tag, as the tokenizer does, and returns the page after the end tag.
func (b *builder) rawText(tag a.Atom, page string) string {
	if tag == a.Plaintext || b.top().DataAtom != tag {
		b.fail = true // plaintext, or the parser did not open the element
		return ""
	}
	e := indexEndTag(page, tag.String())
	if e < 0 {
		e = len(page)
	}
	d := convertNewlines(page[:e])
	if tag == a.Title || tag == a.Textarea {
		d = unescapeText(d)
	}
	if tag == a.Textarea {
		d = strings.TrimPrefix(d, "\n")
	}
	b.addText(d)
	b.pop()
	if e == len(page) {
		return ""
	}
	n := tagLen(page[e:])
	if n < 0 {
		b.fail = true
		return ""
	}
	b.visEnd(tag)
	return page[e+n:]
}

// token is a start tag as the tokenizer returns it.
type token struct {
	a    a.Atom
	name string // lower case
	attr []html.Attribute
	self bool
}

// startToken reads the start tag that starts page, with the attributes stripRaw keeps
// (writeTag), and returns it with its length, -1 when it does not end.
func (b *builder) startToken(tag string) (t token, n int) {
	raw := tag[1:nameLen(tag)]
	name := lowerName(raw)
	t = token{a: a.Lookup([]byte(name)), name: name}
	if t.a != 0 {
		t.name = t.a.String()
	}
	start := len(b.alloc.attrs)
	// Whether the last attribute kept has a value without quotes, and repeats an earlier
	// one.
	unquoted, dup := false, false
	n, self := scanTag(tag, func(s, e, nameEnd int) {
		key := lowerName(tag[s:nameEnd])
		if !keptAttr(raw, key) {
			return
		}
		unquoted, dup = unquotedValue(tag[nameEnd:e]), false
		for _, at := range b.alloc.attrs[start:] {
			if at.Key == key {
				dup = true // the tokenizer keeps the first
				return
			}
		}
		val, ok := attrValue(tag[nameEnd:e])
		if !ok {
			b.fail = true
		}
		if len(b.alloc.attrs) == cap(b.alloc.attrs) {
			// A new slab, with this tag's attributes so far moved to it.
			old := b.alloc.attrs[start:]
			b.alloc.attrs = append(make([]html.Attribute, 0, max(b.alloc.chunk, 2*len(old)+1)), old...)
			start = 0
		}
		b.alloc.attrs = append(b.alloc.attrs, html.Attribute{Key: key, Val: val})
	})
	if n < 0 {
		return t, n
	}
	t.self = self
	if end := len(b.alloc.attrs); end > start {
		t.attr = b.alloc.attrs[start:end:end]
	}
	if self && unquoted {
		// stripRaw writes "/>" right after the value, which then ends with "/", and
		// the tag is not self-closing.
		if !dup {
			t.attr[len(t.attr)-1].Val += "/"
		}
		t.self = false
	}
	return t, n
}

// unquotedValue reports whether the attribute whose text after its name is s has a
// value, maybe empty, without quotes.
func unquotedValue(s string) bool {
	s = strings.TrimLeft(s, whitespace)
	if !strings.HasPrefix(s, "=") {
		return false
	}
	s = strings.TrimLeft(s[1:], whitespace)
	return s == "" || s[0] != '"' && s[0] != '\''
}

// attrValue returns the value of the attribute whose text after its name is s
// ("", `="v"`, "=v"...), as the tokenizer returns it; ok is false when it holds a
// character reference whose reading differs between attributes and text.
func attrValue(s string) (v string, ok bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i == len(s) || s[i] != '=' {
		return "", true
	}
	i++
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	v = s[i:]
	if v != "" && (v[0] == '"' || v[0] == '\'') {
		v = v[1 : len(v)-1]
	}
	v = convertNewlines(v)
	if strings.IndexByte(v, '&') < 0 {
		return v, true
	}
	for rest := v; ; {
		j := strings.IndexByte(rest, '&')
		if j < 0 {
			break
		}
		rest = rest[j+1:]
		if !strings.HasPrefix(rest, "#") && !commonEntity(rest) {
			return "", false
		}
	}
	return html.UnescapeString(v), true
}

// commonEntity reports whether s starts with the name of a character reference that
// the tokenizer reads the same in attributes as in text: a common one, ended by ";".
func commonEntity(s string) bool {
	for _, e := range [...]string{"amp;", "lt;", "gt;", "quot;", "apos;", "nbsp;"} {
		if strings.HasPrefix(s, e) {
			return true
		}
	}
	return false
}

// lowerName returns s with ASCII upper-case letters lowered, as the tokenizer reads tag
// and attribute names; s itself when it has none.
func lowerName(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.Map(func(r rune) rune {
				if 'A' <= r && r <= 'Z' {
					return r + 'a' - 'A'
				}
				return r
			}, s)
		}
	}
	return s
}

// convertNewlines replaces "\r\n" and "\r" with "\n", as the tokenizer does in text and
// attribute values.
func convertNewlines(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// unescapeText decodes the character references of text s, as the tokenizer does.
func unescapeText(s string) string {
	if strings.IndexByte(s, '&') < 0 {
		return s
	}
	return html.UnescapeString(s)
}

// slabs allocates a tree's nodes and attributes in blocks: one allocation for many.
type slabs struct {
	nodes []html.Node
	attrs []html.Attribute
	chunk int
}

// init sizes the first slabs for page, sc's when they are large enough: a node per "<"
// at most, but for the elements the parser implies, and an attribute per "=".
func (s *slabs) init(page string, sc *scratch) {
	s.chunk = 64
	s.nodes = slices.Grow(sc.nodes[:0], strings.Count(page, "<")+8)
	s.attrs = slices.Grow(sc.attrs[:0], strings.Count(page, "=")+8)
	sc.nodes, sc.attrs = s.nodes, s.attrs
}

// keep leaves in sc the first slabs with the length used of each, which its put clears.
func (s *slabs) keep(sc *scratch) {
	sc.nodes = usedOf(sc.nodes, s.nodes)
	sc.attrs = usedOf(sc.attrs, s.attrs)
}

// usedOf returns first up to what was used of it, given cur, the slab allocation went
// on in: first itself, or once it was full, a later one.
func usedOf[T any](first, cur []T) []T {
	if cap(first) > 0 && cap(cur) > 0 && unsafe.SliceData(first) == unsafe.SliceData(cur) {
		return first[:len(cur)]
	}
	return first[:cap(first)]
}

// node returns a new node; the slab is never appended past its capacity, so that
// earlier nodes stay where they are.
func (s *slabs) node(typ html.NodeType, a a.Atom, data string) *html.Node {
	if len(s.nodes) == cap(s.nodes) {
		s.nodes = make([]html.Node, 0, s.chunk)
	}
	s.nodes = append(s.nodes, html.Node{Type: typ, DataAtom: a, Data: data})
	return &s.nodes[len(s.nodes)-1]
}
