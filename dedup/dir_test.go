package dedup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/corpus"
)

// writeJSONL writes docs as a JSONL corpus with one invalid line after the first
// document, and returns its path and its valid lines by id.
func writeJSONL(t *testing.T, dir string, docs []neardup.Document) (string, map[string]string) {
	t.Helper()
	lines := map[string]string{}
	var b bytes.Buffer
	for i, d := range docs {
		line, _ := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		lines[d.ID] = string(line)
		b.Write(append(line, '\n'))
		if i == 0 {
			b.WriteString("{\"id\": \"broken\", \"text\": \n")
		}
	}
	path := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, lines
}

// runFiles reads the corpus files into a run whose bad records go to d, as
// `neardup dedup` does.
func runFiles(t *testing.T, d *Dir, inputs []string, opt Options) *Result {
	t.Helper()
	r, err := corpus.Open(inputs, corpus.Options{OnError: func(b corpus.BadRecord) error {
		return d.Bad(BadRecord{Source: b.Source.String(), Err: b.Err})
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := Run(func() (neardup.Document, error) {
		rec, err := r.Next()
		return neardup.Document{ID: rec.ID, Text: rec.Text}, err
	}, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestDirWrite: every file of the output set is written, the lists as the Result writes
// them, the corpus copy with the kept records only, the bad record with its line, and
// the summary with the counts of both passes.
func TestDirWrite(t *testing.T) {
	dir := t.TempDir()
	docs := corpusDocs(5, 300)
	input, lines := writeJSONL(t, dir, docs)
	out := filepath.Join(dir, "out")
	d, err := CreateDir(out, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abandon()
	res := runFiles(t, d, []string{input}, Options{})
	var stages []string
	sum, err := d.Write(res, DirOptions{Inputs: []string{input}, Progress: func(s string) { stages = append(stages, s) }})
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var keep bytes.Buffer
	res.WriteIDs(&keep, true)
	if read(FileKeep) != keep.String() {
		t.Error("keep.txt is not Result.WriteIDs(w, true)")
	}
	var want []string
	for _, id := range strings.Fields(keep.String()) {
		want = append(want, lines[id])
	}
	if got := read("corpus/in.jsonl"); got != strings.Join(want, "\n")+"\n" {
		t.Errorf("corpus/in.jsonl has %d lines, want the %d kept", strings.Count(got, "\n"), len(want))
	}
	if bad := read(FileBad); strings.Count(bad, "\n") != 1 || !strings.Contains(bad, `"source":"`+input+`:2"`) {
		t.Errorf("bad.jsonl: %q", bad)
	}
	fi, _ := os.Stat(input)
	if sum.Documents != 300 || sum.BadRecords != 1 || sum.InputBytes != fi.Size() || sum.CorpusKept != int64(sum.Kept) || sum.Dropped == 0 {
		t.Errorf("summary %+v", sum)
	}
	var onDisk DirSummary
	if err := json.Unmarshal([]byte(read(FileSummary)), &onDisk); err != nil || onDisk.Summary != sum.Summary || onDisk.Parameters["method"] != "all" || onDisk.Parameters["threshold"] != neardup.DefaultBatchThreshold {
		t.Errorf("summary.json %+v (%v)", onDisk, err)
	}
	wantFiles := []string{FileClusters, FilePairs, FileKeep, FileDrop, FileBad, "corpus/", FileReport, FileSummary}
	if !slices.Equal(sum.OutputFiles, wantFiles) || !slices.Equal(stages, []string{StageWriteLists, StageCopyCorpus, StageReport}) {
		t.Errorf("outputs %v, stages %v", sum.OutputFiles, stages)
	}
	// The report shows the texts of the clusters it lists.
	largest, _ := pickClusters(res)
	if page := read(FileReport); !strings.Contains(page, strings.Join(strings.Fields(docs[largest[0][1]].Text)[:3], " ")) {
		t.Error("report.html lacks the text of the first cluster's representative")
	}
	if _, err := d.Write(res, DirOptions{}); err == nil {
		t.Error("a Dir was written twice")
	}
}

// TestWriteDirAtomic: a non-empty directory is refused before any work and left as it
// was, Force replaces it whole, a file is not a directory, and a write that fails leaves
// neither the directory nor a temporary one.
func TestWriteDirAtomic(t *testing.T) {
	dir := t.TempDir()
	res := run(t, corpusDocs(2, 50), Options{Pipeline: neardup.Pipeline{Near: SimHash}})
	out := filepath.Join(dir, "out")
	if _, err := WriteDir(out, res, DirOptions{}); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(out, "stale.txt")
	os.WriteFile(stale, []byte("from before"), 0o644)
	if _, err := WriteDir(out, res, DirOptions{}); !errors.Is(err, ErrDirNotEmpty) {
		t.Fatalf("non-empty directory: %v, want ErrDirNotEmpty", err)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatal("a refused write changed the directory")
	}
	if _, err := WriteDir(out, res, DirOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("Force kept a file of the previous contents")
	}
	if _, err := WriteDir(stale+"x", res, DirOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteDir(filepath.Join(out, FileKeep), res, DirOptions{Force: true}); !errors.Is(err, ErrNotDir) {
		t.Errorf("a file: %v, want ErrNotDir", err)
	}
	failed := filepath.Join(dir, "failed")
	if _, err := WriteDir(failed, res, DirOptions{Inputs: []string{filepath.Join(dir, "missing.jsonl")}}); err == nil {
		t.Fatal("a write from a missing input succeeded")
	}
	if _, err := os.Stat(failed); !os.IsNotExist(err) {
		t.Error("a failed write left the directory")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestDirBadConcurrent: bad records from many goroutines each get one whole line.
func TestDirBadConcurrent(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	d, err := CreateDir(out, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abandon()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				d.Bad(BadRecord{Source: fmt.Sprintf("f%d:%d", g, i), ID: strings.Repeat("x", 1000), Err: errors.New("bad")})
			}
		})
	}
	wg.Wait()
	if _, err := d.Write(&Result{Options: Options{Pipeline: neardup.Pipeline{Distance: 3}}}, DirOptions{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(out, FileBad))
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var r badLine
		if err := json.Unmarshal([]byte(l), &r); err != nil || seen[r.Source] {
			t.Fatalf("line %.60q: %v, seen %v", l, err, seen[r.Source])
		}
		seen[r.Source] = true
	}
	if len(seen) != 1600 {
		t.Errorf("%d lines, want 1600", len(seen))
	}
}
