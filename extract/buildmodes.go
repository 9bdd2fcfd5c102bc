package extract

import (
	"cmp"
	"slices"
	"strings"

	"golang.org/x/net/html"
	a "golang.org/x/net/html/atom"
)

// insertionMode is the parser's insertion mode, for the modes buildTree follows (the
// text mode is rawText's, the after-body modes read as in-body ones: whatever follows
// </body> or </html> is parsed as if they were not there).
type insertionMode int

const (
	initialIM insertionMode = iota
	beforeHTMLIM
	beforeHeadIM
	inHeadIM
	afterHeadIM
	inBodyIM
	inTableIM
	inTableBodyIM
	inRowIM
	inCellIM
	inColumnGroupIM
)

// builder is buildTree's parser state, as golang.org/x/net/html's parser keeps it.
type builder struct {
	alloc      slabs
	doc        *html.Node
	oe         []*html.Node // the stack of open elements
	afe        []*html.Node // the active formatting elements; nil is a scope marker
	head, form *html.Node
	im         insertionMode
	foster     bool // the token is being parsed with foster parenting
	fail       bool // the page holds markup buildTree does not read
	merging    *html.Node
	buf        []byte        // the text of merging, when text is appended to it
	vis        *visibleState // when not nil, the visible text read on the way
}

// visText, visStart and visEnd run visibleFast's state machine on a text, a start tag
// (with the page after it) and an end tag; visOff notes where visibleFast gives up.
func (b *builder) visText(s string) {
	if b.vis != nil && b.vis.skip == 0 && s != "" {
		b.vis.b = appendUnescaped(b.vis.b, s)
	}
}

func (b *builder) visStart(tag a.Atom, rest string) {
	if b.vis == nil {
		return
	}
	b.vis.start(tag)
	if _, ok := b.vis.rawText(tag, rest); !ok {
		b.visOff()
	}
}

func (b *builder) visEnd(tag a.Atom) {
	if b.vis != nil {
		b.vis.end(tag)
	}
}

func (b *builder) visOff() {
	if b.vis != nil {
		b.vis.ok = false
	}
}

const whitespace = " \t\r\n\f"

func (b *builder) top() *html.Node {
	if len(b.oe) > 0 {
		return b.oe[len(b.oe)-1]
	}
	return b.doc
}

func (b *builder) pop() { b.oe = b.oe[:len(b.oe)-1] }

// fostered reports whether a node inserted now would be foster parented, which
// buildTree does not do.
func (b *builder) fostered() bool {
	if !b.foster {
		return false
	}
	switch b.top().DataAtom {
	case a.Table, a.Tbody, a.Tfoot, a.Thead, a.Tr:
		b.fail = true
		return true
	}
	return false
}

// addChild appends n to the current node and pushes it if it is an element.
func (b *builder) addChild(n *html.Node) {
	if b.fostered() {
		return
	}
	b.flush()
	b.top().AppendChild(n)
	if n.Type == html.ElementNode {
		b.oe = append(b.oe, n)
		if len(b.oe) > 512 {
			b.fail = true // the parser's limit: html.Parse returns its error
		}
	}
}

func (b *builder) addElement(t *token) {
	n := b.alloc.node(html.ElementNode, t.a, t.name)
	n.Attr = t.attr
	b.addChild(n)
}

func (b *builder) addImplied(tag a.Atom) { b.addElement(&token{a: tag, name: tag.String()}) }

// addText appends text to the current node, to its last child when that is text.
func (b *builder) addText(s string) {
	if s == "" || b.fostered() {
		return
	}
	if n := b.top().LastChild; n != nil && n.Type == html.TextNode {
		if b.merging != n {
			b.flush()
			b.merging, b.buf = n, append(b.buf[:0], n.Data...)
		}
		b.buf = append(b.buf, s...)
		return
	}
	b.addChild(b.alloc.node(html.TextNode, 0, s))
}

// flush sets the text of the node text was appended to.
func (b *builder) flush() {
	if b.merging != nil {
		b.merging.Data = string(b.buf)
		b.merging = nil
	}
}

type scope int

const (
	defaultScope scope = iota
	listItemScope
	buttonScope
	tableScope
)

