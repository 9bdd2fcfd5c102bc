package dedup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup/internal/report"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/shingle"
)

// Write writes the output set of res into the directory and renames it into place:
//
//	clusters.jsonl  Result.WriteClusters
//	pairs.jsonl     Result.WritePairs
//	keep.txt        Result.WriteIDs(w, true)
//	drop.txt        Result.WriteIDs(w, false)
//	bad.jsonl       every BadRecord given to Bad
//	corpus/         the kept records of opt.Inputs in their own formats (corpus.Copy),
//	                or with opt.Annotate every record, annotated
//	report.html     plots, the largest and the borderline clusters side by side with
//	                their word differences, mirrors, parameters
//	summary.json    DirSummary
//
// The bytes of every file but summary.json (timings, memory) depend on res and the
// inputs only. Write reads opt.Inputs twice more, side by side: for the corpus copy and
// for the texts of the documents the report shows; it holds the ids of the dropped
// documents and those texts in memory. It returns the summary it wrote. A Dir is
// written once. With opt.Removed, the dropped records go to that directory, renamed into
// place just after this one.
func (d *Dir) Write(res *Result, opt DirOptions) (*DirSummary, error) {
	if d.done {
		return nil, errors.New("dedup: the directory was written already; create another")
	}
	if opt.Annotate && (opt.NoCorpus || len(opt.Inputs) == 0) {
		return nil, fmt.Errorf("%w: DirOptions.Annotate writes corpus/: it needs Inputs, and not NoCorpus", ErrOptions)
	}
	removed, err := d.stageRemoved(&opt)
	if err != nil {
		return nil, err
	}
	if removed != nil {
		defer removed.Abandon()
	}
	sum := &DirSummary{Summary: res.Summary(), Inputs: opt.inputNames(), Parameters: parameters(res.Options, opt.Corpus)}
	timings := slices.Clone(res.Timings)
	opt.stage(StageWriteLists)
	start := time.Now()
	outputs, err := d.writeLists(res)
	if err != nil {
		return nil, err
	}
	timings = append(timings, Timing{Stage: StageWriteLists, Seconds: time.Since(start).Seconds()})

	opt.stage(StageCopyCorpus)
	start = time.Now()
	largest, borderline := pickClusters(res)
	texts, err := d.copyAndRead(res, &opt, sum, largest, borderline, removed)
	if err != nil {
		return nil, err
	}
	if !opt.NoCorpus && len(opt.Inputs) > 0 {
		outputs = append(outputs, DirCorpus+"/")
	}
	timings = append(timings, Timing{Stage: "copy corpus and read report texts", Seconds: time.Since(start).Seconds()})

	opt.stage(StageReport)
	start = time.Now()
	if err := d.closeBad(); err != nil {
		return nil, err
	}
	sum.BadRecords = max(0, d.bad-int64(res.Skipped)) // the records, not the pages Run skipped
	sum.PeakRSS = procstat.PeakRSS()
	for _, t := range timings {
		sum.Timings = append(sum.Timings, map[string]any{"stage": t.Stage, "seconds": t.Seconds})
	}
	data, err := reportData(opt.title(), res, sum, texts, largest, borderline)
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(d.tmp, FileReport), func(w io.Writer) error { return report.Write(w, data) }); err != nil {
		return nil, err
	}
	sum.Timings = append(sum.Timings, map[string]any{"stage": StageReport, "seconds": time.Since(start).Seconds()})
	sum.OutputFiles = append(outputs, FileReport, FileSummary)
	if err := writeFile(filepath.Join(d.tmp, FileSummary), sum.write); err != nil {
		return nil, err
	}
	if err := d.publish(); err != nil {
		return nil, err
	}
	if removed != nil {
		return sum, removed.publish()
	}
	return sum, nil
}

// stageRemoved checks opt.Removed and makes its temporary directory; nil without it.
func (d *Dir) stageRemoved(opt *DirOptions) (*Dir, error) {
	if opt.Removed == "" {
		return nil, nil
	}
	if opt.NoCorpus || opt.Annotate || len(opt.Inputs) == 0 {
		return nil, fmt.Errorf("%w: DirOptions.Removed needs Inputs, and neither NoCorpus nor Annotate", ErrOptions)
	}
	if err := d.CheckRemoved(opt.Removed, opt.Force); err != nil {
		return nil, err
	}
	return stage(opt.Removed, opt.Force)
}

// CheckRemoved reports whether path can be the DirOptions.Removed of d's Write, as Write
// checks it: absent, an empty directory, or with force any directory (the errors wrap
// ErrNotDir or ErrDirNotEmpty), and neither inside d's directory nor holding it. It
// creates nothing, so that a caller can check before a long run.
func (d *Dir) CheckRemoved(path string, force bool) error {
	out, err1 := filepath.Abs(d.dir)
	rm, err2 := filepath.Abs(path)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	if within(rm, out) || within(out, rm) {
		return fmt.Errorf("%w: the removed records' directory %s and the output directory %s may not hold one another; give them separate places", ErrOptions, path, d.dir)
	}
	_, err := checkOut(filepath.Clean(path), force)
	return err
}

