package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/shingle"
)

var dedupCommand = &command{
	name:    "dedup",
	args:    "--out DIR INPUT...",
	summary: "deduplicate a corpus (JSONL, Parquet, directories, WARC): clusters, keep list, deduplicated copy, report",
	about: `Reads every document of the INPUTs (JSONL files, plain, gzip or zstd; Parquet files, one
row a document, and directories of .parquet shards; directory trees of .html, .htm and
.txt files; WARC files, plain or gzip; mixed freely, each told by its content; "-" is
standard input, once), finds the exact and near duplicates, and writes
into --out, a new or empty directory (--force replaces one that is not):

  clusters.jsonl  one line per cluster of duplicates: its id, representative (the
                  document kept) and members with their score against it
  pairs.jsonl     every verified duplicate pair with its method and distance or similarity
  keep.txt        the ids of the documents kept (every document in no cluster, and each
                  cluster's representative), in input order
  drop.txt        the ids of the documents dropped
  corpus/         the deduplicated corpus in the inputs' own formats: the kept JSONL lines,
                  Parquet rows (same schema and codecs), WARC records and files unchanged
                  and in order (a second pass); with --annotate, every record, JSONL lines
                  with the fields dup_cluster, dup_kept, dup_method and dup_score added,
                  Parquet rows with those columns added, WARC files and directories with
                  a sidecar BASE.annotations.jsonl holding them
  bad.jsonl       every bad record skipped: its source (file and line or offset), its id
                  if it was read, and why
  summary.json    counts, parameters, timings per stage and peak memory
  report.html     one page to read in a browser: plots, the largest and the borderline
                  clusters side by side with their differences, mirrors, parameters

--method exact groups documents whose normalized main text is identical; simhash and
minhash add near-duplicates by SimHash distance (--distance) or MinHash similarity of word
5-shingles (--threshold); all (the default) is exact, then minhash. SimHash candidates are
verified by their exact distance; MinHash candidates, banded for recall at the threshold,
by the exact Jaccard similarity of the two documents' shingle sets (with --containment,
the share of the smaller one's shingles in the other), which pairs.jsonl reports with the
estimate where it differs. The sets are kept as 4 bytes a shingle, in memory up to 256
MiB and past it in a temporary file ($TMPDIR), removed at the end. Clusters are the connected components of the
pairs, and --keep chooses each one's representative: first (first in the input),
priority (the highest --priority-field, then first), longest or shortest (words of main
text, then first); or rules separated by commas as 'neardup check --keep' takes them.

The text pipeline is the shingle package's, with its defaults unless changed: NFKC, case,
accent and punctuation folding, UAX #29 words with CJK characters as words; --unit,
--k-shingle, --keep-case, --keep-punct, --split-punct, --keep-accents, --mask-numbers,
--stop-words and --no-cjk change it for every fingerprint (the exact key is the normalized text). MinHash
uses --k-shingle (5 words by default); SimHash uses word 2-shingles unless --unit or
--k-shingle is given.

HTML has its main content extracted (boilerplate removed) unless --no-extract. A JSONL
record with both a text and an html field is taken as text. Ids: the --id-field, else
FILE:LINE; the relative path in a directory; the WARC-Record-ID.

A bad record (invalid JSON or UTF-8, a truncated compressed file, a record over
--max-record-bytes, a duplicate id, a page over the extraction limits) is written to
bad.jsonl with its file and line or offset (the first ten on standard error too) and
skipped (--on-error skip, the default; summary.json counts them), or ends the run
(--on-error fail, exit code 1).

--removed DIR writes the dropped records into DIR (new or empty, or replaced with
--force; not inside --out), in the layout and formats of corpus/, so that corpus/ and DIR
together hold every record of the inputs.

One corpus can be deduplicated by several processes, on several machines: give each the
same full, ordered list of INPUTs with --shard I/N (it reads the inputs k with k mod N =
I), one --run NAME and one Redis Cluster (--redis), where the shards share their index;
each writes its part into its own --out, and 'neardup dedup merge' joins the parts into
what one process would have written (methods all, minhash and exact).

The results are written into a hidden directory beside --out and renamed into place at
the end, so --out never mixes two runs and a failed run leaves no partial output. A run
that reads no document (empty inputs, or every record bad) writes nothing and exits 1,
saying what to change.

The same inputs and options give byte-identical outputs whatever --threads is, but for
the timings and memory in summary.json. Progress (each stage, its count and rate) shows
on standard error when it is a terminal, unless --quiet; the summary line names the
effective --method, --threshold or --distance and --keep, whose defaults differ from
'neardup check' and 'neardup serve'.
`,
	new: func() runner { return &dedupCmd{} },
}

