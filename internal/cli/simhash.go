package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/neardup/neardup/simhash"
)

var simhashCommand = &command{
	name:    "simhash",
	args:    "[FILE...|-]",
	summary: "compute the SimHash fingerprint of files or lines",
	about: `Writes the 64-bit SimHash fingerprint of each FILE (standard input when FILE is "-"
or there is none) as 16 lowercase hex digits, two spaces and the name, like sha256sum:

  $ echo 'The quick brown fox jumps over the lazy dog' | neardup simhash
  39edbf7f29b4b877  -

With --lines every line is a document of its own (its "\n" or "\r\n" removed) and the
name is followed by ":" and the line number. Any bytes are accepted, valid UTF-8 or not.
A name containing a backslash, a newline or a carriage return is escaped, and its line
starts with a backslash, as sha256sum does. A file that cannot be read is reported on
standard error and skipped; the exit code is then 1.

Fingerprints are only comparable within one --scheme. simhash-py is seomoz simhash-py's
pipeline (lower-case, drop non-word characters, character 4-grams, MD5), bit for bit.
`,
	new: func() runner { return &simhashCmd{} },
}

// maxDocLine is the longest line simhash --lines accepts, in bytes.
const maxDocLine = 64 << 20

// simhashCmd is "neardup simhash".
type simhashCmd struct {
	scheme simhash.Scheme
	lines  bool
}

func (c *simhashCmd) define(fs *flag.FlagSet) {
	fs.TextVar(&c.scheme, "scheme", simhash.SchemeNeardup, "fingerprint with `SCHEME`: neardup (word 3-shingles, XXH64) or simhash-py\n(default neardup)")
	fs.BoolVar(&c.lines, "lines", false, "fingerprint every line as a document; names become NAME:LINE\n(default false)")
}

// writeError marks a failed write to the output, which ends the command, unlike a file
// that cannot be read.
type writeError struct{ err error }

func (e *writeError) Error() string { return "writing output: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

func (c *simhashCmd) run(e *env, args []string) error {
	if len(args) == 0 {
		args = []string{"-"}
	}
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	failed := false
	for _, name := range args {
		err := c.file(e, w, name)
		if ferr := w.Flush(); ferr != nil {
			err = &writeError{ferr}
		}
		var we *writeError
		if errors.As(err, &we) {
			return we
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "neardup simhash: %v\n", err)
			failed = true
		}
	}
	if failed {
		return errReported
	}
	return nil
}

// file writes the fingerprints of the named input (or of its lines) to w.
func (c *simhashCmd) file(e *env, w *bufio.Writer, name string) error {
	r, shown, closeInput, err := openInput(e, name)
	if err != nil {
		return err
	}
	defer closeInput()
	if !c.lines {
		b, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("reading %s: %w", shown, err)
		}
		return writeSum(w, c.scheme.Fingerprint(string(b)), name, 0)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxDocLine+2)
	line := 0
	for sc.Scan() {
		line++
		if err := writeSum(w, c.scheme.Fingerprint(string(sc.Bytes())), name, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: line longer than %d MiB; split the document or fingerprint the file whole", shown, line+1, maxDocLine>>20)
		}
		return fmt.Errorf("reading %s: %w", shown, err)
	}
	return nil
}

// nameEscaper escapes a file name the way sha256sum does.
var nameEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`)

// writeSum writes one output line: "%016x  name", or "%016x  name:line" when line > 0.
func writeSum(w *bufio.Writer, fp uint64, name string, line int) error {
	var buf [64]byte
	b := buf[:0]
	if strings.ContainsAny(name, "\\\n\r") {
		b = append(b, '\\')
		name = nameEscaper.Replace(name)
	}
	const hex = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, hex[fp>>uint(shift)&0xf])
	}
	b = append(b, "  "...)
	b = append(b, name...)
	if line > 0 {
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(line), 10)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return &writeError{err}
	}
	return nil
}
