package report

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

var update = flag.Bool("update", false, "rewrite testdata/report.golden.html from the current code")

const golden = "testdata/report.golden.html"

// hostile are corpus texts that try to break out of the page: markup, the ends of raw
// text elements, quotes, invalid UTF-8, a NUL, right-to-left text and a very long line.
var hostile = []string{
	`<script>alert("x")</script><img src=x onerror=alert(1)>`,
	`</textarea></title></style></div></td></table><svg onload=alert(1)>`,
	`" onmouseover="alert(1)" ' x='`,
	"bad \xff\xfe bytes and a \x00 NUL",
	"مرحبا بالعالم، هذه صفحة مكررة",
	strings.Repeat("long-line-without-spaces-", 200),
}

// testData is a small report with every section filled in and hostile texts, ids and
// URLs in its clusters.
func testData() Data {
	rep := "PostgreSQL 15.18 Documentation\n\nChapter 8. Data Types: PostgreSQL has a rich set of native data types available to users."
	return Data{
		Title: `neardup dedup: corpus.jsonl <b>&</b>`,
		Params: []Field{
			{"method", "simhash"}, {"distance", "3"}, {"keep", "oldest"}, {"threads", "8"},
		},
		Summary: []Field{
			{"documents", "12,345"}, {"exact duplicates", "321"}, {"near duplicates", "1,024"},
			{"clusters", "410"}, {"dropped bytes", "48.2 MiB"}, {"time: fingerprint", "3.2 s"},
		},
		ClusterSizes: []SizeCount{{2, 300}, {3, 70}, {4, 25}, {5, 8}, {9, 4}, {3, 2}, {40, 1}},
		Scores: Histogram{
			Label:     "SimHash distance (bits)",
			Bins:      []Bin{{-0.5, 0.5, 900}, {0.5, 1.5, 60}, {1.5, 2.5, 40}, {2.5, 3.5, 24}, {3.5, 4.5, 3}},
			Threshold: 3.5,
		},
		Largest: []Cluster{
			{ID: 7, Size: 40,
				Representative: Member{ID: "doc-1", URL: "https://www.postgresql.org/docs/15/datatype.html", Text: rep},
				Members: []Member{
					{ID: "doc-2", URL: "https://mirror.example/pg/15/datatype.html", Score: "1 bit",
						Text: strings.Replace(rep, "15.18", "15.20", 1)},
					{ID: "doc-3", URL: "https://old.example/pg/datatype.html", Score: "3 bits",
						Text: strings.Replace(rep, "a rich set of", "many", 1) + " See also Chapter 9."},
				}},
			{ID: 9, Size: 9,
				Representative: Member{ID: hostile[2], URL: "javascript:alert(1)", Text: hostile[0]},
				Members: []Member{
					{ID: "h1", URL: hostile[1], Score: hostile[0], Text: hostile[0] + " " + hostile[1]},
					{ID: "h2", Score: "2 bits", Text: hostile[3]},
				}},
		},
		Borderline: []Cluster{
			{ID: 12, Size: 2,
				Representative: Member{ID: "rtl-1", URL: "https://ar.example/a", Text: hostile[4]},
				Members:        []Member{{ID: "rtl-2", URL: "https://ar.example/b", Score: "3 bits", Text: hostile[4] + " جديدة"}}},
			{ID: 13, Size: 3,
				Representative: Member{ID: "long-1", Text: hostile[5]},
				Members:        []Member{{ID: "long-2", Score: "3 bits", Text: hostile[5] + "x"}}},
			{ID: 14, Size: 2, Representative: Member{ID: "alone", Text: "A representative shown without members."}},
		},
		Mirrors: []Mirror{
			{HostA: "www.postgresql.org", PrefixA: "/docs/15/", HostB: "mirror.example", PrefixB: "/pg/15/",
				Shared: 1200, Same: 1180, Score: 1180.0 / 1200, Coverage: 0.93},
			{HostA: "a.example", PrefixA: "/<script>/", HostB: "b.example", PrefixB: "/", Shared: 3, Same: 3, Score: 1, Coverage: 1},
		},
	}
}

func write(t testing.TB, d Data) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	got := write(t, testData())
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the report differs from %s; if the change is meant, run go test -run Golden -update and review the diff", golden)
	}
}

// TestDeterministic checks that the bytes depend on the data only: the same data gives the
// same page, and the order of ClusterSizes and Scores.Bins does not matter.
func TestDeterministic(t *testing.T) {
	d := testData()
	first := write(t, d)
	if again := write(t, d); !bytes.Equal(first, again) {
		t.Fatal("two writes of the same data differ")
	}
	slices.Reverse(d.ClusterSizes)
	slices.Reverse(d.Scores.Bins)
	if shuffled := write(t, d); !bytes.Equal(first, shuffled) {
		t.Fatal("the order of ClusterSizes or Scores.Bins changes the page")
	}
}

