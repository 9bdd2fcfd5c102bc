package extract

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/neardup/neardup/internal/evaldata"
)

// dump renders every node of doc with its depth, type, namespace, name or text and
// attributes in order, leaving out the document's own doctype and comments, which
// buildTree does not build and nothing reads.
func dump(doc *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		fmt.Fprintf(&b, "%s%d %s:%q", strings.Repeat(" ", depth), n.Type, n.Namespace, n.Data)
		for _, a := range n.Attr {
			fmt.Fprintf(&b, " %s:%s=%q", a.Namespace, a.Key, a.Val)
		}
		b.WriteByte('\n')
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if n.Type == html.DocumentNode && (c.Type == html.DoctypeNode || c.Type == html.CommentNode) {
				continue
			}
			walk(c, depth+1)
		}
	}
	walk(doc, 0)
	return b.String()
}

// checkBuild fails t when buildTree reads page s but builds another tree than
// html.Parse's of the stripped page, or another visible text than visibleText's when it
// says it read it, and reports whether it read the page and its visible text.
func checkBuild(t testing.TB, s string) (ok, visible bool) {
	t.Helper()
	var v visibleState
	got, ok := buildTree(s, &v, new(scratch))
	if !ok {
		return false, false
	}
	if v.ok {
		text, title := visibleText(s)
		if g := normalize(string(v.b)); g != text {
			t.Fatalf("buildTree(%q)'s visible text is %q, visibleText's %q", s, g, text)
		}
		if g := normalize(v.title); g != title {
			t.Fatalf("buildTree(%q)'s title is %q, visibleText's %q", s, g, title)
		}
	}
	want, err := html.Parse(strings.NewReader(stripRaw(s)))
	if err != nil {
		t.Fatalf("buildTree read %q, which html.Parse refuses: %v", s, err)
	}
	if g, w := dump(got), dump(want); g != w {
		t.Fatalf("buildTree(%q) differs from html.Parse:\n%s\nwant\n%s", s, g, w)
	}
	return true, v.ok
}

