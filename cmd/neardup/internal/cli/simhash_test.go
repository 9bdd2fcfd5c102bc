package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/simhash"
)

// sum is one expected output line of neardup simhash.
func sum(fp uint64, name string) string {
	return fmt.Sprintf("%016x  %s\n", fp, name)
}

func TestSimhashFiles(t *testing.T) {
	dir := t.TempDir()
	texts := map[string]string{
		"a.txt": "The quick brown fox jumps over the lazy dog.\nAnd again.\n",
		"b.txt": "Ünïcödé tëxt, İstanbul ΣΊΣΥΦΟΣ\xff\xfe invalid UTF-8 too",
		"c.txt": "",
	}
	var names []string
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(texts[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, p)
	}
	for _, scheme := range []simhash.Scheme{simhash.SchemeNeardup, simhash.SchemeSimhashPy} {
		t.Run(scheme.String(), func(t *testing.T) {
			var want strings.Builder
			for _, p := range names {
				want.WriteString(sum(scheme.Fingerprint(texts[filepath.Base(p)]), p))
			}
			args := append([]string{"simhash"}, names...)
			if scheme != simhash.SchemeNeardup {
				args = append(args, "--scheme", scheme.String())
			}
			stdout, stderr, code := run(t, "", args...)
			if code != ExitOK || stderr != "" {
				t.Errorf("exit code %d, stderr %q", code, stderr)
			}
			if stdout != want.String() {
				t.Errorf("got\n%s\nwant\n%s", stdout, want.String())
			}

			// Standard input, by default and as "-".
			in := texts["b.txt"]
			for _, extra := range [][]string{nil, {"-"}} {
				stdout, _, code = run(t, in, append([]string{"simhash", "--scheme=" + scheme.String()}, extra...)...)
				if w := sum(scheme.Fingerprint(in), "-"); code != ExitOK || stdout != w {
					t.Errorf("stdin %q: exit code %d, got %q, want %q", extra, code, stdout, w)
				}
			}
		})
	}
	// The schemes differ.
	if a, b := simhash.SchemeNeardup.Fingerprint(texts["a.txt"]), simhash.SchemeSimhashPy.Fingerprint(texts["a.txt"]); a == b {
		t.Errorf("both schemes give %x", a)
	}
}

func TestSimhashLines(t *testing.T) {
	lines := []string{"first document, the quick brown fox", "", "third \xff document\r", "fourth without newline"}
	in := strings.Join(lines, "\n")
	for _, scheme := range []simhash.Scheme{simhash.SchemeNeardup, simhash.SchemeSimhashPy} {
		var want strings.Builder
		for i, l := range lines {
			want.WriteString(sum(scheme.Fingerprint(strings.TrimSuffix(l, "\r")), fmt.Sprintf("-:%d", i+1)))
		}
		stdout, stderr, code := run(t, in, "simhash", "--lines", "--scheme", scheme.String())
		if code != ExitOK || stderr != "" {
			t.Errorf("%v: exit code %d, stderr %q", scheme, code, stderr)
		}
		if stdout != want.String() {
			t.Errorf("%v: got\n%s\nwant\n%s", scheme, stdout, want.String())
		}
	}
}

func TestSimhashErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	if err := os.WriteFile(good, []byte("some text"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.txt")

	// A missing file is reported and skipped; the others are still fingerprinted.
	stdout, stderr, code := run(t, "", "simhash", missing, good, dir)
	if code != ExitError {
		t.Errorf("exit code %d, want %d", code, ExitError)
	}
	if want := sum(simhash.SchemeNeardup.Fingerprint("some text"), good); stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	for _, s := range []string{"neardup simhash: open " + missing + ": no such file", "neardup simhash: " + dir + " is a directory"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr %q does not contain %q", stderr, s)
		}
	}

	_, stderr, code = run(t, "", "simhash", "--scheme", "md5", good)
	if code != ExitUsage || !strings.Contains(stderr, `"md5": use "neardup" or "simhash-py"`) {
		t.Errorf("bad scheme: exit code %d, stderr %q", code, stderr)
	}

	var errOut bytes.Buffer
	code = Main([]string{"simhash", good, good}, nil, failWriter{}, &errOut)
	if code != ExitError || strings.Count(errOut.String(), "writing output") != 1 {
		t.Errorf("write error: exit code %d, stderr %q", code, errOut.String())
	}
}

func TestSimhashNameEscaping(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a\\b\nc")
	if err := os.WriteFile(name, []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, code := run(t, "", "simhash", name)
	want := `\` + sum(simhash.SchemeNeardup.Fingerprint("text"), strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(name))
	if code != ExitOK || stdout != want {
		t.Errorf("got %q, want %q", stdout, want)
	}
}

// TestSimhashHelpExample keeps the example in the help true: SchemeNeardup is frozen, so
// its output never changes.
func TestSimhashHelpExample(t *testing.T) {
	stdout, _, code := run(t, "The quick brown fox jumps over the lazy dog\n", "simhash")
	if code != ExitOK || stdout != "010896420a4a693c  -\n" {
		t.Fatalf("exit code %d, output %q", code, stdout)
	}
	help, _, _ := run(t, "", "simhash", "--help")
	if !strings.Contains(help, "  "+stdout) {
		t.Errorf("help does not show %q", stdout)
	}
}
