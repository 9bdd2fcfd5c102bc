package extract

import (
	"golang.org/x/net/html"
	a "golang.org/x/net/html/atom"
)

// startTag parses start tag t in the current insertion mode; a mode's handler returns
// false when the token is to be parsed again in the mode it moved to.
func (b *builder) startTag(t *token) {
	if n := b.top(); n.Namespace != "" {
		if b.foreign() {
			b.foreignStart(t)
		} else {
			b.fail = true // an element in an SVG title or desc
		}
		return
	}
	for !b.fail {
		var done bool
		switch b.im {
		case initialIM, beforeHTMLIM, beforeHeadIM:
			switch {
			case b.im == beforeHTMLIM && t.a == a.Html:
				b.addElement(t)
				b.im = beforeHeadIM
				return
			case b.im == beforeHeadIM && t.a == a.Head:
				b.addElement(t)
				b.head, b.im = b.top(), inHeadIM
				return
			case b.im == beforeHeadIM && t.a == a.Html:
				b.fail = true
				return
			}
			b.implied()
		case inHeadIM:
			done = b.inHeadStart(t)
		case afterHeadIM:
			done = b.afterHeadStart(t)
		case inBodyIM:
			done = b.inBodyStart(t)
		case inTableIM:
			done = b.inTableStart(t)
		case inTableBodyIM:
			done = b.inTableBodyStart(t)
		case inRowIM:
			done = b.inRowStart(t)
		case inCellIM:
			done = b.inCellStart(t)
		case inColumnGroupIM:
			done = b.inColumnGroupStart(t)
		}
		if done {
			return
		}
	}
}

// endTag parses the end tag of element tag (name when it is no atom).
func (b *builder) endTag(tag a.Atom, name string) {
	if b.top().Namespace != "" {
		b.foreignEnd(name)
		return
	}
	for !b.fail {
		done := true
		switch b.im {
		case initialIM:
			b.implied()
			done = false
		case beforeHTMLIM, beforeHeadIM, inHeadIM, afterHeadIM:
			switch {
			case tag == a.Template:
				b.fail = true
			case b.im == inHeadIM && tag == a.Head:
				b.implied()
			case tag == a.Head && b.im != afterHeadIM, tag == a.Body, tag == a.Html, tag == a.Br:
				b.implied()
				done = false
			}
		case inBodyIM:
			b.inBodyEnd(tag, name)
		case inTableIM:
			b.inTableEnd(tag, name)
		case inTableBodyIM:
			done = b.inTableBodyEnd(tag, name)
		case inRowIM:
			done = b.inRowEnd(tag, name)
		case inCellIM:
			done = b.inCellEnd(tag, name)
		case inColumnGroupIM:
			done = b.inColumnGroupEnd(tag, name)
		}
		if done {
			return
		}
	}
}

func (b *builder) inHeadStart(t *token) bool {
	switch t.a {
	case a.Html, a.Template:
		b.fail = true
	case a.Base, a.Basefont, a.Bgsound, a.Link, a.Meta:
		b.addElement(t)
		b.pop()
	case a.Noscript, a.Noframes, a.Style, a.Script, a.Title:
		b.addElement(t) // rawText reads its text and closes it
	case a.Head:
	default:
		b.implied()
		return false
	}
	return true
}

func (b *builder) afterHeadStart(t *token) bool {
	switch t.a {
	case a.Html, a.Frameset, a.Template:
		b.fail = true
	case a.Body:
		b.addElement(t)
		b.im = inBodyIM
	case a.Base, a.Basefont, a.Bgsound, a.Link, a.Meta, a.Noframes, a.Script, a.Style, a.Title:
		// Into the head, out of place.
		b.oe = append(b.oe, b.head)
		b.inHeadStart(t)
		b.oe = remove(b.oe, b.head)
	case a.Head:
	default:
		b.implied()
		return false
	}
	return true
}

