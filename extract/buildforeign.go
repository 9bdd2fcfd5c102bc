package extract

import (
	"strings"

	"golang.org/x/net/html"
	a "golang.org/x/net/html/atom"
)

// buildTree reads inline SVG, which pages use for icons and logos by the dozen, as
// the parser does when it holds only SVG elements and text, and text-only title and
// desc elements; it gives up on foreignObject, HTML inside SVG and MathML.

// foreign reports whether the current node is SVG content, where start tags and text
// are not parsed by the insertion mode; in an HTML integration point (title, desc) they
// are.
func (b *builder) foreign() bool {
	n := b.top()
	return n.Namespace != "" && !(n.DataAtom == a.Title || n.DataAtom == a.Desc)
}

// svgStart opens an svg element in HTML content.
func (b *builder) svgStart(t *token) {
	if !b.strippedAttrs(t) {
		return
	}
	b.reconstruct()
	b.addElement(t)
	b.top().Namespace = "svg"
	if t.self {
		b.pop()
	}
}

// strippedAttrs reports whether t's attributes are only those stripRaw keeps, none of
// which the parser renames in foreign content; it gives up otherwise.
func (b *builder) strippedAttrs(t *token) bool {
	for _, at := range t.attr {
		if !keptAttr(t.name, at.Key) || at.Key == "href" {
			b.fail = true
			return false
		}
	}
	return true
}

// foreignStart parses start tag t in SVG content.
func (b *builder) foreignStart(t *token) {
	if n := b.top(); n.Namespace != "svg" || breakout(t) || !b.strippedAttrs(t) {
		b.fail = true // MathML, or HTML in SVG
		return
	}
	name := t.name
	if x := svgNames[name]; x != "" {
		name = x
	}
	tag := a.Lookup([]byte(name))
	if tag == a.ForeignObject {
		b.fail = true
		return
	}
	n := b.alloc.node(html.ElementNode, tag, name)
	n.Namespace, n.Attr = "svg", t.attr
	b.addChild(n)
	if t.self {
		b.pop()
	}
}

// foreignEnd parses the end tag name in SVG content: it closes the element of that name
// (in any case) above the nearest HTML element.
func (b *builder) foreignEnd(name string) {
	for i := len(b.oe) - 1; i >= 0; i-- {
		if strings.EqualFold(b.oe[i].Data, name) {
			b.oe = b.oe[:i]
			return
		}
		if i > 0 && b.oe[i-1].Namespace == "" {
			break
		}
	}
	b.fail = true // an HTML end tag in SVG
}

// breakout reports whether start tag t ends SVG content.
func breakout(t *token) bool {
	switch t.a {
	case a.B, a.Big, a.Blockquote, a.Body, a.Br, a.Center, a.Code, a.Dd, a.Div, a.Dl, a.Dt,
		a.Em, a.Embed, a.H1, a.H2, a.H3, a.H4, a.H5, a.H6, a.Head, a.Hr, a.I, a.Img, a.Li,
		a.Listing, a.Menu, a.Meta, a.Nobr, a.Ol, a.P, a.Pre, a.Ruby, a.S, a.Small, a.Span,
		a.Strong, a.Strike, a.Sub, a.Sup, a.Table, a.Tt, a.U, a.Ul, a.Var:
		return true
	case a.Font:
		for _, at := range t.attr {
			if at.Key == "color" || at.Key == "face" || at.Key == "size" {
				return true
			}
		}
	}
	return false
}

// svgNames are the SVG element names the parser restores the case of (the HTML
// standard's table).
var svgNames = map[string]string{
	"altglyph": "altGlyph", "altglyphdef": "altGlyphDef", "altglyphitem": "altGlyphItem",
	"animatecolor": "animateColor", "animatemotion": "animateMotion",
	"animatetransform": "animateTransform", "clippath": "clipPath", "feblend": "feBlend",
	"fecolormatrix": "feColorMatrix", "fecomponenttransfer": "feComponentTransfer",
	"fecomposite": "feComposite", "feconvolvematrix": "feConvolveMatrix",
	"fediffuselighting": "feDiffuseLighting", "fedisplacementmap": "feDisplacementMap",
	"fedistantlight": "feDistantLight", "feflood": "feFlood", "fefunca": "feFuncA",
	"fefuncb": "feFuncB", "fefuncg": "feFuncG", "fefuncr": "feFuncR",
	"fegaussianblur": "feGaussianBlur", "feimage": "feImage", "femerge": "feMerge",
	"femergenode": "feMergeNode", "femorphology": "feMorphology", "feoffset": "feOffset",
	"fepointlight": "fePointLight", "fespecularlighting": "feSpecularLighting",
	"fespotlight": "feSpotLight", "fetile": "feTile", "feturbulence": "feTurbulence",
	"foreignobject": "foreignObject", "glyphref": "glyphRef",
	"lineargradient": "linearGradient", "radialgradient": "radialGradient",
	"textpath": "textPath",
}
