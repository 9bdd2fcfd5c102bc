package extract

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Defaults of the Options fields left zero.
const (
	// DefaultMaxBytes is the largest page Extract and VisibleText accept, 8 MiB: about 50
	// times a typical article page, and a few hundred milliseconds of extraction.
	DefaultMaxBytes = 8 << 20
	// DefaultMaxDepth is the deepest nesting of elements Extract accepts, the limit of the
	// HTML parser (golang.org/x/net/html) itself.
	DefaultMaxDepth = 512
	// DefaultTimeout is Extract's time budget per page: a median article page takes about
	// 5 ms, and extraction time grows linearly, to about 3 s for 8 MiB of dense paragraphs,
	// so the default only stops pathological pages or an overloaded machine.
	DefaultTimeout = 5 * time.Second
)

// minText is the length, in characters, under which Extract prefers the page's visible
// text to the extractor's: go-trafilatura returns so little only from its last resort,
// the text of the whole page, run together (no break between paragraphs or table cells,
// the <title> mixed in), which VisibleText does better.
const minText = 100

// Methods: which path produced Result.Text.
const (
	// MethodTrafilatura is the main-content extractor, go-trafilatura.
	MethodTrafilatura = "trafilatura"
	// MethodVisibleText is the whole page's visible text (VisibleText), used when the
	// extractor finds less than 100 characters.
	MethodVisibleText = "visible-text"
)

// Options tunes Extract and VisibleText. The zero value means the defaults documented on
// each field; an Options is only read, so one value can be shared by concurrent calls.
type Options struct {
	// MaxBytes is the largest page accepted, in bytes; a longer one is refused with
	// ErrTooLarge before any work. 0 or less means DefaultMaxBytes.
	MaxBytes int
	// MaxDepth is the deepest nesting of elements accepted; a deeper page is refused with
	// ErrTooDeep. 0 or less means DefaultMaxDepth, and so does anything above it, which
	// the parser refuses anyway.
	MaxDepth int
	// Timeout is Extract's time budget for one page; past it Extract returns ErrTimeout.
	// 0 means DefaultTimeout; a negative value means no budget: the page is extracted in
	// the caller's goroutine, however long it takes.
	Timeout time.Duration
	// ContentType is the page's HTTP Content-Type header, if known, such as
	// "text/html; charset=iso-8859-1". Its charset overrides the page's <meta> tags (a
	// byte order mark still overrides it), as in browsers.
	ContentType string
	// URL is the page's address, if known. It completes relative links in the metadata
	// and is Result.URL when the page names no canonical URL. One that is not an
	// absolute http(s) URL is ignored.
	URL string
	// NoFallback disables the visible-text fallback: Extract returns the extractor's
	// text even when it has fewer than 100 characters, or none, instead of the page's
	// visible text.
	NoFallback bool
}

// read checks page against the size limit and for binary content (ErrTooLarge,
// ErrBinary), then decodes it: its text, valid UTF-8, and the name of its encoding.
func (o *Options) read(page []byte) (s, name string, err error) {
	maxBytes := o.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if len(page) > maxBytes {
		return "", "", fmt.Errorf("%w: %d bytes, more than the limit of %d; raise MaxBytes (--max-bytes) to read it", ErrTooLarge, len(page), maxBytes)
	}
	if err := checkBinary(page, o.ContentType); err != nil {
		return "", "", err
	}
	s, name = decode(page, o.ContentType)
	return s, name, nil
}

// Result is what Extract finds in a page. Every string is valid UTF-8 and normalized:
// white space collapsed and trimmed, Text's paragraphs separated by "\n". Metadata fields
// are empty when the page does not give them.
type Result struct {
	Title       string // the article's title (else the page's <title>)
	Text        string // the main text
	Author      string
	Date        string // publication date, YYYY-MM-DD
	Description string
	SiteName    string
	Language    string // ISO 639-1 code, detected from Text or declared by <html lang>
	URL         string // canonical URL, else Options.URL
	Charset     string // the encoding the page was read in, as WHATWG names it ("utf-8", "windows-1252")
	Method      string // which path produced Text: MethodTrafilatura or MethodVisibleText
}