// TestDataUntouched checks that Write neither modifies nor keeps the caller's slices.
func TestDataUntouched(t *testing.T) {
	d, want := testData(), testData()
	write(t, d)
	if !reflect.DeepEqual(d, want) {
		t.Fatal("Write modified its Data")
	}
}

// TestEscaping parses the page as a browser would and checks that no corpus text became
// markup: only the elements the template writes are there, and every text reads back as
// given (made valid UTF-8, NUL replaced).
func TestEscaping(t *testing.T) {
	d := testData()
	doc, err := html.Parse(bytes.NewReader(write(t, d)))
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]bool{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		if !allowedElements[n.Data] {
			t.Errorf("element <%s> in the page", n.Data)
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") || a.Key == "src" || a.Key == "style" {
				t.Errorf("attribute %s=%q on <%s>", a.Key, a.Val, n.Data)
			}
		}
		if n.Data == "div" && hasClass(n, "text") {
			texts[textOf(n)] = true
		}
	}
	for _, c := range slices.Concat(d.Largest, d.Borderline) {
		for _, m := range append([]Member{c.Representative}, c.Members...) {
			if want := browserText(m.Text); !texts[want] {
				t.Errorf("member %q: its text does not read back from the page: %.60q", m.ID, want)
			}
		}
	}
}

// allowedElements are the elements the template writes.
var allowedElements = map[string]bool{
	"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true,
	"header": true, "h1": true, "nav": true, "a": true, "main": true, "section": true,
	"h2": true, "div": true, "table": true, "caption": true, "thead": true, "tbody": true,
	"tr": true, "th": true, "td": true, "p": true, "details": true, "summary": true,
	"svg": true, "desc": true, "line": true, "text": true, "rect": true, "bdi": true,
	"span": true, "del": true, "ins": true, "footer": true,
}

func hasClass(n *html.Node, class string) bool {
	for _, a := range n.Attr {
		if a.Key == "class" && slices.Contains(strings.Fields(a.Val), class) {
			return true
		}
	}
	return false
}

func textOf(n *html.Node) string {
	var s strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			s.WriteString(d.Data)
		}
	}
	return s.String()
}

// browserText is s as a browser reads it: invalid UTF-8 and NUL replaced by U+FFFD, and
// every CR LF pair and lone CR made LF, as the HTML input stream's preprocessing does to
// the CRs that html/template writes as they are (only a character reference would keep
// one, and a CR shows as nothing in the page anyway).
func browserText(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

func TestWriteErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Data
	}{
		{"size 0", Data{ClusterSizes: []SizeCount{{0, 1}}}},
		{"negative count", Data{ClusterSizes: []SizeCount{{2, -1}}}},
		{"bin NaN", Data{Scores: Histogram{Bins: []Bin{{math.NaN(), 1, 1}}}}},
		{"bin infinite", Data{Scores: Histogram{Bins: []Bin{{0, math.Inf(1), 1}}}}},
		{"bin reversed", Data{Scores: Histogram{Bins: []Bin{{2, 1, 1}}}}},
		{"bin negative count", Data{Scores: Histogram{Bins: []Bin{{0, 1, -1}}}}},
		{"threshold infinite", Data{Scores: Histogram{Threshold: math.Inf(-1)}}},
		{"cluster size", Data{Borderline: []Cluster{{ID: 3, Size: -2}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, tc.d)
			if err == nil || !strings.HasPrefix(err.Error(), "report: ") {
				t.Fatalf("Write = %v, want an error prefixed \"report: \"", err)
			}
			if buf.Len() != 0 {
				t.Errorf("Write wrote %d bytes of an invalid report", buf.Len())
			}
		})
	}
	errWrite := errors.New("disk full")
	if err := Write(failingWriter{errWrite}, Data{}); !errors.Is(err, errWrite) {
		t.Errorf("Write to a failing writer = %v, want it wrapping %v", err, errWrite)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestEmpty checks that the zero Data gives a page with every section saying it is empty.
func TestEmpty(t *testing.T) {
	page := string(write(t, Data{}))
	for _, want := range []string{"<title>neardup report</title>", "No clusters.", "No pairs.", "None found."} {
		if !strings.Contains(page, want) {
			t.Errorf("the empty report lacks %q", want)
		}
	}
	if strings.Contains(page, "<svg") {
		t.Error("the empty report has a plot")
	}
}

func TestSizePlot(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sizes  []SizeCount
		labels []string // of the x ticks
		yLabel string
	}{
		{"one bar per size", []SizeCount{{2, 10}, {3, 5}, {7, 1}}, []string{"2", "3", "7"}, "clusters"},
		{"log scale", []SizeCount{{2, 5000}, {3, 40}}, []string{"2", "3"}, "clusters (log scale)"},
		{"powers of two", sizesFrom(2, 2+maxCategories), []string{"2–3", "4–7", "8–15", "16–31"}, "clusters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := sizePlot(tc.sizes)
			var labels []string
			for _, x := range p.XTicks {
				labels = append(labels, x.Label)
			}
			if !slices.Equal(labels, tc.labels) || p.YLabel != tc.yLabel {
				t.Errorf("sizePlot: x labels %q, y label %q; want %q, %q", labels, p.YLabel, tc.labels, tc.yLabel)
			}
		})
	}
}

