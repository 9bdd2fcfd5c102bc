package extract

import (
	"slices"
	"strings"
	"sync"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

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

func sameClass(a, b *html.Node) bool {
	ca, cb := attr(a, "class"), attr(b, "class")
	return ca != "" && ca == cb
}
