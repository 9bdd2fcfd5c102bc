//go:build unix

package server

import (
	"bytes"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/neardup/neardup/internal/chromium"
)

// TestChromiumPage loads the web page in headless Chromium from a server holding a few
// documents, one with a hostile id and text: the statistics, a comparison (its measures
// and highlighted diff, rendered on the server from the URL's a and b) and a look-up
// with its near-duplicate must be in the DOM, and no element or attribute may come from
// the hostile text.
func TestChromiumPage(t *testing.T) {
	browser := chromium.Path(t)
	_, ts := start(t, Config{})
	hostile := `<script>alert("x")</script><img src=x onerror=alert(1)> &id=p2#+%`
	edited := strings.Replace(article, "advertisement", "banner", 1)
	for _, d := range []string{docJSON("p1", "", article), docJSON("p2", "", edited), docJSON(hostile, "", hostile+" "+article+" </textarea>")} {
		if code, body, _ := call(t, ts, "POST", "/v1/documents", "", d); code != 200 {
			t.Fatalf("add: %d %s", code, body)
		}
	}

	t.Run("compare", func(t *testing.T) {
		t.Parallel()
		q := url.Values{"a": {article}, "b": {edited + " " + hostile}}
		doc := dom(t, browser, ts.URL+"/?"+q.Encode())
		ids, elements := chromium.Inventory(t, doc, allowedElements)
		for _, id := range []string{"stats", "documents", "compare-form", "measures", "diff-a", "diff-b", "lookup-form"} {
			if !ids[id] {
				t.Errorf("no element with id %q", id)
			}
		}
		text := textOf(doc)
		for _, want := range []string{"Jaccard", "containment of A in B", "cosine (term frequencies)", "SimHash distance", "MinHash estimate", "main text equal"} {
			if !strings.Contains(text, want) {
				t.Errorf("the page does not show %q", want)
			}
		}
		if elements["del"] == 0 || elements["ins"] == 0 {
			t.Errorf("%d del and %d ins elements: the diff is not highlighted", elements["del"], elements["ins"])
		}
		if !strings.Contains(text, `<script>alert("x")</script>`) {
			t.Error("the hostile text is not shown as text")
		}
	})

	t.Run("lookup", func(t *testing.T) {
		t.Parallel()
		doc := dom(t, browser, ts.URL+"/?id=p1")
		ids, _ := chromium.Inventory(t, doc, allowedElements)
		if !ids["document"] || !ids["near"] {
			t.Fatalf("the look-up of p1 has no document or near table: %v", ids)
		}
		var near []string
		for n := range doc.Descendants() {
			if n.Type == html.ElementNode && n.Data == "tr" && attr(n, "class") == "near" {
				id := textOf(n.FirstChild)
				near = append(near, id)
				// The link looks the near-duplicate up: its id, hostile or not, survives
				// the URL.
				link, err := url.Parse(attr(n.FirstChild.FirstChild, "href"))
				if err != nil || link.Path != "/" || link.Query().Get("id") != id {
					t.Errorf("the link of near-duplicate %q is %v (%v)", id, link, err)
				}
			}
		}
		slices.Sort(near)
		if len(near) != 2 || !strings.HasPrefix(near[0], "<script>") || near[1] != "p2" {
			t.Errorf("near-duplicates of p1 on the page: %q, want p2 and the hostile copy", near)
		}
	})

	t.Run("hostile-lookup", func(t *testing.T) {
		t.Parallel()
		doc := dom(t, browser, ts.URL+"/?id="+url.QueryEscape(hostile))
		chromium.Inventory(t, doc, allowedElements)
		if !strings.Contains(textOf(doc), hostile) {
			t.Error("the hostile id is not shown as text")
		}
	})
}

// dom loads the URL in Chromium and parses the DOM it built.
func dom(t *testing.T, browser, u string) *html.Node {
	t.Helper()
	out := chromium.Run(t, browser, u, "--dump-dom")
	doc, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// allowedElements are the elements the page is made of.
var allowedElements = map[string]bool{
	"html": true, "head": true, "body": true, "meta": true, "title": true, "style": true, "h1": true, "h2": true,
	"h3": true, "p": true, "section": true, "table": true, "tbody": true, "tr": true, "th": true, "td": true,
	"form": true, "div": true, "label": true, "textarea": true, "input": true, "button": true, "del": true,
	"ins": true, "code": true, "a": true, "small": true, "br": true, "span": true,
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// textOf returns the text of n and its descendants.
func textOf(n *html.Node) string {
	var b strings.Builder
	if n.Type == html.TextNode {
		b.WriteString(n.Data)
	}
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}
