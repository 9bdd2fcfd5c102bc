package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/neardup/neardup/hamming"
)

// Exit codes returned by Main; the package documentation says when each is used.
const (
	// ExitOK reports success.
	ExitOK = 0
	// ExitError reports a runtime or input error: an unreadable file, a bad input line, a
	// failed write.
	ExitError = 1
	// ExitUsage reports a usage error: an unknown command or flag, a bad flag value or
	// argument, or an impossible table design.
	ExitUsage = 2
)

// env holds the streams a command runs with.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// isTerminal, when set, replaces isTerminal: tests run commands as on a terminal.
	isTerminal func(io.Writer) bool
}

// terminal reports whether w is a terminal, where progress is drawn.
func (e *env) terminal(w io.Writer) bool {
	if e.isTerminal != nil {
		return e.isTerminal(w)
	}
	return isTerminal(w)
}

// runner is one command: it binds its flags to a FlagSet, then runs with the remaining
// (positional) arguments.
type runner interface {
	define(fs *flag.FlagSet)
	run(e *env, args []string) error
}

// command describes a command for the dispatcher and its help.
type command struct {
	name    string // "findall", or "bench findall" for a command of a group
	args    string // the positional arguments in the synopsis
	summary string // one line for the command list
	about   string // the help text between the synopsis and the options
	new     func() runner
}

// commands lists every command in the order "neardup help" shows them.
var commands = []*command{findallCommand, simhashCommand, minhashCommand, compareCommand, checkCommand, serveCommand, backupCommand, extractCommand, urlnormCommand, dedupCommand, dedupMergeCommand, evalCommand, benchFindallCommand, benchDedupCommand, benchDenseCommand, benchServiceCommand}

// groups are the words that take a subcommand, with what their help says.
var groups = map[string]string{
	"bench": "Benchmarks that generate their own input and report time, memory and recall.",
}

// usageError is an error in the command line; Main exits with ExitUsage for it.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError with a formatted message.
func usagef(format string, a ...any) error {
	return &usageError{fmt.Sprintf(format, a...)}
}

// errReported is returned by a command that has already written its errors to stderr and
// only needs Main to exit with ExitError.
var errReported = errors.New("errors reported")

// Main runs the neardup command line args (without the program name), reading input from
// stdin and writing results to stdout and errors to stderr, and returns the process exit
// code: ExitOK, ExitError or ExitUsage. Main keeps no state between calls; concurrent calls
// are safe when they are given different writers.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return (&env{stdin: stdin, stdout: stdout, stderr: stderr}).main(args)
}

// main is Main with e's streams.
func (e *env) main(args []string) int {
	stdout, stderr := e.stdout, e.stderr
	if len(args) == 0 {
		writeMainHelp(stderr)
		return ExitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return e.help(args[1:])
	case "completion":
		return e.completion(args[1:])
	case "version", "-version", "--version":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "neardup version: unexpected argument %q; run 'neardup version' alone\n", args[1])
			return ExitUsage
		}
		fmt.Fprintln(stdout, versionString())
		return ExitOK
	}
	c, rest, code := e.lookup(args)
	if c == nil {
		return code
	}
	return e.run(c, rest)
}

// lookup finds the command named by the first one or two words of args and returns it with
// the arguments that follow its name. When there is no command to run, it returns nil with
// the exit code Main should return, having written help or an error.
func (e *env) lookup(args []string) (*command, []string, int) {
	name := args[0]
	if about, ok := groups[name]; ok {
		if len(args) == 1 || isHelpFlag(args[1]) {
			w, code := e.stdout, ExitOK
			if len(args) == 1 {
				w, code = e.stderr, ExitUsage
			}
			writeGroupHelp(w, name, about)
			return nil, nil, code
		}
		if c := find(name + " " + args[1]); c != nil {
			return c, args[2:], ExitOK
		}
		fmt.Fprintf(e.stderr, "neardup %s: unknown command %q; use one of: %s\n", name, args[1], strings.Join(groupCommands(name), ", "))
		return nil, nil, ExitUsage
	}
	// A command of two words beside a command of one ("dedup merge" beside "dedup").
	if len(args) > 1 {
		if c := find(name + " " + args[1]); c != nil {
			return c, args[2:], ExitOK
		}
	}
	if c := find(name); c != nil {
		return c, args[1:], ExitOK
	}
	if strings.HasPrefix(name, "-") {
		fmt.Fprintf(e.stderr, "neardup: %s is not a command; flags go after the command name (run 'neardup help')\n", name)
	} else {
		fmt.Fprintf(e.stderr, "neardup: unknown command %q; run 'neardup help' for the list of commands\n", name)
	}
	return nil, nil, ExitUsage
}

// find returns the command with the given full name, or nil.
func find(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// groupCommands returns the subcommand names of group.
func groupCommands(group string) []string {
	var names []string
	for _, c := range commands {
		if sub, ok := strings.CutPrefix(c.name, group+" "); ok {
			names = append(names, sub)
		}
	}
	return names
}

func isHelpFlag(s string) bool {
	return s == "-h" || s == "-help" || s == "--help"
}

// run parses the flags of c from args and runs it.
func (e *env) run(c *command, args []string) int {
	r := c.new()
	fs := newFlagSet(c, r)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		writeCommandHelp(e.stdout, c, fs)
		return ExitOK
	}
	if err != nil {
		// The flag package names flags with one dash; this tool documents two.
		msg := strings.NewReplacer("flag -", "flag --", ": -", ": --").Replace(err.Error())
		err = &usageError{msg}
	} else {
		err = r.run(e, pos)
	}
	return e.report(c.name, err)
}

