package extract

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/neardup/neardup/internal/evaldata"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// FuzzTagAtom holds tagAtom to the tokenizer's TagName on every tag of any input.
func FuzzTagAtom(f *testing.F) {
	for _, s := range []string{"<p>a</p>", "<P\x00>", "<br/>", "</DIV >", "<a\nhref=x>", "<script>x</script >",
		"<td\ttitle=a>", "<onbeforeunload>", "<h1\f>", "</>", "< p>", "<p/x>", "<tablexxxxxxxxxxxxxxxxxxxxxxxxxxxxx>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		z := html.NewTokenizer(strings.NewReader(s))
		for {
			switch z.Next() {
			case html.ErrorToken:
				return
			case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
				raw := string(z.Raw()) // before TagName, which lowers the buffer in place
				got := tagAtom([]byte(raw))
				name, _ := z.TagName()
				if want := atom.Lookup(name); got != want {
					t.Fatalf("tagAtom(%q) = %v, want %v (TagName %q)", raw, got, want, name)
				}
			}
		}
	})
}

var visibleSeeds = []string{
	"", "text", "a < b &amp; c", "<p>one</p><p>two &lt;3</p>", "<title>T &amp; t</title><h1>x</h1>",
	"<script>if (a<b) {}</script>after", "<script><!-- </script> --></script>x", "<style>p{}</style >y",
	"<!-- c -->a<!---->b<!-->c<!--->d<!-- x --!> e", "<!doctype html><?xml x?></ >a</>b",
	"<template><p>in<template>deeper</template></template>out", "<textarea><p>no</textarea>yes",
	"<plaintext><p>all &amp; text", "x\x00y", "<p title='a>b'>q</p>", "<p a=/>z", "<br/><td>c<th>d",
	"<title></title><title>second</title>", "unclosed <p", "end </", "<noscript><b>n</b></noscript>m",
	"<SCRIPT>x</SCRIPT>Y", "a\r\nb\rc", "&#13;&#x0;&nbsp;", "<xmp><i>x</xmp></xmp>",
}

// FuzzVisibleFast holds visibleFast to visibleTokens, the tokenizer's reading, on every
// page it does not give up on.
func FuzzVisibleFast(f *testing.F) {
	for _, s := range visibleSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\uFFFD")
		}
		text, title, ok := visibleFast(s)
		if !ok {
			return
		}
		if wantText, wantTitle := visibleTokens(s); text != wantText || title != wantTitle {
			t.Fatalf("visibleFast(%q) = %q, %q; want %q, %q", s, text, title, wantText, wantTitle)
		}
	})
}

// TestVisibleFastPages holds visibleFast to visibleTokens on the real pages of the
// evaluation data, and checks that it gives up on few of them.
func TestVisibleFastPages(t *testing.T) {
	root, err := evaldata.Root()
	evaldata.Need(t, err)
	articles, err := evaldata.AEB(root)
	if err != nil {
		t.Fatal(err)
	}
	debian, _, err := evaldata.DebianPages(root)
	if err != nil {
		t.Fatal(err)
	}
	pages := make([][]byte, 0, len(articles)+len(debian))
	for _, a := range articles {
		pages = append(pages, a.HTML)
	}
	for _, p := range debian {
		pages = append(pages, p.HTML)
	}
	fast := 0
	for i, p := range pages {
		s, _ := decode(p, "")
		text, title, ok := visibleFast(s)
		if !ok {
			continue
		}
		fast++
		if wantText, wantTitle := visibleTokens(s); text != wantText || title != wantTitle {
			t.Errorf("page %d: visibleFast differs from visibleTokens (title %q, want %q)", i, title, wantTitle)
		}
	}
	t.Logf("visibleFast read %d of %d pages", fast, len(pages))
	if fast < len(pages)*9/10 {
		t.Errorf("visibleFast gave up on %d of %d pages, want at most a tenth", len(pages)-fast, len(pages))
	}
}

// BenchmarkVisibleText reads the AEB pages' visible text by visibleFast and by the
// tokenizer (visibleTokens).
func BenchmarkVisibleText(b *testing.B) {
	root, err := evaldata.Root()
	evaldata.Need(b, err)
	articles, err := evaldata.AEB(root)
	if err != nil {
		b.Fatal(err)
	}
	var pages []string
	size := 0
	for _, a := range articles {
		s, _ := decode(a.HTML, "")
		pages = append(pages, s)
		size += len(s)
	}
	for _, bc := range []struct {
		name string
		fn   func(string) (string, string)
	}{{"fast", visibleText}, {"tokens", visibleTokens}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range pages {
					bc.fn(p)
				}
			}
		})
	}
}
