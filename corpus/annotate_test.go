package corpus_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
)

// annotations is a run's annotations by document id, as a deduplication gives them.
type annotations map[string]corpus.Annotation

func (a annotations) get(t *testing.T) func(string) corpus.Annotation {
	return func(id string) corpus.Annotation {
		x, ok := a[id]
		if !ok {
			t.Errorf("Annotate called with %q, not a document of the input", id)
		}
		return x
	}
}

// wantFields returns the four fields as annotate mode must write a, decoded by
// encoding/json with UseNumber.
func wantFields(a corpus.Annotation) map[string]any {
	m := map[string]any{corpus.FieldCluster: nil, corpus.FieldKept: a.Kept, corpus.FieldMethod: nil, corpus.FieldScore: nil}
	if a.HasCluster {
		m[corpus.FieldCluster] = json.Number(fmt.Sprint(a.Cluster))
	}
	if a.Method != "" {
		m[corpus.FieldMethod] = a.Method
		if a.Method != "exact" {
			m[corpus.FieldScore] = json.Number(fmt.Sprint(a.Score))
		}
	}
	return m
}

// decodeObject decodes one JSON object with numbers as json.Number.
func decodeObject(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%q does not decode: %v", b, err)
	}
	return m
}

// readDecompressed reads a file whole, decompressed as corpus reads it.
func readDecompressed(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := corpus.ReadAll(f, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCopyAnnotateJSONL annotates a JSONL file, plain and compressed, with hostile ids,
// odd line ends, a bad line, a nested field of an annotation's name (kept) and top-level
// ones (replaced), and checks every output line against encoding/json: the same record
// with the four fields, and the rest of the line's bytes unchanged.
func TestCopyAnnotateJSONL(t *testing.T) {
	lines := []string{
		`{"id":"a","text":"one"}` + "\n",
		`{"id":"b \"q\" \u00e9 ☃ \\","text":"two","meta":{"dup_kept":"nested stays"}}  ` + "\r\n",
		`{"id":"c","text":"three","dup_kept":"old","dup_score":1,"dup_cluster":null,"dup\u005fmethod":"x"}` + "\n",
		"not json\n",
		"\n",
		`{ "id" : "d\nx", "text":"four", "x":[1,{"y":"}"}] } ` + "\n",
		`{"id":"f","text":"six"}` + "\n",
		`{"id":"e","text":"five"}`,
	}
	ann := annotations{
		"a":                   {Kept: true},
		"b \"q\" \u00e9 ☃ \\": {Cluster: 0, HasCluster: true, Kept: true},
		"c":                   {Cluster: 0, HasCluster: true, Method: "simhash", Score: 3},
		"d\nx":                {Cluster: 7, HasCluster: true, Method: "exact"},
		"e":                   {Cluster: 7, HasCluster: true, Kept: true},
		"f":                   {Cluster: 0, HasCluster: true, Method: "minhash", Score: 0.8672},
	}
	plain := []byte(strings.Join(lines, ""))
	for _, tc := range []struct {
		name string
		data []byte
	}{{"in.jsonl", plain}, {"in.jsonl.gz", gzipBytes(plain)}, {"in.jsonl.zst", zstdBytes(plain)}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, tc.name)
			writeFile(t, in, tc.data)
			out := filepath.Join(dir, "out")
			st, err := corpus.Copy([]string{in}, corpus.Options{OnError: func(corpus.BadRecord) error { return nil }}, out,
				corpus.CopyOptions{Annotate: ann.get(t), Keep: func(string) bool { return false }})
			if err != nil {
				t.Fatal(err)
			}
			if st.Kept != int64(len(ann)) || st.Bad != 1 {
				t.Errorf("Stats %+v; want Kept %d (every document) and Bad 1", st, len(ann))
			}
			raw, _ := os.ReadFile(filepath.Join(out, tc.name))
			if !bytes.Equal(raw[:2], tc.data[:2]) {
				t.Errorf("the output starts %x, the input %x: not compressed the same way", raw[:2], tc.data[:2])
			}
			got := bytes.SplitAfter(readDecompressed(t, filepath.Join(out, tc.name)), []byte("\n"))
			var want []string
			for _, l := range lines {
				if strings.HasPrefix(l, "{") {
					want = append(want, l)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d lines out, want %d: %q", len(got), len(want), got)
			}
			for i, g := range got {
				checkAnnotatedLine(t, g, []byte(want[i]), ann)
			}
		})
	}
}

