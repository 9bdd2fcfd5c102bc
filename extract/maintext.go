package extract

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// clean marks, inside the article, the containers that look like boilerplate by their
// content, as Readability's conditional cleaning does: lists and blocks mostly of links,
// more images than paragraphs, forms. (Readability's rule against more list items than
// paragraphs outside a list is not kept: it cut list posts and lowered the AEB F1.)
func (t *tree) clean(root int32) {
	for i := root + 1; i < t.els[root].end; i++ {
		e := &t.els[i]
		if e.drop {
			continue
		}
		switch e.n.DataAtom {
		case atom.Div, atom.Section, atom.Ul, atom.Ol, atom.Table, atom.Dl, atom.Figure, atom.Aside, atom.Span:
		default:
			continue
		}
		if !t.junk(e) {
			continue
		}
		for j := i; j < e.end; j++ {
			t.els[j].drop = true
		}
		i = e.end - 1
	}
}

// junk reports whether container e of the article is boilerplate.
func (t *tree) junk(e *elem) bool {
	if e.commas >= 10 {
		return false
	}
	d := density(e)
	list := e.n.DataAtom == atom.Ul || e.n.DataAtom == atom.Ol || e.n.DataAtom == atom.Dl
	switch {
	case e.class < 0:
		return true
	case e.class < 25 && d > 0.2 && !(list && d < 0.5 && e.text >= 200):
		return true
	case d > 0.5:
		return true
	case e.imgs > 1 && float32(e.paras)/float32(e.imgs) < 0.5 && e.text < 200:
		return true
	case e.inputs > e.paras/3 && e.inputs > 0:
		return true
	}
	return false
}

// mainText returns the article's text: the chosen elements' text without the dropped
// ones, one block per line. It detaches the dropped elements from the tree.
func (t *tree) mainText(roots []int32, skipTitle string, sc *scratch) string {
	// The dropped subtrees are detached from the tree, which is this call's own, so
	// that the walk below needs no lookup.
	for _, r := range roots {
		for j := r + 1; j < t.els[r].end; j++ {
			if e := &t.els[j]; e.drop {
				e.n.Parent.RemoveChild(e.n)
				j = e.end - 1
			}
		}
	}
	b := sc.text[:0]
	defer func() { sc.text = b }()
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b = append(b, n.Data...)
			return
		case html.ElementNode:
		default:
			return
		}
		if ignored(n) {
			return
		}
		if skipTitle != "" && (n.DataAtom == atom.H1) && normalize(textOf(n)) == skipTitle {
			return
		}
		sep := separator(n.DataAtom)
		if n.Namespace == "math" {
			// A formula's tokens (mi, mo, mn...) are words: a space between siblings,
			// none around the formula.
			sep = ""
			if n.PrevSibling != nil && n.Data != "math" {
				b = append(b, ' ')
			}
		}
		b = append(b, sep...)
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		b = append(b, sep...)
	}
	for _, r := range roots {
		b = append(b, '\n')
		walk(t.els[r].n)
	}
	return normalizeBytes(b)
}

// title returns the article's title: the first h1 inside the article, else the first
// h1 of the page that the page's declared title (Open Graph's, else <title>) starts
// with or contains, else that declared title.
func (t *tree) title(roots []int32, ogTitle, pageTitle string) string {
	declared := ogTitle
	if declared == "" {
		declared = pageTitle
	}
	for _, h := range t.h1 {
		for _, r := range roots {
			if t.contains(r, h) && !t.els[h].drop {
				if s := normalize(textOf(t.els[h].n)); s != "" {
					return s
				}
			}
		}
	}
	for _, h := range t.h1 {
		if s := normalize(textOf(t.els[h].n)); s != "" && strings.Contains(declared, s) {
			return s
		}
	}
	return declared
}

// author returns the text of the first element marked as the author's name
// (itemprop="author", rel="author", or a class "author") outside navigation and
// sidebars, when it is short enough to be a name.
func (t *tree) author() string {
	for i := range t.els {
		n := t.els[i].n
		if !(attr(n, "itemprop") == "author" || hasWord(attr(n, "rel"), "author") || hasWord(attr(n, "class"), "author")) {
			continue
		}
		if t.under(int32(i), atom.Aside, atom.Nav) {
			continue
		}
		if s := normalize(textOf(n)); s != "" && utf8.RuneCountInString(s) <= 60 {
			return s
		}
	}
	return ""
}
