package cli

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"
)

// run calls Main in-process with stdin and returns what it wrote and its exit code.
func run(t testing.TB, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestDispatch(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string // substring, "" for nothing required
		stderr     string // substring, "" for nothing required
		quietOut   bool   // stdout must be empty
		quietError bool   // stderr must be empty
	}{
		{name: "no arguments", args: nil, code: ExitUsage, stderr: "usage: neardup COMMAND", quietOut: true},
		{name: "help", args: []string{"help"}, code: ExitOK, stdout: "bench findall", quietError: true},
		{name: "--help", args: []string{"--help"}, code: ExitOK, stdout: "commands:", quietError: true},
		{name: "help findall", args: []string{"help", "findall"}, code: ExitOK, stdout: "usage: neardup findall", quietError: true},
		{name: "help bench", args: []string{"help", "bench"}, code: ExitOK, stdout: "usage: neardup bench COMMAND", quietError: true},
		{name: "help bench findall", args: []string{"help", "bench", "findall"}, code: ExitOK, stdout: "--plant RATE", quietError: true},
		{name: "help unknown", args: []string{"help", "frobnicate"}, code: ExitUsage, stderr: `unknown command "frobnicate"`, quietOut: true},
		{name: "unknown command", args: []string{"frobnicate"}, code: ExitUsage, stderr: `neardup: unknown command "frobnicate"; run 'neardup help'`, quietOut: true},
		{name: "flag before command", args: []string{"--distance", "3", "findall"}, code: ExitUsage, stderr: "flags go after the command name", quietOut: true},
		{name: "bench alone", args: []string{"bench"}, code: ExitUsage, stderr: "usage: neardup bench COMMAND", quietOut: true},
		{name: "bench --help", args: []string{"bench", "--help"}, code: ExitOK, stdout: "bench findall", quietError: true},
		{name: "bench unknown", args: []string{"bench", "simhash"}, code: ExitUsage, stderr: `neardup bench: unknown command "simhash"; use one of: findall`, quietOut: true},
		{name: "version", args: []string{"version"}, code: ExitOK, stdout: "neardup ", quietError: true},
		{name: "--version", args: []string{"--version"}, code: ExitOK, stdout: "go1.", quietError: true},
		{name: "version with argument", args: []string{"version", "x"}, code: ExitUsage, quietOut: true},
		{name: "unknown flag", args: []string{"findall", "--distanse", "3"}, code: ExitUsage, stderr: "neardup findall: flag provided but not defined: --distanse\nrun 'neardup findall --help' for usage\n", quietOut: true},
		{name: "bad flag value", args: []string{"findall", "--distance", "three"}, code: ExitUsage, stderr: `invalid value "three" for flag --distance`, quietOut: true},
		{name: "command --help", args: []string{"simhash", "--help"}, code: ExitOK, stdout: "usage: neardup simhash", quietError: true},
		{name: "command -h", args: []string{"findall", "-h"}, code: ExitOK, stdout: "usage: neardup findall", quietError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, "", tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout does not contain %q:\n%s", tt.stdout, stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr does not contain %q:\n%s", tt.stderr, stderr)
			}
			if tt.quietOut && stdout != "" {
				t.Errorf("stdout should be empty, got:\n%s", stdout)
			}
			if tt.quietError && stderr != "" {
				t.Errorf("stderr should be empty, got:\n%s", stderr)
			}
		})
	}
}

// TestHelpMentionsEveryFlag checks that each command's help names every flag with what it
// takes and its real default (or that it is required), and that the main help lists the
// command.
func TestHelpMentionsEveryFlag(t *testing.T) {
	mainHelp, _, _ := run(t, "", "help")
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(mainHelp, "  "+c.name+" ") {
				t.Errorf("neardup help does not list %q", c.name)
			}
			help, stderr, code := run(t, "", append(strings.Fields(c.name), "--help")...)
			if code != ExitOK || stderr != "" {
				t.Fatalf("--help: exit code %d, stderr %q", code, stderr)
			}
			n := 0
			newFlagSet(c, c.new()).VisitAll(func(f *flag.Flag) {
				n++
				arg, usage := flag.UnquoteUsage(f)
				if !strings.Contains(help, "--"+f.Name) {
					t.Errorf("help does not mention --%s", f.Name)
				}
				if !strings.Contains(usage, "default") && !strings.Contains(usage, "required") {
					t.Errorf("--%s %s: usage %q gives no default and does not say it is required", f.Name, arg, usage)
				}
				// A stated default is the flag's real one; an empty string is stated as "".
				def := f.DefValue
				if def == "" {
					def = `""`
				}
				if strings.Contains(usage, "default") && !strings.Contains(usage, "(default "+def+")") && !strings.Contains(usage, "(default "+def+":") {
					t.Errorf("--%s: usage %q does not state its default %q as \"(default %s)\" or \"(default %s: ...)\"", f.Name, usage, f.DefValue, def, def)
				}
			})
			if n == 0 {
				t.Error("no flags")
			}
			for _, s := range []string{"usage: neardup " + c.name, "Exit codes", "--help"} {
				if !strings.Contains(help, s) {
					t.Errorf("help does not contain %q", s)
				}
			}
		})
	}
}

func TestParseArgsInterspersed(t *testing.T) {
	tests := []struct {
		args []string
		pos  []string
		k    int
	}{
		{[]string{"a", "--distance", "2", "b"}, []string{"a", "b"}, 2},
		{[]string{"-distance=4", "-"}, []string{"-"}, 4},
		{[]string{"--distance", "1", "--", "--distance", "x"}, []string{"--distance", "x"}, 1},
		{[]string{}, nil, 0},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		k := fs.Int("distance", 0, "")
		pos, err := parseArgs(fs, tt.args)
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if strings.Join(pos, "|") != strings.Join(tt.pos, "|") || *k != tt.k {
			t.Errorf("%q: positional %q, distance %d; want %q, %d", tt.args, pos, *k, tt.pos, tt.k)
		}
	}
}

// failWriter fails every write, like a closed pipe.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }
