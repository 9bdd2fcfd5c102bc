package cli

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/shingle"
)

var checkCommand = &command{
	name:    "check",
	args:    "FILE...",
	summary: "run the duplicate detector over pages in order, one verdict per page",
	about: `Runs neardup's in-memory detector over the given pages, in the order given, as a
crawler would: each page is checked against the pages before it and then stored. For
each page it prints one JSON line: the file, the verdict (unique, url-duplicate,
exact-duplicate, near-duplicate or changed), the matches with their SimHash distance,
MinHash similarity and exact level (raw, text or main), and the survivor under the keep
policy. A page that cannot be read or fingerprinted (too large, binary, nested too
deeply...) gets a line with its file, id and "error" instead, so that there is one line
per page; the error goes to standard error as well, and the exit code is 1.

A page's id is its file name as given. HTML files have their main content extracted
(boilerplate removed); files ending in .txt are plain text. Gzip- and
zstd-compressed files (told by their first bytes) are decompressed. The text-pipeline
flags (--unit, --k-shingle, --keep-case, ...) change the fingerprints as they change
'neardup dedup' and 'neardup serve'.

--url gives the URL a page was fetched from, in the order of the files: the first
--url belongs to the first FILE, and so on; pages without one have no URL key.

At the end a summary line on standard error counts the verdicts and names the effective
--near, --distance, --threshold and --keep: check's defaults are the service's, which
differ from 'neardup dedup' (docs/cli.md says why). Over many files, progress shows on
standard error when it is a terminal, unless --quiet.
`,
	new: func() runner { return &checkCmd{} },
}

