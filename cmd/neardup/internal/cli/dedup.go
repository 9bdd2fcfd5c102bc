package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/cmd/neardup/internal/report"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/shingle"
)

var dedupCommand = &command{
	name:    "dedup",
	args:    "--out DIR INPUT...",
	summary: "deduplicate a corpus (JSONL, directories, WARC): clusters, keep list, deduplicated copy, report",
	about: `Reads every document of the INPUTs (JSONL files, plain, gzip or zstd; directory trees of
.html, .htm and .txt files; WARC files, plain or gzip; mixed freely, each told by its
content; "-" is standard input, once), finds the exact and near duplicates, and writes
into --out, a new or empty directory (--force replaces one that is not):

  clusters.jsonl  one line per cluster of duplicates: its id, representative (the
                  document kept) and members with their score against it
  pairs.jsonl     every verified duplicate pair with its method and distance or similarity
  keep.txt        the ids of the documents kept (every document in no cluster, and each
                  cluster's representative), in input order
  drop.txt        the ids of the documents dropped
  corpus/         the deduplicated corpus in the inputs' own formats: the kept JSONL lines,
                  WARC records and files unchanged and in order (a second pass)
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
	method                                  dedup.Method
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
	text                                    textFlags
	output                                  outputFlags
}

func (c *dedupCmd) define(fs *flag.FlagSet) {
	fs.StringVar(&c.out, "out", "", "write the results into `DIR`, new or empty, created if needed (required)")
	fs.BoolVar(&c.force, "force", false, "replace --out DIR and everything in it when it is not empty (default false)")
	fs.TextVar(&c.method, "method", dedup.All, "duplicates by `METHOD`: exact, simhash, minhash, or all (exact, then minhash)\n(default all)")
	fs.IntVar(&c.distance, "distance", dedup.DefaultDistance, fmt.Sprintf("simhash: the largest distance of a near-duplicate, in `BITS` (default %d)", dedup.DefaultDistance))
	fs.BoolVar(&c.containment, "containment", false, "minhash and all: pair documents by the share of the smaller one's shingles found\nin the other instead of Jaccard similarity (default false)")
	fs.Float64Var(&c.threshold, "threshold", dedup.DefaultThreshold, fmt.Sprintf("minhash and all: the smallest similarity of a near-duplicate, `S` in (0, 1]\n(default %g)", dedup.DefaultThreshold))
	fs.StringVar(&c.keep, "keep", "first", "keep `POLICY`: first, priority, longest or shortest, or rules as\n'neardup check --keep' takes them (default first)")
	fs.StringVar(&c.format, "format", "auto", "read every input as `FORMAT`: auto (each by its content), jsonl, dir or warc\n(default auto)")
	fs.StringVar(&c.idField, "id-field", "id", "JSONL: the id field, a dotted `PATH` into nested objects (default id)")
	fs.StringVar(&c.textField, "text-field", "text", "JSONL: the plain-text field `PATH` (default text)")
	fs.StringVar(&c.htmlField, "html-field", "html", "JSONL: the HTML field `PATH` (default html)")
	fs.StringVar(&c.urlField, "url-field", "url", "JSONL: the URL field `PATH` (default url)")
	fs.StringVar(&c.priorityField, "priority-field", "", "JSONL: a numeric field `PATH` for --keep priority (default \"\": none)")
	fs.StringVar(&c.timeField, "time-field", "", "JSONL: an RFC 3339 fetch-time field `PATH` (default \"\": none)")
	c.text.define(fs)
	fs.BoolVar(&c.noExtract, "no-extract", false, "fingerprint HTML on its whole visible text, not its main content (default false)")
	fs.StringVar(&c.onError, "on-error", "skip", "on a bad record: skip it (reported and counted) or fail the run; `ACTION`\n(default skip)")
	fs.IntVar(&c.maxRecordBytes, "max-record-bytes", corpus.DefaultMaxRecordBytes, fmt.Sprintf("a record larger than `N` bytes, compressed or not, is bad (default %d: %d MiB)", corpus.DefaultMaxRecordBytes, corpus.DefaultMaxRecordBytes>>20))
	fs.IntVar(&c.threads, "threads", 0, "fingerprint on `N` goroutines; 0 means one per CPU (default 0)")
	c.output.define(fs)
	fs.BoolVar(&c.noCorpus, "no-corpus", false, "do not write the deduplicated corpus, only the lists and the report (default false)")
}

// maxBadShown is how many bad records dedup reports on standard error; bad.jsonl has all.
const maxBadShown = 10

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

// dedupSummary is summary.json.
type dedupSummary struct {
	dedup.Summary
	BadRecords  int64            `json:"bad_records"`
	InputBytes  int64            `json:"input_bytes"`
	Parameters  map[string]any   `json:"parameters"`
	Timings     []map[string]any `json:"timings"`
	PeakRSS     uint64           `json:"peak_rss_bytes"`
	CorpusKept  int64            `json:"corpus_records_written,omitempty"`
	Inputs      []string         `json:"inputs"`
	OutputFiles []string         `json:"outputs"`
}

func (c *dedupCmd) run(e *env, args []string) error {
	if len(args) == 0 {
		return usagef("give the inputs to deduplicate: JSONL files, directories or WARC files (- for standard input)")
	}
	if c.out == "" {
		return usagef("give --out DIR, where the results go")
	}
	keep, err := keepPolicy(c.keep)
	if err != nil {
		return usagef("--keep: %v", err)
	}
	var format corpus.Format
	switch c.format {
	case "auto":
		format = corpus.Auto
	case "jsonl":
		format = corpus.JSONL
	case "dir":
		format = corpus.Dir
	case "warc":
		format = corpus.WARC
	default:
		return usagef("--format %q: use auto, jsonl, dir or warc", c.format)
	}
	if c.onError != "skip" && c.onError != "fail" {
		return usagef("--on-error %q: use skip or fail", c.onError)
	}
	if c.maxRecordBytes < 1 {
		return usagef("--max-record-bytes %d: use 1 or more", c.maxRecordBytes)
	}
	if c.threads < 0 {
		return usagef("--threads %d: use 0 (one per CPU) or more", c.threads)
	}
	if err := c.text.check(); err != nil {
		return err
	}
	if err := c.output.check(); err != nil {
		return err
	}
	if i := slices.Index(args, "-"); i >= 0 && slices.Contains(args[i+1:], "-") {
		return usagef("standard input (-) can be read once; give - at most once")
	}
	distance := distanceOption(c.distance)
	opt := dedup.Options{
		Method: c.method, Distance: distance, Threshold: c.threshold, Containment: c.containment, NoExtract: c.noExtract, Shingle: c.text.options(shingle.Uniform),
		Extract: extract.Options{MaxBytes: c.maxRecordBytes}, Keep: keep, Threads: c.threads,
	}
	if err := opt.Validate(); err != nil {
		return usagef("%v", err)
	}
	out, err := newOutDir(c.out, c.force)
	if err != nil {
		return err
	}
	defer out.abandon() // unless published
	inputs, names, err := spoolStdin(e, args, out.tmp+".stdin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(out.tmp + ".stdin")

	progress := newProgress(e.stderr, c.output.showProgress(e))
	defer progress.done()
	stderr := progress.above(e.stderr)

	// Bad records: every one in bad.jsonl, the first few on standard error too, and
	// fatal with --on-error fail.
	badFile, err := os.Create(filepath.Join(out.tmp, "bad.jsonl"))
	if err != nil {
		return err
	}
	defer badFile.Close()
	badLog := bufio.NewWriter(badFile)
	// bad is called by the reading goroutine (bad records) and by the fingerprinting loop
	// (pages over the extraction limits) of dedup.Run: one lock for both.
	var badMu sync.Mutex
	nbad, nfield := 0, 0
	bad := func(where, id string, err error) error {
		badMu.Lock()
		defer badMu.Unlock()
		nbad++
		if errors.Is(err, corpus.ErrField) {
			nfield++
		}
		where, id = names(where), names(id)
		line, _ := json.Marshal(badLine{Source: where, ID: id, Error: err.Error()})
		badLog.Write(append(line, '\n'))
		switch {
		case c.onError == "fail":
			return fmt.Errorf("%s: %w (--on-error fail)", where, err)
		case nbad <= maxBadShown:
			fmt.Fprintf(stderr, "neardup dedup: skipped %s: %s\n", where, errorText("corpus", err))
		case nbad == maxBadShown+1:
			fmt.Fprintf(stderr, "neardup dedup: more bad records skipped; every one is in %s\n", filepath.Join(c.out, "bad.jsonl"))
		}
		return nil
	}
	copt := corpus.Options{
		Format: format, IDField: c.idField, TextField: c.textField, HTMLField: c.htmlField, URLField: c.urlField,
		PriorityField: c.priorityField, TimeField: c.timeField, MaxRecordBytes: c.maxRecordBytes,
		OnError: func(b corpus.BadRecord) error { return bad(b.Source.String(), "", b.Err) },
	}
	r, err := corpus.Open(inputs, copt)
	if err != nil {
		return err
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
	res, err := dedup.Run(func() (neardup.Document, error) {
		rec, err := r.Next()
		if err != nil {
			return neardup.Document{}, err
		}
		pending.push(rec.Source)
		rec.ID = names(rec.ID)
		return recordDocument(rec), nil
	}, opt, func(doc neardup.Document, err error) error {
		return bad(pending.pop().String(), doc.ID, err)
	})
	if err != nil {
		return err
	}
	st := r.Stats()
	if len(res.Docs) == 0 {
		progress.done()
		return c.nothingRead(args, nbad, nfield)
	}
	progress.stage(progressStage{name: "write lists"})
	outputs := []string{"clusters.jsonl", "pairs.jsonl", "keep.txt", "drop.txt"}
	writers := []func(io.Writer) error{res.WriteClusters, res.WritePairs,
		func(w io.Writer) error { return res.WriteIDs(w, true) },
		func(w io.Writer) error { return res.WriteIDs(w, false) }}
	start := time.Now()
	for i, name := range outputs {
		if err := writeFile(filepath.Join(out.tmp, name), writers[i]); err != nil {
			return err
		}
	}
	outputs = append(outputs, "bad.jsonl")
	timings := res.Timings
	timings = append(timings, dedup.Timing{Stage: "write lists", Seconds: time.Since(start).Seconds()})

	// The corpus copy and the report's pass for texts read the inputs again, side by side.
	copt.OnError = nil // bad records were reported by the first pass
	progress.stage(progressStage{name: "copy corpus"})
	start = time.Now()
	largest, borderline := pickClusters(res)
	want := map[string]bool{}
	for _, l := range append(largest, borderline...) {
		for _, i := range l[1:] {
			want[res.Docs[i].ID] = true
		}
	}
	type textsResult struct {
		texts map[string]string
		err   error
	}
	textsDone := make(chan textsResult, 1)
	go func() {
		t, err := reportTexts(inputs, copt, res, want, names)
		textsDone <- textsResult{t, err}
	}()
	var corpusKept int64
	var copyErr error
	if !c.noCorpus {
		dropped := map[string]bool{} // usually far fewer than the kept
		for _, d := range res.Docs {
			if !d.Kept {
				dropped[d.ID] = true
			}
		}
		var cst corpus.Stats
		cst, copyErr = corpus.Copy(inputs, copt, filepath.Join(out.tmp, "corpus"), func(id string) bool { return !dropped[names(id)] })
		corpusKept = cst.Kept
		outputs = append(outputs, "corpus/")
	}
	tr := <-textsDone
	if copyErr != nil {
		return fmt.Errorf("writing the deduplicated corpus: %w", copyErr)
	}
	if tr.err != nil {
		return fmt.Errorf("reading texts for the report: %w", tr.err)
	}
	texts := tr.texts
	timings = append(timings, dedup.Timing{Stage: "copy corpus and read report texts", Seconds: time.Since(start).Seconds()})
	progress.stage(progressStage{name: "report"})
	start = time.Now()

	if err := badLog.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", badFile.Name(), err)
	}
	params := c.parameters(keep)
	params["minhash_k"], params["threads"] = res.Options.MinHashK, res.Options.Threads
	sum := dedupSummary{
		Summary: res.Summary(), BadRecords: st.Bad, InputBytes: st.Total, PeakRSS: procstat.PeakRSS(),
		CorpusKept: corpusKept, Inputs: args, Parameters: params,
	}
	for _, t := range timings {
		sum.Timings = append(sum.Timings, map[string]any{"stage": t.Stage, "seconds": t.Seconds})
	}
	data, err := reportData("neardup dedup: "+strings.Join(args, " "), res, sum, texts, largest, borderline)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(out.tmp, "report.html"), func(w io.Writer) error { return report.Write(w, data) }); err != nil {
		return err
	}
	sum.Timings = append(sum.Timings, map[string]any{"stage": "report", "seconds": time.Since(start).Seconds()})
	sum.OutputFiles = append(outputs, "report.html", "summary.json")
	if err := writeFile(filepath.Join(out.tmp, "summary.json"), func(w io.Writer) error {
		b, err := json.MarshalIndent(sum, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return err
	}
	if err := badFile.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", badFile.Name(), err)
	}
	if err := out.publish(); err != nil {
		return err
	}
	progress.done()
	if c.output.quiet {
		return nil
	}
	s := sum.Summary
	fmt.Fprintf(e.stderr, "neardup dedup: %d documents (%d bad records skipped): %d exact duplicates, %d near pairs, %d clusters; kept %d, dropped %d (%s); results in %s\n",
		s.Documents, st.Bad+int64(s.Skipped), s.ExactDuplicates, s.NearPairs, s.Clusters, s.Kept, s.Dropped, humanBytes(s.DroppedBytes), c.out)
	fmt.Fprintf(e.stderr, "neardup dedup: with %s\n", dedupRules(res.Options, &c.text, c.keep))
	if c.output.verbose {
		for _, t := range sum.Timings {
			fmt.Fprintf(e.stderr, "neardup dedup: %-34s %8.3f s\n", t["stage"], t["seconds"])
		}
	}
	return nil
}

// parameters returns the run's parameters as summary.json and the report list them.
func (c *dedupCmd) parameters(keep neardup.KeepPolicy) map[string]any {
	p := map[string]any{
		"method": c.method.String(), "distance": c.distance, "threshold": c.threshold,
		"keep": keep.String(), "extract": !c.noExtract, "format": c.format, "containment": c.containment,
	}
	c.text.parameters(p)
	return p
}

// dedupRules describes the parameters that decide what is a duplicate, as dedup's and
// eval's summaries print them: dedup's defaults differ from check's and serve's (see
// docs/cli.md), so every run says which it used.
// keep, when not "", is the --keep given.
func dedupRules(o dedup.Options, text *textFlags, keep string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--method %s", o.Method)
	if o.Method == dedup.SimHash {
		fmt.Fprintf(&b, " --distance %d", o.Distance)
	} else if o.Method != dedup.Exact {
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

// outDir is dedup's --out: every file is written into a temporary directory beside it,
// on the same file system, and renamed into place when the run is done, so that the
// directory never mixes two runs' files and a run that fails or is killed leaves the
// previous one (or nothing) in place; only a hidden ".DIR.partial-*" directory may be
// left by a killed run.
type outDir struct {
	dir, tmp string
	replace  bool // dir exists and is replaced
	done     bool
}

// newOutDir checks dir before any work: absent, an empty directory, or (with force) a
// directory to replace; and makes the temporary directory beside it.
func newOutDir(dir string, force bool) (*outDir, error) {
	dir = filepath.Clean(dir)
	o := &outDir{dir: dir}
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case !fi.IsDir():
		return nil, usagef("--out %s is a file, not a directory; give a new or empty directory", dir)
	default:
		f, err := os.Open(dir)
		if err != nil {
			return nil, err
		}
		names, err := f.Readdirnames(1)
		f.Close()
		if err != nil && err != io.EOF {
			return nil, err
		}
		if len(names) > 0 && !force {
			return nil, usagef("--out %s is not empty: give a new or empty directory, or --force to replace it and all it holds", dir)
		}
		o.replace = true
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".partial-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // as MkdirAll would have made it
		os.RemoveAll(tmp)
		return nil, err
	}
	o.tmp = tmp
	return o, nil
}

// publish moves the finished directory into place: an existing one is first renamed
// aside, then removed.
func (o *outDir) publish() error {
	old := o.tmp + ".old"
	if o.replace {
		if err := os.Rename(o.dir, old); err != nil {
			return fmt.Errorf("replacing %s: %w", o.dir, err)
		}
	}
	if err := os.Rename(o.tmp, o.dir); err != nil {
		if o.replace {
			os.Rename(old, o.dir)
		}
		return fmt.Errorf("moving the results into %s: %w", o.dir, err)
	}
	o.done = true
	if o.replace {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("removing the previous results (now in %s): %w", old, err)
		}
	}
	syncDir(filepath.Dir(o.dir))
	return nil
}

// abandon removes the temporary directory of a run that did not publish.
func (o *outDir) abandon() {
	if !o.done {
		os.RemoveAll(o.tmp)
	}
}

// syncDir makes a rename in dir durable; where directories cannot be synced, the rename
// is as durable as the file system makes it anyway.
func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// spoolStdin returns args with "-" replaced by a copy of standard input in dir, which it
// creates (dedup reads its inputs more than once), and a function that turns the copy's path back into
// "stdin" in ids and sources, so that they read as 'neardup dedup -' was given.
func spoolStdin(e *env, args []string, dir string) ([]string, func(string) string, error) {
	i := slices.Index(args, "-")
	if i < 0 {
		return args, func(s string) string { return s }, nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, nil, err
	}
	path := filepath.Join(dir, "stdin")
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	_, err = io.Copy(f, e.stdin)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading stdin: %w", err)
	}
	inputs := slices.Clone(args)
	inputs[i] = path
	return inputs, func(s string) string {
		if rest, ok := strings.CutPrefix(s, path); ok {
			return "stdin" + rest
		}
		return s
	}, nil
}

// writeFile writes path through fn, atomically: a temporary file in the same directory,
// synced and renamed over path.
func writeFile(path string, fn func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = fn(f)
	if err == nil {
		err = f.Chmod(0o644) // as os.Create would have made it, not CreateTemp's 0600
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// humanBytes formats n as "12.3 MB".
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}

// badLine is a line of bad.jsonl: where the record is, its id when it was read, and why
// it was skipped.
type badLine struct {
	Source string `json:"source"`
	ID     string `json:"id,omitempty"`
	Error  string `json:"error"`
}

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