// buildCases are markup buildTree reads (want true) or leaves to html.Parse.
var buildCases = []struct {
	page string
	want bool
}{
	{`<p>a<p>b<div>c</div>d</p>e</p>`, true},
	{`<ul><li>a<li>b<ul><li>c</ul><li>d</ul><ol><li><div>x<li>y</ol>`, true},
	{`<dl><dt>a<dd>b<dt>c<dd>d</dl>`, true},
	{`<table><tr><td>a<td>b<tr><th>c</table>`, true},
	{`<table> <colgroup><col><col></colgroup><thead><tr><th>h</thead><tbody><tr><td>a</td></tr></tbody><tfoot><tr><td>f</table>`, true},
	{`<table><col><tr><td><table><tr><td>nested</table>after</td></tr></table>`, true},
	{`<select><option>a<option>b<optgroup><option>c</select><p>x`, true},
	{`<p>a<br>b<img src=x alt=y><hr>c<input type=text><wbr>`, true},
	{`<p><b>bold <i>both</b> italic?</i> plain</p>`, true},
	{`<p><b>bold</p><p>still bold?</p>`, true},
	{`<a href=x><span>in</a>out`, true},
	{`<a>1<a>2</a>`, true},
	{`<b><b><b><b>four</b></b></b></b>`, true},
	{`<h1>a<h2>b</h1>c</h2><h3>d</h3>`, true},
	{`<pre>` + "\n" + `code</pre><pre>` + "\n\nx</pre><textarea>\nt</textarea>", true},
	{`<form><form><input></form></form><form>y</form>`, true},
	{`<title>T &amp; U</title><meta name=a content="x &amp; y"><p class="A" ID=b>t</p>`, true},
	{`<div class="a&b">x</div>`, false},
	{`<div class="a" href="a&b" data-x='&c' onclick=go()>x</div>`, true},
	{`<img class=pic /><br id=x/><input type=hidden class="q" /><hr hidden/>`, true},
	{`<svg class="a"/><p>x<svg><title>t</title><style>s{}</style><script>x</script></svg>`, true},
	{`<svg><title>a<b>b</b></title></svg>`, false},
	{`<p>a&am<!-- x -->p;b<!--><!--->c<!--d-->e</p><script>if (a<b) x()</script><style>p>a{}</style>f<!-- unclosed`, true},
	{`<p>a<!--> b<!---> c<!-- d --!> e --> f<script><!-- g</script>h<title>T</title><title>U</title>`, true},
	{`<pre><!-- c -->` + "\n" + `x</pre><title>a<!--b--></title><noscript><p>n<!--x--></noscript>`, true},
	{"<p>a\r\nb\rc</p>", true},
	{`<!DOCTYPE html><html lang=en><head><title>t</title></head><body><p>x</p></body></html> <p>after`, true},
	{`<?xml version="1.0"?><html><body>x</body></html>`, true},
	{`<p>x<?php y ?>z</p>`, false},
	{`<p>text<table><tr><td>in a paragraph</table>`, false},
	{`<table>foster<tr><td>x</table>`, false},
	{`<table><tr><td>x</td></tr><div>foster</div></table>`, false},
	{`<table><tr><td>x</span></td></tr></table></span>`, true},
	{`<svg class=i><circle/><title>T</title><path></svg>x`, true},
	{`<svg><foreignObject><p>x</p></foreignObject></svg>`, false},
	{`<svg><p>breakout</svg>`, false},
	{`<b>x<div>y</b>z</div>`, false},
	{`<p>a</x>b</p></p><p>c`, true},
	{`<object><b>x</object>y`, true},
	{`<button>a<button>b</button>`, true},
	{`<custom-el><Foo-Bar>x</foo-bar></custom-el>`, true},
	{`<meta charset=utf-8><link rel=canonical href=/a><p>x</p><meta name=late>`, true},
	{`<head><title>t</title><p>early body</p><title>late</title>`, true},
	{`<div hidden style="display:none" aria-hidden=true>x</div><noscript><p>n</p></noscript>`, true},
}

func TestBuildTree(t *testing.T) {
	for _, c := range buildCases {
		if got, _ := checkBuild(t, c.page); got != c.want {
			t.Errorf("buildTree(%q) ok = %v, want %v", c.page, got, c.want)
		}
	}
	for _, page := range stripCases {
		checkBuild(t, page)
	}
}

// TestBuildTreeEval holds buildTree to html.Parse on every AEB and Debian page (skipped
// under -short or without the evaluation data), and to reading nearly all of them.
func TestBuildTreeEval(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	root, err := evaldata.Root()
	if err != nil {
		t.Skip(err)
	}
	aeb, err := evaldata.AEB(root)
	if err != nil {
		t.Fatal(err)
	}
	debian, _, err := evaldata.DebianPages(root)
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string][][]byte{}
	for _, a := range aeb {
		sets["AEB"] = append(sets["AEB"], a.HTML)
	}
	for _, p := range debian {
		sets["Debian"] = append(sets["Debian"], p.HTML)
	}
	for name, pages := range sets {
		read, visible := 0, 0
		for _, page := range pages {
			s, _ := decode(page, "")
			ok, vis := checkBuild(t, s)
			if ok {
				read++
			}
			if vis {
				visible++
			}
		}
		t.Logf("%s: buildTree read %d of %d pages, and the visible text of %d", name, read, len(pages), visible)
		if min := len(pages) * 3 / 4; read < min || visible < min {
			t.Errorf("%s: buildTree read %d of %d pages and %d visible texts, fewer than %d", name, read, len(pages), visible, min)
		}
	}
}

// FuzzBuildTree holds buildTree to html.Parse on whatever page it reads.
func FuzzBuildTree(f *testing.F) {
	for _, c := range buildCases {
		f.Add(c.page)
	}
	for _, page := range stripCases {
		f.Add(page)
	}
	f.Fuzz(func(t *testing.T, page string) {
		checkBuild(t, strings.ToValidUTF8(page, "\uFFFD"))
	})
}
