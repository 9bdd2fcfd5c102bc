package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/shingle"
)

// TestErrorsPrefixedOnce: every error line names its command once, as "neardup CMD: ",
// and never repeats the command's package name after it ("stdin:3: urlnorm: ...").
func TestErrorsPrefixedOnce(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	pdf := writeTemp(t, dir, "x.pdf", "%PDF-1.4 not a page")
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{"http://a.com\n\nhttp://\n", []string{"urlnorm"}},
		{"", []string{"urlnorm", "--profile", "gentle", "a.com"}},
		{"", []string{"extract", pdf}},
		{"", []string{"extract", "--json", pdf, missing}},
		{"", []string{"simhash", missing}},
		{"", []string{"minhash", missing}},
		{"", []string{"compare", missing, pdf}},
		{"", []string{"check", missing}},
		{"x\n", []string{"findall", "--distance", "3"}},
		{"", []string{"dedup", "--out", filepath.Join(dir, "out"), missing}},
		{"", []string{"eval", "--labels", missing, "--pairs", missing}},
	} {
		_, stderr, code := run(t, c.stdin, c.args...)
		if code == ExitOK || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q: want an error", c.args, code, stderr)
			continue
		}
		cmd := c.args[0]
		for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
			if strings.HasPrefix(line, "run 'neardup") {
				continue
			}
			msg, ok := strings.CutPrefix(line, "neardup "+cmd+": ")
			if !ok || strings.HasPrefix(msg, cmd+": ") || strings.Contains(msg, ": "+cmd+": ") || strings.Contains(msg, "neardup") {
				t.Errorf("%q: line %q names the command other than once, at its start", c.args, line)
			}
		}
	}
	_, stderr, _ := run(t, "http://a.com\n\nhttp://\n", "urlnorm")
	if want := "neardup urlnorm: stdin:3: invalid URL \"http://\": the input has a special scheme, but does not contain a host"; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}

// TestDeprecatedSpellings: the old --format of minhash and findall still work, give the
// output of the new flag, and print one line saying what to use instead.
func TestDeprecatedSpellings(t *testing.T) {
	text := writeTemp(t, t.TempDir(), "a.txt", "the quick brown fox jumps over the lazy dog")
	for _, c := range []struct {
		stdin     string
		old, new_ []string
		notice    string
	}{
		{"", []string{"minhash", "--format", "json", text}, []string{"minhash", "--json", text}, "neardup minhash: --format is deprecated and will be removed; use --json\n"},
		{"", []string{"minhash", "--format", "hex", text}, []string{"minhash", text}, "neardup minhash: --format is deprecated and will be removed; use --json\n"},
		{"1\n3\n", []string{"findall", "--distance", "2", "--format", "tsv"}, []string{"findall", "--distance", "2", "--tsv"}, "neardup findall: --format is deprecated and will be removed; use --tsv\n"},
	} {
		oldOut, oldErr, oldCode := run(t, c.stdin, c.old...)
		newOut, newErr, newCode := run(t, c.stdin, c.new_...)
		if oldCode != ExitOK || newCode != ExitOK || oldOut != newOut || newOut == "" {
			t.Errorf("%q: exit %d, output %q; %q: exit %d, output %q", c.old, oldCode, oldOut, c.new_, newCode, newOut)
		}
		if oldErr != c.notice || newErr != "" {
			t.Errorf("%q: stderr %q, want %q; %q: stderr %q", c.old, oldErr, c.notice, c.new_, newErr)
		}
	}
}

// TestJSONEverywhere: every command that writes a table or text has --json, and
// --format is only an input format where it is not a deprecated spelling.
func TestJSONEverywhere(t *testing.T) {
	for _, c := range commands {
		fs := newFlagSet(c, c.new())
		switch c.name {
		case "serve", "dedup", "dedup merge", "findall", "check", "backup", "bench dense":
			// serve answers JSON over HTTP; dedup, dedup merge, backup and bench dense write files;
			// findall (simhash-cpp's "[a, b]") and check (JSON lines) write JSON already.
		default:
			if fs.Lookup("json") == nil {
				t.Errorf("%s has no --json", c.name)
			}
		}
		if f := fs.Lookup("format"); f != nil && c.name != "dedup" && !strings.Contains(f.Usage, "deprecated") {
			t.Errorf("%s: --format %q is not an input format", c.name, f.Usage)
		}
	}
}

// TestTextFlagsEverywhere: every command that fingerprints text takes the same
// text-pipeline flags.
func TestTextFlagsEverywhere(t *testing.T) {
	var want []string
	tf := flag.NewFlagSet("text", flag.ContinueOnError)
	(&textFlags{}).define(tf)
	tf.VisitAll(func(f *flag.Flag) { want = append(want, f.Name) })
	if len(want) < 8 {
		t.Fatalf("text flags %v", want)
	}
	for _, name := range []string{"dedup", "eval", "check", "serve", "simhash", "minhash", "compare"} {
		fs := newFlagSet(find(name), find(name).new())
		for _, f := range want {
			if fs.Lookup(f) == nil {
				t.Errorf("%s has no --%s", name, f)
			}
		}
	}
}

