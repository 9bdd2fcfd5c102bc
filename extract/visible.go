package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// VisibleText returns the text of the whole page as a browser without scripts would show
// it, normalized as Result.Text is: the content of script, style, noscript, template,
// iframe, textarea and title elements and comments are left out, tags are stripped,
// entities decoded, and block elements (paragraphs, headings, list items, table rows,
// line breaks...) end lines. It keeps boilerplate: it is Extract's fallback and a
// baseline.
//
// VisibleText reads the page in one pass, as the HTML tokenizer reads it but without it
// for nearly all pages (visibleFast), building no tree, so its time is linear in the
// page's size and nesting cannot slow it: of opts it uses only
// MaxBytes and ContentType, and its only errors are ErrTooLarge and ErrBinary; MaxDepth
// and Timeout do not apply. It does not keep page, and is safe for concurrent use.
func VisibleText(page []byte, opts Options) (string, error) {
	s, _, err := opts.read(page)
	if err != nil {
		return "", err
	}
	text, _ := visibleText(s)
	return text, nil
}

// visibleText returns the normalized visible text of page, which is valid UTF-8, and the
// text of its first title element. Pages whose markup visibleFast reads as the tokenizer
// does, nearly all, are read by it; the rest by visibleTokens.
func visibleText(page string) (text, title string) {
	if text, title, ok := visibleFast(page); ok {
		return text, title
	}
	return visibleTokens(page)
}

// visibleTokens is visibleText by the HTML tokenizer: the definition of the visible
// text, for every page.
func visibleTokens(page string) (text, title string) {
	z := html.NewTokenizer(strings.NewReader(page))
	var b strings.Builder
	b.Grow(len(page) / 4)
	var skip atom.Atom // the element whose content is being skipped
	depth := 0         // how many skip elements are open (templates nest)
	for {
		switch z.Next() {
		case html.ErrorToken:
			return normalize(b.String()), normalize(title)
		case html.TextToken:
			if skip == atom.Title && title == "" {
				title = string(z.Text())
			}
			if skip == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			a := tagAtom(z.Raw())
			if skip != 0 {
				if a == skip {
					depth++
				}
				continue
			}
			if skipped(a) {
				skip, depth = a, 1
				continue
			}
			b.WriteString(separator(a))
		case html.EndTagToken:
			a := tagAtom(z.Raw())
			if skip != 0 {
				if a == skip {
					if depth--; depth == 0 {
						skip = 0
					}
				}
				continue
			}
			b.WriteString(separator(a))
		}
	}
}

// tagAtom returns the atom of the tag token whose raw bytes are raw ("<name ..." or
// "</name ..."): what atom.Lookup returns for the tokenizer's TagName, without its copy
// of the name (TagName replaces NUL bytes into a new slice for every tag). The name ends, as the tokenizer reads it, at white space, "/"
// or ">"; names longer than any atom's are 0, and so is one with a NUL, which TagName
// turns into U+FFFD, in no atom either. FuzzTagAtom holds it to TagName.
func tagAtom[T string | []byte](raw T) atom.Atom {
	i := 1
	if len(raw) > 1 && raw[1] == '/' {
		i = 2
	}
	var buf [32]byte // longer than any atom (atom.Lookup's table tops at 25 bytes)
	n := 0
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '/' || c == '>' {
			break
		}
		if n == len(buf) {
			return 0
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return atom.Lookup(buf[:n])
}

// skipped reports whether the content of element a is not shown. Except for template,
// these are elements whose content the tokenizer returns as one text token (raw text), so
// an unclosed one cannot hide more of the page than a browser would.
func skipped(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Iframe, atom.Textarea,
		atom.Title, atom.Noembed, atom.Noframes, atom.Xmp:
		return true
	}
	return false
}

// separator returns what a start or end tag of element a stands for in text: a line
// break for block elements, a space for table cells, nothing for inline elements.
func separator(a atom.Atom) string {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body, atom.Br,
		atom.Caption, atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Dir, atom.Div,
		atom.Dl, atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer,
		atom.Form, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Header,
		atom.Hgroup, atom.Hr, atom.Legend, atom.Li, atom.Main, atom.Menu, atom.Nav,
		atom.Ol, atom.Option, atom.P, atom.Pre, atom.Section, atom.Summary, atom.Table,
		atom.Tr, atom.Ul:
		return "\n"
	case atom.Td, atom.Th:
		return " "
	}
	return ""
}
