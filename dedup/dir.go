package dedup

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/neardup/neardup/corpus"

	"github.com/neardup/neardup/internal/atomicfile"
)

// The files of an output directory, as Dir.Write writes them.
const (
	FileClusters = "clusters.jsonl" // Result.WriteClusters
	FilePairs    = "pairs.jsonl"    // Result.WritePairs
	FileKeep     = "keep.txt"       // Result.WriteIDs(w, true)
	FileDrop     = "drop.txt"       // Result.WriteIDs(w, false)
	FileBad      = "bad.jsonl"      // one BadRecord a line
	DirCorpus    = "corpus"         // the deduplicated corpus (corpus.Copy)
	FileReport   = "report.html"    // a page to read in a browser
	FileSummary  = "summary.json"   // DirSummary
)

// The stages DirOptions.Progress names, in the order Dir.Write goes through them.
const (
	StageWriteLists = "write lists"
	StageCopyCorpus = "copy corpus"
	StageReport     = "report"
)

// BadRecord is one input record a run skipped: where it is (a file and line or offset),
// its id when it was read, and why. It is a line of bad.jsonl.
type BadRecord struct {
	Source string
	ID     string
	Err    error
}

// badLine is a line of bad.jsonl.
type badLine struct {
	Source string `json:"source"`
	ID     string `json:"id,omitempty"`
	Error  string `json:"error"`
}

// DirOptions say what Dir.Write and WriteDir write beside the lists of a Result. The
// zero value writes the lists, an empty bad.jsonl, the summary and a report without
// texts: the corpus copy and the report's texts need the inputs.
type DirOptions struct {
	// Force, for WriteDir and for Removed, replaces a directory that is not empty
	// (CreateDir takes it as an argument).
	Force bool
	// Inputs are the corpus files and directories the Result was read from, read with
	// Corpus (its OnError is not called): they are read again, side by side, for the
	// deduplicated copy in corpus/ and for the texts the report shows. None means no
	// corpus/ and a report without texts.
	Inputs []string
	Corpus corpus.Options
	// Names maps the ids and sources read from Inputs to those of the Result; nil keeps
	// them. A caller that spooled standard input to a file names its records back.
	Names func(string) string
	// InputNames are the inputs as summary.json lists them and the report's title names
	// them; nil means Inputs.
	InputNames []string
	// NoCorpus skips corpus/.
	NoCorpus bool
	// Annotate makes corpus/ hold every record of the inputs, each annotated with what
	// the run decided about it (Result.Annotation; see corpus.Copy for where the fields
	// go), rather than the kept records only. Not with NoCorpus or Removed.
	Annotate bool
	// Removed, when not "", is a directory that receives the records the run drops, in
	// the layout and formats of corpus/, so that nothing is lost without a trace. It is
	// checked as CheckDir does (Force replaces it), written beside itself and renamed
	// into place like the output directory, just after it. It may not be inside the
	// output directory nor hold it. Not with NoCorpus or Annotate.
	Removed string
	// Title heads the report; "" means "dedup: " and the input names.
	Title string
	// Progress, when set, is called as each stage starts (StageWriteLists,
	// StageCopyCorpus, StageReport).
	Progress func(stage string)
}

// DirSummary is summary.json: the Result's counts and what the run read, with which
// parameters, in what time and memory, and which files it wrote.
type DirSummary struct {
	Summary
	BadRecords int64            `json:"bad_records"` // records of the inputs skipped as bad
	InputBytes int64            `json:"input_bytes"`
	Parameters map[string]any   `json:"parameters"`
	Timings    []map[string]any `json:"timings"` // {"stage": name, "seconds": wall time}
	PeakRSS    uint64           `json:"peak_rss_bytes"`
	CorpusKept int64            `json:"corpus_records_written,omitempty"`
	// CorpusRemoved counts the records written to DirOptions.Removed.
	CorpusRemoved int64    `json:"corpus_records_removed,omitempty"`
	Inputs        []string `json:"inputs"`
	OutputFiles   []string `json:"outputs"`
}

// Dir is an output directory being written. Every file goes into a hidden temporary
// directory beside it, on the same file system, and Write renames that into place at
// the end, so the directory never mixes two runs' files, and a run that fails or is
// killed leaves the previous one (or nothing) in place; only a hidden
// ".NAME.partial-*" directory may be left by a killed process. Bad is safe for
// concurrent use; the other methods are not.
type Dir struct {
	dir, tmp string
	replace  bool // dir exists and is replaced
	done     bool

	badMu   sync.Mutex
	badFile *os.File
	badLog  *bufio.Writer
	bad     int64
}