// checkAnnotatedLine checks one annotated line against the input line it came from.
func checkAnnotatedLine(t *testing.T, got, in []byte, ann annotations) {
	t.Helper()
	m, orig := decodeObject(t, got), decodeObject(t, in)
	id := orig["id"].(string)
	replaced := false
	for k, v := range wantFields(ann[id]) {
		if _, ok := orig[k]; ok {
			replaced = true
		}
		if !reflect.DeepEqual(m[k], v) {
			t.Errorf("%q: %s is %#v, want %#v", id, k, m[k], v)
		}
		delete(m, k)
		delete(orig, k)
	}
	if !reflect.DeepEqual(m, orig) {
		t.Errorf("%q: the record's own fields changed: %v, want %v", id, m, orig)
	}
	if bytes.Count(got, []byte(`"`+corpus.FieldKept+`":`)) != bytes.Count(in, []byte(`"`+corpus.FieldKept+`":`))+1-b2i(replaced) {
		t.Errorf("%q: %s written beside the record's own: %s", id, corpus.FieldKept, got)
	}
	trimmed := bytes.TrimRight(in, " \r\n")
	if !replaced && !bytes.HasPrefix(got, trimmed[:len(trimmed)-1]) {
		t.Errorf("the line was re-encoded:\n%s\nfrom\n%s", got, in)
	}
	if !bytes.HasSuffix(got, in[len(trimmed):]) {
		t.Errorf("%q: the line end changed: %q from %q", id, got, in)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestCopyAnnotateSidecar annotates a WARC file and a directory with hostile file names:
// the records are copied unchanged, and the sidecar has one line per document.
func TestCopyAnnotateSidecar(t *testing.T) {
	dir := t.TempDir()
	warc := filepath.Join(dir, "crawl.warc.gz")
	var pages []warcPage
	for i := range 5 {
		pages = append(pages, warcPage{ID: fmt.Sprintf("urn:uuid:p-%d", i), URL: fmt.Sprintf("https://example.com/%d", i),
			ContentType: "text/html", HTML: fmt.Appendf(nil, "<p>page %d</p>", i)})
	}
	packWARC(t, warc, true, pages)
	site := filepath.Join(dir, "site")
	names := []string{"a b.txt", "é/ü.html", `q"uote\.txt`, "sub/x.htm", "notes.md", "z\n.txt"}
	for i, n := range names {
		writeFile(t, filepath.Join(site, n), fmt.Appendf(nil, "file %d", i))
	}
	ann := annotations{}
	for i, p := range pages {
		ann[p.ID] = corpus.Annotation{Cluster: 1, HasCluster: i < 3, Kept: i != 1 && i != 2, Method: map[int]string{1: "exact", 2: "minhash"}[i], Score: 0.5}
	}
	for i, n := range names[:4] {
		ann[filepath.ToSlash(n)] = corpus.Annotation{Cluster: 2, HasCluster: true, Kept: i == 0, Method: map[bool]string{false: "simhash"}[i == 0], Score: 4}
	}
	ann["z\n.txt"] = corpus.Annotation{Kept: true}
	out, plain := filepath.Join(dir, "out"), filepath.Join(dir, "plain")
	if _, err := corpus.Copy([]string{warc, site}, corpus.Options{}, out, corpus.CopyOptions{Annotate: ann.get(t)}); err != nil {
		t.Fatal(err)
	}
	if _, err := corpus.Copy([]string{warc, site}, corpus.Options{}, plain, corpus.CopyOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range append([]string{"crawl.warc.gz"}, names[:4]...) {
		a, _ := os.ReadFile(filepath.Join(out, n))
		b, err := os.ReadFile(filepath.Join(plain, n))
		if err != nil || !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s: the annotated copy differs from the plain one (%v)", n, err)
		}
	}
	recs, _, _ := readAll(t, []string{warc, site}, corpus.Options{})
	var lines [][]byte
	for _, n := range []string{"crawl.warc.gz", "site"} {
		f, err := os.Open(filepath.Join(out, n+corpus.SidecarSuffix))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
		f.Close()
	}
	if len(lines) != len(recs) || len(recs) != len(ann) {
		t.Fatalf("%d sidecar lines, %d records, %d annotations", len(lines), len(recs), len(ann))
	}
	for i, l := range lines {
		m := decodeObject(t, l)
		if m["id"] != recs[i].ID || m["source"] != recs[i].Source.String() {
			t.Errorf("line %d: id %q source %q, want %q %q", i, m["id"], m["source"], recs[i].ID, recs[i].Source)
		}
		delete(m, "id")
		delete(m, "source")
		if want := wantFields(ann[recs[i].ID]); !reflect.DeepEqual(m, want) {
			t.Errorf("line %d (%q): %v, want %v", i, recs[i].ID, m, want)
		}
	}
}

// TestCopyRemoved splits inputs of every format into kept and removed records: together
// they are the input, record for record, in the same formats.
func TestCopyRemoved(t *testing.T) {
	dir := t.TempDir()
	var jsonl bytes.Buffer
	for i := range 40 {
		fmt.Fprintf(&jsonl, `{"id":"j%d \"é\"","text":"text %d"}`+"\n", i, i)
	}
	inputs := []string{filepath.Join(dir, "a.jsonl.gz"), filepath.Join(dir, "b.jsonl.zst"), filepath.Join(dir, "c.warc"), filepath.Join(dir, "d.warc.gz"), filepath.Join(dir, "site")}
	writeFile(t, inputs[0], gzipBytes(jsonl.Bytes()))
	writeFile(t, inputs[1], zstdBytes(bytes.ReplaceAll(jsonl.Bytes(), []byte(`"j`), []byte(`"k`))))
	for k, gz := range []bool{false, true} {
		var pages []warcPage
		for i := range 9 {
			pages = append(pages, warcPage{ID: fmt.Sprintf("urn:%d:%d", k, i), URL: fmt.Sprintf("https://example.com/%d", i), ContentType: "text/html", HTML: fmt.Appendf(nil, "<p>%d</p>", i)})
		}
		packWARC(t, inputs[2+k], gz, pages)
	}
	for i, n := range []string{"x.txt", "y y/z.html", "é.txt", "w.txt"} {
		writeFile(t, filepath.Join(inputs[4], n), fmt.Appendf(nil, "file %d", i))
	}
	all, _, _ := readAll(t, inputs, corpus.Options{})
	keep := map[string]bool{}
	for i, r := range all {
		keep[r.ID] = i%3 != 1
	}
	out, removed := filepath.Join(dir, "out"), filepath.Join(dir, "removed")
	st, err := corpus.Copy(inputs, corpus.Options{}, out, corpus.CopyOptions{Keep: func(id string) bool { return keep[id] }, Removed: removed})
	if err != nil {
		t.Fatal(err)
	}
	if st.Kept+st.Removed != int64(len(all)) || st.Removed == 0 {
		t.Errorf("Stats %+v for %d records", st, len(all))
	}
	var outs [2][]string
	for _, in := range inputs[:4] {
		outs[0] = append(outs[0], filepath.Join(out, filepath.Base(in)))
		outs[1] = append(outs[1], filepath.Join(removed, filepath.Base(in)))
	}
	// A directory's files are copied to the same paths under the output directory, as a
	// Dir of which the other outputs are files of no known type.
	outs[0], outs[1] = append(outs[0], out), append(outs[1], removed)
	kept, _, _ := readAll(t, outs[0], corpus.Options{})
	gone, _, _ := readAll(t, outs[1], corpus.Options{})
	for i, r := range all {
		half := &gone
		if keep[r.ID] {
			half = &kept
		}
		if len(*half) == 0 {
			t.Fatalf("record %d (%q) is in neither half", i, r.ID)
		}
		got := (*half)[0]
		*half = (*half)[1:]
		if got.ID != r.ID || got.Text != r.Text || !bytes.Equal(got.HTML, r.HTML) || got.URL != r.URL {
			t.Fatalf("record %d: got %q, want %q", i, got.ID, r.ID)
		}
	}
	if len(kept)+len(gone) != 0 {
		t.Errorf("%d records more than the input", len(kept)+len(gone))
	}
	if _, err := corpus.Copy(inputs, corpus.Options{}, filepath.Join(dir, "o2"), corpus.CopyOptions{Removed: filepath.Join(dir, "o2", ".")}); err == nil {
		t.Error("Removed = the output directory: no error")
	}
}

func TestCopyAnnotateBadAnnotation(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeFile(t, in, []byte(`{"text":"x"}`+"\n"))
	for i, a := range []corpus.Annotation{{Method: "cosine"}, {Method: "minhash", Score: math.NaN()}, {Method: "simhash", Score: math.Inf(1)}} {
		_, err := corpus.Copy([]string{in}, corpus.Options{}, filepath.Join(dir, fmt.Sprint(i)), corpus.CopyOptions{Annotate: func(string) corpus.Annotation { return a }})
		if err == nil || !strings.HasPrefix(err.Error(), "corpus: ") {
			t.Errorf("annotation %+v: error %v", a, err)
		}
	}
}
