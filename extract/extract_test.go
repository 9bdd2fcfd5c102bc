package extract_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"image"
	imagepng "image/png"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"

	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/internal/evaldata"
)

// article is a small news page: navigation, a cookie banner, the article with its
// metadata, comments and a footer.
const article = `<!DOCTYPE html>
<html lang="en"><head>
<meta charset="utf-8">
<title>Rivers of Lyon | The Daily Example</title>
<meta name="description" content="How two rivers shaped a city.">
<meta name="author" content="Ada Lovelace">
<meta property="og:site_name" content="The Daily Example">
<meta property="article:published_time" content="2024-03-05T10:00:00Z">
<link rel="canonical" href="https://example.com/news/rivers-of-lyon">
<script>var tracking = "do not show";</script>
<style>body { color: red }</style>
</head><body>
<div id="cookie-banner" class="cookie-consent">We use cookies. <button>Accept all cookies</button></div>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/world">World</a></li><li><a href="/sport">Sport</a></li></ul></nav></header>
<main><article>
<h1>Rivers of Lyon</h1>
<p>Lyon stands where the Rhône meets the Saône, two rivers with very different tempers that have shaped the city for two thousand years.</p>
<p>The Romans built Lugdunum on the hill above the confluence, and for centuries the city grew along the narrow peninsula between the two rivers.</p>
<p>Today the confluence district is a quarter of museums, offices and flats, built on land that was railway yards and warehouses only a generation ago.</p>
</article>
<section class="comments"><h2>Comments</h2><div class="comment"><p>First! Great article, thanks for writing it.</p></div></section>
</main>
<footer><p>© 2024 The Daily Example. All rights reserved.</p><a href="/privacy">Privacy policy</a></footer>
</body></html>`

