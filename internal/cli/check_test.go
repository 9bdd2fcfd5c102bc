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
	stdout, stderr, code := run(t, "", append([]string{"check", "--url", "http://x.org/a", "--url", "http://x.org/a"}, args...)...)
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
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

	// A missing file is reported on stderr and the others still run; exit 1.
	stdout, stderr, code = run(t, "", "check", args[0], filepath.Join(dir, "missing.html"))
	if code != ExitError || !strings.Contains(stderr, "missing.html") || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("missing file: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	for _, bad := range [][]string{{"check"}, {"check", "--near", "cosine", args[0]}, {"check", "--url", "a", "--url", "b", args[0]}, {"check", "--keep", "oldest", args[0]}} {
		if _, _, code := run(t, "", bad...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d", bad, code, ExitUsage)
		}
	}
}