// inBodyStart is the in-body mode's start tags, a long switch as the parser's.
func (b *builder) inBodyStart(t *token) bool {
	switch t.a {
	case a.Html, a.Body, a.Frameset, a.Template, a.Plaintext, a.Image, a.Nobr,
		a.Rb, a.Rtc, a.Rp, a.Rt, a.Math:
		b.fail = true
	case a.Base, a.Basefont, a.Bgsound, a.Link, a.Meta, a.Noframes, a.Script, a.Style, a.Title:
		return b.inHeadStart(t)
	case a.Address, a.Article, a.Aside, a.Blockquote, a.Center, a.Details, a.Dialog, a.Dir,
		a.Div, a.Dl, a.Fieldset, a.Figcaption, a.Figure, a.Footer, a.Header, a.Hgroup,
		a.Main, a.Menu, a.Nav, a.Ol, a.P, a.Search, a.Section, a.Summary, a.Ul,
		a.Pre, a.Listing:
		b.popUntil(buttonScope, a.P)
		b.addElement(t)
	case a.H1, a.H2, a.H3, a.H4, a.H5, a.H6:
		b.popUntil(buttonScope, a.P)
		switch b.top().DataAtom {
		case a.H1, a.H2, a.H3, a.H4, a.H5, a.H6:
			b.pop()
		}
		b.addElement(t)
	case a.Form:
		if b.form != nil {
			return true
		}
		b.popUntil(buttonScope, a.P)
		b.addElement(t)
		b.form = b.top()
	case a.Li, a.Dd, a.Dt:
		b.closeItem(t.a)
		b.popUntil(buttonScope, a.P)
		b.addElement(t)
	case a.Table:
		if b.inScope(buttonScope, a.P) {
			b.fail = true // whether it closes the paragraph depends on the quirks mode
			return true
		}
		b.addElement(t)
		b.im = inTableIM
	case a.Caption, a.Col, a.Colgroup, a.Frame, a.Head, a.Tbody, a.Td, a.Tfoot, a.Th, a.Thead, a.Tr:
	default:
		b.inBodyStartInline(t)
	}
	return true
}

// closeItem closes the open list item (li) or definition (dd, dt) a new one of tag
// closes.
func (b *builder) closeItem(tag a.Atom) {
	for i := len(b.oe) - 1; i >= 0; i-- {
		n := b.oe[i]
		switch n.DataAtom {
		case a.Li:
			if tag == a.Li {
				b.oe = b.oe[:i]
				return
			}
		case a.Dd, a.Dt:
			if tag != a.Li {
				b.oe = b.oe[:i]
				return
			}
		case a.Address, a.Div, a.P:
			continue
		}
		if special(n) {
			return
		}
	}
}

// inBodyStartInline is the rest of inBodyStart: the elements that do not close a
// paragraph (but hr and xmp).
func (b *builder) inBodyStartInline(t *token) {
	switch t.a {
	case a.Svg:
		b.svgStart(t)
		return
	case a.Button:
		if b.inScope(defaultScope, a.Button) {
			b.generateImpliedEndTags("")
			b.popUntil(defaultScope, a.Button)
		}
	case a.A:
		for i := len(b.afe) - 1; i >= 0 && b.afe[i] != nil; i-- {
			if n := b.afe[i]; n.DataAtom == a.A {
				b.adoption(a.A, "a")
				b.oe, b.afe = remove(b.oe, n), remove(b.afe, n)
				break
			}
		}
		b.reconstruct()
		b.addFormatting(t)
		return
	case a.B, a.Big, a.Code, a.Em, a.Font, a.I, a.S, a.Small, a.Strike, a.Strong, a.Tt, a.U:
		b.reconstruct()
		b.addFormatting(t)
		return
	case a.Applet, a.Marquee, a.Object:
		b.reconstruct()
		b.addElement(t)
		b.afe = append(b.afe, nil)
		return
	case a.Area, a.Br, a.Embed, a.Img, a.Keygen, a.Wbr, a.Input:
		if t.a == a.Input {
			b.popUntil(defaultScope, a.Select)
		}
		b.reconstruct()
		b.addElement(t)
		b.pop()
		return
	case a.Param, a.Source, a.Track, a.Hr:
		if t.a == a.Hr {
			if b.inScope(buttonScope, a.P) {
				b.generateImpliedEndTags("p")
				b.popUntil(defaultScope, a.P)
			}
			if b.inScope(defaultScope, a.Select) {
				b.generateImpliedEndTags("")
			}
		}
		b.addElement(t)
		b.pop()
		return
	case a.Textarea, a.Iframe, a.Noembed, a.Noscript:
		b.addElement(t) // rawText reads its text and closes it
		return
	case a.Xmp:
		b.popUntil(buttonScope, a.P)
	case a.Select:
		if b.popUntil(defaultScope, a.Select) {
			return
		}
	case a.Option, a.Optgroup:
		if b.inScope(defaultScope, a.Select) {
			if t.a == a.Option {
				b.generateImpliedEndTags("optgroup")
			} else {
				b.generateImpliedEndTags("")
			}
		} else if b.top().DataAtom == a.Option {
			b.pop()
		}
	}
	b.reconstruct()
	b.addElement(t)
}

