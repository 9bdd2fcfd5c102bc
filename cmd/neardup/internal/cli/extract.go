package cli

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup/extract"
)

var extractCommand = &command{
	name:    "extract",
	args:    "[FILE...|-]",
	summary: "print the main text of HTML pages, without their boilerplate",
	about: `Writes the main text of each HTML page FILE (standard input when FILE is "-" or there
is none): the article without its navigation, headers, footers, ads, comments and cookie
banners, one paragraph per line (package extract). A page whose extractor finds less
than 100 characters gets its whole visible text instead.
Gzip- and zstd-compressed files (the .gz of a crawl or of the AEB benchmark) are read
transparently, told by their first bytes.

  $ neardup extract page.html.gz

With several files, each text is preceded by a line "==> FILE <==", as head(1) does.
--json writes one JSON object per file and line instead, with the title and metadata:
{"file", "title", "author", "date", "description", "site_name", "language", "url",
"charset", "method", "text"}; "method" is "main", or "visible-text" for the
fallback, and empty fields mean the page does not give them.

The character set comes from a byte order mark, --content-type, the page's own bytes
(valid UTF-8) or its <meta> tag, in that order; invalid bytes become U+FFFD. A page that
is too large (before or after gunzip), binary (a PDF, an image...), nested deeper than
512 elements, or too slow is an error naming the file; the other files are still read,
and the exit code is then 1. With --json such a file also gets a line {"file", "error"},
so that every file has one.
`,
	new: func() runner { return &extractCmd{} },
}

// extractCmd is "neardup extract".
type extractCmd struct {
	json        bool
	contentType string
	url         string
	maxBytes    int
	timeout     time.Duration
	output      outputFlags
}

func (c *extractCmd) define(fs *flag.FlagSet) {
	fs.BoolVar(&c.json, "json", false, "write one JSON object per file, with title, metadata, charset, method and\ntext (default false)")
	fs.StringVar(&c.contentType, "content-type", "", "read the pages as the HTTP Content-Type header `CT` says, such as\n'text/html; charset=iso-8859-1'; its charset overrides <meta> tags (default \"\":\ndetect from the page)")
	fs.StringVar(&c.url, "url", "", "the page's absolute http(s) `URL`, which completes relative links and is the\nurl when the page names no canonical one; usually with one FILE (default \"\": none)")
	fs.IntVar(&c.maxBytes, "max-bytes", extract.DefaultMaxBytes, "refuse a page larger than `N` bytes, after gunzip (default 8388608: 8 MiB)")
	fs.DurationVar(&c.timeout, "timeout", extract.DefaultTimeout, "give up on a page after `D`, such as 500ms; 0 for no limit (default 5s)")
	c.output.define(fs)
}

// extractRecord is one line of --json.
type extractRecord struct {
	File        string `json:"file"`
	Title       string `json:"title"`
	Author      string `json:"author"`
	Date        string `json:"date"`
	Description string `json:"description"`
	SiteName    string `json:"site_name"`
	Language    string `json:"language"`
	URL         string `json:"url"`
	Charset     string `json:"charset"`
	Method      string `json:"method"`
	Text        string `json:"text"`
}

func (c *extractCmd) run(e *env, args []string) error {
	if c.maxBytes < 1 {
		return usagef("--max-bytes %d is not a size; use a positive number of bytes (%d by default)", c.maxBytes, extract.DefaultMaxBytes)
	}
	if c.timeout < 0 {
		return usagef("--timeout %v is negative; use a duration such as 2s, or 0 for no limit", c.timeout)
	}
	if c.url != "" {
		if u, err := url.Parse(c.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usagef("--url %q is not an absolute http(s) URL", c.url)
		}
	}
	opts := extract.Options{MaxBytes: c.maxBytes, Timeout: c.timeout, ContentType: c.contentType, URL: c.url}
	if c.timeout == 0 {
		opts.Timeout = -1 // the package's "no budget"
	}
	if err := c.output.check(); err != nil {
		return err
	}
	headers := len(args) > 1
	var files atomic.Int64
	methods := map[string]int{}
	progress := newProgress(e.stderr, len(args) > 1 && c.output.showProgress(e))
	defer progress.done()
	progress.stage(progressStage{name: "extract", unit: "files", done: files.Load, total: int64(len(args))})
	pe := *e
	pe.stderr = progress.above(e.stderr)
	start := time.Now()
	err := pe.eachFile("extract", args, func(w *bufio.Writer, name string) error {
		defer files.Add(1)
		page, shown, err := readPage(e, name, c.maxBytes)
		var r extract.Result
		if err == nil {
			if r, err = extract.Extract(page, opts); err != nil {
				err = fmt.Errorf("%s: %w", shown, err)
			}
		}
		if err != nil {
			methods["error"]++
			if c.json {
				line, _ := json.Marshal(errorLine{File: shown, Error: err.Error()})
				if _, werr := w.Write(append(line, '\n')); werr != nil {
					return &writeError{werr}
				}
			}
			return err
		}
		methods[r.Method]++
		if c.json {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			err = enc.Encode(extractRecord{
				File: shown, Title: r.Title, Author: r.Author, Date: r.Date,
				Description: r.Description, SiteName: r.SiteName, Language: r.Language,
				URL: r.URL, Charset: r.Charset, Method: r.Method, Text: r.Text,
			})
		} else {
			if headers {
				fmt.Fprintf(w, "==> %s <==\n", shown)
			}
			_, err = fmt.Fprintln(w, r.Text)
		}
		if err != nil {
			return &writeError{err}
		}
		return nil
	})
	progress.done()
	if c.output.verbose {
		pages := max(len(args), 1) // none is standard input
		fmt.Fprintf(e.stderr, "neardup extract: %d pages in %v: %d by trafilatura, %d by their visible text, %d errors; --max-bytes %d --timeout %v\n",
			pages, time.Since(start).Round(time.Millisecond), methods["trafilatura"], methods["visible-text"], methods["error"], c.maxBytes, c.timeout)
	}
	return err
}
