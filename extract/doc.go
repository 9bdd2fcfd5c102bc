// Package extract turns an HTML page into its main text: the article without the
// navigation, headers, footers, ads, comments and cookie banners around it, with its title
// and metadata. It is the first step of neardup's pipeline: near-duplicate pages share an
// article, not a template, and fingerprints of the whole page would find the template.
//
// # How
//
// Extract decodes the page to UTF-8, parses it with golang.org/x/net/html (the WHATWG
// algorithm browsers use, so broken HTML reads as a browser reads it), and hands the tree
// to go-trafilatura, the Go port of trafilatura (Barbaresi, "Trafilatura: A Web Scraping
// Library and Command-Line Tool for Text Discovery and Extraction", ACL 2021), without
// what go-trafilatura would delete before it looks for the main text and what holds no
// metadata: scripts, styles, comments, navigation, sidebars, footers outside an article,
// form controls, embedded media and drawings, stylesheet and icon links (47% of the nodes
// of the benchmark's pages below, so its copies and walks of the tree cost less). Its
// text is laid out one paragraph per line. When it finds less than 100 characters, which
// go-trafilatura only returns from its last resort (the whole page's text, run together),
// Extract returns VisibleText instead: the whole page's visible text, from one pass of
// the HTML tokenizer.
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
// paragraphs separated by "\n", other runs of white space collapsed to one space, no
// leading or trailing space, no control characters, soft hyphens or byte order marks.
//
// # Accuracy and speed
//
// Measured on the Article Extraction Benchmark (Scrapinghub/Zyte; 181 news and blog
// pages with hand-made article bodies, ../shared/eval/aeb-scrapinghub) with the
// benchmark's own metric (word 4-gram precision and recall per page, averaged; accuracy
// is the share of pages whose words all match), on a 2-core VM; time is the median per
// page, decoding and parsing included, as a range over runs on a machine shared with
// other work (TestEvalAEB and BenchmarkExtract):
//
//	extractor                         precision  recall  F1     accuracy  ms/page
//	Extract (go-trafilatura v1.12.2)  0.945      0.978   0.961  0.287     4.7-5.7
//	go-readability (2025-12-05)       0.900      0.971   0.934  0.188     6.1-10.3
//	VisibleText (whole page)          0.508      0.993   0.672  0.000     0.6-1.0
//
// The benchmark publishes 0.960 for go-trafilatura, 0.934 for go-readability, 0.947 for
// Readability.js and 0.665 for whole-page text. go-trafilatura's own fallbacks (running
// go-readability and go-domdistiller as well) lower F1 to 0.960 and cost about 50% more
// time here, so they stay off.
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
//     part lies inside an element removed before extraction (see How). Deep nesting is the
//     classic way to make tree-walking code slow or overflow its stack; flattening the
//     tree instead would hand the extractor a page no browser shows. VisibleText builds
//     no tree, so it still reads such a page.
//   - Time: past Options.Timeout (default 5 s) Extract returns ErrTimeout. See Caveats.
//
// Every function is safe for concurrent use, and keeps nothing between calls.
//
// # Caveats
//
//   - go-trafilatura cannot be interrupted. Extract runs it on its own goroutine and
//     returns ErrTimeout when the budget is spent, but that goroutine runs on until the
//     extractor returns, holding a copy of the page and its tree (a few times the page's
//     size), and then discards its result; it skips Extract's later steps. Its work is
//     bounded only by the size and depth limits: extraction time grows linearly with the
//     page, about 0.2 s for 8 MiB of typical markup and 2.6 s for 8 MiB of dense
//     paragraphs here. A caller that gets many ErrTimeouts under load should bound its own
//     concurrency, since abandoned extractions still use a core each. A negative
//     Timeout runs the extraction on the caller's goroutine instead, with no goroutine
//     and no budget.
//   - A panic inside go-trafilatura is recovered and treated as finding no text, so the
//     visible text is returned: on Extract's goroutine it could not be recovered by the
//     caller and would end the program.
//   - Date is the publication date from the page's metadata (<meta>, JSON-LD, Open Graph)
//     or its URL and markup, as go-trafilatura's fast date search finds it; it is not
//     verified. Language is declared by the page or detected from Text.
//   - The page is not rendered: text that scripts would insert is not there, and text
//     that CSS hides (display: none) is. Single-page applications give little text.
//   - Text's line breaks follow the extractor's blocks and may differ from the page's;
//     hash the words (package shingle) rather than the layout when that matters.
package extract