func (b *builder) inBodyEnd(tag a.Atom, name string) {
	switch tag {
	case a.Body, a.Html:
		// Nothing: what follows is parsed as body content all the same.
	case a.Address, a.Article, a.Aside, a.Blockquote, a.Button, a.Center, a.Details,
		a.Dialog, a.Dir, a.Div, a.Dl, a.Fieldset, a.Figcaption, a.Figure, a.Footer,
		a.Header, a.Hgroup, a.Listing, a.Main, a.Menu, a.Nav, a.Ol, a.Pre, a.Search,
		a.Section, a.Select, a.Summary, a.Ul:
		if b.inScope(defaultScope, tag) {
			b.generateImpliedEndTags("")
			b.popUntil(defaultScope, tag)
		}
	case a.Form:
		node := b.form
		b.form = nil
		if i := b.indexInScope(defaultScope, a.Form); node != nil && i >= 0 && b.oe[i] == node {
			b.generateImpliedEndTags("")
			b.oe = remove(b.oe, node)
		}
	case a.P:
		if !b.inScope(buttonScope, a.P) {
			b.startTag(&token{a: a.P, name: "p"})
		}
		b.popUntil(buttonScope, a.P)
	case a.Li:
		b.popUntil(listItemScope, a.Li)
	case a.Dd, a.Dt:
		b.popUntil(defaultScope, tag)
	case a.H1, a.H2, a.H3, a.H4, a.H5, a.H6:
		b.popUntil(defaultScope, a.H1, a.H2, a.H3, a.H4, a.H5, a.H6)
	case a.A, a.B, a.Big, a.Code, a.Em, a.Font, a.I, a.Nobr, a.S, a.Small, a.Strike, a.Strong, a.Tt, a.U:
		b.adoption(tag, name)
	case a.Applet, a.Marquee, a.Object:
		if b.popUntil(defaultScope, tag) {
			b.clearFormatting()
		}
	case a.Br:
		b.startTag(&token{a: a.Br, name: "br"})
	case a.Template:
		b.fail = true
	default:
		b.endTagOther(tag, name)
	}
}

// adoption is the parser's adoption agency algorithm for the end tag of formatting
// element tag, where no block lies inside the formatting element; buildTree gives up
// on the rest.
func (b *builder) adoption(tag a.Atom, name string) {
	if top := b.top(); top.Data == name && index(b.afe, top) < 0 {
		b.pop()
		return
	}
	var fe *html.Node
	for i := len(b.afe) - 1; i >= 0 && b.afe[i] != nil; i-- {
		if b.afe[i].DataAtom == tag {
			fe = b.afe[i]
			break
		}
	}
	if fe == nil {
		b.endTagOther(tag, name)
		return
	}
	i := index(b.oe, fe)
	if i < 0 {
		b.afe = remove(b.afe, fe)
		return
	}
	if !b.inScope(defaultScope, tag) {
		return
	}
	for _, n := range b.oe[i:] {
		if special(n) {
			b.fail = true
			return
		}
	}
	b.oe = b.oe[:i]
	b.afe = remove(b.afe, fe)
}

// endTagOther closes the element of an end tag that has no rule of its own, unless a
// special element lies above it.
func (b *builder) endTagOther(tag a.Atom, name string) {
	for i := len(b.oe) - 1; i >= 0; i-- {
		n := b.oe[i]
		if n.Namespace == "" && n.DataAtom == tag && (tag != 0 || n.Data == name) {
			b.oe = b.oe[:i]
			return
		}
		if special(n) {
			return
		}
	}
}
