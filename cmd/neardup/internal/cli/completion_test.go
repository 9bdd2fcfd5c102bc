package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// shell returns the path of a shell for the completion tests, skipping without one
// (failing with CI=true, where .ci/run installs it).
func shell(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed; .ci/run installs it", name)
		}
		t.Skipf("%s is not installed; install it to check the completion script", name)
	}
	return path
}

// TestCompletion checks both scripts' syntax with the shells themselves, and that the
// bash one completes commands, subcommands and flags of every command from the table.
func TestCompletion(t *testing.T) {
	dir := t.TempDir()
	for _, sh := range []string{"bash", "zsh"} {
		script, stderr, code := run(t, "", "completion", sh)
		if code != ExitOK || stderr != "" || script == "" {
			t.Fatalf("completion %s: exit %d, stderr %q", sh, code, stderr)
		}
		path := filepath.Join(dir, "neardup."+sh)
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Run(sh+" -n", func(t *testing.T) {
			if out, err := exec.Command(shell(t, sh), "-n", path).CombinedOutput(); err != nil {
				t.Fatalf("%s -n: %v\n%s", sh, err, out)
			}
		})
		// Every command's every flag (but the deprecated spellings) is in the script.
		for _, c := range commands {
			flags, _, _ := commandFlags(c)
			for _, f := range flags {
				if !strings.Contains(script, f) {
					t.Errorf("%s: %s's %s is missing", sh, c.name, f)
				}
			}
		}
		if strings.Contains(script, "deprecated") {
			t.Errorf("%s: a deprecated flag is offered", sh)
		}
	}
	bash := shell(t, "bash")
	complete := func(words ...string) string {
		t.Helper()
		cmd := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _neardup; printf '%s\n' "${COMPREPLY[@]}"`
		out, err := exec.Command(bash, append([]string{"-c", cmd, "bash", filepath.Join(dir, "neardup.bash"), "neardup"}, words...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", words, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{"ch"}, "check"},
		{[]string{"comp"}, "compare\ncompletion"},
		{[]string{"bench", "se"}, "service"},
		{[]string{"bench", "service", "--cl"}, "--clients"},
		{[]string{"dedup", "--ou"}, "--out"},
		{[]string{"dedup", "--text-f"}, "--text-field"},
		{[]string{"simhash", "--js"}, "--json"},
		{[]string{"minhash", "--form"}, ""}, // deprecated: not offered
		{[]string{"completion", "z"}, "zsh"},
		{[]string{"help", "url"}, "urlnorm"},
	} {
		if got := complete(c.words...); got != c.want {
			t.Errorf("neardup %s<TAB>: %q, want %q", strings.Join(c.words, " "), got, c.want)
		}
	}
	if _, stderr, code := run(t, "", "completion", "fish"); code != ExitUsage || !strings.Contains(stderr, "bash or zsh") {
		t.Errorf("completion fish: exit %d, stderr %q", code, stderr)
	}
	if out, _, code := run(t, "", "completion", "--help"); code != ExitOK || !strings.Contains(out, "usage: neardup completion") {
		t.Errorf("completion --help: exit %d, %q", code, out)
	}
}
