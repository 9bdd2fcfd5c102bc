package corpus_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/evaldata"
)

func TestJSONLLines(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		opt        corpus.Options
		want       corpus.Record // ID, URL, Text, HTML, Priority, FetchTime compared
		bad        error
	}{
		{name: "text", line: `{"id":"a","text":"héllo","url":"http://x/"}`, want: corpus.Record{ID: "a", Text: "héllo", URL: "http://x/"}},
		{name: "html", line: `{"id":7,"html":"<p>x</p>"}`, want: corpus.Record{ID: "7", HTML: []byte("<p>x</p>")}},
		{name: "no id", line: `{"text":"t"}`, want: corpus.Record{ID: "F:1", Text: "t"}},
		{name: "null id", line: `{"id":null,"text":"t"}`, want: corpus.Record{ID: "F:1", Text: "t"}},
		{name: "escapes", line: `{"id":"\u00e9","text":"a\nb\ud83d\ude00"}`, want: corpus.Record{ID: "é", Text: "a\nb😀"}},
		{name: "nested", line: `{"doc":{"key":"k"},"body":{"t":"x"},"meta":{"url":"u","p":2.5,"at":"2024-01-02T03:04:05Z"}}`,
			opt:  corpus.Options{IDField: "doc.key", TextField: "body.t", URLField: "meta.url", PriorityField: "meta.p", TimeField: "meta.at"},
			want: corpus.Record{ID: "k", Text: "x", URL: "u", Priority: 2.5, FetchTime: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}},
		{name: "invalid JSON", line: `{"id":"a","text":`, bad: corpus.ErrSyntax},
		{name: "not an object", line: `["a"]`, bad: corpus.ErrSyntax},
		{name: "invalid UTF-8", line: "{\"id\":\"a\",\"text\":\"\xff\"}", bad: corpus.ErrUTF8},
		{name: "no text", line: `{"id":"a","url":"u"}`, bad: corpus.ErrField},
		{name: "text not a string", line: `{"id":"a","text":3}`, bad: corpus.ErrField},
		{name: "empty id", line: `{"id":"","text":"t"}`, bad: corpus.ErrField},
		{name: "object id", line: `{"id":{},"text":"t"}`, bad: corpus.ErrField},
		{name: "bad priority", line: `{"text":"t","p":"high"}`, opt: corpus.Options{PriorityField: "p"}, bad: corpus.ErrField},
		{name: "bad time", line: `{"text":"t","at":"yesterday"}`, opt: corpus.Options{TimeField: "at"}, bad: corpus.ErrField},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "F")
			writeFile(t, path, []byte(tc.line+"\n"))
			tc.opt.Format = corpus.JSONL
			t.Chdir(dir)
			recs, bad, st := readAll(t, []string{"F"}, tc.opt)
			if tc.bad != nil {
				if len(bad) != 1 || !errors.Is(bad[0], tc.bad) || len(recs) != 0 || st.Bad != 1 {
					t.Fatalf("got %v, %v; want one bad record, %v", recs, bad, tc.bad)
				}
				if !strings.HasPrefix(bad[0].Error(), "F:1: corpus: ") {
					t.Errorf("message %q does not start with F:1: corpus:", bad[0])
				}
				return
			}
			if len(bad) != 0 || len(recs) != 1 {
				t.Fatalf("got %v, %v", recs, bad)
			}
			got := recs[0]
			if got.ID != tc.want.ID || got.Text != tc.want.Text || got.URL != tc.want.URL || !bytes.Equal(got.HTML, tc.want.HTML) ||
				got.Priority != tc.want.Priority || !got.FetchTime.Equal(tc.want.FetchTime) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			if got.Source != (corpus.Source{File: "F", Format: corpus.JSONL, Line: 1}) {
				t.Errorf("Source %+v", got.Source)
			}
		})
	}
}