// within reports whether path is dir or inside it; both are absolute and clean.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// writeLists writes the four lists and returns the names of the files written so far.
func (d *Dir) writeLists(res *Result) ([]string, error) {
	outputs := []string{FileClusters, FilePairs, FileKeep, FileDrop}
	writers := []func(io.Writer) error{res.WriteClusters, res.WritePairs,
		func(w io.Writer) error { return res.WriteIDs(w, true) },
		func(w io.Writer) error { return res.WriteIDs(w, false) }}
	for i, name := range outputs {
		if err := writeFile(filepath.Join(d.tmp, name), writers[i]); err != nil {
			return nil, err
		}
	}
	return append(outputs, FileBad), nil
}

// copyAndRead writes corpus/ (unless opt.NoCorpus), and the removed records into
// removed when it is not nil, while it reads the texts of the documents the report
// shows, all from opt.Inputs, and notes the input bytes and the records copied in sum.
func (d *Dir) copyAndRead(res *Result, opt *DirOptions, sum *DirSummary, largest, borderline [][]int, removed *Dir) (map[string]string, error) {
	if len(opt.Inputs) == 0 {
		return nil, nil
	}
	copt := opt.Corpus
	copt.OnError = nil // bad records were reported by the run's own pass
	want := map[string]bool{}
	for _, l := range append(slices.Clone(largest), borderline...) {
		for _, i := range l[1:] {
			want[res.Docs[i].ID] = true
		}
	}
	type textsResult struct {
		texts map[string]string
		total int64
		err   error
	}
	textsDone := make(chan textsResult, 1)
	go func() {
		t, total, err := reportTexts(opt.Inputs, copt, res, want, opt.name)
		textsDone <- textsResult{t, total, err}
	}()
	var copyErr error
	if !opt.NoCorpus {
		var cst corpus.Stats
		cst, copyErr = corpus.Copy(opt.Inputs, copt, filepath.Join(d.tmp, DirCorpus), copyOptions(res, opt, removed))
		sum.CorpusKept, sum.CorpusRemoved = cst.Kept, cst.Removed
	}
	tr := <-textsDone
	if copyErr != nil {
		return nil, fmt.Errorf("dedup: writing the deduplicated corpus: %w", copyErr)
	}
	if tr.err != nil {
		return nil, fmt.Errorf("dedup: reading texts for the report: %w", tr.err)
	}
	sum.InputBytes = tr.total
	return tr.texts, nil
}

// copyOptions says what corpus/ (and removed, when not nil) receive.
func copyOptions(res *Result, opt *DirOptions, removed *Dir) corpus.CopyOptions {
	if opt.Annotate {
		return corpus.CopyOptions{Annotate: annotator(res, opt.name)}
	}
	dropped := map[string]bool{} // usually far fewer than the kept
	for _, doc := range res.Docs {
		if !doc.Kept {
			dropped[doc.ID] = true
		}
	}
	c := corpus.CopyOptions{Keep: func(id string) bool { return !dropped[opt.name(id)] }}
	if removed != nil {
		c.Removed = removed.tmp
	}
	return c
}

// annotator returns the corpus.CopyOptions.Annotate of res's documents, named by name
// from the ids the copy reads. Copy asks in input order, the order of res.Docs, so a
// cursor finds each document without a map of every id; an id out of step (a record
// Run skipped, which is kept and in no cluster, as the plain copy keeps it) falls back
// to a map of the ids, built the first time.
func annotator(res *Result, name func(string) string) func(string) corpus.Annotation {
	next := 0
	var index map[string]int
	return func(id string) corpus.Annotation {
		id = name(id)
		i, ok := next, next < len(res.Docs) && res.Docs[next].ID == id
		if !ok {
			if index == nil {
				index = make(map[string]int, len(res.Docs))
				for j := range res.Docs {
					index[res.Docs[j].ID] = j
				}
			}
			if i, ok = index[id]; !ok {
				return corpus.Annotation{Kept: true}
			}
		}
		next = i + 1
		return res.Annotation(i)
	}
}

// closeBad flushes and closes bad.jsonl.
func (d *Dir) closeBad() error {
	d.badMu.Lock()
	defer d.badMu.Unlock()
	err := d.badLog.Flush()
	if cerr := d.badFile.Close(); err == nil {
		err = cerr
	}
	d.badFile = nil
	if err != nil {
		return fmt.Errorf("dedup: writing %s: %w", FileBad, err)
	}
	return nil
}

// write writes the summary as indented JSON.
func (s *DirSummary) write(w io.Writer) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// parameters returns the parameters of a run as summary.json and the report list them:
// those that decide what is a duplicate, with the names of `neardup dedup`'s flags.
func parameters(o Options, copt corpus.Options) map[string]any {
	s := o.Shingle
	unit := "word"
	if s.Unit == shingle.Chars {
		unit = "character"
	}
	return map[string]any{
		"method": MethodName(o.Near), "distance": o.Distance, "threshold": o.Threshold,
		"keep": o.Keep.String(), "extract": !o.NoExtract, "format": copt.Format.String(),
		"containment": o.Containment, "minhash_k": o.MinHashK, "threads": o.Threads,
		"shingles":  unit + " " + strconv.Itoa(s.ShingleK()) + "-shingles",
		"keep_case": s.KeepCase, "keep_punct": s.KeepPunct, "keep_accents": s.KeepAccents,
		"split_punct": s.SplitPunct, "mask_numbers": s.MaskNumbers, "stop_words": s.RemoveStopWords,
		"no_cjk": s.NoCJK,
	}
}