// Extract returns the main text of an HTML page, without its navigation, headers,
// footers, ads, comments and cookie banners, with its title and metadata. It decodes the
// page from its character set, extracts with go-trafilatura, and falls back to the
// page's visible text when the extractor finds less than 100 characters (unless
// opts.NoFallback).
//
// Its errors are ErrTooLarge, ErrBinary, ErrTooDeep and ErrTimeout, wrapped with the
// figures; a text page that is not HTML, or broken HTML, is read as a browser would read
// it. Extract does not keep page after it returns, even on ErrTimeout. It is safe for
// concurrent use. Its cost is a few milliseconds for a typical article page and grows
// about linearly with the page's size; see the package Caveats for ErrTimeout.
func Extract(page []byte, opts Options) (Result, error) {
	start := time.Now()
	s, name, err := opts.read(page) // s is a copy: the worker below never sees page
	if err != nil {
		return Result{}, err
	}
	if opts.Timeout < 0 {
		r, err := extract(s, &opts, time.Time{})
		r.Charset = name
		return r, err
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	deadline := start.Add(timeout)
	type outcome struct {
		r   Result
		err error
	}
	done := make(chan outcome, 1) // buffered: an abandoned worker still finishes its send
	go func() {
		r, err := extract(s, &opts, deadline)
		done <- outcome{r, err}
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case o := <-done:
		if !errors.Is(o.err, ErrTimeout) {
			o.r.Charset = name
			return o.r, o.err
		}
	case <-timer.C:
	}
	return Result{}, fmt.Errorf("%w: no result after %v; raise Timeout (--timeout), or use VisibleText for this page", ErrTimeout, timeout)
}

// extract does Extract's work on the decoded page s. It gives up with ErrTimeout, between
// steps, once the deadline (if not zero) has passed: nobody waits for its result then,
// and a result cut short must not be returned should Extract still be waiting.
func extract(s string, opts *Options, deadline time.Time) (r Result, err error) {
	late := func() bool { return !deadline.IsZero() && time.Now().After(deadline) }
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		// For a reader that cannot fail, the parser's only error is its nesting limit.
		return Result{}, fmt.Errorf("%w: %v", ErrTooDeep, err)
	}
	maxDepth := opts.MaxDepth
	if maxDepth <= 0 || maxDepth > DefaultMaxDepth {
		maxDepth = DefaultMaxDepth
	}
	if d := prune(doc); d > maxDepth {
		return Result{}, fmt.Errorf("%w: elements nested %d deep, more than the limit of %d; raise MaxDepth (at most %d)", ErrTooDeep, d, maxDepth, DefaultMaxDepth)
	}
	if late() {
		return Result{}, ErrTimeout
	}
	lang := declaredLanguage(doc)
	r, ok := trafilaturaExtract(doc, opts)
	if late() {
		return Result{}, ErrTimeout
	}
	if (ok && utf8.RuneCountInString(r.Text) >= minText) || opts.NoFallback {
		return r, nil
	}
	text, title := visibleText(s)
	if r.Title == "" {
		r.Title = title
	}
	// The extractor's language was detected from its own scrap of text; the page's
	// declaration is more trustworthy.
	r.Text, r.Method, r.Language = text, MethodVisibleText, lang
	return r, nil
}

// declaredLanguage returns the primary language subtag of the lang attribute of doc's
// <html> element, lower case ("pt" for lang="pt-BR"), or "".
func declaredLanguage(doc *html.Node) string {
	for n := doc.FirstChild; n != nil; n = n.NextSibling {
		if n.Type != html.ElementNode || n.DataAtom != atom.Html {
			continue
		}
		for _, a := range n.Attr {
			if a.Key == "lang" {
				tag, _, _ := strings.Cut(strings.TrimSpace(a.Val), "-")
				return normalize(strings.ToLower(tag))
			}
		}
	}
	return ""
}

// trafilaturaExtract runs go-trafilatura on doc, which it changes. ok is false when the
// extractor failed (or panicked: it is not this package's code, and a panic in Extract's
// worker goroutine could not be recovered by the caller).
func trafilaturaExtract(doc *html.Node, opts *Options) (r Result, ok bool) {
	defer func() {
		if recover() != nil {
			r, ok = Result{}, false
		}
	}()
	// Comments are not part of Result, so go-trafilatura need not extract them; it then
	// also detects the language from the main text always, never from longer comments.
	topts := trafilatura.Options{HtmlDateMode: trafilatura.Fast, ExcludeComments: true}
	if u, err := url.Parse(opts.URL); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		topts.OriginalURL = u
	}
	res, err := trafilatura.ExtractDocument(doc, topts)
	if err != nil || res == nil {
		return Result{}, false
	}
	m := res.Metadata
	r = Result{
		Title:       normalize(m.Title),
		Text:        nodeText(res.ContentNode),
		Author:      normalize(m.Author),
		Description: normalize(m.Description),
		SiteName:    normalize(m.Sitename),
		Language:    normalize(m.Language),
		URL:         normalize(m.URL),
		Method:      MethodTrafilatura,
	}
	if strings.Join(strings.Fields(r.Text), "") != strings.Join(strings.Fields(res.ContentText), "") {
		// go-trafilatura's last resorts can leave in ContentNode what it did not keep in
		// ContentText; the text is what it chose.
		r.Text = normalize(res.ContentText)
	}
	if !m.Date.IsZero() {
		r.Date = m.Date.Format(time.DateOnly)
	}
	return r, true
}