// newFlagSet returns the FlagSet of c with r's flags defined. It writes nothing: errors
// and help are printed by the dispatcher.
func newFlagSet(c *command, r runner) *flag.FlagSet {
	fs := flag.NewFlagSet("neardup "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	r.define(fs)
	return fs
}

// parseArgs parses the flags in args, which may come before, between or after the
// positional arguments, and returns the positional arguments. "--" ends the flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// report writes err (if any) to stderr and returns the exit code for it.
func (e *env) report(name string, err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, errReported) {
		return ExitError
	}
	fmt.Fprintf(e.stderr, "neardup %s: %s\n", name, errorText(name, err))
	var u *usageError
	if errors.As(err, &u) {
		fmt.Fprintf(e.stderr, "run 'neardup %s --help' for usage\n", name)
		return ExitUsage
	}
	if errors.Is(err, hamming.ErrDesign) {
		return ExitUsage
	}
	return ExitError
}

// errorText returns the message of err without the "pkg: " prefixes that repeat what the
// line's own "neardup CMD: " prefix says: a command's package has its command's name
// (urlnorm, extract), and an error names its package once, at its start or after the
// place it is about ("stdin:3: urlnorm: invalid URL" reads "stdin:3: invalid URL").
func errorText(pkg string, err error) string {
	msg := err.Error()
	if i := strings.LastIndexByte(pkg, ' '); i >= 0 { // "bench service"
		pkg = pkg[i+1:]
	}
	prefix := pkg + ": "
	msg = strings.TrimPrefix(msg, prefix)
	return strings.ReplaceAll(msg, ": "+prefix, ": ")
}

// help implements "neardup help [COMMAND]".
func (e *env) help(args []string) int {
	if len(args) == 0 {
		writeMainHelp(e.stdout)
		return ExitOK
	}
	c, _, code := e.lookup(append(args[:len(args):len(args)], "--help"))
	if c == nil {
		return code
	}
	writeCommandHelp(e.stdout, c, newFlagSet(c, c.new()))
	return ExitOK
}

const exitCodesHelp = `Exit codes: 0 success; 1 runtime or input error (unreadable file, bad input line,
failed write); 2 usage error (bad command, flag or argument, impossible table design).
`

func writeMainHelp(w io.Writer) {
	fmt.Fprint(w, `neardup finds near-duplicate documents: SimHash fingerprints and the pairs of
fingerprints within a Hamming distance, MinHash signatures, and every measure of how
alike two documents are.

usage: neardup COMMAND [options] [arguments]

commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-15s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-15s %s\n", "help [COMMAND]", "show this list, or a command's options")
	fmt.Fprintf(w, "  %-15s %s\n", "version", "print the version, and the commit it was built from")
	fmt.Fprintf(w, "  %-15s %s\n", "completion SH", "write a completion script for SH, bash or zsh")
	fmt.Fprint(w, "\nRun 'neardup COMMAND --help' for a command's options and their defaults.\n\n", exitCodesHelp)
}

func writeGroupHelp(w io.Writer, group, about string) {
	fmt.Fprintf(w, "usage: neardup %s COMMAND [options]\n\n%s\n\ncommands:\n", group, about)
	for _, c := range commands {
		if strings.HasPrefix(c.name, group+" ") {
			fmt.Fprintf(w, "  %-15s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintf(w, "\nRun 'neardup %s COMMAND --help' for a command's options.\n", group)
}

func writeCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	synopsis := "neardup " + c.name + " [options]"
	if c.args != "" {
		synopsis += " " + c.args
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\noptions:\n", synopsis, c.about)
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		head := "  --" + f.Name
		if arg != "" {
			head += " " + arg
		}
		fmt.Fprintf(w, "%s\n        %s\n", head, strings.ReplaceAll(usage, "\n", "\n        "))
	})
	fmt.Fprintf(w, "  --help\n        show this help\n\n%s", exitCodesHelp)
}

// versionString describes the running binary from its build information (see
// formatVersion).
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "neardup (unknown version: built without module support)"
	}
	return formatVersion(bi)
}

// formatVersion describes a build: the main module's version ("(devel)" for a build
// from a checkout, as the go command records it), the VCS commit and whether the tree
// had uncommitted changes when the go command recorded them (vcs.revision,
// vcs.modified), and the Go version, as "neardup v1.2.3 (commit 0123456789ab, modified;
// go1.25.0)".
func formatVersion(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	var extra []string
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		extra = append(extra, "commit "+rev)
		if modified == "true" {
			extra = append(extra, "modified")
		}
	} else {
		extra = append(extra, "commit unknown")
	}
	return fmt.Sprintf("neardup %s (%s; %s)", v, strings.Join(extra, ", "), bi.GoVersion)
}
