package htmlpage

import (
	"bytes"
	"html/template"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/measure"
)

// viaTemplate renders s with html/template in the contexts a Builder supports, so that
// its escaping is the oracle.
var viaTemplate = template.Must(template.New("").Parse(
	`<p>{{.}}</p><p title="{{.}}">x</p><title>{{.}}</title><textarea>{{.}}</textarea>`))

func viaBuilder(s string) string {
	var b Builder
	b.Markup("<p>")
	b.Text(s)
	b.Printf(`</p><p title="%s">x</p><title>%v</title>`, s, s)
	b.Printf("<textarea>%s</textarea>", s)
	return string(b.Bytes())
}

func checkAsTemplate(t *testing.T, s string) {
	t.Helper()
	var want bytes.Buffer
	if err := viaTemplate.Execute(&want, s); err != nil {
		t.Fatal(err)
	}
	if got := viaBuilder(s); got != want.String() {
		t.Errorf("%q:\n got %q\nwant %q", s, got, want.String())
	}
}

var samples = []string{
	"", "plain", `<script>alert("x")</script>`, `" onmouseover='x'`, "a & b; &amp;",
	"1+1", "nul\x00byte", "</textarea><b>", "</title>", "日本語 ، עברית", "\r\n\t",
	"&#34;", "<!-- -->", "{{.}}", "% %d %s",
}

func TestEscapesAsHTMLTemplate(t *testing.T) {
	for _, s := range samples {
		checkAsTemplate(t, s)
	}
	checkAsTemplate(t, strings.Repeat("<&'\"+\x00x", 10000))
}

func FuzzEscapesAsHTMLTemplate(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAsTemplate(t, s)
	})
}

func TestPrintf(t *testing.T) {
	var b Builder
	b.Printf(`<td class="num">%d</td><td>%.2f</td><td>%s</td><td>%s</td><td>%v</td>`,
		-12, 0.125, HTML("<b>kept</b>"), "<i>escaped</i>", []string{"a+b"})
	b.Markup("<p>100%</p>")
	want := `<td class="num">-12</td><td>0.12</td><td><b>kept</b></td><td>&lt;i&gt;escaped&lt;/i&gt;</td><td>[a&#43;b]</td><p>100%</p>`
	if got := string(b.Bytes()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestPrintfLeavesArgs checks that Printf does not write into the slice a caller passes as args.
func TestPrintfLeavesArgs(t *testing.T) {
	args := []any{"<", HTML("<")}
	var b Builder
	b.Printf("%s%s", args...)
	if args[0] != "<" || args[1] != HTML("<") {
		t.Errorf("args changed to %#v", args)
	}
	if got := string(b.Bytes()); got != "&lt;<" {
		t.Errorf("got %q", got)
	}
}

func TestTextAllocs(t *testing.T) {
	var b Builder
	s := strings.Repeat(`a<b>"c"&'d'+`, 100)
	b.buf.Grow(1 << 20)
	if n := testing.AllocsPerRun(100, func() { b.Text(s) }); n != 0 {
		t.Errorf("Text: %v allocations, want 0", n)
	}
}

func TestSegments(t *testing.T) {
	var b Builder
	b.Segments([]measure.Segment{{Text: "a <b> "}, {Text: "c&d", Changed: true}, {Text: "."}}, "del")
	if got, want := string(b.Bytes()), "a &lt;b&gt; <del>c&amp;d</del>."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