// debianJSONL returns JSONL lines of debian-doc-versions pages (id, url, text, html).
func debianJSONL(t testing.TB, n int) ([]byte, []evaldata.Page) {
	t.Helper()
	root, err := evaldata.Root()
	evaldata.Need(t, err)
	pages, _, err := evaldata.DebianPages(root)
	if err != nil {
		t.Fatal(err)
	}
	pages = pages[:min(n, len(pages))]
	var b bytes.Buffer
	for _, p := range pages {
		fmt.Fprintf(&b, "{\"id\":%q,\"url\":%q,\"html\":%s}\n", p.ID, "https://debian.example/"+p.ID, jsonString(p.HTML))
	}
	return b.Bytes(), pages
}

// jsonString quotes b as a JSON string (Go's %q is not JSON for every byte).
func jsonString(b []byte) string {
	var s strings.Builder
	s.WriteByte('"')
	for _, r := range string(b) {
		switch {
		case r == '"' || r == '\\':
			s.WriteByte('\\')
			s.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&s, `\u%04x`, r)
		default:
			s.WriteRune(r)
		}
	}
	s.WriteByte('"')
	return s.String()
}

func TestJSONLCompressedAndCopy(t *testing.T) {
	plain, pages := debianJSONL(t, 300)
	for _, tc := range []struct {
		name string
		data []byte
	}{{"pages.jsonl", plain}, {"pages.jsonl.gz", gzipBytes(plain)}, {"pages.jsonl.zst", zstdBytes(plain)}, {"pages.data", gzipBytes(plain)}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, tc.name)
			writeFile(t, in, tc.data)
			recs, bad, st := readAll(t, []string{in}, corpus.Options{})
			if len(bad) != 0 || len(recs) != len(pages) {
				t.Fatalf("%d records, bad %v; want %d", len(recs), bad, len(pages))
			}
			for i, r := range recs {
				if r.ID != pages[i].ID || !bytes.Equal(r.HTML, pages[i].HTML) || r.Source.Line != i+1 {
					t.Fatalf("record %d: %s line %d, want %s", i, r.ID, r.Source.Line, pages[i].ID)
				}
			}
			if st.Bytes != int64(len(tc.data)) || st.Total != int64(len(tc.data)) || st.Records != int64(len(pages)) {
				t.Errorf("Stats %+v; want Bytes = Total = %d", st, len(tc.data))
			}
			out := filepath.Join(dir, "out")
			keep := map[string]bool{}
			for i, p := range pages {
				keep[p.ID] = i%3 == 0
			}
			st, err := corpus.Copy([]string{in}, corpus.Options{}, out, corpus.CopyOptions{Keep: func(id string) bool { return keep[id] }})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			var wantLines bytes.Buffer
			for i, line := range bytes.SplitAfter(plain, []byte("\n")) {
				if i < len(pages) && keep[pages[i].ID] {
					want = append(want, pages[i].ID)
					wantLines.Write(line)
				}
			}
			if st.Kept != int64(len(want)) || len(want) == 0 {
				t.Errorf("Kept %d, want %d", st.Kept, len(want))
			}
			copied, err := os.ReadFile(filepath.Join(out, tc.name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(copied[:2], tc.data[:2]) {
				t.Errorf("the copy starts %x, the input %x: not compressed the same way", copied[:2], tc.data[:2])
			}
			back, bad, _ := readAll(t, []string{filepath.Join(out, tc.name)}, corpus.Options{})
			if len(bad) != 0 || len(back) != len(want) {
				t.Fatalf("read back %d records, bad %v; want %d", len(back), bad, len(want))
			}
			for i, r := range back {
				if r.ID != want[i] {
					t.Fatalf("copy record %d is %s, want %s", i, r.ID, want[i])
				}
			}
			if tc.name == "pages.jsonl" && !bytes.Equal(copied, wantLines.Bytes()) {
				t.Errorf("the copy's lines differ from the input's")
			}
		})
	}
}

