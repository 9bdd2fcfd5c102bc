package extract

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
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
	// 1 ms, and extraction time grows linearly, to about 2 s for 8 MiB of dense paragraphs
	// on a loaded machine, so the default only stops pathological pages or an overloaded
	// machine.
	DefaultTimeout = 5 * time.Second
)

// minText is the length, in characters, under which Extract prefers the page's visible
// text to the extractor's: so little text is a page the scores could not read (a page of
// links, a form, a single-page application's shell), and its visible text at least
// tells it apart from other pages.
const minText = 100

// titledText is the length, in characters, under which Extract's main text starts with
// the title.
const titledText = 300

// Methods: which path produced Result.Text.
const (
	// MethodMain is the main-content extractor of this package.
	MethodMain = "main"
	// MethodTrafilatura is MethodMain's former name, from when the extractor was
	// go-trafilatura.
	//
	// Deprecated: use MethodMain.
	MethodTrafilatura = MethodMain
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
	Language    string // ISO 639-1 code, as <html lang> declares it
	URL         string // canonical URL, else Options.URL
	Charset     string // the encoding the page was read in, as WHATWG names it ("utf-8", "windows-1252")
	Method      string // which path produced Text: MethodMain or MethodVisibleText
}

// Extract returns the main text of an HTML page, without its navigation, headers,
// footers, ads, comments and cookie banners, with its title and metadata. It decodes the
// page from its character set, extracts the main text with this package's algorithm
// (see the package doc), and falls back to the page's visible text when it finds less
// than 100 characters (unless opts.NoFallback). A main text under 300 characters starts
// with the title.
//
// Its errors are ErrTooLarge, ErrBinary, ErrTooDeep and ErrTimeout, wrapped with the
// figures; a text page that is not HTML, or broken HTML, is read as a browser would read
// it. Extract does not keep page after it returns, even on ErrTimeout. It is safe for
// concurrent use. Its cost is about a millisecond for a typical article page (one parse
// of the page and a few linear passes over its elements) and grows linearly with the
// page's size; see the package Caveats for ErrTimeout.
func Extract(page []byte, opts Options) (Result, error) {
	start := time.Now()
	s, name, err := opts.read(page) // s is a copy: the worker below never sees page
	if err != nil {
		return Result{}, err
	}
	return run(s, name, &opts, start)
}

// ExtractVisible returns what Extract and VisibleText return for page, reading and
// decoding the page once, and reading its visible text once even when Extract falls
// back to it. On nearly every page the visible text is read in the same pass as the
// page's tree, within opts.Timeout; on the others it is read on its own, as VisibleText
// reads it. It is returned whenever the page could be read: with ErrTimeout and
// ErrTooDeep too (read after the fact then), not with ErrTooLarge or ErrBinary. It is
// safe for concurrent use.
func ExtractVisible(page []byte, opts Options) (r Result, visible string, err error) {
	s, name, err := opts.read(page)
	if err != nil {
		return Result{}, "", err
	}
	r, vis, err := runVisible(s, name, &opts, time.Now(), true)
	if vis == nil {
		vis = new(visibleResult)
		vis.text, vis.title = visibleText(s)
	}
	return r, vis.text, err
}

// visibleResult is visibleText's result for a page.
type visibleResult struct{ text, title string }

// run does Extract's work on s, the page decoded from the encoding called name, within
// opts.Timeout from start.
func run(s, name string, opts *Options, start time.Time) (Result, error) {
	r, _, err := runVisible(s, name, opts, start, false)
	return r, err
}

