package extract

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestPrune holds what prune removes before go-trafilatura sees the tree, and what it
// must keep because go-trafilatura reads it for metadata or for its last resort.
func TestPrune(t *testing.T) {
	page := `<html><head>
<title>T</title>
<meta name="author" content="A">
<link rel="canonical" href="https://example.org/a">
<link rel="alternate" hreflang="x-default" href="https://example.org/a">
<link rel="author" href="/about">
<link rel="stylesheet" href="/s.css">
<link rel="shortcut icon" href="/favicon.ico">
<link rel="preload stylesheet" href="/p.css">
<link href="/no-rel">
<script>var x = 1;</script>
<script type="application/ld+json">{"@type": "NewsArticle"}</script>
<style>p {}</style>
</head><body>
<!-- a comment -->
<nav><a href="/">Home</a></nav>
<aside><span class="author">Commenter</span></aside>
<form action="/f"><article><p>Kept text.</p><footer>By A</footer></article>
<button>Share</button><select><option>One</option></select></form>
<iframe src="/ad"></iframe><svg><path d="M0"/></svg><math><mi>x</mi></math>
<canvas></canvas><picture><img src="i.png"></picture><video></video><audio></audio>
<object></object><embed src="e"><template><p>t</p></template><noscript>JS</noscript>
<footer>Site footer</footer>
</body></html>`
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	prune(doc)
	var kept []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.ElementNode:
			s := n.Data
			for _, a := range n.Attr {
				if a.Key == "rel" || a.Key == "type" {
					s += "[" + a.Val + "]"
				}
			}
			kept = append(kept, s)
		case html.CommentNode:
			kept = append(kept, "<!--"+n.Data+"-->")
		case html.TextNode:
			if n.Parent.Data == "head" {
				kept = append(kept, "head text "+strings.ReplaceAll(n.Data, "\n", `\n`))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	want := "html head title meta link[canonical] link[alternate] link[author] link script[application/ld+json] " +
		"body form article p footer"
	if got := strings.Join(kept, " "); got != want {
		t.Errorf("kept\n%s\nwant\n%s", got, want)
	}
}