// dedupCmd is "neardup dedup".
type dedupCmd struct {
	out                                     string
	method                                  dedupMethod
	distance                                int
	threshold                               float64
	keep                                    string
	format                                  string
	idField, textField, htmlField, urlField string
	priorityField, timeField                string
	noExtract                               bool
	onError                                 string
	maxRecordBytes                          int
	threads                                 int
	noCorpus, force, containment            bool
	annotate                                bool
	removed                                 string
	text                                    textFlags
	output                                  outputFlags
	shard                                   shardFlags
}

func (c *dedupCmd) define(fs *flag.FlagSet) {
	fs.StringVar(&c.out, "out", "", "write the results into `DIR`, new or empty, created if needed (required)")
	fs.BoolVar(&c.force, "force", false, "replace --out DIR and everything in it when it is not empty (default false)")
	fs.TextVar(&c.method, "method", dedupMethod(dedup.All), "duplicates by `METHOD`: exact, simhash, minhash, or all (exact, then minhash)\n(default all)")
	fs.IntVar(&c.distance, "distance", neardup.DefaultDistance, fmt.Sprintf("simhash: the largest distance of a near-duplicate, in `BITS` (default %d)", neardup.DefaultDistance))
	fs.BoolVar(&c.containment, "containment", false, "minhash and all: pair documents by the share of the smaller one's shingles found\nin the other instead of Jaccard similarity (default false)")
	fs.Float64Var(&c.threshold, "threshold", neardup.DefaultBatchThreshold, fmt.Sprintf("minhash and all: the smallest similarity of a near-duplicate, `S` in (0, 1]\n(default %g)", neardup.DefaultBatchThreshold))
	fs.StringVar(&c.keep, "keep", "first", "keep `POLICY`: first, priority, longest or shortest, or rules as\n'neardup check --keep' takes them (default first)")
	fs.StringVar(&c.format, "format", "auto", "read every input as `FORMAT`: auto (each by its content), jsonl, parquet, dir or warc\n(default auto)")
	fs.StringVar(&c.idField, "id-field", "id", "JSONL and Parquet: the id field or column, a dotted `PATH` into nested objects or\ngroups (default id)")
	fs.StringVar(&c.textField, "text-field", "text", "JSONL and Parquet: the plain-text field `PATH` (default text)")
	fs.StringVar(&c.htmlField, "html-field", "html", "JSONL and Parquet: the HTML field `PATH` (default html)")
	fs.StringVar(&c.urlField, "url-field", "url", "JSONL and Parquet: the URL field `PATH` (default url)")
	fs.StringVar(&c.priorityField, "priority-field", "", "JSONL and Parquet: a numeric field `PATH` for --keep priority (default \"\": none)")
	fs.StringVar(&c.timeField, "time-field", "", "JSONL and Parquet: an RFC 3339 fetch-time field `PATH`, or a Parquet timestamp\n(default \"\": none)")
	c.text.define(fs)
	fs.BoolVar(&c.noExtract, "no-extract", false, "fingerprint HTML on its whole visible text, not its main content (default false)")
	fs.StringVar(&c.onError, "on-error", "skip", "on a bad record: skip it (reported and counted) or fail the run; `ACTION`\n(default skip)")
	fs.IntVar(&c.maxRecordBytes, "max-record-bytes", corpus.DefaultMaxRecordBytes, fmt.Sprintf("a record larger than `N` bytes, compressed or not, is bad (default %d: %d MiB)", corpus.DefaultMaxRecordBytes, corpus.DefaultMaxRecordBytes>>20))
	fs.IntVar(&c.threads, "threads", 0, "fingerprint on `N` goroutines; 0 means one per CPU (default 0)")
	c.output.define(fs)
	fs.BoolVar(&c.noCorpus, "no-corpus", false, "do not write the deduplicated corpus, only the lists and the report (default false)")
	fs.BoolVar(&c.annotate, "annotate", false, "write every record into corpus/, annotated with its cluster, whether it is\nkept, and its method and score against the representative, instead of\ndropping (default false)")
	fs.StringVar(&c.removed, "removed", "", "write the dropped records into `DIR`, in corpus/'s layout and formats (default \"\": nowhere)")

	c.shard.define(fs)
}

// keepPolicy reads --keep.
func keepPolicy(s string) (neardup.KeepPolicy, error) {
	switch s {
	case "first":
		return neardup.KeepPolicy{neardup.KeepFirstSeen, neardup.KeepSmallestID}, nil
	case "priority", "priority-field":
		return neardup.KeepPolicy{neardup.KeepPriority, neardup.KeepFirstSeen, neardup.KeepSmallestID}, nil
	case "longest":
		return neardup.KeepPolicy{neardup.KeepLongest, neardup.KeepFirstSeen, neardup.KeepSmallestID}, nil
	case "shortest":
		return neardup.KeepPolicy{neardup.KeepShortest, neardup.KeepFirstSeen, neardup.KeepSmallestID}, nil
	}
	return neardup.ParseKeepPolicy(s)
}

func (c *dedupCmd) run(e *env, args []string) error {
	opt, copt, err := c.options(args)
	if err != nil {
		return err
	}
	if c.shard.shard != "" || c.shard.redis.url != "" {
		return c.runShard(e, args, opt, copt)
	}
	out, err := dedup.CreateDir(c.out, c.force)
	switch {
	case errors.Is(err, dedup.ErrNotDir):
		return usagef("--out %s is a file, not a directory; give a new or empty directory", filepath.Clean(c.out))
	case errors.Is(err, dedup.ErrDirNotEmpty):
		return usagef("--out %s is not empty: give a new or empty directory, or --force to replace it and all it holds", filepath.Clean(c.out))
	case err != nil:
		return err
	}
	defer out.Abandon() // unless written
	if c.removed != "" {
		switch err := out.CheckRemoved(c.removed, c.force); {
		case errors.Is(err, dedup.ErrNotDir):
			return usagef("--removed %s is a file, not a directory; give a new or empty directory", filepath.Clean(c.removed))
		case errors.Is(err, dedup.ErrDirNotEmpty):
			return usagef("--removed %s is not empty: give a new or empty directory, or --force to replace it", filepath.Clean(c.removed))
		case errors.Is(err, dedup.ErrOptions):
			return usagef("--removed %s and --out %s may not hold one another: give them separate places", filepath.Clean(c.removed), filepath.Clean(c.out))
		case err != nil:
			return err
		}
	}
	inputs, names, err := spoolStdin(e, args, out.Path())
	if err != nil {
		return err
	}
	defer names.remove()

	progress := newProgress(e.stderr, c.output.showProgress(e))
	defer progress.done()
	bad := &badRecords{out: out, stderr: progress.above(e.stderr), names: names.of, fail: c.onError == "fail", path: filepath.Join(c.out, dedup.FileBad)}
	copt.OnError = func(b corpus.BadRecord) error { return bad.record(b.Source.String(), "", b.Err) }
	res, err := c.read(inputs, copt, opt, names.of, progress, bad)
	if err != nil {
		return err
	}
	if len(res.Docs) == 0 {
		progress.done()
		return c.nothingRead(args, bad.n, bad.field)
	}
	sum, err := out.Write(res, dedup.DirOptions{
		Inputs: inputs, Corpus: copt, Names: names.of, InputNames: args, NoCorpus: c.noCorpus,
		Annotate: c.annotate, Removed: c.removed, Force: c.force,
		Title:    "neardup dedup: " + strings.Join(args, " "),
		Progress: func(stage string) { progress.stage(progressStage{name: stage}) },
	})
	if err != nil {
		return err
	}
	progress.done()
	if !c.output.quiet {
		c.printSummary(e, sum, res)
	}
	return nil
}