// CreateDir checks path before any work, as absent, an empty directory, or (with force)
// a directory to replace, and makes the temporary directory beside it (creating the
// parents). The errors wrap ErrNotDir or ErrDirNotEmpty when path is not fit. Call
// Abandon when the run does not reach Write.
func CreateDir(path string, force bool) (*Dir, error) {
	d, err := stage(path, force)
	if err != nil {
		return nil, err
	}
	if d.badFile, err = os.Create(filepath.Join(d.tmp, FileBad)); err != nil {
		d.Abandon()
		return nil, fmt.Errorf("dedup: %w", err)
	}
	d.badLog = bufio.NewWriter(d.badFile)
	return d, nil
}

// stage checks path and makes the temporary directory beside it that is renamed to path
// at the end.
func stage(path string, force bool) (*Dir, error) {
	d := &Dir{dir: filepath.Clean(path)}
	replace, err := checkOut(d.dir, force)
	if err != nil {
		return nil, err
	}
	d.replace = replace
	parent := filepath.Dir(d.dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(d.dir)+".partial-")
	if err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	d.tmp = tmp
	if err := os.Chmod(tmp, 0o755); err != nil { // as MkdirAll would have made it
		d.Abandon()
		return nil, fmt.Errorf("dedup: %w", err)
	}
	return d, nil
}

// checkOut reports whether dir exists and is to be replaced, or why it cannot be written.
func checkOut(dir string, force bool) (replace bool, err error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("dedup: %w", err)
	case !fi.IsDir():
		return false, fmt.Errorf("%w: %s", ErrNotDir, dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		return false, fmt.Errorf("dedup: %w", err)
	}
	names, err := f.Readdirnames(1)
	f.Close()
	if err != nil && err != io.EOF {
		return false, fmt.Errorf("dedup: %w", err)
	}
	if len(names) > 0 && !force {
		return false, fmt.Errorf("%w: %s", ErrDirNotEmpty, dir)
	}
	return true, nil
}

// Path returns the directory the results go to.
func (d *Dir) Path() string { return d.dir }

// Bad writes b as a line of bad.jsonl. It is safe for concurrent use: a reader's bad
// records and Run's onError may both call it.
func (d *Dir) Bad(b BadRecord) error {
	line, err := json.Marshal(badLine{Source: b.Source, ID: b.ID, Error: b.Err.Error()})
	if err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	d.badMu.Lock()
	defer d.badMu.Unlock()
	d.bad++
	if _, err := d.badLog.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("dedup: writing %s: %w", FileBad, err)
	}
	return nil
}

// Abandon removes the temporary directory of a Dir that was not published; after Write
// it does nothing, so it may be deferred.
func (d *Dir) Abandon() {
	if d.badFile != nil {
		d.badFile.Close()
	}
	if !d.done {
		os.RemoveAll(d.tmp)
	}
}

// WriteDir writes the output set of res into the directory path, as `neardup dedup`
// does: CreateDir (with opt.Force), then Dir.Write. It costs what Dir.Write costs.
func WriteDir(path string, res *Result, opt DirOptions) (*DirSummary, error) {
	d, err := CreateDir(path, opt.Force)
	if err != nil {
		return nil, err
	}
	defer d.Abandon()
	return d.Write(res, opt)
}

// publish moves the finished directory into place: an existing one is first renamed
// aside, then removed.
func (d *Dir) publish() error {
	old := d.tmp + ".old"
	if d.replace {
		if err := os.Rename(d.dir, old); err != nil {
			return fmt.Errorf("dedup: replacing %s: %w", d.dir, err)
		}
	}
	if err := os.Rename(d.tmp, d.dir); err != nil {
		if d.replace {
			os.Rename(old, d.dir)
		}
		return fmt.Errorf("dedup: moving the results into %s: %w", d.dir, err)
	}
	d.done = true
	if d.replace {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("dedup: removing the previous results (now in %s): %w", old, err)
		}
	}
	syncDir(filepath.Dir(d.dir))
	return nil
}

// syncDir makes a rename in dir durable; where directories cannot be synced, the rename
// is as durable as the file system makes it anyway.
func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// writeFile writes path through fn, atomically: a temporary file in the same directory,
// synced and renamed over path.
func writeFile(path string, fn func(io.Writer) error) error {
	if err := atomicfile.Write(path, fn); err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	return nil
}

// title is the report's title.
func (o *DirOptions) title() string {
	if o.Title != "" {
		return o.Title
	}
	return "dedup: " + strings.Join(o.inputNames(), " ")
}

func (o *DirOptions) inputNames() []string {
	if o.InputNames != nil {
		return o.InputNames
	}
	return o.Inputs
}

func (o *DirOptions) name(s string) string {
	if o.Names == nil {
		return s
	}
	return o.Names(s)
}

func (o *DirOptions) stage(name string) {
	if o.Progress != nil {
		o.Progress(name)
	}
}
