// Package extract turns an HTML page into its main text: the article without the
// navigation, headers, footers, ads, comments and cookie banners around it, with its title
// and metadata. It is the first step of neardup's pipeline: near-duplicate pages share an
// article, not a template, and fingerprints of the whole page would find the template.
//
// # How
//
// Extract decodes the page to UTF-8 and builds its tree once, as golang.org/x/net/html
// builds it (the WHATWG algorithm browsers use, so broken HTML reads as a browser reads
// it), without the text of its scripts and styles, its comments and the attributes it
// does not read (most of a typical news page). One pass over the bytes reads the tags
// and runs the parser's insertion modes; the markup it does not read (MathML, foster
// parenting in tables, misnested formatting around blocks...) goes to x/net/html's
// parser. Extract then works on that one tree, never a copy:
//
//  1. Index. One preorder walk records every element with its parent, the end of its
//     subtree, and the letters and digits of its own text, of which inside links, and its
//     commas (Latin and CJK). Elements that never show text (script, style, svg, iframe,
//     media, form controls, hidden ones) are left out with their subtrees. Counts of a
//     subtree are summed in one backward pass over the index.
//  2. Boilerplate by tag and name. nav, aside, header, footer, form, dialog and menu
//     elements, and elements whose class or id names boilerplate (comments, share bars,
//     related links, ads, cookie banners, menus, bylines...) and nothing that names
//     content (Readability's "okMaybeItsACandidate"), are dropped, unless they hold half
//     the page's text. article and main elements are never dropped by name.
//  3. Scores (Readability, Mozilla). Every paragraph (p, pre, td, blockquote, li, dd)
//     of 25 characters or more, and every element's own run-in text, scores 1 + its
//     commas + one per 100 characters (at most 3), given to its parent, half to its
//     grandparent, a third per level to three more. A candidate starts from its tag's
//     weight and its class and id weight (+-25); its final score is multiplied by
//     1 - its link density (boilerpipe's and CETD's strongest single feature).
//  4. The article. The top candidate moves up to the ancestor holding three of its
//     near-peers (an article split into sections) and to a parent holding nothing else;
//     its siblings join when they score a fifth of it, or are prose paragraphs; so do
//     the prose paragraphs up to three levels above it (the introduction of a table).
//  5. Cleaning (Readability's conditional cleaning). Inside the article, containers
//     with a boilerplate class, mostly links (link density over 0.5, or over 0.2 without
//     a content class, lists of prose excepted), more images than paragraphs, or form
//     controls, are dropped.
//  6. Text. The article's elements are written out, a line per block, a space between
//     table cells and between a formula's MathML tokens (its TeX annotation left out),
//     and normalized. The h1 that is the title is left out of the text; a text under 300
//     characters starts with the title, so that two stubs of a site differ.
//
// Metadata is what the page declares in its head: <title>, the standard, Open Graph and
// article: <meta> tags, the canonical link, <html lang>. Title is the article's h1, else
// the page's h1 its declared title contains, else the declared title. Nothing is parsed
// or detected: Date is the declared publication date when it starts as YYYY-MM-DD.
// When the article has less than 100 characters, Extract returns VisibleText instead: the
// whole page's visible text, read as the HTML tokenizer reads it.
//
// The rules were kept only when they helped on the evaluation data (docs/accuracy.md):
// the AEB pages, and the Debian manuals, where two unrelated pages must never get the
// same text. The word lists follow Readability's and trafilatura's.
//
// The character set is, in order: the one a byte order mark names; the charset of
// Options.ContentType (the HTTP header); UTF-8 when the whole page is valid UTF-8; the one
// a <meta> tag in the first 1024 bytes declares; windows-1252. That is the WHATWG order
// except that valid UTF-8 wins over <meta>, because pages mislabelled as Latin-1 are far
// more common than Latin-1 text that happens to be valid UTF-8. A <meta> tag that
// declares ISO-2022-JP still wins over a page of 7-bit bytes: that encoding has no
// others, so every page in it is valid UTF-8. Bytes invalid in the encoding become
// U+FFFD; every string returned is valid UTF-8.
//
// Text is deterministic and normalized so that it can be hashed for exact duplicates:
// blocks separated by "\n", other runs of white space collapsed to one space, no
// leading or trailing space, no control characters, soft hyphens or byte order marks.
//
// # Accuracy and speed
//
// Measured on the Article Extraction Benchmark (Scrapinghub/Zyte; 181 news and blog
// pages with hand-made article bodies, ../shared/eval/aeb-scrapinghub) with the
// benchmark's own metric (word 4-gram precision and recall per page, averaged; accuracy
// is the share of pages whose words all match), every extractor by the same scorer in
// the same run (the eval module's TestAEB):
//
//	extractor                         precision  recall  F1     accuracy
//	Extract                           0.953      0.982   0.968  0.381
//	go-trafilatura v1.12.2            0.945      0.979   0.962  0.287
//	go-readability (2025-12-05)       0.900      0.971   0.934  0.188
//	VisibleText (whole page)          0.508      0.993   0.672  0.000
//
// Timed side by side on one core (the eval module's BenchmarkAEB), Extract is several
// times as fast as go-trafilatura and allocates a fraction as much. Building the tree
// is the largest part of its time; it takes a few dozen allocations a page, as
// VisibleText reads the page without a parser or the tokenizer.
//
// # Example
//
//	r, err := extract.Extract(page, extract.Options{
//		ContentType: resp.Header.Get("Content-Type"),
//		URL:         pageURL,
//	})
//	if err != nil {
//		return err // ErrTooLarge, ErrBinary, ErrTooDeep or ErrTimeout
//	}
//	fmt.Println(r.Title, r.Date, r.Method)
//	key := sha256.Sum256([]byte(r.Text)) // the same article gives the same text
//
// # Limits
//
//   - Size: a page over Options.MaxBytes (default 8 MiB) is refused with ErrTooLarge
//     before any work. Nothing is truncated.
//   - Binary content: a PDF, an image, an archive, audio, video or a font served as a
//     page is refused with ErrBinary, by both Extract and VisibleText, rather than read
//     as windows-1252 mojibake. The first 512 bytes decide, sniffed as the WHATWG MIME
//     Sniffing standard does (net/http.DetectContentType): a page that starts as HTML,
//     XML or text with a byte order mark is text; one that starts as a PDF or
//     PostScript file is not; one that starts as an image, audio, video, font or
//     archive is not if those bytes also hold a control byte that text never uses
//     (the standard's binary data bytes: NUL, and the others except tab, line feed,
//     form feed, carriage return and escape). Otherwise ErrBinary needs at least two
//     such bytes, and at least 1 in 16 of the 512 (random or compressed bytes have 1 in
//     10), so a stray NUL in a text page is let through; and none when
//     Options.ContentType declares UTF-16, whose ASCII characters hold NULs.
//   - Depth: a page whose elements nest deeper than Options.MaxDepth (default and
//     maximum 512, the parser's own limit) is refused with ErrTooDeep, unless the deep
//     part lies inside an element left out of the index (see How: script, svg, template...). Deep nesting is the
//     classic way to make tree-walking code slow or overflow its stack; flattening the
//     tree instead would hand the extractor a page no browser shows. VisibleText builds
//     no tree, so it still reads such a page.
//   - Time: past Options.Timeout (default 5 s) Extract returns ErrTimeout. See Caveats.
//
// Every function is safe for concurrent use, and keeps nothing between calls.
//
// # Caveats
//
//   - The algorithm is a set of heuristics: on a page built unlike an article (a forum
//     thread, a search result, a product grid) the article it picks may be a part of
//     the page, or boilerplate. It never returns less than 100 characters without
//     falling back to the visible text, and never the same text for two pages that
//     differ in a short article or its title; but two long pages whose articles are
//     equal and differ only around them are, on purpose, exact duplicates.
//   - Comments are left out by their class or id ("comment", "disqus"...), and by the
//     scores when they are longer than the article; a thread marked up with neither, and
//     shorter than the article, can be taken in with it.
//   - Extract runs the extraction on its own goroutine and returns ErrTimeout when the
//     budget is spent; the extraction checks the deadline between its steps, so that
//     goroutine runs on at most for one step (the parse and index of an 8 MiB page, a
//     second or two), holding a copy of the page and its tree, and then discards its
//     result. A
//     negative Timeout runs the extraction on the caller's goroutine instead, with no
//     goroutine and no budget.
//   - Date is the page's declared publication date, not verified; a page that declares
//     none has none (no date is searched for in the text or the URL). Language is
//     what <html lang> declares, never detected.
//   - The page is not rendered: text that scripts would insert is not there, and text
//     that CSS hides with a stylesheet is (inline display: none and the hidden attribute
//     are honoured).
//   - Text's line breaks follow the page's blocks, and its source line breaks inside a
//     paragraph; hash the words (package shingle) rather than the layout when that
//     matters.
package extract
