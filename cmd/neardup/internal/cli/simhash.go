package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
)

var simhashCommand = &command{
	name:    "simhash",
	args:    "[FILE...|-]",
	summary: "compute the SimHash fingerprint of files or lines",
	about: `Writes the 64-bit SimHash fingerprint of each FILE (standard input when FILE is "-"
or there is none) as 16 lowercase hex digits, two spaces and the name, like sha256sum:

  $ echo 'The quick brown fox jumps over the lazy dog' | neardup simhash
  010896420a4a693c  -

With --lines every line is a document of its own (its "\n" or "\r\n" removed) and the
name is followed by ":" and the line number. Any bytes are accepted, valid UTF-8 or not.
A name containing a backslash, a newline or a carriage return is escaped, and its line
starts with a backslash, as sha256sum does. A file that cannot be read is reported on
standard error and skipped; the exit code is then 1.

--json writes one JSON object per line instead: {"name": ..., "simhash": "16 hex
digits", "scheme": ...}.

Fingerprints are only comparable within one --scheme and text pipeline. simhash-py is
seomoz simhash-py's pipeline (lower-case, drop non-word characters, character 4-grams,
MD5), bit for bit, and takes none of the text-pipeline flags. neardup is word 2-shingles
of the shingle package's normalized words; --unit, --k-shingle, --keep-case and the other
text-pipeline flags change it as they change 'neardup dedup' and 'neardup check', so that
its fingerprints match theirs.
`,
	new: func() runner { return &simhashCmd{} },
}

// simhashCmd is "neardup simhash".
type simhashCmd struct {
	scheme simhash.Scheme
	lines  bool
	json   bool
	text   textFlags
}

func (c *simhashCmd) define(fs *flag.FlagSet) {
	fs.TextVar(&c.scheme, "scheme", simhash.SchemeNeardup, "fingerprint with `SCHEME`: neardup (word 2-shingles) or simhash-py\n(default neardup)")
	fs.BoolVar(&c.lines, "lines", false, "fingerprint every line as a document; names become NAME:LINE\n(default false)")
	fs.BoolVar(&c.json, "json", false, "write one JSON object per line instead of sha256sum-style hex (default false)")
	c.text.define(fs)
}

// simhashRecord is one line of --json.
type simhashRecord struct {
	Name    string         `json:"name"`
	SimHash string         `json:"simhash"`
	Scheme  simhash.Scheme `json:"scheme"`
}

// fingerprinter returns the function that fingerprints a text under the flags: the
// scheme's own, or, with text-pipeline flags, the neardup scheme over those options
// (word 2-shingles unless --unit or --k-shingle says otherwise, as neardup.Options has
// it), which is the SimHash dedup and check compute.
func (c *simhashCmd) fingerprinter() (func(string) uint64, error) {
	if err := c.text.check(); err != nil {
		return nil, err
	}
	custom := c.text.changed() || c.text.kShingle != 0 || c.text.unit != shingle.Words
	if !custom {
		return c.scheme.Fingerprint, nil
	}
	so, ok := c.scheme.ShingleOptions()
	if !ok {
		return nil, usagef("--scheme %s has its own text pipeline; drop the text-pipeline flags or use --scheme neardup", c.scheme)
	}
	opt := c.text.options(shingle.Uniform)
	if opt.Unit == shingle.Words && opt.K == 0 {
		opt.K = so.K
	}
	s, err := shingle.New(opt)
	if err != nil {
		return nil, usagef("%v", err)
	}
	var features []uint64
	return func(text string) uint64 {
		features = s.AppendDistinct(features[:0], text)
		return simhash.Compute(features)
	}, nil
}

// writeError marks a failed write to the output, which ends the command, unlike a file
// that cannot be read.
type writeError struct{ err error }

func (e *writeError) Error() string { return "writing output: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

func (c *simhashCmd) run(e *env, args []string) error {
	fingerprint, err := c.fingerprinter()
	if err != nil {
		return err
	}
	rec := simhashRecord{Scheme: c.scheme}
	return e.eachFile("simhash", args, func(w *bufio.Writer, name string) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return eachDocument(e, name, c.lines, func(text []byte, line int) error {
			fp := fingerprint(string(text))
			if !c.json {
				return writeSum(w, fp, name, line)
			}
			rec.Name, rec.SimHash = name, fmt.Sprintf("%016x", fp)
			if line > 0 {
				rec.Name = name + ":" + strconv.Itoa(line)
			}
			if err := enc.Encode(rec); err != nil {
				return &writeError{err}
			}
			return nil
		})
	})
}

// eachFile calls file for each of names, or for "-" (stdin) when there is none, with a
// buffered writer to stdout that it flushes after each. An input that file cannot read
// is reported on stderr as "neardup CMD: message" and skipped, and eachFile then returns
// errReported at the end; a writeError (a failed write) ends it at once.
func (e *env) eachFile(cmd string, names []string, file func(w *bufio.Writer, name string) error) error {
	if len(names) == 0 {
		names = []string{"-"}
	}
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	failed := false
	for _, name := range names {
		err := file(w, name)
		if ferr := w.Flush(); ferr != nil {
			err = &writeError{ferr}
		}
		var we *writeError
		if errors.As(err, &we) {
			return we
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "neardup %s: %s\n", cmd, errorText(cmd, err))
			failed = true
		}
	}
	if failed {
		return errReported
	}
	return nil
}

// nameEscaper escapes a file name the way sha256sum does.
var nameEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`)

// writeSum writes one output line: "%016x  name", or "%016x  name:line" when line > 0.
func writeSum(w *bufio.Writer, fp uint64, name string, line int) error {
	var buf [16]byte
	const hex = "0123456789abcdef"
	for i := range buf {
		buf[i] = hex[fp>>uint(60-4*i)&0xf]
	}
	return writeSumLine(w, buf[:], name, line)
}

// writeSumLine writes one line as sha256sum does: digest, two spaces and the name, then
// ":line" when line > 0. A name containing a backslash, a newline or a carriage return is
// escaped and the line starts with a backslash.
func writeSumLine(w *bufio.Writer, digest []byte, name string, line int) error {
	if strings.ContainsAny(name, "\\\n\r") {
		w.WriteByte('\\')
		name = nameEscaper.Replace(name)
	}
	w.Write(digest)
	w.WriteString("  ")
	w.WriteString(name)
	if line > 0 {
		var buf [20]byte
		w.WriteByte(':')
		w.Write(strconv.AppendInt(buf[:0], int64(line), 10))
	}
	if err := w.WriteByte('\n'); err != nil {
		return &writeError{err}
	}
	return nil
}