// checkCmd is "neardup check".
type checkCmd struct {
	urls      stringList
	near      string
	distance  int
	threshold float64
	keep      string
	noExtract bool
	noVerify  bool
	maxBytes  int
	text      textFlags
	output    outputFlags
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func (c *checkCmd) define(fs *flag.FlagSet) {
	fs.Var(&c.urls, "url", "the `URL` the next FILE was fetched from; repeat it, once per FILE in order\n(default \"\": none)")
	fs.StringVar(&c.near, "near", "any", "near-duplicate `RULE`: any (SimHash distance or MinHash similarity), simhash,\nminhash, or both (default any)")
	fs.IntVar(&c.distance, "distance", neardup.DefaultDistance, fmt.Sprintf("largest SimHash distance of a near-duplicate, in `BITS` (default %d)", neardup.DefaultDistance))
	fs.Float64Var(&c.threshold, "threshold", neardup.DefaultThreshold, fmt.Sprintf("smallest MinHash similarity of a near-duplicate, `S` in (0, 1] (default %g)", neardup.DefaultThreshold))
	fs.StringVar(&c.keep, "keep", neardup.DefaultKeepPolicy.String(), "keep `POLICY`: comma-separated rules among priority, first, last, longest,\nshortest, id, tried in order (default "+neardup.DefaultKeepPolicy.String()+")")
	fs.BoolVar(&c.noExtract, "no-extract", false, "use the whole page's visible text instead of its main content (default false)")
	fs.BoolVar(&c.noVerify, "no-verify", false, "decide MinHash near-duplicates by the signatures' estimate, without keeping each page's\nshingle sketch to verify them (about 4 bytes a distinct shingle, at most 4KiB a page)\n(default false: verify)")
	fs.IntVar(&c.maxBytes, "max-bytes", extract.DefaultMaxBytes, fmt.Sprintf("refuse a page larger than `N` bytes, after decompression (default %d: %d MiB)", extract.DefaultMaxBytes, extract.DefaultMaxBytes>>20))
	c.text.define(fs)
	c.output.define(fs)
}

// errorLine is the JSON line of output, in check and extract --json, of a file that
// could not be checked or extracted: every input has one line, in order.
type errorLine struct {
	File  string `json:"file"`
	ID    string `json:"id,omitempty"`
	URL   string `json:"url,omitempty"`
	Error string `json:"error"`
}

// checkLine is one line of output.
type checkLine struct {
	File string `json:"file"`
	neardup.Verdict
	Title  string `json:"title,omitempty"`
	Method string `json:"method,omitempty"`
	Words  int    `json:"words"`
}

func (c *checkCmd) run(e *env, args []string) error {
	if len(args) == 0 {
		return usagef("give the pages to check, in order")
	}
	if len(c.urls) > len(args) {
		return usagef("%d --url flags for %d files: give at most one per file", len(c.urls), len(args))
	}
	d, err := c.detector()
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	failed := false
	verdicts := map[neardup.Kind]int{}
	var files atomic.Int64
	progress := newProgress(e.stderr, len(args) > 1 && c.output.showProgress(e))
	defer progress.done()
	stderr := progress.above(e.stderr)
	progress.stage(progressStage{name: "check", unit: "files", done: files.Load, total: int64(len(args))})
	for i, name := range args {
		files.Store(int64(i))
		doc := neardup.Document{ID: name}
		if i < len(c.urls) {
			doc.URL = c.urls[i]
		}
		line, kind, err := c.check(e, d, name, doc)
		if kind == nil {
			return err // the store failed; the next pages would too
		}
		w.Write(append(line, '\n'))
		if err != nil {
			fmt.Fprintf(stderr, "neardup check: %v\n", err) // every error names the file
			failed = true
			continue
		}
		verdicts[*kind]++
	}
	progress.done()
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if !c.output.quiet {
		c.printSummary(e, len(args), verdicts, d.Options())
	}
	if failed {
		return errReported
	}
	return nil
}

// detector checks the flags and returns the detector they describe.
func (c *checkCmd) detector() (*neardup.Detector, error) {
	near, err := neardup.ParseNear(c.near)
	if err != nil {
		return nil, usagef("--near: %v", err)
	}
	keep, err := neardup.ParseKeepPolicy(c.keep)
	if err != nil {
		return nil, usagef("--keep: %v", err)
	}
	switch {
	case c.distance < 0 || c.distance > 16:
		return nil, usagef("--distance %d: use 0 to 16", c.distance)
	case !(c.threshold > 0 && c.threshold <= 1):
		return nil, usagef("--threshold %g: use a similarity in (0, 1]", c.threshold)
	case c.maxBytes < 1:
		return nil, usagef("--max-bytes %d: use 1 or more", c.maxBytes)
	}
	if err := c.text.check(); err != nil {
		return nil, err
	}
	if err := c.output.check(); err != nil {
		return nil, err
	}
	d, err := neardup.NewDetector(neardup.Options{Pipeline: neardup.Pipeline{
		Near: near, Distance: distanceOption(c.distance), Threshold: c.threshold, Keep: keep, NoExtract: c.noExtract,
		Extract: extract.Options{MaxBytes: c.maxBytes}, Shingle: c.text.options(shingle.Uniform),
	}, NoVerify: c.noVerify})
	if err != nil {
		return nil, usagef("%v", err)
	}
	return d, nil
}

// check checks one page and returns its output line and verdict, or the line of its
// error and the error (a page that cannot be read or fingerprinted); a nil kind means
// the store failed, with err.
func (c *checkCmd) check(e *env, d *neardup.Detector, name string, doc neardup.Document) ([]byte, *neardup.Kind, error) {
	b, _, err := readPage(e, name, c.maxBytes)
	if err == nil {
		if strings.EqualFold(filepath.Ext(strings.TrimSuffix(name, ".gz")), ".txt") {
			doc.Text = string(b)
		} else {
			doc.HTML = b
		}
		var fp neardup.Fingerprints
		if fp, err = d.Fingerprinter().Fingerprint(doc); err == nil {
			v, err := d.CheckEntry(neardup.Entry{ID: doc.ID, Fingerprints: fp}, true)
			if err != nil {
				return nil, nil, err
			}
			line, _ := json.Marshal(checkLine{File: name, Verdict: v, Title: fp.Title, Method: fp.Method, Words: fp.Words})
			return line, &v.Kind, nil
		}
	}
	line, _ := json.Marshal(errorLine{File: name, ID: doc.ID, URL: doc.URL, Error: err.Error()})
	var none neardup.Kind
	return line, &none, err
}

// printSummary prints the verdicts' counts and the rules they were made by.
func (c *checkCmd) printSummary(e *env, pages int, verdicts map[neardup.Kind]int, o neardup.Options) {
	var counts []string
	for _, s := range []neardup.Kind{neardup.Unique, neardup.URLDuplicate, neardup.ExactDuplicate, neardup.NearDuplicate, neardup.Changed} {
		if verdicts[s] > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", verdicts[s], s))
		}
	}
	if len(counts) == 0 {
		counts = []string{"no verdicts"}
	}
	fmt.Fprintf(e.stderr, "neardup check: %d pages: %s; with --near %s --distance %d --threshold %g --keep %s, %s\n",
		pages, strings.Join(counts, ", "), c.near, c.distance, c.threshold, o.Keep, c.text.describe())
}