func TestExtractArticle(t *testing.T) {
	r, err := extract.Extract([]byte(article), extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := extract.Result{
		Title:       "Rivers of Lyon",
		Author:      "Ada Lovelace",
		Date:        "2024-03-05",
		Description: "How two rivers shaped a city.",
		SiteName:    "The Daily Example",
		Language:    "en",
		URL:         "https://example.com/news/rivers-of-lyon",
		Charset:     "utf-8",
		Method:      extract.MethodMain,
	}
	text := r.Text
	r.Text = ""
	if r != want {
		t.Errorf("metadata:\n got %+v\nwant %+v", r, want)
	}
	for _, s := range []string{"Lyon stands where the Rhône meets the Saône", "only a generation ago."} {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
	for _, s := range []string{"cookies", "Home", "Great article", "rights reserved", "Privacy", "tracking", "color"} {
		if strings.Contains(text, s) {
			t.Errorf("text keeps boilerplate %q:\n%s", s, text)
		}
	}
	if n := strings.Count(text, "\n"); n < 2 {
		t.Errorf("text has %d line breaks, want one between paragraphs:\n%s", n, text)
	}
}

// TestExtractAuthorFromArticleFooter: the author marked in the article's own footer is
// found, and a name marked as an author in a sidebar is not taken for it.
func TestExtractAuthorFromArticleFooter(t *testing.T) {
	para := strings.Repeat("The harbour was rebuilt after the storm, stone by stone, by the families who had always lived there. ", 4)
	page := `<html><body>
<aside><div class="widget"><span class="author">Sidebar Commenter</span> on another post</div></aside>
<article><h1>The harbour</h1><p>` + para + `</p><p>` + para + `</p>
<footer><span class="byline">by <span class="author">Grace Hopper</span></span></footer></article>
<footer><p>Site footer</p></footer>
</body></html>`
	r, err := extract.Extract([]byte(page), extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Author != "Grace Hopper" {
		t.Errorf("author %q, want %q", r.Author, "Grace Hopper")
	}
	if strings.Contains(r.Text, "Commenter") || strings.Contains(r.Text, "Site footer") {
		t.Errorf("text has the sidebar or the site footer:\n%s", r.Text)
	}
}

func TestExtractCharset(t *testing.T) {
	sjis, err := japanese.ShiftJIS.NewEncoder().String("日本語のテキスト")
	if err != nil {
		t.Fatal(err)
	}
	utf16, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String("<p>naïve</p>")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, page, contentType string
		wantText, wantCharset   string
	}{
		{"utf-8 without declaration", "<p>café</p>", "", "café", "utf-8"},
		{"meta charset", "<meta charset=windows-1252><p>caf\xe9</p>", "", "café", "windows-1252"},
		{"meta http-equiv", "<meta http-equiv=Content-Type content='text/html; charset=iso-8859-1'><p>caf\xe9</p>", "", "café", "windows-1252"},
		{"meta shift_jis", "<meta charset=shift_jis><p>" + sjis + "</p>", "", "日本語のテキスト", "shift_jis"},
		{"header overrides meta", "<meta charset=utf-8><p>caf\xe9</p>", "text/html; charset=ISO-8859-1", "café", "windows-1252"},
		{"bom overrides header", "\xef\xbb\xbf<p>café</p>", "text/html; charset=shift_jis", "café", "utf-8"},
		{"utf-16 bom", utf16, "", "naïve", "utf-16le"},
		{"valid utf-8 despite meta", "<meta charset=windows-1252><p>café</p>", "", "café", "utf-8"},
		{"undeclared legacy bytes", "<p>caf\xe9 cr\xe8me</p>", "", "café crème", "windows-1252"},
		{"invalid utf-8 declared", "<meta charset=utf-8><p>a\xff\xfeb</p>", "text/html; charset=utf-8", "a\ufffd\ufffdb", "utf-8"},
		{"nul bytes", "<p>a\x00b</p>", "", "ab", "utf-8"},
		{"meta iso-2022-jp, 7-bit and so valid utf-8", "<meta charset=iso-2022-jp><p>\x1b$B$3$s$K$A$O\x1b(B</p>", "", "こんにちは", "iso-2022-jp"},
		{"meta iso-2022-jp, plain ascii", "<meta charset=iso-2022-jp><p>hello</p>", "", "hello", "iso-2022-jp"},
		{"meta iso-2022-jp, transcoded to utf-8", "<meta charset=iso-2022-jp><p>こんにちは</p>", "", "こんにちは", "utf-8"},
		{"meta csISO2022JP, plain ascii", "<meta charset=csISO2022JP><p>hello</p>", "", "hello", "iso-2022-jp"},
		{"meta iso-2022-jp by character reference, plain ascii", "<meta charset='iso-&#50;022-jp'><p>hello</p>", "", "hello", "iso-2022-jp"},
		{"meta iso-2022-jp past 1024 bytes", "<p>" + strings.Repeat("x", 1024) + "</p><meta charset=iso-2022-jp><p>hello</p>", "", strings.Repeat("x", 1024) + "\nhello", "utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := extract.Options{ContentType: tt.contentType}
			r, err := extract.Extract([]byte(tt.page), opts)
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != tt.wantText || r.Charset != tt.wantCharset {
				t.Errorf("Extract = %q in %s, want %q in %s", r.Text, r.Charset, tt.wantText, tt.wantCharset)
			}
			vt, err := extract.VisibleText([]byte(tt.page), opts)
			if err != nil || vt != tt.wantText {
				t.Errorf("VisibleText = %q, %v; want %q", vt, err, tt.wantText)
			}
		})
	}
}

func TestExtractLimits(t *testing.T) {
	deep := func(n int) []byte {
		return []byte("<body>" + strings.Repeat("<div>", n) + "deep text" + strings.Repeat("</div>", n))
	}
	big := []byte("<p>" + strings.Repeat("many words of text ", 100_000) + "</p>") // 1.9 MB
	tests := []struct {
		name string
		page []byte
		opts extract.Options
		want error
	}{
		{"too large", []byte("<p>hello</p>"), extract.Options{MaxBytes: 5}, extract.ErrTooLarge},
		{"at the size limit", []byte("<p>hello</p>"), extract.Options{MaxBytes: 12}, nil},
		{"deeper than the parser's limit", deep(600), extract.Options{}, extract.ErrTooDeep},
		{"deeper than MaxDepth", deep(20), extract.Options{MaxDepth: 10}, extract.ErrTooDeep},
		{"within MaxDepth", deep(5), extract.Options{MaxDepth: 10}, nil},
		// Pruning a parent's last child (the script) must not end the walk that measures depth.
		{"deeper than MaxDepth after a pruned script", append([]byte("<div><script>x</script></div>"), deep(20)...), extract.Options{MaxDepth: 10}, extract.ErrTooDeep},
		// A subtree removed before extraction does not count.
		{"deeper than MaxDepth in a template", append(append([]byte("<template>"), deep(20)...), "</template><p>kept</p>"...), extract.Options{MaxDepth: 10}, nil},
		{"MaxDepth above the parser's limit", deep(600), extract.Options{MaxDepth: 10_000}, extract.ErrTooDeep},
		{"timeout", big, extract.Options{Timeout: time.Nanosecond}, extract.ErrTimeout},
		{"no timeout", deep(5), extract.Options{Timeout: -1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, visible, err := extract.ExtractVisible(tt.page, tt.opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ExtractVisible: %v, want %v", err, tt.want)
			}
			// The visible text comes with every error but those that refuse the page.
			if wantVisible := !errors.Is(err, extract.ErrTooLarge); (visible != "") != wantVisible {
				t.Errorf("ExtractVisible with error %v: visible text %.20q", err, visible)
			}
			r, err := extract.Extract(tt.page, tt.opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Extract: %v, want %v", err, tt.want)
			}
			if err == nil && r.Text == "" {
				t.Errorf("Extract found no text")
			}
			if err != nil && !strings.HasPrefix(err.Error(), "extract: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
	// VisibleText builds no tree: it reads pages of any depth, and only MaxBytes limits it.
	if text, err := extract.VisibleText(deep(100_000), extract.Options{MaxDepth: 10, Timeout: time.Nanosecond}); err != nil || text != "deep text" {
		t.Errorf("VisibleText(100000 nested divs) = %q, %v; want %q", text, err, "deep text")
	}
	if _, err := extract.VisibleText(big, extract.Options{MaxBytes: 1000}); !errors.Is(err, extract.ErrTooLarge) {
		t.Errorf("VisibleText over MaxBytes: %v, want ErrTooLarge", err)
	}
}

func TestExtractBinary(t *testing.T) {
	var png bytes.Buffer
	if err := imagepng.Encode(&png, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(article))
	zw.Close()
	random := make([]byte, 4096)
	rand.NewChaCha8([32]byte{1}).Read(random)
	utf16 := func(s string) string {
		u, err := unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewEncoder().String(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	tests := []struct {
		name, page, contentType string
		binary                  bool
		text                    string // the visible text when not binary
	}{
		{"png", png.String(), "", true, ""},
		{"pdf", "%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n", "text/html", true, ""},
		{"gzip", gz.String(), "", true, ""},
		{"random bytes", string(random), "", true, ""},
		{"utf-16 without a bom, undeclared", utf16("<p>naïve text</p>"), "", true, ""},
		{"utf-16 without a bom, declared", utf16("<p>naïve text</p>"), "text/html; charset=utf-16le", false, "naïve text"},
		{"html with nul bytes", "<html><body>" + strings.Repeat("\x00", 100) + "<p>kept</p>", "", false, "kept"},
		{"text starting as a bmp's signature", "BMW builds cars in Munich.", "", false, "BMW builds cars in Munich."},
		{"text starting as an mp3's signature", "ID3 tags name the song.", "", false, "ID3 tags name the song."},
		{"a stray nul", "<meta charset=utf-8>a page with one \x00 in it", "", false, "a page with one in it"},
		{"legacy bytes", "<meta charset=koi8-r><p>\xf0\xd2\xc9\xd7\xc5\xd4</p>", "", false, "Привет"},
		{"escape of iso-2022-jp", "<meta charset=iso-2022-jp><p>\x1b$B$3$s$K$A$O\x1b(B</p>", "", false, "こんにちは"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := extract.Options{ContentType: tt.contentType}
			_, err := extract.Extract([]byte(tt.page), opts)
			text, verr := extract.VisibleText([]byte(tt.page), opts)
			if !tt.binary {
				if err != nil || verr != nil || text != tt.text {
					t.Fatalf("Extract: %v; VisibleText = %q, %v; want %q", err, text, verr, tt.text)
				}
				return
			}
			if !errors.Is(err, extract.ErrBinary) || !errors.Is(verr, extract.ErrBinary) {
				t.Fatalf("Extract: %v; VisibleText: %v; want ErrBinary", err, verr)
			}
			if !strings.HasPrefix(err.Error(), "extract: binary content") {
				t.Errorf("error %q does not say what it is", err)
			}
		})
	}
}

func TestExtractFallback(t *testing.T) {
	page := []byte("<title>Only a title</title><table><tr><td>Name</td><td>Ada</td></tr></table>")
	r, err := extract.Extract(page, extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != extract.MethodVisibleText || r.Text != "Name Ada" || r.Title != "Only a title" {
		t.Errorf("Extract = %+v; want the visible text %q by %s, title %q", r, "Name Ada", extract.MethodVisibleText, "Only a title")
	}
	r, err = extract.Extract(page, extract.Options{NoFallback: true})
	if err != nil || r.Method != extract.MethodMain {
		t.Errorf("Extract with NoFallback = %+v, %v; want the extractor's text", r, err)
	}
	r, err = extract.Extract([]byte(`<html lang="fr-CA"><p>Café crème</p>`), extract.Options{})
	if err != nil || r.Text != "Café crème" || r.Language != "fr" {
		t.Errorf("Extract = %+v, %v; want the visible text with the declared language", r, err)
	}
	r, err = extract.Extract(nil, extract.Options{})
	if err != nil || r.Text != "" || r.Method != extract.MethodVisibleText {
		t.Errorf("Extract(nil) = %+v, %v; want empty visible text", r, err)
	}
}

func TestVisibleText(t *testing.T) {
	tests := []struct{ page, want string }{
		{"<p>one</p><p>two</p>", "one\ntwo"},
		{"a<br>b<br/>c", "a\nb\nc"},
		{"<b>H</b>ello <i>world</i>", "Hello world"},
		{"<ul><li>x<li>y</ul>", "x\ny"},
		{"<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>", "a b\nc"},
		{"x<script>alert('no')</script>y<style>p{}</style>z", "xyz"},
		{"<!-- hidden -->shown", "shown"},
		{"<noscript>enable JS</noscript><template><p>t<template>u</template>v</template>w", "w"},
		{"<textarea>typed</textarea><iframe>frame</iframe>ok", "ok"},
		{"&lt;tag&gt; &amp; &eacute;&nbsp;&#x263A; &bogus;", "<tag> & é ☺ &bogus;"},
		{"  spaced \t out\r\n\r\n  lines  ", "spaced out\nlines"},
		{"soft\u00adhyphen\ufeff and\u0007 bell", "softhyphen and bell"},
		{"<p>unclosed <b>bold <i>italic", "unclosed bold italic"},
		{"<script>never closed", ""},
		{"<title>T</title><svg><title>icon</title></svg>body", "body"},
		{"<pre>  keep\n  lines</pre>", "keep\nlines"},
	}
	for _, tt := range tests {
		got, err := extract.VisibleText([]byte(tt.page), extract.Options{})
		if err != nil || got != tt.want {
			t.Errorf("VisibleText(%q) = %q, %v; want %q", tt.page, got, err, tt.want)
		}
	}
}

// TestExtractConcurrent runs Extract on several goroutines at once; the race detector
// checks that nothing is shared.
func TestExtractConcurrent(t *testing.T) {
	done := make(chan string)
	for range 4 {
		go func() {
			r, err := extract.Extract([]byte(article), extract.Options{})
			if err != nil {
				done <- err.Error()
				return
			}
			done <- r.Text
		}()
	}
	first := <-done
	for range 3 {
		if got := <-done; got != first {
			t.Errorf("concurrent results differ:\n%q\n%q", got, first)
		}
	}
	if !utf8.ValidString(first) || first == "" {
		t.Errorf("text %q", first)
	}
}

// TestExtractVisible: ExtractVisible returns what Extract and VisibleText return, on
// the AEB pages and on pages written for the tests, fallback and binary ones included.
func TestExtractVisible(t *testing.T) {
	pages := [][]byte{[]byte(article), []byte("<p>too short for an article</p>"), []byte("\x89PNG\r\n\x1a\n\x00\x00"), []byte("")}
	if _, err := evaldata.Root(); err == nil {
		for _, a := range loadAEB(t) {
			pages = append(pages, a.HTML)
		}
	}
	for i, p := range pages {
		opts := extract.Options{Timeout: -1}
		r, visible, err := extract.ExtractVisible(p, opts)
		wantR, wantErr := extract.Extract(p, opts)
		wantVisible, _ := extract.VisibleText(p, opts)
		if (err == nil) != (wantErr == nil) || r != wantR {
			t.Errorf("page %d: ExtractVisible = %+v, %v; Extract = %+v, %v", i, r, err, wantR, wantErr)
		}
		if err == nil && visible != wantVisible {
			t.Errorf("page %d: visible text %.60q, VisibleText %.60q", i, visible, wantVisible)
		}
	}
}
