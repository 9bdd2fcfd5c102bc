package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// elem is one element of the page, in document order (preorder): its subtree is the
// elements from its index to end. The counts are of its subtree without what is dropped.
type elem struct {
	n      *html.Node
	parent int32 // index of the parent element, -1 for the root
	end    int32 // index past the last element of the subtree
	depth  int32

	own    int32 // letters and digits of the element's own text nodes
	ownLnk int32 // of which inside links
	ownCom int32 // commas of the element's own text nodes
	text   int32 // letters and digits of the subtree's text
	link   int32 // of which inside links
	commas int32 // commas of the subtree's text, in Latin and CJK scripts
	paras  int32 // paragraph-like elements (p, pre, blockquote...) in the subtree
	imgs   int32 // images in the subtree
	inputs int32 // form controls in the subtree

	class   int8    // class and id weight: -50 to 50
	drop    bool    // left out with its subtree
	okClass bool    // the class or id names content
	scored  bool    // score holds a candidate's score
	score   float32 // content score, as Readability's
}

// tree is a parsed page indexed for extraction. Its slices are reused by nothing: one
// tree per call keeps Extract free of shared state.
type tree struct {
	els     []elem
	body    int32            // index of <body>, or 0
	h1      []int32          // the h1 elements
	classes map[string]words // what each class or id value of the page says
}

// index walks doc once, in preorder, and records its elements, skipping those whose
// content is never text (scripts, styles, embedded media...). It returns the depth of the
// deepest element it keeps, and stops early (returning the depth reached) once that
// exceeds maxDepth.
func (t *tree) index(doc *html.Node, maxDepth int) int {
	deepest := 0
	var walk func(n *html.Node, parent int32, depth int, inLink bool) bool
	walk = func(n *html.Node, parent int32, depth int, inLink bool) bool {
		i := int32(len(t.els))
		t.els = append(t.els, elem{n: n, parent: parent, depth: int32(depth)})
		if depth > deepest {
			deepest = depth
			if deepest > maxDepth {
				return false
			}
		}
		switch n.DataAtom {
		case atom.Body:
			if t.body == 0 {
				t.body = i
			}
		case atom.H1:
			t.h1 = append(t.h1, i)
		case atom.A:
			inLink = true
		}
		var own, link, commas int32
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case html.TextNode:
				k, cm := countText(c.Data)
				own += k
				commas += cm
				if inLink {
					link += k
				}
			case html.ElementNode:
				if ignored(c) {
					continue
				}
				if !walk(c, i, depth+1, inLink) {
					return false
				}
			}
		}
		e := &t.els[i] // not taken earlier: append may have moved it
		e.own, e.ownLnk, e.ownCom = own, link, commas
		e.end = int32(len(t.els))
		e.class = t.classWeight(e)
		return true
	}
	walk(doc, -1, 0, false)
	return deepest
}

// textOf returns the text of n's subtree, unnormalized, without the elements ignored
// leaves out.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				b.WriteString(c.Data)
			case c.Type == html.ElementNode && !ignored(c):
				walk(c)
			}
		}
	}
	walk(n)
	return b.String()
}

// countText returns the number of letters and digits of s, the measure of text every
// density below uses (markup's white space and punctuation count for nothing), and its
// commas.
func countText(s string) (n, commas int32) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			// Without a branch on the byte: most of a page's text bytes are ASCII.
			k := asciiText[c]
			n += int32(k & 1)
			commas += int32(k >> 1)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '，' || r == '、':
			commas++
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			n++
		}
	}
	return n, commas
}

// asciiText classifies the ASCII bytes for countText: 1 for a letter or digit, 2 for a
// comma, 0 for the rest.
var asciiText = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch {
		case c == ',':
			t[c] = 2
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			t[c] = 1
		}
	}
	return t
}()

// ignored reports whether element n holds no text a reader sees: it is left out of the
// index with its subtree.
func ignored(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Iframe, atom.Svg,
		atom.Canvas, atom.Video, atom.Audio, atom.Object, atom.Embed, atom.Textarea,
		atom.Select, atom.Button, atom.Head, atom.Noembed, atom.Noframes:
		return n.Namespace == "" || n.DataAtom == atom.Svg
	}
	if n.Namespace == "math" && (n.Data == "annotation" || n.Data == "annotation-xml") {
		return true // a formula's TeX or content markup repeats its presentation
	}
	if n.DataAtom == atom.A && n.Namespace == "" && permalink(n) {
		return true
	}
	for _, a := range n.Attr {
		switch a.Key {
		case "hidden":
			return true
		case "aria-hidden":
			if a.Val == "true" {
				return true
			}
		case "style":
			if hiddenStyle(a.Val) {
				return true
			}
		}
	}
	return false
}

