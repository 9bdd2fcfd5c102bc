package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchServiceHTML: --html posts the pages of a directory to a real service, in
// turn under new ids, and the service extracts them: the first round is unique, the
// second exact duplicates of the first.
func TestBenchServiceHTML(t *testing.T) {
	pages := t.TempDir()
	body := func(topic string) string {
		return `<html><head><title>` + topic + `</title></head><body><nav><a href="/">Home</a></nav><article><h1>` + topic + `</h1><p>` +
			strings.Repeat("This page is about "+topic+", and says so at length, with enough words to be an article. ", 6) + `</p></article></body></html>`
	}
	for i, topic := range []string{"rivers", "bridges", "night trains"} {
		os.WriteFile(filepath.Join(pages, string(rune('a'+i))+".html"), []byte(body(topic)), 0o644)
	}
	os.WriteFile(filepath.Join(pages, "notes.txt"), []byte("plain text is skipped"), 0o644)
	base, stop, logs := startServe(t, nil, "--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data"))
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v\n%s", err, logs)
		}
	}()
	res, stderr := runService(t, base, "--html", pages, "--requests", "6", "--clients", "1")
	if res.Requests != 6 || res.Errors != 0 || res.Added != 6 || res.Verdicts["unique"] != 3 || res.Verdicts["exact-duplicate"] != 3 {
		t.Errorf("report %+v\n%s", res, stderr)
	}
	if !strings.Contains(stderr, "the HTML pages of "+pages) {
		t.Errorf("the report does not name the pages:\n%s", stderr)
	}
	if _, _, code := run(t, "", "bench", "service", "--addr", base, "--html", pages, "--mode", "query", "--requests", "1"); code != ExitUsage {
		t.Errorf("--html with --mode query: exit %d, want a usage error", code)
	}
	if _, stderr, code := run(t, "", "bench", "service", "--addr", base, "--html", t.TempDir(), "--requests", "1"); code == ExitOK || !strings.Contains(stderr, "no HTML page") {
		t.Errorf("--html of an empty directory: exit %d, %s", code, stderr)
	}
}