func TestJSONLDamaged(t *testing.T) {
	lines := []byte(`{"id":"a","text":"one"}` + "\n" + `{"id":"b","text":"two"}` + "\n" + `{"id":"c","text":"three"}` + "\n")
	long := []byte(`{"id":"a","text":"` + strings.Repeat("x", 200) + `"}` + "\n" + `{"id":"b","text":"two"}` + "\n")
	bomb := gzipBytes(append([]byte(`{"id":"a","text":"`), make([]byte, 64<<20)...))
	for _, tc := range []struct {
		name    string
		data    []byte
		max     int
		ids     []string
		bad     error
		badLine int
	}{
		{"truncated gzip", gzipBytes(lines)[:15], 0, nil, corpus.ErrTruncated, 1},
		{"truncated gzip tail", gzipBytes(lines)[:len(gzipBytes(lines))-4], 0, []string{"a", "b", "c"}, corpus.ErrTruncated, 4},
		{"truncated zstd", zstdBytes(lines)[:len(zstdBytes(lines))-6], 0, nil, corpus.ErrTruncated, 1},
		{"oversized line", long, 100, []string{"b"}, corpus.ErrTooLarge, 1},
		{"oversized line gzip", gzipBytes(long), 100, []string{"b"}, corpus.ErrTooLarge, 1}, // within the read buffer: the file goes on
		{"gzip bomb", bomb, 1 << 20, nil, corpus.ErrTooLarge, 1},
		{"duplicate id", append(lines, `{"id":"b","text":"again"}`+"\n"...), 0, []string{"a", "b", "c"}, corpus.ErrDuplicateID, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.jsonl")
			writeFile(t, path, tc.data)
			recs, bad, st := readAll(t, []string{path}, corpus.Options{MaxRecordBytes: tc.max, Format: corpus.JSONL})
			var ids []string
			for _, r := range recs {
				ids = append(ids, r.ID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tc.ids) {
				t.Errorf("ids %v, want %v", ids, tc.ids)
			}
			if len(bad) != 1 || !errors.Is(bad[0], tc.bad) || bad[0].Source.Line != tc.badLine || st.Bad != 1 {
				t.Errorf("bad records %v, Stats %+v; want one %v on line %d", bad, st, tc.bad, tc.badLine)
			}
		})
	}
}

func TestOnErrorStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.jsonl")
	writeFile(t, path, []byte("{\"text\":\"a\"}\nnot json\n{\"text\":\"b\"}\n"))
	stop := errors.New("stop")
	r, err := corpus.Open([]string{path}, corpus.Options{OnError: func(b corpus.BadRecord) error {
		if b.Source.Line != 2 || !errors.Is(b, corpus.ErrSyntax) {
			t.Errorf("BadRecord %v", b)
		}
		return stop
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != stop {
		t.Errorf("Next after a bad record: %v, want OnError's error", err)
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b", "page.html"), []byte("<p>b</p>"))
	writeFile(t, filepath.Join(dir, "a.txt"), []byte("text a"))
	writeFile(t, filepath.Join(dir, "c.htm.gz"), gzipBytes([]byte("<p>c</p>")))
	writeFile(t, filepath.Join(dir, "d.TXT.zst"), zstdBytes([]byte("text d")))
	writeFile(t, filepath.Join(dir, "e.txt"), []byte("\xff latin-1"))
	writeFile(t, filepath.Join(dir, "f.pdf"), []byte("%PDF"))
	writeFile(t, filepath.Join(dir, "g.html"), bytes.Repeat([]byte("x"), 2000))
	recs, bad, st := readAll(t, []string{dir}, corpus.Options{MaxRecordBytes: 1000})
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s=%s%s", r.ID, r.Text, r.HTML))
	}
	if want := "[a.txt=text a b/page.html=<p>b</p> c.htm.gz=<p>c</p> d.TXT.zst=text d]"; fmt.Sprint(got) != want {
		t.Errorf("got %v\nwant %s", got, want)
	}
	if len(bad) != 2 || !errors.Is(bad[0], corpus.ErrUTF8) || !errors.Is(bad[1], corpus.ErrTooLarge) || st.Skipped != 1 {
		t.Errorf("bad %v, Stats %+v; want e.txt ErrUTF8, g.html ErrTooLarge, one skipped", bad, st)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := corpus.Copy([]string{dir}, corpus.Options{MaxRecordBytes: 1000}, out, corpus.CopyOptions{Keep: func(id string) bool { return id != "a.txt" }}); err != nil {
		t.Fatal(err)
	}
	back, _, _ := readAll(t, []string{out}, corpus.Options{})
	if len(back) != 3 || back[0].ID != "b/page.html" {
		t.Errorf("copy holds %v", back)
	}
}

func TestDuplicateIDsAcrossInputs(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeFile(t, a, []byte("{\"id\":\"x\",\"text\":\"1\"}\n{\"text\":\"2\"}\n"))
	writeFile(t, b, []byte("{\"id\":\"x\",\"text\":\"3\"}\n{\"text\":\"4\"}\n"))
	recs, bad, _ := readAll(t, []string{a, b}, corpus.Options{})
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	if want := fmt.Sprint([]string{"x", a + ":2", b + ":2"}); fmt.Sprint(ids) != want {
		t.Errorf("ids %v, want %s", ids, want)
	}
	if len(bad) != 1 || !errors.Is(bad[0], corpus.ErrDuplicateID) || bad[0].Source.File != b || strings.Contains(bad[0].Error(), "parent directory") {
		t.Errorf("bad %v", bad)
	}

	// Two directories of the same relative paths: the error says what to give instead.
	da, db := filepath.Join(dir, "v1"), filepath.Join(dir, "v2")
	writeFile(t, filepath.Join(da, "p.txt"), []byte("one"))
	writeFile(t, filepath.Join(db, "p.txt"), []byte("two"))
	_, bad, _ = readAll(t, []string{da, db}, corpus.Options{})
	if len(bad) != 1 || !errors.Is(bad[0], corpus.ErrDuplicateID) || !strings.Contains(bad[0].Error(), "give their parent directory instead") {
		t.Errorf("bad %v", bad)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "odd")
	writeFile(t, odd, []byte("hello"))
	for _, tc := range []struct {
		paths []string
		opt   corpus.Options
	}{
		{nil, corpus.Options{}},
		{[]string{filepath.Join(dir, "missing")}, corpus.Options{}},
		{[]string{odd}, corpus.Options{}},
		{[]string{dir}, corpus.Options{Format: corpus.JSONL}},
		{[]string{odd}, corpus.Options{Format: corpus.Dir}},
		{[]string{odd}, corpus.Options{IDField: "a..b"}},
	} {
		if _, err := corpus.Open(tc.paths, tc.opt); err == nil || !strings.HasPrefix(err.Error(), "corpus: ") {
			t.Errorf("Open(%v, %+v) = %v; want a corpus: error", tc.paths, tc.opt, err)
		}
	}
}

func TestReadAll(t *testing.T) {
	text := []byte(strings.Repeat("a page of text ", 100))
	for name, in := range map[string][]byte{"plain": text, "gzip": gzipBytes(text), "zstd": zstdBytes(text)} {
		got, err := corpus.ReadAll(bytes.NewReader(in), len(text))
		if err != nil || !bytes.Equal(got, text) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := corpus.ReadAll(bytes.NewReader(in), len(text)-1); !errors.Is(err, corpus.ErrTooLarge) {
			t.Errorf("%s, one byte over: %v", name, err)
		}
	}
	bomb := gzipBytes(make([]byte, 64<<20))
	if _, err := corpus.ReadAll(bytes.NewReader(bomb), 1<<20); !errors.Is(err, corpus.ErrTooLarge) {
		t.Errorf("gzip bomb: %v", err)
	}
	gz := gzipBytes(text)
	if _, err := corpus.ReadAll(bytes.NewReader(gz[:len(gz)/2]), 1<<20); !errors.Is(err, corpus.ErrTruncated) {
		t.Errorf("truncated gzip: %v", err)
	}
}