// TestSimhashTextFlags: simhash with a text-pipeline flag gives the SimHash that dedup
// and check compute with it, and refuses the flags with a scheme of its own pipeline.
func TestSimhashTextFlags(t *testing.T) {
	dir := t.TempDir()
	a := writeTemp(t, dir, "a.txt", "Meeting on 2024-05-01 in room 12 with 40 people")
	b := writeTemp(t, dir, "b.txt", "meeting on 2025-01-09 in room 7 with 9 people")
	plain, _, _ := run(t, "", "simhash", a, b)
	masked, stderr, code := run(t, "", "simhash", "--mask-numbers", a, b)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	fp := func(out string, i int) string { return strings.Fields(strings.Split(out, "\n")[i])[0] }
	if fp(plain, 0) == fp(plain, 1) || fp(masked, 0) != fp(masked, 1) {
		t.Errorf("--mask-numbers: plain %q, masked %q", plain, masked)
	}
	if _, stderr, code := run(t, "", "simhash", "--scheme", "simhash-py", "--keep-case", a); code != ExitUsage || !strings.Contains(stderr, "own text pipeline") {
		t.Errorf("simhash-py with --keep-case: exit %d, stderr %q", code, stderr)
	}
	js, _, _ := run(t, "", "simhash", "--json", a)
	if want := `{"name":"` + a + `","simhash":"` + fp(plain, 0) + `","scheme":"neardup"}` + "\n"; js != want {
		t.Errorf("--json %q, want %q", js, want)
	}
	// The oracle: the document layer's SimHash with the same pipeline.
	fpr, err := neardup.NewFingerprinter(neardup.Options{Pipeline: neardup.Pipeline{Shingle: shingle.Options{MaskNumbers: true}}})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(a)
	f, err := fpr.Fingerprint(neardup.Document{ID: "a", Text: string(text)})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%016x", f.SimHash); fp(masked, 0) != want {
		t.Errorf("simhash --mask-numbers %s, the fingerprinter's %s", fp(masked, 0), want)
	}
}

// TestTextFlagsChangeEveryCommand: a text-pipeline flag changes what compare, minhash
// and check see, as it changes dedup's (TestDedupPipelineOptions).
func TestTextFlagsChangeEveryCommand(t *testing.T) {
	dir := t.TempDir()
	a := writeTemp(t, dir, "a.txt", "the meeting on 2024-05-01 moved to room 12 at 10:30 with 40 people in it today")
	b := writeTemp(t, dir, "b.txt", "the meeting on 2025-01-09 moved to room 7 at 11:15 with 9 people in it today")
	for _, flags := range [][]string{nil, {"--mask-numbers"}} {
		masked := len(flags) > 0
		out, stderr, code := run(t, "", append(append([]string{"compare", "--json"}, flags...), a, b)...)
		if code != ExitOK || strings.Contains(out, `"normalized_equal":true`) != masked {
			t.Errorf("compare %v: exit %d, %s %s", flags, code, out, stderr)
		}
		out, _, _ = run(t, "", append(append([]string{"minhash"}, flags...), a, b)...)
		lines := strings.Split(out, "\n")
		if (strings.Fields(lines[0])[0] == strings.Fields(lines[1])[0]) != masked {
			t.Errorf("minhash %v: %q", flags, out)
		}
		out, _, _ = run(t, "", append(append([]string{"check", "--quiet"}, flags...), a, b)...)
		if strings.Contains(out, `"verdict":"exact-duplicate"`) != masked {
			t.Errorf("check %v: %q", flags, out)
		}
	}
}

func TestFormatVersion(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.25.0", Main: debug.Module{Version: "v1.2.3"},
			Settings: settings("vcs", "git", "vcs.revision", "0123456789abcdef0123", "vcs.modified", "false")},
			"neardup v1.2.3 (commit 0123456789ab; go1.25.0)"},
		{debug.BuildInfo{GoVersion: "go1.25.0", Main: debug.Module{Version: "(devel)"},
			Settings: settings("vcs.revision", "fedcba9876543210", "vcs.modified", "true")},
			"neardup (devel) (commit fedcba987654, modified; go1.25.0)"},
		{debug.BuildInfo{GoVersion: "go1.25.0"}, "neardup (devel) (commit unknown; go1.25.0)"},
	} {
		if got := formatVersion(&c.bi); got != c.want {
			t.Errorf("formatVersion = %q, want %q", got, c.want)
		}
	}
	// The command prints the running binary's.
	out, stderr, code := run(t, "", "version")
	bi, _ := debug.ReadBuildInfo()
	if code != ExitOK || stderr != "" || out != formatVersion(bi)+"\n" || !strings.HasPrefix(out, "neardup ") {
		t.Errorf("neardup version: exit %d, %q %q", code, out, stderr)
	}
}