// indexInScope returns the index in the stack of the highest element of tags in scope
// s, or -1.
func (b *builder) indexInScope(s scope, tags ...a.Atom) int {
	for i := len(b.oe) - 1; i >= 0; i-- {
		n := b.oe[i]
		t := n.DataAtom
		if n.Namespace != "" {
			// SVG's HTML integration points end every scope but the table's.
			if s != tableScope && (t == a.Desc || t == a.ForeignObject || t == a.Title) {
				return -1
			}
			continue
		}
		if slices.Contains(tags, t) {
			return i
		}
		switch s {
		case listItemScope:
			if t == a.Ol || t == a.Ul {
				return -1
			}
		case buttonScope:
			if t == a.Button {
				return -1
			}
		case tableScope:
			if t == a.Html || t == a.Table || t == a.Template {
				return -1
			}
			continue
		}
		switch t {
		case a.Applet, a.Caption, a.Html, a.Table, a.Td, a.Th, a.Marquee, a.Object, a.Template, a.Select:
			return -1
		}
	}
	return -1
}

func (b *builder) inScope(s scope, tags ...a.Atom) bool { return b.indexInScope(s, tags...) >= 0 }

func (b *builder) popUntil(s scope, tags ...a.Atom) bool {
	if i := b.indexInScope(s, tags...); i >= 0 {
		b.oe = b.oe[:i]
		return true
	}
	return false
}

// clearStackTo pops elements until the current node is one of tags or html.
func (b *builder) clearStackTo(tags ...a.Atom) {
	for i := len(b.oe) - 1; i >= 0; i-- {
		if t := b.oe[i].DataAtom; t == a.Html || slices.Contains(tags, t) {
			b.oe = b.oe[:i+1]
			return
		}
	}
}

// generateImpliedEndTags pops the elements whose end tags are implied, but except.
func (b *builder) generateImpliedEndTags(except string) {
	for len(b.oe) > 0 {
		switch n := b.top(); n.DataAtom {
		case a.Dd, a.Dt, a.Li, a.Optgroup, a.Option, a.P, a.Rb, a.Rp, a.Rt, a.Rtc:
			if n.Data != except {
				b.pop()
				continue
			}
		}
		return
	}
}

func index(s []*html.Node, n *html.Node) int { return slices.Index(s, n) }

func remove(s []*html.Node, n *html.Node) []*html.Node {
	if i := index(s, n); i >= 0 {
		return slices.Delete(s, i, i+1)
	}
	return s
}

// reconstruct reopens the active formatting elements that were closed with the element
// they were in.
func (b *builder) reconstruct() {
	if len(b.afe) == 0 {
		return
	}
	i := len(b.afe) - 1
	if n := b.afe[i]; n == nil || index(b.oe, n) >= 0 {
		return
	}
	for i > 0 && b.afe[i-1] != nil && index(b.oe, b.afe[i-1]) < 0 {
		i--
	}
	for ; i < len(b.afe) && !b.fail; i++ {
		n := b.afe[i]
		c := b.alloc.node(html.ElementNode, n.DataAtom, n.Data)
		c.Attr = slices.Clone(n.Attr)
		b.addChild(c)
		b.afe[i] = c
	}
}

// clearFormatting clears the active formatting elements up to the last marker.
func (b *builder) clearFormatting() {
	for len(b.afe) > 0 {
		n := b.afe[len(b.afe)-1]
		b.afe = b.afe[:len(b.afe)-1]
		if n == nil {
			return
		}
	}
}

func attrCompare(x, y html.Attribute) int {
	return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Key, y.Key), cmp.Compare(x.Val, y.Val))
}

// addFormatting opens formatting element t, keeping no more than three identical ones
// active (the parser's Noah's Ark clause, which sorts their attributes).
func (b *builder) addFormatting(t *token) {
	b.addElement(t)
	slices.SortFunc(t.attr, attrCompare)
	same := 0
	for i := len(b.afe) - 1; i >= 0 && b.afe[i] != nil; i-- {
		if n := b.afe[i]; n.DataAtom == t.a && slices.Equal(n.Attr, t.attr) {
			if same++; same >= 3 {
				b.afe = slices.Delete(b.afe, i, i+1)
			}
		}
	}
	b.afe = append(b.afe, b.top())
}