// nodeText returns the normalized text of the extractor's content tree n, with a line
// break around each block: go-trafilatura's own ContentText puts every paragraph on one
// line, and a space between inline elements ("<b>H</b>ello" gives "H ello").
func nodeText(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) { // recursion is bounded: the tree is at most MaxDepth deep
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
		default:
			return
		}
		sep := "\n"
		switch n.Data {
		case "hi", "ref", "del", "code", "a", "abbr", "b", "cite", "em", "i", "mark", "q", "s", "small", "span", "strong", "sub", "sup", "u":
			sep = "" // inline elements, in trafilatura's names (hi, ref) and HTML's
		case "cell":
			sep = " "
		}
		b.WriteString(sep)
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		b.WriteString(sep)
	}
	if n != nil {
		walk(n)
	}
	return normalize(b.String())
}

// prune removes from doc what no extractor reads: comments; script, style and noscript
// elements other than JSON-LD scripts, which carry metadata; the head's white space and
// the links that only load resources; and the navigation, sidebar, footer, form-control,
// embedded-media and drawing elements that go-trafilatura deletes before it looks for the
// main text (see dropped). It returns the depth of the deepest element, measured without
// recursion. Fewer nodes make the extractor's copies and walks of the tree cheaper: prune
// removes 47% of the AEB pages' nodes, scripts, styles and comments alone 7%.
//
// go-trafilatura still reads the whole tree for metadata, and for its last resort when
// the cleaned tree has too little text; without these elements its author is less often
// a name from a sidebar, and that last resort keeps less navigation. Forms stay, although
// go-trafilatura deletes them too: some sites wrap the whole page in one, and the last
// resort is then what finds their text. So do an article's own footers, which often hold
// its author and date.
func prune(doc *html.Node) int {
	deepest, depth := 0, 0
	for n := doc; n != nil; {
		next := n.FirstChild
		if unwanted(n) {
			next = nil
		}
		if next != nil {
			depth++
			deepest = max(deepest, depth)
		} else {
			// Climb until a node has a next sibling, removing n if it is unwanted.
			for next == nil && n != nil {
				next = n.NextSibling
				parent := n.Parent // RemoveChild clears it
				if unwanted(n) {
					parent.RemoveChild(n)
				}
				if next == nil {
					n = parent
					depth--
				}
			}
		}
		n = next
	}
	return deepest
}

func unwanted(n *html.Node) bool {
	switch {
	case n.Type == html.CommentNode:
		return true
	case n.Type == html.TextNode:
		// The white space between the head's elements; the head's text is never read.
		return n.Parent != nil && n.Parent.DataAtom == atom.Head && strings.TrimLeft(n.Data, " \t\n\f\r") == ""
	case n.Type != html.ElementNode:
		return false
	case n.DataAtom == atom.Link:
		return resourceLink(n)
	case n.DataAtom == atom.Script:
		for _, a := range n.Attr {
			if a.Key == "type" && strings.EqualFold(strings.TrimSpace(a.Val), "application/ld+json") {
				return false
			}
		}
		return true
	case n.DataAtom == atom.Style, n.DataAtom == atom.Noscript:
		return true
	case n.DataAtom == atom.Footer:
		for p := n.Parent; p != nil; p = p.Parent {
			if p.DataAtom == atom.Article {
				return false
			}
		}
		return true
	}
	return dropped[n.DataAtom]
}

// resourceLink reports whether the link element n only loads a resource (a stylesheet, an
// icon, a hint to preload): a link go-trafilatura reads for metadata has a rel such as
// canonical, alternate, author or me.
func resourceLink(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Key != "rel" {
			continue
		}
		rels := strings.Fields(strings.ToLower(a.Val))
		for _, r := range rels {
			switch r {
			case "stylesheet", "preload", "prefetch", "preconnect", "dns-prefetch", "modulepreload", "icon", "shortcut", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon", "manifest":
			default:
				return false
			}
		}
		return len(rels) > 0
	}
	return false
}

// dropped holds the elements of go-trafilatura's cleaning list (tagsToClean) that hold
// neither metadata nor, on some sites, the only text: not head, form, figure (a figure
// holding a table is kept as text) or time; links and footers are dropped only in part
// (see resourceLink and unwanted).
var dropped = map[atom.Atom]bool{
	atom.Nav: true, atom.Aside: true,
	atom.Button: true, atom.Select: true, atom.Iframe: true, atom.Template: true,
	atom.Svg: true, atom.Math: true, atom.Canvas: true, atom.Picture: true,
	atom.Video: true, atom.Audio: true, atom.Object: true, atom.Embed: true,
}
