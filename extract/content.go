package extract

import (
	"slices"
	"strings"
	"sync"
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

// textOf returns the text of n's subtree, unnormalized.
func textOf(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

// countText returns the number of letters and digits of s, the measure of text every
// density below uses (markup's white space and punctuation count for nothing), and its
// commas.
func countText(s string) (n, commas int32) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == ',':
				commas++
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
				n++
			}
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

// Class and id words, as Readability (Mozilla) and trafilatura weigh them: a word in
// positiveWords marks where articles are, one in negativeWords or negativeTokens where
// boilerplate is.
var (
	positiveWords  = []string{"article", "body", "content", "entry", "hentry", "main", "page", "post", "text", "blog", "story", "prose", "markdown"}
	negativeWords  = []string{"comment", "sidebar", "share", "sharing", "social", "related", "footer", "foot", "masthead", "banner", "advert", "sponsor", "promo", "outbrain", "taboola", "newsletter", "subscribe", "subscription", "signup", "cookie", "consent", "gdpr", "popup", "modal", "widget", "breadcrumb", "pagination", "pager", "menu", "navbar", "navigation", "toolbar", "byline", "author", "tags", "recommend", "disqus", "shoutbox", "skyscraper", "caption", "credit", "meta", "hidden", "print", "skip", "rss", "contact", "login", "register", "share", "trending", "most-read", "mostread", "more-stories", "readmore", "read-more"}
	negativeTokens = map[string]bool{"ad": true, "ads": true, "nav": true, "header": true, "tag": true, "toc": true, "follow": true, "date": true, "time": true}
)

// words is what a class or id value says: boilerplate (neg), content (pos), or both.
type words struct{ neg, pos bool }

// classWeight returns n's class and id weight, as Readability's: for each of the class
// and the id, -25 when it names boilerplate and 25 when it names content. It sets
// e.okClass when either names content. Values are looked up once per page: a page
// repeats a few hundred class values over thousands of elements.
func (t *tree) classWeight(e *elem) int8 {
	var w int8
	for _, a := range e.n.Attr {
		if (a.Key != "class" && a.Key != "id") || a.Val == "" {
			continue
		}
		c, ok := t.classes[a.Val]
		if !ok {
			c.neg, c.pos = classWords(strings.ToLower(a.Val))
			t.classes[a.Val] = c
		}
		if c.neg {
			w -= 25
		}
		if c.pos {
			w += 25
			e.okClass = true
		}
	}
	return w
}

// stem is a class word and which list it is in.
type stem struct {
	word string
	neg  bool
}

// stemIndex maps the first three letters of each class word to the words: matching a
// value then costs one lookup per byte, where trying every word cost one search each.
var stemIndex = sync.OnceValue(func() map[[3]byte][]stem {
	m := make(map[[3]byte][]stem)
	for _, list := range []struct {
		words []string
		neg   bool
	}{{positiveWords, false}, {negativeWords, true}} {
		for _, w := range list.words {
			k := [3]byte{w[0], w[1], w[2]}
			m[k] = append(m[k], stem{w, list.neg})
		}
	}
	return m
})

// classWords reports whether the lower-case class or id value v contains a word of
// negativeWords or a token of negativeTokens (neg), and a word of positiveWords (pos).
func classWords(v string) (neg, pos bool) {
	idx := stemIndex()
	for i := 0; i+3 <= len(v); i++ {
		for _, s := range idx[[3]byte{v[i], v[i+1], v[i+2]}] {
			if strings.HasPrefix(v[i:], s.word) {
				if s.neg {
					neg = true
				} else {
					pos = true
				}
			}
		}
	}
	if !neg {
		for f := range strings.FieldsFuncSeq(v, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
			if negativeTokens[f] {
				return true, pos
			}
		}
	}
	return neg, pos
}

// negative reports whether e's class or id names boilerplate and nothing that also
// names content (Readability's "okMaybeItsACandidate"): an element of class
// "article-comments" is dropped, one of class "main-content sidebar-left" is not, nor an
// article or main element, whatever its classes (WordPress gives posts a class per tag,
// "tag-news").
func negative(e *elem) bool {
	return e.class < 0 && !e.okClass && e.n.DataAtom != atom.Article && e.n.DataAtom != atom.Main
}

// scoreCandidates returns the index of the element that holds the main text, by Readability's
// scoring: every paragraph-like element of 25 or more characters gives 1, plus its
// commas, plus one per 100 characters (at most 3) to its parent, half that to its
// grandparent and a third of it per level to the three above; a candidate starts from
// its tag's and class's weight; its score is then multiplied by the share of its text
// outside links. It returns -1 when no element qualifies.
func (t *tree) scoreCandidates() int32 {
	for i := range t.els {
		e := &t.els[i]
		if e.drop {
			continue
		}
		// A paragraph gives its score to its parent. An element that holds text of its
		// own among other elements (a div with its paragraphs' text run in, separated
		// by <br>) is scored as Readability scores it after wrapping those runs in
		// paragraphs: it is their parent.
		p, text, commas := e.parent, e.text, e.commas
		if !paragraph(e) {
			p, text, commas = int32(i), e.own, e.ownCom
		}
		if text < 25 {
			continue
		}
		s := 1 + float32(commas) + float32(min(text/100, 3))
		level := 0
		for p >= 0 && level < 5 {
			q := &t.els[p]
			if q.n.Type == html.ElementNode && q.n.DataAtom != atom.Html {
				if !q.scored {
					q.scored, q.score = true, initialScore(q)
				}
				switch level {
				case 0:
					q.score += s
				case 1:
					q.score += s / 2
				default:
					q.score += s / float32(level*3)
				}
			}
			p, level = q.parent, level+1
		}
	}
	best := int32(-1)
	for i := range t.els {
		e := &t.els[i]
		if !e.scored || e.drop {
			continue
		}
		e.score *= 1 - density(e)
		if best < 0 || e.score > t.els[best].score {
			best = int32(i)
		}
	}
	return best
}

// paragraph reports whether e is a unit of text: a p, pre, td, blockquote, list item or
// definition.
func paragraph(e *elem) bool {
	switch e.n.DataAtom {
	case atom.P, atom.Pre, atom.Td, atom.Blockquote, atom.Li, atom.Dd:
		return e.n.Namespace == ""
	}
	return false
}

// initialScore is a candidate's score before its paragraphs': Readability's weights of
// its tag, and of its class and id.
func initialScore(e *elem) float32 {
	s := float32(e.class)
	switch e.n.DataAtom {
	case atom.Div, atom.Article, atom.Main, atom.Section:
		s += 5
	case atom.Pre, atom.Td, atom.Blockquote:
		s += 3
	case atom.Address, atom.Ol, atom.Ul, atom.Dl, atom.Dd, atom.Dt, atom.Li, atom.Form:
		s -= 3
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Th:
		s -= 5
	}
	return s
}

// density is e's link density: the share of its text inside links.
func density(e *elem) float32 {
	if e.text == 0 {
		return 0
	}
	return float32(e.link) / float32(e.text)
}

// contains reports whether element j is in the subtree of element i.
func (t *tree) contains(i, j int32) bool { return i <= j && j < t.els[i].end }

// refine moves the top candidate up to the element that holds it with its peers, as
// Readability does: when three of the candidates scoring at least 3/4 of the top one lie
// under a common ancestor, the article is that ancestor (its paragraphs are split among
// sibling containers); and an element whose parent holds no other text gives way to it,
// unless the parent's class names boilerplate, so that the article's sections, siblings
// of its parent, are weighed too.
func (t *tree) refine(top int32) int32 {
	var alts []int32
	for i := range t.els {
		e := &t.els[i]
		if e.scored && !e.drop && int32(i) != top && e.score >= 0.75*t.els[top].score {
			alts = append(alts, int32(i))
		}
	}
	if len(alts) >= 3 {
		for p := t.els[top].parent; p >= 0 && p != t.body; p = t.els[p].parent {
			k := 0
			for _, a := range alts {
				if t.contains(p, a) {
					k++
				}
			}
			if k >= 3 {
				top = p
				break
			}
		}
	}
	for {
		p := t.els[top].parent
		if p < 0 || p == t.body || t.els[p].text != t.els[top].text || t.els[p].class < 0 {
			return top
		}
		top = p
	}
}

// siblings returns the elements whose text is the article: the top candidate and those
// of its siblings that score at least a fifth of it, or are paragraphs of prose
// (Readability's rule).
func (t *tree) siblings(top int32) []int32 {
	p := t.els[top].parent
	if p < 0 {
		return []int32{top}
	}
	threshold := max(10, t.els[top].score*0.2)
	var out []int32
	for c := p + 1; c < t.els[p].end; c = t.els[c].end {
		e := &t.els[c]
		if e.drop {
			continue
		}
		if c == top {
			out = append(out, c)
			continue
		}
		bonus := float32(0)
		if sameClass(e.n, t.els[top].n) {
			bonus = t.els[top].score * 0.2
		}
		ok := e.scored && e.score+bonus >= threshold
		if !ok && e.n.DataAtom == atom.P {
			d := density(e)
			ok = e.text > 80 && d < 0.25 || e.text > 0 && d == 0 && strings.Contains(textOf(e.n), ". ")
		}
		if ok {
			out = append(out, c)
		}
	}
	// The prose paragraphs just outside: an introduction written before the block the
	// scores chose (a table, a list), which Readability's siblings do not reach.
	var before, after []int32
	for a := p; a >= 0 && a != t.body && int(t.els[p].depth-t.els[a].depth) < outerLevels; a = t.els[a].parent {
		gp := t.els[a].parent
		if gp < 0 || gp == t.body {
			break
		}
		for c := gp + 1; c < t.els[gp].end; c = t.els[c].end {
			e := &t.els[c]
			if c == a || e.drop || e.n.DataAtom != atom.P || !(e.text > 80 && density(e) < 0.25) {
				continue
			}
			if c < a {
				before = append(before, c)
			} else {
				after = append(after, c)
			}
		}
	}
	slices.Sort(before)
	slices.Sort(after)
	return slices.Concat(before, out, after)
}

// outerLevels is how many levels of ancestors of the article's block siblings() looks
// at for prose paragraphs: a table's rows sit three below the section that introduces
// it (section > div > table > tbody).
const outerLevels = 3

func sameClass(a, b *html.Node) bool {
	ca, cb := attr(a, "class"), attr(b, "class")
	return ca != "" && ca == cb
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

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
func (t *tree) mainText(roots []int32, skipTitle string) string {
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
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
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
				b.WriteByte(' ')
			}
		}
		b.WriteString(sep)
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		b.WriteString(sep)
	}
	for _, r := range roots {
		b.WriteByte('\n')
		walk(t.els[r].n)
	}
	return normalize(b.String())
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
