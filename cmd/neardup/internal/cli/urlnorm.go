package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"

	"github.com/neardup/neardup/urlnorm"
)

// maxURLLine is the longest line, in bytes, that urlnorm reads from standard input.
const maxURLLine = 1 << 20

var urlnormCommand = &command{
	name:    "urlnorm",
	args:    "[URL...|-]",
	summary: "canonicalize URLs into dedup keys",
	about: `Writes the canonical form of each URL, one per line: the key under which URLs that
fetch the same document meet. The URLs are the arguments, or the lines of standard
input when there is none or an argument is "-":

  $ neardup urlnorm 'HTTP://www.Example.COM:80/a/./b/../c?y=2&x=1#top'
  http://www.example.com/a/c?x=1&y=2
  $ neardup urlnorm --profile aggressive 'https://www.example.com/a/index.html?utm_source=x'
  http://example.com/a

Profiles (the urlnorm package documentation lists every step):
  whatwg      what browsers do: scheme and host case, default port, dot segments, IDNA,
              IPv4 forms, percent-encoding of what must be encoded
  safe        whatwg, plus http for a missing scheme, percent-encoding decoded to one
              form, userinfo removed, repeated slashes collapsed, query sorted
  aggressive  safe, plus https read as http, "www." removed, tracking (utm_*, gclid,
              fbclid, ...) and session-id (jsessionid, phpsessid, sid, ...) parameters,
              index pages and trailing slashes removed

URLs are parsed as the WHATWG URL Standard says (as browsers do). A relative reference
("../a", "/a", "?q") is resolved against --base; without it, it is an error:

  $ neardup urlnorm --base https://example.com/news/ '../about?b=2&a=1'
  https://example.com/about?a=1&b=2

A URL without a canonical form (empty, a host the standard rejects such as "a b.com" or
256.1.1.1, a port that is not a number up to 65535, an http URL without a host, a
relative reference without --base) is reported on standard error with its argument or line number, and
the others are still written; the exit code is then 1. With --json every input gives
one line, {"input":...,"url":...} or {"input":...,"error":...}; an input that is not
valid UTF-8 has U+FFFD in its "input".
`,
	new: func() runner { return &urlnormCmd{} },
}

// urlnormCmd is "neardup urlnorm".
type urlnormCmd struct {
	opts urlnorm.Options
	json bool
}

func (c *urlnormCmd) define(fs *flag.FlagSet) {
	fs.TextVar(&c.opts.Profile, "profile", urlnorm.Safe, "canonicalize with `PROFILE`: whatwg, safe or aggressive\n(default safe)")
	fs.BoolVar(&c.opts.KeepFragment, "keep-fragment", false, "keep the fragment (#...), which never reaches the server and is removed\nby default (default false)")
	fs.StringVar(&c.opts.Base, "base", "", "resolve relative references (\"../a\", \"/a\", \"?q\") against `URL`, as the links of\nthe page at URL; without it they are errors (default \"\": none)")
	fs.BoolVar(&c.json, "json", false, "write one JSON object per input: {\"input\",\"url\"} or {\"input\",\"error\"}\n(default false)")
}

// urlnormResult is one line of --json output.
type urlnormResult struct {
	Input string `json:"input"`
	URL   string `json:"url,omitempty"`
	Error string `json:"error,omitempty"`
}

func (c *urlnormCmd) run(e *env, args []string) error {
	cz, err := urlnorm.New(c.opts)
	if err != nil {
		return usagef("--base: %v", err)
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	failed := false
	// one canonicalizes raw and writes the result; where names the input in an error.
	one := func(raw, where string) error {
		key, err := cz.Canonicalize(raw)
		if err != nil {
			failed = true
			fmt.Fprintf(e.stderr, "neardup urlnorm: %s: %s\n", where, errorText("urlnorm", err))
		}
		switch {
		case c.json:
			r := urlnormResult{Input: raw, URL: key}
			if err != nil {
				r.Error = err.Error()
			}
			err = enc.Encode(r)
		case err == nil:
			w.WriteString(key)
			err = w.WriteByte('\n')
		default:
			return nil
		}
		if err != nil {
			return &writeError{err}
		}
		return nil
	}
	for i, arg := range args {
		if arg != "-" {
			err = one(arg, "argument "+strconv.Itoa(i+1))
		} else {
			err = c.lines(e, one)
		}
		if err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return &writeError{err}
	}
	if failed {
		return errReported
	}
	return nil
}

// lines calls one with each line of standard input, without its "\n" or "\r\n", and its
// place ("stdin:LINE").
func (c *urlnormCmd) lines(e *env, one func(raw, where string) error) error {
	sc := bufio.NewScanner(e.stdin)
	sc.Buffer(make([]byte, 4096), maxURLLine+2)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
		if err := one(string(b), "stdin:"+strconv.Itoa(line)); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("stdin:%d: line longer than %d MiB; one URL per line", line+1, maxURLLine>>20)
		}
		return fmt.Errorf("reading stdin: %w", err)
	}
	return nil
}