func sizesFrom(lo, hi int) []SizeCount {
	var s []SizeCount
	for size := lo; size <= hi; size++ {
		s = append(s, SizeCount{size, 1})
	}
	return s
}

func TestScorePlot(t *testing.T) {
	for _, tc := range []struct {
		name      string
		bins      []Bin
		threshold float64
		ticks     []string
		marker    string
	}{
		{"distances", []Bin{{-0.5, 0.5, 3}, {0.5, 1.5, 2}, {1.5, 2.5, 1}}, 1.5,
			[]string{"0", "1", "2"}, "threshold 1.5"},
		{"similarities", []Bin{{0.8, 0.9, 10}, {0.9, 1, 20}}, 0.85,
			[]string{"0.8", "0.9", "1.0"}, "threshold 0.85"},
		{"fine bins", []Bin{{0, 0.01, 1}, {0.01, 1, 1}}, math.NaN(), []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}, ""},
		// A threshold outside the bins widens the axis to it.
		{"threshold outside", []Bin{{0, 1, 1}}, 2, []string{"0", "1", "2"}, "threshold 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := scorePlot(tc.bins, tc.threshold, "x")
			var ticks []string
			for _, x := range p.XTicks {
				ticks = append(ticks, x.Label)
			}
			marker := ""
			if p.Marker != nil {
				marker = p.Marker.Label
			}
			if !slices.Equal(ticks, tc.ticks) || marker != tc.marker {
				t.Errorf("scorePlot: ticks %q, marker %q; want %q, %q", ticks, marker, tc.ticks, tc.marker)
			}
		})
	}
}

func TestFormatCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567"} {
		if got := formatCount(n); got != want {
			t.Errorf("formatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzWrite checks with any text, id, URL and score that the page parses to the elements
// the template writes, with the text read back as given.
func FuzzWrite(f *testing.F) {
	for _, s := range hostile {
		f.Add(s, s, s)
	}
	f.Fuzz(func(t *testing.T, a, b, id string) {
		d := Data{Title: id, Largest: []Cluster{{ID: 1, Size: 2,
			Representative: Member{ID: id, URL: id, Text: a},
			Members:        []Member{{ID: id, URL: id, Score: id, Text: b}}}}}
		doc, err := html.Parse(bytes.NewReader(write(t, d)))
		if err != nil {
			t.Fatal(err)
		}
		var sides []string
		for n := range doc.Descendants() {
			if n.Type == html.ElementNode && !allowedElements[n.Data] {
				t.Fatalf("element <%s> in the page", n.Data)
			}
			if n.Type == html.ElementNode && n.Data == "div" && hasClass(n, "text") {
				sides = append(sides, textOf(n))
			}
		}
		if len(sides) != 2 || sides[0] != browserText(a) || sides[1] != browserText(b) {
			t.Fatalf("the texts read back as %q, want %q and %q", sides, a, b)
		}
		if !utf8.ValidString(textOf(doc)) {
			t.Fatal("the page's text is not valid UTF-8")
		}
	})
}

func BenchmarkWrite(b *testing.B) {
	d := testData()
	b.SetBytes(int64(len(write(b, d))))
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, d); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBinLabelsRounded: bounds computed in floating point are labelled as the numbers
// they stand for, in the table, the tooltips and the threshold marker.
func TestBinLabelsRounded(t *testing.T) {
	d := Data{Scores: Histogram{
		Label:     "MinHash similarity",
		Bins:      []Bin{{0.8, 0.8200000000000001, 3}, {0.8200000000000001, 0.8400000000000001, 5}, {0.8400000000000001, 0.86, 1}},
		Threshold: 0.8 + 0.01 + 0.01 - 0.01,
	}}
	var b bytes.Buffer
	if err := Write(&b, d); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<td class="num">0.82</td><td class="num">0.84</td>`, "[0.82, 0.84): 5 pairs", "threshold 0.81"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if strings.Contains(page, "0000000") {
		t.Error("the page shows a bound with floating-point noise")
	}
}
