package extract

import (
	"strings"
	"testing"

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