// permalink reports whether link n is a heading's permalink anchor, as documentation
// generators (Sphinx, MkDocs, Hugo themes) put in every heading: its only content is
// one symbol such as the pilcrow, which would otherwise end every title and section
// heading of the main text.
func permalink(n *html.Node) bool {
	c := n.FirstChild
	if c == nil || c.NextSibling != nil || c.Type != html.TextNode || len(c.Data) > 16 {
		return false
	}
	switch strings.TrimSpace(c.Data) {
	case "¶", "§", "#", "🔗":
		return true
	}
	return false
}

// hiddenStyle reports whether an inline style hides its element.
func hiddenStyle(s string) bool {
	if !strings.Contains(s, "none") && !strings.Contains(s, "hidden") {
		return false
	}
	s = strings.ToLower(strings.ReplaceAll(s, " ", ""))
	return strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden")
}

// sum recomputes the subtree counts, leaving dropped elements out: a parent follows its
// children in reverse preorder, so one backward pass suffices.
func (t *tree) sum() {
	for i := range t.els {
		e := &t.els[i]
		e.text, e.link, e.commas, e.paras, e.imgs, e.inputs = 0, 0, 0, 0, 0, 0
		if e.drop {
			continue
		}
		e.text, e.link, e.commas = e.own, e.ownLnk, e.ownCom
		if e.n.Namespace != "" {
			continue
		}
		switch e.n.DataAtom {
		case atom.Img:
			e.imgs = 1
		case atom.Input, atom.Textarea, atom.Select, atom.Button:
			e.inputs = 1
		case atom.P, atom.Pre, atom.Blockquote:
			e.paras = 1
		}
	}
	for i := len(t.els) - 1; i > 0; i-- {
		e := &t.els[i]
		if e.drop || e.parent < 0 {
			continue
		}
		p := &t.els[e.parent]
		p.text += e.text
		p.link += e.link
		p.commas += e.commas
		p.paras += e.paras
		p.imgs += e.imgs
		p.inputs += e.inputs
	}
}

// boilerplate marks what is dropped whatever the scores: navigation, sidebars, page
// footers and headers, forms, and the elements whose class or id says they are
// comments, share bars, related links, ads, cookie banners and the like. An element
// holding most of the page's text is kept all the same: some sites give the wrapper of
// everything a class such as "has-sidebar".
func (t *tree) boilerplate() {
	total := t.els[t.body].text
	for i := int32(0); i < int32(len(t.els)); i++ {
		e := &t.els[i]
		if e.drop {
			continue
		}
		if !dropTag(t, i) && !negative(e) {
			continue
		}
		if e.n.DataAtom == atom.Body || e.n.DataAtom == atom.Html || e.text*2 > total {
			continue
		}
		for j := i; j < e.end; j++ {
			t.els[j].drop = true
		}
	}
	t.sum()
}

// dropTag reports whether element i is boilerplate by its tag alone.
func dropTag(t *tree, i int32) bool {
	n := t.els[i].n
	if n.Namespace != "" {
		return false
	}
	switch n.DataAtom {
	case atom.Nav, atom.Aside, atom.Form, atom.Dialog, atom.Menu:
		return true
	case atom.Footer, atom.Header:
		// An article's own footer holds its byline and tags, not its text; a page
		// header its navigation. An article's header holds its title, which is Title.
		return true
	}
	return false
}

// outerLevels is how many levels of ancestors of the article's block siblings() looks
// at for prose paragraphs: a table's rows sit three below the section that introduces
// it (section > div > table > tbody).
const outerLevels = 3

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// under reports whether an ancestor of element i is one of tags.
func (t *tree) under(i int32, tags ...atom.Atom) bool {
	for p := t.els[i].parent; p >= 0; p = t.els[p].parent {
		for _, a := range tags {
			if t.els[p].n.DataAtom == a {
				return true
			}
		}
	}
	return false
}