// options checks the flags and maps them to the options of the run and of its reader.
func (c *dedupCmd) options(args []string) (dedup.Options, corpus.Options, error) {
	fail := func(err error) (dedup.Options, corpus.Options, error) { return dedup.Options{}, corpus.Options{}, err }
	if len(args) == 0 {
		return fail(usagef("give the inputs to deduplicate: JSONL files, directories or WARC files (- for standard input)"))
	}
	if c.out == "" {
		return fail(usagef("give --out DIR, where the results go"))
	}
	keep, err := keepPolicy(c.keep)
	if err != nil {
		return fail(usagef("--keep: %v", err))
	}
	format, ok := map[string]corpus.Format{"auto": corpus.Auto, "jsonl": corpus.JSONL, "parquet": corpus.Parquet, "dir": corpus.Dir, "warc": corpus.WARC}[c.format]
	switch {
	case !ok:
		return fail(usagef("--format %q: use auto, jsonl, parquet, dir or warc", c.format))
	case c.onError != "skip" && c.onError != "fail":
		return fail(usagef("--on-error %q: use skip or fail", c.onError))
	case c.maxRecordBytes < 1:
		return fail(usagef("--max-record-bytes %d: use 1 or more", c.maxRecordBytes))
	case c.threads < 0:
		return fail(usagef("--threads %d: use 0 (one per CPU) or more", c.threads))
	case c.noCorpus && (c.annotate || c.removed != ""):
		return fail(usagef("--no-corpus writes no corpus to annotate or to split: drop --annotate and --removed, or --no-corpus"))
	case c.annotate && c.removed != "":
		return fail(usagef("--annotate writes every record into corpus/, so --removed would have none: give one of them"))
	case c.shard.shard != "" && (c.annotate || c.removed != ""):
		return fail(usagef("--shard writes no corpus/ (its merge writes the lists only): drop --annotate and --removed, or run without --shard"))
	}
	if err := c.text.check(); err != nil {
		return fail(err)
	}
	if err := c.output.check(); err != nil {
		return fail(err)
	}
	if i := slices.Index(args, "-"); i >= 0 && slices.Contains(args[i+1:], "-") {
		return fail(usagef("standard input (-) can be read once; give - at most once"))
	}
	opt := dedup.Options{
		Pipeline: neardup.Pipeline{
			Near: neardup.Near(c.method), Distance: distanceOption(c.distance), Threshold: c.threshold, Keep: keep,
			NoExtract: c.noExtract, Shingle: c.text.options(shingle.Uniform), Extract: extract.Options{MaxBytes: c.maxRecordBytes},
		},
		Containment: c.containment, Threads: c.threads,
	}
	if err := opt.Validate(); err != nil {
		return fail(usagef("%v", err))
	}
	copt := corpus.Options{
		Format: format, IDField: c.idField, TextField: c.textField, HTMLField: c.htmlField, URLField: c.urlField,
		PriorityField: c.priorityField, TimeField: c.timeField, MaxRecordBytes: c.maxRecordBytes,
	}
	return opt, copt, nil
}

