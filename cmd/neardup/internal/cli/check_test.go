package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	args := checkPages(t, dir)
	stdout, stderr, code := run(t, "", append([]string{"check", "--url", "http://x.org/a", "--url", "http://x.org/a"}, args...)...)
	// The summary names the effective parameters, whose defaults differ from dedup's.
	summary := "neardup check: 5 pages: 2 unique, 1 url-duplicate, 1 exact-duplicate, 1 near-duplicate; with --near any --distance 3 --threshold 0.6 --keep priority,first,id, word 5-shingles\n"
	if code != ExitOK || stderr != summary {
		t.Fatalf("exit %d, stderr %q, want %q", code, stderr, summary)
	}
	quiet, stderr, code := run(t, "", append([]string{"check", "--quiet", "--url", "http://x.org/a", "--url", "http://x.org/a"}, args...)...)
	if code != ExitOK || stderr != "" || quiet != stdout {
		t.Fatalf("--quiet: exit %d, stderr %q, stdout %q", code, stderr, quiet)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	want := []string{"unique", "url-duplicate", "near-duplicate", "unique", "exact-duplicate"}
	if len(lines) != len(want) {
		t.Fatalf("output %q", stdout)
	}
	for i, line := range lines {
		var v struct {
			File     string
			Verdict  string
			Survivor string
			Matches  []struct{ ID string }
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		if v.Verdict != want[i] || v.File != args[i] {
			t.Errorf("line %d: %s", i, line)
		}
	}

	// A missing file and a binary one are reported on stderr and in a line of their own,
	// in order, and the others still run; exit 1.
	missing := filepath.Join(dir, "missing.html")
	pdf := filepath.Join(dir, "report.html")
	if err := os.WriteFile(pdf, []byte("%PDF-1.7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = run(t, "", "check", "--url", "http://x.org/m", missing, pdf, args[0])
	if code != ExitError || !strings.Contains(stderr, "missing.html") || !strings.Contains(stderr, "binary content") {
		t.Fatalf("missing file: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	if strings.Contains(stderr, missing+": open "+missing) {
		t.Errorf("stderr names the file twice: %q", stderr)
	}
	lines = strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines for 3 pages: %q", len(lines), stdout)
	}
	for i, want := range []struct{ file, url, error string }{{missing, "http://x.org/m", "no such file"}, {pdf, "", "extract: binary content"}} {
		var e struct{ File, ID, URL, Error string }
		if err := json.Unmarshal([]byte(lines[i]), &e); err != nil || e.File != want.file || e.ID != want.file || e.URL != want.url || !strings.Contains(e.Error, want.error) {
			t.Errorf("line %d: %s; want the file, its URL and %q", i, lines[i], want.error)
		}
	}
	if !strings.Contains(lines[2], `"verdict":"unique"`) {
		t.Errorf("the page after them: %s", lines[2])
	}
	// A page whose URL the standard rejects gets an error line naming the URL, not a key.
	stdout, stderr, code = run(t, "", "check", "--url", "http://example example.com/", args[3])
	if code != ExitError || !strings.Contains(stderr, `invalid URL "http://example example.com/": the host contains a forbidden domain code point`) {
		t.Errorf("bad URL: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	var e struct{ File, URL, Error, Verdict string }
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &e); err != nil || e.URL != "http://example example.com/" || e.Verdict != "" ||
		!strings.Contains(e.Error, `invalid URL "http://example example.com/"`) {
		t.Errorf("bad URL: line %q; want an error naming the URL", stdout)
	}
	for _, bad := range [][]string{{"check"}, {"check", "--near", "cosine", args[0]}, {"check", "--url", "a", "--url", "b", args[0]}, {"check", "--keep", "oldest", args[0]}} {
		if _, _, code := run(t, "", bad...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d", bad, code, ExitUsage)
		}
	}
}

// checkPages writes TestCheck's pages into dir and returns their paths: two HTML pages
// with one article, a text page with a small addition to it, an unrelated one, and a
// gzipped copy of the first.
func checkPages(t *testing.T, dir string) []string {
	t.Helper()
	var body, other strings.Builder
	for i := range 300 {
		fmt.Fprintf(&body, "fox%d jumps ", i*7%300)
		fmt.Fprintf(&other, "data%d indexes ", i)
	}
	files := map[string]string{
		"a.html": "<html><head><title>A</title></head><body><article><p>" + body.String() + "</p></article></body></html>",
		"b.html": "<html><head><title>B</title></head><body><article><p>" + body.String() + "</p></article><footer>x</footer></body></html>",
		"c.txt":  body.String() + " with a small addition",
		"d.txt":  other.String(),
	}
	var args []string
	for _, name := range []string{"a.html", "b.html", "c.txt", "d.txt"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	// A gzipped copy of a.html is read decompressed: a raw-level exact duplicate.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(files["a.html"]))
	zw.Close()
	p := filepath.Join(dir, "e.html.gz")
	if err := os.WriteFile(p, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	args = append(args, p)
	return args
}
