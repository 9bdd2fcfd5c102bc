package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const articleText = `Night trains return
Sleeper trains are running again between Paris and Berlin, ten years after the last ones were withdrawn for lack of passengers.
The operators say bookings for the first months are above their forecasts, helped by travellers who want to fly less and by lower fares.
`

// gzipFile writes data gzipped to dir/name and returns its path.
func gzipFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write(data)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, dir, name, b.String())
}

func TestExtractText(t *testing.T) {
	page, err := os.ReadFile("../../../../sample/article.html")
	if err != nil {
		t.Fatal(err)
	}
	gz := gzipFile(t, t.TempDir(), "article.html.gz", page)
	for _, args := range [][]string{
		{"extract", "../../../../sample/article.html"},
		{"extract", gz},
		{"extract", "-"},
		{"extract"},
	} {
		stdout, stderr, code := run(t, string(page), args...)
		if code != ExitOK || stderr != "" || stdout != articleText {
			t.Errorf("%q: exit %d, stderr %q, stdout\n%s\nwant\n%s", args, code, stderr, stdout, articleText)
		}
	}
	stdout, _, code := run(t, "", "extract", "../../../../sample/article.html", gz)
	want := "==> " + sampleDir + "/article.html <==\n" + articleText + "==> " + gz + " <==\n" + articleText
	if code != ExitOK || stdout != want {
		t.Errorf("two files: exit %d, stdout\n%s\nwant\n%s", code, stdout, want)
	}
}

func TestExtractJSON(t *testing.T) {
	stdout, stderr, code := run(t, "", "extract", "--json", "--url", "https://news.example.org/x", "../../../../sample/article.html")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("output %q is not one JSON object on one line: %v", stdout, err)
	}
	want := map[string]string{
		"file": "../../../../sample/article.html", "title": "Night trains return", "author": "Grace Hopper",
		"date": "2025-01-15", "language": "en", "url": "https://news.example.org/night-trains",
		"charset": "utf-8", "method": "main", "text": strings.TrimSuffix(articleText, "\n"),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// description and site_name are there too, empty or as the page declares them.
	for _, k := range []string{"description", "site_name"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %q field", k)
		}
	}
	if len(got) != len(want)+2 {
		t.Errorf("fields %v, want only those of %v, description and site_name", got, want)
	}
}

// TestExtractJSONErrors: with --json, a file that cannot be read or extracted gets a line
// {"file", "error"} in its place.
func TestExtractJSONErrors(t *testing.T) {
	dir := t.TempDir()
	pdf := writeTemp(t, dir, "report.html", "%PDF-1.7\n")
	missing := filepath.Join(dir, "none.html")
	stdout, stderr, code := run(t, "", "extract", "--json", pdf, missing, "../../../../sample/article.html")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != ExitError || len(lines) != 3 || strings.Count(stderr, "\n") != 2 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want three lines and two errors", code, stdout, stderr)
	}
	for i, want := range []struct{ file, error string }{{pdf, "extract: binary content"}, {missing, "no such file"}} {
		var got map[string]string
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil || len(got) != 2 || got["file"] != want.file || !strings.Contains(got["error"], want.error) {
			t.Errorf("line %d: %s; want the file and %q", i, lines[i], want.error)
		}
	}
	if !strings.Contains(lines[2], `"title":"Night trains return"`) {
		t.Errorf("the page after them: %s", lines[2])
	}
}

func TestExtractCharsetFlag(t *testing.T) {
	page := "<p>Stra\xdfe, caf\xe9 et cr\xe8me br\xfbl\xe9e.</p>"
	stdout, _, code := run(t, page, "extract", "--content-type", "text/html; charset=iso-8859-1", "--json")
	var got map[string]string
	json.Unmarshal([]byte(stdout), &got)
	if code != ExitOK || got["text"] != "Straße, café et crème brûlée." || got["charset"] != "windows-1252" || got["method"] != "visible-text" {
		t.Errorf("exit %d, output %s", code, stdout)
	}
}

func TestExtractErrors(t *testing.T) {
	dir := t.TempDir()
	big := []byte("<p>" + strings.Repeat("a", 5000) + "</p>")
	bomb := gzipFile(t, dir, "bomb.html.gz", bytes.Repeat([]byte("<p>aaaaaaaa</p>"), 1<<20)) // 15 MiB from about 15 KiB
	plain := writeTemp(t, dir, "big.html", string(big))
	deep := writeTemp(t, dir, "deep.html", strings.Repeat("<div>", 600))
	notGzip := writeTemp(t, dir, "bad.gz", "\x1f\x8bnot gzip")
	pdf := writeTemp(t, dir, "report.html", "%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"gzip bomb", []string{bomb}, ExitError, bomb + " is larger than --max-bytes 8388608 (counted after decompression); raise --max-bytes"},
		{"too large", []string{"--max-bytes", "1000", plain}, ExitError, plain + " is larger than --max-bytes 1000 (counted after decompression); raise --max-bytes"},
		{"too deep", []string{deep}, ExitError, deep + ": page nested too deeply"},
		{"binary", []string{pdf}, ExitError, pdf + ": binary content, not a page: it starts as application/pdf does"},
		{"bad gzip", []string{notGzip}, ExitError, "reading " + notGzip + ": corpus: truncated or corrupt input: gzip: "},
		{"missing file", []string{filepath.Join(dir, "none.html")}, ExitError, "none.html: no such file"},
		{"others still read", []string{deep, "../../../../sample/article.html"}, ExitError, "nested too deeply"},
		{"max-bytes 0", []string{"--max-bytes", "0", plain}, ExitUsage, "--max-bytes 0 is not a size"},
		{"negative timeout", []string{"--timeout", "-1s", plain}, ExitUsage, "--timeout -1s is negative"},
		{"relative url", []string{"--url", "/news/x", plain}, ExitUsage, `--url "/news/x" is not an absolute http(s) URL`},
		{"bad timeout", []string{"--timeout", "soon", plain}, ExitUsage, "invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, "", append([]string{"extract"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.stderr)
			}
			if strings.HasPrefix(tt.name, "others") && !strings.Contains(stdout, "Sleeper trains") {
				t.Errorf("the second file was not read: stdout %q", stdout)
			}
		})
	}
	// --timeout 0 means no limit, not an immediate timeout.
	if _, stderr, code := run(t, "", "extract", "--timeout", "0", "../../../../sample/article.html"); code != ExitOK {
		t.Errorf("--timeout 0: exit %d, stderr %q", code, stderr)
	}
}
