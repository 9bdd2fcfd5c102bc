package cli

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dirNames returns the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestDedupOutNeverMixesRuns: a second run into a non-empty --out is refused before any
// work and leaves it as it was; --force replaces it whole, stale files and all; and no
// run, published or failed, leaves its temporary directory behind.
func TestDedupOutNeverMixesRuns(t *testing.T) {
	dir := t.TempDir()
	input, _ := dedupCorpus(t, dir)
	out := filepath.Join(dir, "out")
	if _, stderr, code := run(t, "", "dedup", "--out", out, input); code != ExitOK {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	first := readOut(t, out, "drop.txt")
	summary := readOut(t, out, "summary.json")
	if err := os.WriteFile(filepath.Join(out, "stale.txt"), []byte("from before"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := dirNames(t, out)

	_, stderr, code := run(t, "", "dedup", "--out", out, "--method", "exact", input)
	if code != ExitUsage || !strings.Contains(stderr, "is not empty") || !strings.Contains(stderr, "--force") {
		t.Fatalf("second run: exit %d, stderr %q; want a usage error naming --force", code, stderr)
	}
	if got := dirNames(t, out); !slices.Equal(got, before) || readOut(t, out, "summary.json") != summary || readOut(t, out, "drop.txt") != first {
		t.Fatalf("a refused run changed --out: %v", got)
	}

	_, stderr, code = run(t, "", "dedup", "--out", out, "--force", "--method", "exact", input)
	if code != ExitOK {
		t.Fatalf("--force: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "stale.txt")); !os.IsNotExist(err) {
		t.Errorf("--force kept a file of the previous contents (%v)", err)
	}
	if s := readOut(t, out, "summary.json"); !strings.Contains(s, `"method": "exact"`) {
		t.Errorf("summary.json is not the second run's:\n%s", s)
	}
	if readOut(t, out, "drop.txt") == first {
		t.Error("drop.txt is the first run's: --method exact drops fewer")
	}

	// A run that fails (a bad record with --on-error fail) leaves no output at all.
	failed := filepath.Join(dir, "failed")
	if _, _, code := run(t, "", "dedup", "--out", failed, "--on-error", "fail", input); code != ExitError {
		t.Fatalf("--on-error fail: exit %d", code)
	}
	if _, err := os.Stat(failed); !os.IsNotExist(err) {
		t.Errorf("a failed run left --out behind (%v)", err)
	}
	// An empty directory is used as it is.
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if _, stderr, code := run(t, "", "dedup", "--out", empty, "--no-corpus", input); code != ExitOK {
		t.Fatalf("empty --out: exit %d: %s", code, stderr)
	}
	if got := dirNames(t, empty); !slices.Contains(got, "report.html") {
		t.Errorf("empty --out holds %v", got)
	}
	for _, name := range dirNames(t, dir) {
		if strings.HasPrefix(name, ".") {
			t.Errorf("left behind: %s", name)
		}
	}
	// A file is not a directory to write into.
	if _, stderr, code := run(t, "", "dedup", "--out", input, input); code != ExitUsage || !strings.Contains(stderr, "is a file") {
		t.Errorf("--out FILE: exit %d, stderr %q", code, stderr)
	}
}

// TestDedupStdin reads "-" as standard input, names its records stdin:LINE and writes
// the same results as from the file, with the corpus copy named stdin.
func TestDedupStdin(t *testing.T) {
	dir := t.TempDir()
	input, lines := dedupCorpus(t, dir)
	fromFile, fromStdin := filepath.Join(dir, "file"), filepath.Join(dir, "stdin")
	if _, stderr, code := run(t, "", "dedup", "--out", fromFile, input); code != ExitOK {
		t.Fatalf("file: exit %d: %s", code, stderr)
	}
	_, stderr, code := run(t, strings.Join(lines, "\n")+"\n", "dedup", "--out", fromStdin, "-")
	if code != ExitOK {
		t.Fatalf("stdin: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "skipped stdin:42:") {
		t.Errorf("the bad line is not named stdin:42: %q", stderr)
	}
	for _, name := range []string{"clusters.jsonl", "pairs.jsonl", "keep.txt", "drop.txt"} {
		if readOut(t, fromFile, name) != readOut(t, fromStdin, name) {
			t.Errorf("%s differs between the file and standard input", name)
		}
	}
	if readOut(t, fromFile, "corpus/corpus.jsonl") != readOut(t, fromStdin, "corpus/stdin") {
		t.Error("the deduplicated corpus of standard input differs from the file's")
	}
	if bad := readOut(t, fromStdin, "bad.jsonl"); !strings.Contains(bad, `"source":"stdin:42"`) {
		t.Errorf("bad.jsonl %q", bad)
	}
	// Without ids, the ids are stdin:LINE.
	noIDs := "{\"text\":\"one two three four five six\"}\n{\"text\":\"one two three four five six\"}\n"
	out := filepath.Join(dir, "noids")
	if _, stderr, code := run(t, noIDs, "dedup", "--out", out, "-"); code != ExitOK {
		t.Fatalf("no ids: exit %d: %s", code, stderr)
	}
	if got := readOut(t, out, "drop.txt"); got != "stdin:2\n" {
		t.Errorf("drop.txt %q, want stdin:2", got)
	}
	if _, stderr, code := run(t, noIDs, "dedup", "--out", filepath.Join(dir, "twice"), "-", "-"); code != ExitUsage {
		t.Errorf("- twice: exit %d: %s", code, stderr)
	}
	for _, name := range dirNames(t, dir) {
		if strings.HasPrefix(name, ".") {
			t.Errorf("left behind: %s", name)
		}
	}
}

// TestDedupNothingRead: a run that fingerprints no document fails, says what to change,
// and writes nothing.
func TestDedupNothingRead(t *testing.T) {
	dir := t.TempDir()
	empty := writeTemp(t, dir, "empty.jsonl", "")
	body := writeTemp(t, dir, "body.jsonl", "{\"id\":\"a\",\"body\":\"some words here\"}\n{\"id\":\"b\",\"body\":\"other words there\"}\n")
	broken := writeTemp(t, dir, "broken.jsonl", "{\"id\":\n{\"id\":\"x\",\"text\":\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{empty}, "read no documents from " + empty},
		{[]string{body}, "no record had a text field \"text\" or an html field \"html\"; set --text-field"},
		{[]string{broken}, "every record (2) was bad"},
	} {
		out := filepath.Join(dir, "out")
		_, stderr, code := run(t, "", append([]string{"dedup", "--out", out}, c.args...)...)
		if code != ExitError || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", c.args, code, stderr, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: output written (%v)", c.args, err)
		}
	}
	out := filepath.Join(dir, "out")
	if _, stderr, code := run(t, "", "dedup", "--out", out, "--text-field", "body", body); code != ExitOK {
		t.Fatalf("--text-field body: exit %d: %s", code, stderr)
	}
}

// TestDedupNoDrawingOffTerminal: with standard error not a terminal, dedup writes its
// messages and summary and never a progress line.
func TestDedupNoDrawingOffTerminal(t *testing.T) {
	dir := t.TempDir()
	input, _ := dedupCorpus(t, dir)
	stderrFile, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderrFile.Close()
	if code := Main([]string{"dedup", "--out", filepath.Join(dir, "out"), input}, strings.NewReader(""), io.Discard, stderrFile); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	b, _ := os.ReadFile(stderrFile.Name())
	s := string(b)
	if strings.ContainsAny(s, "\r\x1b") || !strings.Contains(s, "80 documents") || !strings.Contains(s, "with --method all --threshold 0.8 --keep first, word 5-shingles") {
		t.Errorf("stderr %q", s)
	}
}

// TestDedupQuietVerbose: --quiet prints nothing but errors, --verbose adds the time of
// every stage, and both at once is a usage error.
func TestDedupQuietVerbose(t *testing.T) {
	dir := t.TempDir()
	input, _ := dedupCorpus(t, dir)
	_, stderr, code := run(t, "", "dedup", "--quiet", "--no-corpus", "--out", filepath.Join(dir, "q"), input)
	if code != ExitOK || strings.Contains(stderr, "documents") || !strings.Contains(stderr, "skipped") {
		t.Errorf("--quiet: exit %d, stderr %q; want the bad record only", code, stderr)
	}
	_, stderr, code = run(t, "", "dedup", "--verbose", "--no-corpus", "--out", filepath.Join(dir, "v"), input)
	for _, want := range []string{"80 documents", "with --method all", "read and fingerprint", "find duplicates", "cluster", "report"} {
		if code != ExitOK || !strings.Contains(stderr, want) {
			t.Errorf("--verbose: exit %d, no %q in %q", code, want, stderr)
		}
	}
	if _, stderr, code := run(t, "", "dedup", "--quiet", "--verbose", "--out", filepath.Join(dir, "qv"), input); code != ExitUsage {
		t.Errorf("--quiet --verbose: exit %d, %q", code, stderr)
	}
}