// read runs dedup.Run over the records of the inputs, with progress.
func (c *dedupCmd) read(inputs []string, copt corpus.Options, opt dedup.Options, names func(string) string, progress *progress, bad *badRecords) (*dedup.Result, error) {
	r, err := corpus.Open(inputs, copt)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var docs atomic.Int64
	// A page that cannot be fingerprinted is reported with its file and line or offset,
	// like a bad record: dedup.Run calls Progress or onError once for each document, in
	// the order read, so the sources of the documents in flight wait in a queue.
	var pending sourceQueue
	opt.Progress = func(stage string, _ int) {
		if stage != dedup.StageRead {
			progress.stage(progressStage{name: stage})
			return
		}
		pending.pop()
		docs.Add(1)
	}
	// The count is of documents fingerprinted: the reader runs ahead of them, so its
	// bytes are shown beside the count, not as the stage's progress.
	progress.stage(progressStage{name: "fingerprint", unit: "docs", done: docs.Load, extra: func() string {
		st := r.Stats()
		if st.Total <= 0 {
			return ""
		}
		return fmt.Sprintf("(input read: %.0f%% of %s)", 100*float64(st.Bytes)/float64(st.Total), humanBytes(st.Total))
	}})
	return dedup.Run(func() (neardup.Document, error) {
		rec, err := r.Next()
		if err != nil {
			return neardup.Document{}, err
		}
		pending.push(rec.Source)
		rec.ID = names(rec.ID)
		return recordDocument(rec), nil
	}, opt, func(doc neardup.Document, err error) error {
		return bad.record(pending.pop().String(), doc.ID, err)
	})
}

// printSummary prints what the run found and where it wrote it.
func (c *dedupCmd) printSummary(e *env, sum *dedup.DirSummary, res *dedup.Result) {
	s := sum.Summary
	fmt.Fprintf(e.stderr, "neardup dedup: %d documents (%d bad records skipped): %d exact duplicates, %d near pairs, %d clusters; kept %d, dropped %d (%s); results in %s\n",
		s.Documents, sum.BadRecords+int64(s.Skipped), s.ExactDuplicates, s.NearPairs, s.Clusters, s.Kept, s.Dropped, humanBytes(s.DroppedBytes), c.out)
	fmt.Fprintf(e.stderr, "neardup dedup: with %s\n", dedupRules(res.Options, &c.text, c.keep))
	if c.output.verbose {
		for _, t := range sum.Timings {
			fmt.Fprintf(e.stderr, "neardup dedup: %-34s %8.3f s\n", t["stage"], t["seconds"])
		}
	}
}

// badRecords reports the bad records of a run: every one in bad.jsonl, the first few on
// standard error too, and fatal with --on-error fail. record is called by the reading
// goroutine (bad records) and by the fingerprinting loop (pages over the extraction
// limits) of dedup.Run: one lock for both.
type badRecords struct {
	out      interface{ Bad(dedup.BadRecord) error } // a *dedup.Dir, or a shard's list
	stderr   io.Writer
	names    func(string) string
	fail     bool
	path     string // of bad.jsonl, as the user named it
	mu       sync.Mutex
	n, field int // bad records, and those that lack the text field
}

// maxBadShown is how many bad records dedup reports on standard error; bad.jsonl has all.
const maxBadShown = 10

func (b *badRecords) record(where, id string, err error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n++
	if errors.Is(err, corpus.ErrField) {
		b.field++
	}
	where, id = b.names(where), b.names(id)
	if werr := b.out.Bad(dedup.BadRecord{Source: where, ID: id, Err: err}); werr != nil {
		return werr
	}
	switch {
	case b.fail:
		return fmt.Errorf("%s: %w (--on-error fail)", where, err)
	case b.n <= maxBadShown:
		fmt.Fprintf(b.stderr, "neardup dedup: skipped %s: %s\n", where, errorText("corpus", err))
	case b.n == maxBadShown+1:
		fmt.Fprintf(b.stderr, "neardup dedup: more bad records skipped; every one is in %s\n", b.path)
	}
	return nil
}

