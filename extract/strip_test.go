package extract

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/neardup/neardup/internal/evaldata"
)

// shape renders the tree the parser builds from page, without comments and without the
// text of script and style elements: what stripRaw must leave unchanged.
func shape(t testing.TB, page string) string {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return "error: " + err.Error()
	}
	// Comments go; then the text nodes they separated are one.
	var comments []*html.Node
	for n := range doc.Descendants() {
		if n.Type == html.CommentNode {
			comments = append(comments, n)
		}
	}
	for _, n := range comments {
		n.Parent.RemoveChild(n)
	}
	var b strings.Builder
	for n := range doc.Descendants() {
		if n.Type == html.TextNode {
			if p := n.Parent; p != nil && (p.DataAtom == atom.Script || p.DataAtom == atom.Style) {
				continue
			}
			if n.PrevSibling != nil && n.PrevSibling.Type == html.TextNode {
				b.WriteString(n.Data)
				continue
			}
		}
		d := 0
		for p := n.Parent; p != nil; p = p.Parent {
			d++
		}
		b.WriteString("\n" + strings.Repeat(" ", d))
		b.WriteString(n.Namespace + ":" + n.Data)
		for _, a := range n.Attr {
			if a.Namespace == "" && keptAttr(n.Data, a.Key) {
				b.WriteString(" " + a.Key + "=" + a.Val)
			}
		}
	}
	return b.String()
}

var stripCases = []string{
	`<p>a<script>if (a<b) document.write("<p>x</p>")</script>b<style>p>a{}</style>c<!-- <p>hidden</p> -->d</p>`,
	`<SCRIPT type="text/javascript">x</SCRIPT ><p>kept</p>`,
	`<p>1<!-->2<!--->3<!---->4</p>`,
	`<script>unclosed <p>never a paragraph`,
	`<p>a <!-- unclosed comment <p>x`,
	`<scripts>not raw</scripts><styles>x</styles><p>t</p>`,
	`<svg><style>svg style</style></svg><p>after</p>`,
	`<p>a < b and c <d</p><script/>x</script>y`,
	`<div data-html="<script>x</script>" title='<!--'>kept</div><p>a</p>`,
	`<title>a <!-- b</title><textarea><script></textarea><p>c</p>`,
	`<a href=x>y</a><p a=">">z</p>`,
	`<img srcset="a.jpg 1x, b.jpg 2x" data-x='{"a": ">"}' class=pic/><p id = "p1" onclick=go() hidden>t</p>`,
	`<div =x class="a"/><input type=hidden><br/>`,
	`<!DOCTYPE html><html><head><script src="a.js"></script><style>
body{}</style></head><body><p>x</p></body></html>`,
}

// TestStripRaw: the tree of the stripped page is the tree of the page, less comments
// and script and style text, on hand-made cases and on the AEB pages (skipped under
// -short or without the evaluation data).
func TestStripRaw(t *testing.T) {
	for _, page := range stripCases {
		if got, want := shape(t, stripRaw(page)), shape(t, page); got != want {
			t.Errorf("stripRaw(%q) = %q; its tree differs:\n%s\nwant\n%s", page, stripRaw(page), got, want)
		}
	}
	if testing.Short() {
		return
	}
	root, err := evaldata.Root()
	if err != nil {
		t.Skip(err)
	}
	pages, err := evaldata.AEB(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range pages {
		s, _ := decode(a.HTML, "")
		if shape(t, stripRaw(s)) != shape(t, s) {
			t.Errorf("AEB page %s: the tree of the stripped page differs", a.ID)
		}
	}
}

func FuzzStripRaw(f *testing.F) {
	for _, page := range stripCases {
		f.Add(page)
	}
	f.Fuzz(func(t *testing.T, page string) {
		if strings.Contains(strings.ToLower(page), "<svg") || strings.Contains(strings.ToLower(page), "<math") {
			t.Skip("foreign content: script and style are not raw text there")
		}
		if got, want := shape(t, stripRaw(page)), shape(t, page); got != want {
			t.Fatalf("stripRaw(%q) = %q; its tree differs:\n%s\nwant\n%s", page, stripRaw(page), got, want)
		}
	})
}