// runVisible is run, which also returns the page's visible text when visible is true
// and it was read on the way (nil otherwise).
func runVisible(s, name string, opts *Options, start time.Time, visible bool) (Result, *visibleResult, error) {
	if opts.Timeout < 0 {
		r, vis, err := extract(s, opts, time.Time{}, visible)
		r.Charset = name
		return r, vis, err
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	deadline := start.Add(timeout)
	type outcome struct {
		r   Result
		vis *visibleResult
		err error
	}
	done := make(chan outcome, 1) // buffered: an abandoned worker still finishes its send
	go func() {
		r, vis, err := extract(s, opts, deadline, visible)
		done <- outcome{r, vis, err}
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case o := <-done:
		if !errors.Is(o.err, ErrTimeout) {
			o.r.Charset = name
			return o.r, o.vis, o.err
		}
	case <-timer.C:
	}
	return Result{}, nil, fmt.Errorf("%w: no result after %v; raise Timeout (--timeout), or use VisibleText for this page", ErrTimeout, timeout)
}

// extract does Extract's work on the decoded page s, and returns the page's visible
// text too when visible is true and it was read on the way or needed. It gives up with
// ErrTimeout, between steps, once the deadline (if not zero) has passed: nobody waits
// for its result then, and a result cut short must not be returned should Extract still
// be waiting.
func extract(s string, opts *Options, deadline time.Time, visible bool) (r Result, vis *visibleResult, err error) {
	late := func() bool { return !deadline.IsZero() && time.Now().After(deadline) }
	sc := getScratch()
	defer sc.put()
	doc, vis, err := parse(s, visible, sc)
	if err != nil {
		return Result{}, nil, err
	}
	maxDepth := opts.MaxDepth
	if maxDepth <= 0 || maxDepth > DefaultMaxDepth {
		maxDepth = DefaultMaxDepth
	}
	t := &tree{els: slices.Grow(sc.els[:0], len(s)/64), classes: make(map[string]words)}
	defer func() { sc.els = t.els }()
	if d := t.index(doc, maxDepth); d > maxDepth {
		return Result{}, vis, fmt.Errorf("%w: elements nested more than %d deep, the limit; raise MaxDepth (at most %d)", ErrTooDeep, maxDepth, DefaultMaxDepth)
	}
	if late() {
		return Result{}, nil, ErrTimeout
	}
	ogTitle := metadata(doc, baseURL(opts.URL), &r)
	r.Method = MethodMain
	t.sum()
	t.boilerplate()
	if top := t.scoreCandidates(); top >= 0 {
		top = t.refine(top)
		roots := t.siblings(top)
		for _, root := range roots {
			t.clean(root)
		}
		t.sum()
		title := t.title(roots, ogTitle, r.Title)
		r.Text = t.mainText(roots, title, sc)
		r.Title = title
		if r.Author == "" {
			r.Author = t.author()
		}
	}
	if late() {
		return Result{}, nil, ErrTimeout
	}
	if n := utf8.RuneCountInString(r.Text); n >= minText || opts.NoFallback {
		if r.Title != "" && n < titledText && !strings.HasPrefix(r.Text, r.Title) {
			// A short main text is where unrelated pages share all their text (a stub
			// notice, "this page has moved", an empty section): the title tells them
			// apart. A long article's title adds little, and the benchmark's
			// references leave it out.
			r.Text = r.Title + "\n" + r.Text
		}
		return r, vis, nil
	}
	if vis == nil {
		vis = new(visibleResult)
		vis.text, vis.title = visibleText(s)
	}
	text, title := vis.text, vis.title
	if r.Title == "" {
		r.Title = title
	}
	r.Text, r.Method = text, MethodVisibleText
	return r, vis, nil
}

// parse returns the tree of the page s, built by buildTree, else by html.Parse from the
// stripped page, and its visible text when visible is true and buildTree read it.
func parse(s string, visible bool, sc *scratch) (*html.Node, *visibleResult, error) {
	var v *visibleState
	if visible {
		v = &visibleState{b: sc.vis}
		defer func() { sc.vis = v.b }()
	}
	if doc, ok := buildTree(s, v, sc); ok {
		if v != nil && v.ok {
			return doc, &visibleResult{normalizeBytes(v.b), normalize(v.title)}, nil
		}
		return doc, nil, nil
	}
	doc, err := html.Parse(strings.NewReader(stripRaw(s)))
	if err != nil {
		// For a reader that cannot fail, the parser's only error is its nesting limit.
		return nil, nil, fmt.Errorf("%w: %v", ErrTooDeep, err)
	}
	return doc, nil, nil
}
