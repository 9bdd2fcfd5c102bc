package cli

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
)

// TestDedupSameAsWriteDir: `neardup dedup` writes the output set a library user gets
// from dedup.Run and dedup.WriteDir with the same options: every file byte for byte but
// for the timings and memory in summary.json.
func TestDedupSameAsWriteDir(t *testing.T) {
	dir := t.TempDir()
	input, _ := dedupCorpus(t, dir)
	cliOut, libOut := filepath.Join(dir, "cli"), filepath.Join(dir, "lib")
	if _, stderr, code := run(t, "", "dedup", "--quiet", "--method", "minhash", "--threshold", "0.7", "--out", cliOut, input); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}

	d, err := dedup.CreateDir(libOut, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abandon()
	r, err := corpus.Open([]string{input}, corpus.Options{OnError: func(b corpus.BadRecord) error {
		return d.Bad(dedup.BadRecord{Source: b.Source.String(), Err: b.Err})
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first := neardup.KeepPolicy{neardup.KeepFirstSeen, neardup.KeepSmallestID} // --keep first
	res, err := dedup.Run(func() (neardup.Document, error) {
		rec, err := r.Next()
		return recordDocument(rec), err
	}, dedup.Options{Pipeline: neardup.Pipeline{Near: dedup.MinHash, Threshold: 0.7, Keep: first}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(res, dedup.DirOptions{Inputs: []string{input}, Title: "neardup dedup: " + input}); err != nil {
		t.Fatal(err)
	}

	files := func(root string) map[string][]byte {
		out := map[string][]byte{}
		err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			rel, _ := filepath.Rel(root, path)
			out[rel] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	cliFiles, libFiles := files(cliOut), files(libOut)
	if len(cliFiles) != len(libFiles) || len(cliFiles) < 8 {
		t.Fatalf("the CLI wrote %d files, the library %d", len(cliFiles), len(libFiles))
	}
	for name, want := range cliFiles {
		got := libFiles[name]
		if name == dedup.FileSummary {
			got, want = withoutTimings(t, got), withoutTimings(t, want)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs between the CLI and WriteDir", name)
		}
	}
}

// withoutTimings returns summary.json without what differs run to run.
func withoutTimings(t *testing.T, b []byte) []byte {
	var s dedup.DirSummary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Timings) != 6 || s.PeakRSS == 0 {
		t.Errorf("summary.json: %d timings, peak RSS %d", len(s.Timings), s.PeakRSS)
	}
	s.Timings, s.PeakRSS = nil, 0
	out, _ := json.Marshal(s)
	return out
}