// dedupRules describes the parameters that decide what is a duplicate, as dedup's and
// eval's summaries print them: dedup's defaults differ from check's and serve's (see
// docs/cli.md), so every run says which it used.
// keep, when not "", is the --keep given.
func dedupRules(o dedup.Options, text *textFlags, keep string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--method %s", dedup.MethodName(o.Near))
	if o.Near == dedup.SimHash {
		fmt.Fprintf(&b, " --distance %d", o.Distance)
	} else if o.Near != dedup.Exact {
		fmt.Fprintf(&b, " --threshold %g", o.Threshold)
	}
	if keep != "" {
		b.WriteString(" --keep " + keep)
	}
	b.WriteString(", " + text.describe())
	if o.NoExtract {
		b.WriteString(", --no-extract")
	}
	return b.String()
}

// nothingRead is the error of a run that fingerprinted no document: it says why, from
// what was skipped, and what to change.
func (c *dedupCmd) nothingRead(args []string, nbad, nfield int) error {
	switch {
	case nbad == 0:
		return fmt.Errorf("read no documents from %s: the inputs are empty, or a directory holds no .html, .htm or .txt files; no output written", strings.Join(args, " "))
	case nfield == nbad:
		return fmt.Errorf("every record (%d) was bad, and no record had a text field %q or an html field %q; set --text-field or --html-field to the field that holds the text (--id-field for the id); no output written", nbad, c.textField, c.htmlField)
	}
	return fmt.Errorf("every record (%d) was bad (the reasons are above); no output written", nbad)
}

// stdinSpool is standard input copied to a file, since dedup reads its inputs more than
// once.
type stdinSpool struct {
	dir  string // "" when no input is "-"
	path string
}

// spoolStdin returns args with "-" replaced by a copy of standard input in a hidden
// directory beside out, and the spool, whose of turns the copy's path back into "stdin"
// in ids and sources, so that they read as 'neardup dedup -' was given.
func spoolStdin(e *env, args []string, out string) ([]string, *stdinSpool, error) {
	i := slices.Index(args, "-")
	if i < 0 {
		return args, &stdinSpool{}, nil
	}
	dir, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".stdin-")
	if err != nil {
		return nil, nil, err
	}
	s := &stdinSpool{dir: dir, path: filepath.Join(dir, "stdin")}
	f, err := os.Create(s.path)
	if err == nil {
		_, err = io.Copy(f, e.stdin)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.remove()
		return nil, nil, fmt.Errorf("reading stdin: %w", err)
	}
	inputs := slices.Clone(args)
	inputs[i] = s.path
	return inputs, s, nil
}

// of names a path, id or source read from the spool as read from "stdin".
func (s *stdinSpool) of(name string) string {
	if s.dir == "" {
		return name
	}
	if rest, ok := strings.CutPrefix(name, s.path); ok {
		return "stdin" + rest
	}
	return name
}

// remove removes the spool.
func (s *stdinSpool) remove() {
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// humanBytes formats n as "12.3 MB".
func humanBytes(n int64) string { return procstat.Bytes(n) }

// sourceQueue holds the sources of the documents dedup.Run has read and not yet
// reported on, oldest first. Its reader pushes while its fingerprinting loop pops.
type sourceQueue struct {
	mu sync.Mutex
	q  []corpus.Source
}

func (s *sourceQueue) push(src corpus.Source) {
	s.mu.Lock()
	s.q = append(s.q, src)
	s.mu.Unlock()
}

func (s *sourceQueue) pop() corpus.Source {
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.q[0]
	s.q[0] = corpus.Source{}
	s.q = s.q[1:]
	return src
}

// recordDocument turns a corpus record into the document dedup fingerprints: its text
// when it has one (a JSONL record may have text and HTML), else its HTML.
func recordDocument(rec corpus.Record) neardup.Document {
	doc := neardup.Document{ID: rec.ID, URL: rec.URL, ContentType: rec.ContentType, Priority: rec.Priority, FetchTime: rec.FetchTime}
	if rec.Text != "" || rec.HTML == nil {
		doc.Text = rec.Text
	} else {
		doc.HTML = rec.HTML
	}
	return doc
}