// special reports whether n is in the parser's special category.
func special(n *html.Node) bool {
	if n.Namespace != "" {
		return n.DataAtom == a.Desc || n.DataAtom == a.ForeignObject || n.DataAtom == a.Title
	}
	switch n.DataAtom {
	case a.Address, a.Applet, a.Area, a.Article, a.Aside, a.Base, a.Basefont, a.Bgsound,
		a.Blockquote, a.Body, a.Br, a.Button, a.Caption, a.Center, a.Col, a.Colgroup, a.Dd,
		a.Details, a.Dir, a.Div, a.Dl, a.Dt, a.Embed, a.Fieldset, a.Figcaption, a.Figure,
		a.Footer, a.Form, a.Frame, a.Frameset, a.H1, a.H2, a.H3, a.H4, a.H5, a.H6, a.Head,
		a.Header, a.Hgroup, a.Hr, a.Html, a.Iframe, a.Img, a.Input, a.Keygen, a.Li, a.Link,
		a.Listing, a.Main, a.Marquee, a.Menu, a.Meta, a.Nav, a.Noembed, a.Noframes,
		a.Noscript, a.Object, a.Ol, a.P, a.Param, a.Plaintext, a.Pre, a.Script, a.Section,
		a.Select, a.Source, a.Style, a.Summary, a.Table, a.Tbody, a.Td, a.Template,
		a.Textarea, a.Tfoot, a.Th, a.Thead, a.Title, a.Tr, a.Track, a.Ul, a.Wbr, a.Xmp:
		return true
	}
	return false
}

// text parses a text token, raw as the page has it.
func (b *builder) text(raw string) {
	d := unescapeText(convertNewlines(raw))
	if b.top().Namespace != "" {
		if b.foreign() {
			b.addText(d)
		} else {
			b.bodyText(d)
		}
		return
	}
	for d != "" && !b.fail {
		switch b.im {
		case initialIM, beforeHTMLIM, beforeHeadIM:
			if d = strings.TrimLeft(d, whitespace); d == "" {
				return
			}
			b.implied()
		case inHeadIM, afterHeadIM, inColumnGroupIM:
			s := strings.TrimLeft(d, whitespace)
			b.addText(d[:len(d)-len(s)])
			if d = s; d == "" {
				return
			}
			if b.im == inColumnGroupIM {
				if b.top().DataAtom != a.Colgroup {
					return
				}
				b.pop()
				b.im = inTableIM
				continue
			}
			b.implied()
		case inTableIM, inTableBodyIM, inRowIM:
			switch b.top().DataAtom {
			case a.Table, a.Tbody, a.Tfoot, a.Thead, a.Tr:
				if strings.Trim(d, whitespace) == "" {
					b.addText(d)
					return
				}
			}
			b.foster = true
			b.bodyText(d)
			b.foster = false
			return
		default:
			b.bodyText(d)
			return
		}
	}
}

// implied takes the step every token but a few takes in the modes before the body: it
// opens the html, head or body element the page left out, or closes the head.
func (b *builder) implied() {
	switch b.im {
	case initialIM:
		b.im = beforeHTMLIM
	case beforeHTMLIM:
		b.addImplied(a.Html)
		b.im = beforeHeadIM
	case beforeHeadIM:
		b.addImplied(a.Head)
		b.head, b.im = b.top(), inHeadIM
	case inHeadIM:
		b.pop()
		b.im = afterHeadIM
	case afterHeadIM:
		b.addImplied(a.Body)
		b.im = inBodyIM
	}
}

// bodyText inserts text in the body.
func (b *builder) bodyText(d string) {
	switch n := b.top(); n.DataAtom {
	case a.Pre, a.Listing:
		if n.FirstChild == nil {
			d = strings.TrimPrefix(d, "\n") // the newline after <pre> is not text
		}
	}
	if d == "" {
		return
	}
	b.reconstruct()
	b.addText(d)
}

// eof completes the tree at the end of the page: the html, head and body elements
// exist whatever the page holds.
func (b *builder) eof() {
	for !b.fail && b.im < inBodyIM {
		b.implied()
	}
}

// resetMode resets the insertion mode from the stack, as the parser does after a table.
func (b *builder) resetMode() {
	for i := len(b.oe) - 1; i >= 0; i-- {
		switch b.oe[i].DataAtom {
		case a.Td, a.Th:
			b.im = inCellIM
		case a.Tr:
			b.im = inRowIM
		case a.Tbody, a.Thead, a.Tfoot:
			b.im = inTableBodyIM
		case a.Colgroup:
			b.im = inColumnGroupIM
		case a.Table:
			b.im = inTableIM
		case a.Body:
			b.im = inBodyIM
		case a.Caption, a.Template, a.Head, a.Frameset, a.Html:
			b.fail = true
		default:
			if i == 0 {
				b.im = inBodyIM
			}
			continue
		}
		return
	}
}
