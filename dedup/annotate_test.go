package dedup

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/corpus"
)

// clusterLine is a line of clusters.jsonl, as a reader of it decodes it.
type clusterLine struct {
	Cluster        int64  `json:"cluster"`
	Representative string `json:"representative"`
	Members        []struct {
		ID         string   `json:"id"`
		Exact      bool     `json:"exact"`
		Distance   *float64 `json:"distance"`
		Similarity *float64 `json:"similarity"`
	} `json:"members"`
}

// wantAnnotations reads clusters.jsonl in out and returns, by id, the fields annotate
// mode must give each clustered document.
func wantAnnotations(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, FileClusters))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{}
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var c clusterLine
		if err := json.Unmarshal(l, &c); err != nil {
			t.Fatal(err)
		}
		for _, m := range c.Members {
			w := map[string]any{"dup_cluster": float64(c.Cluster), "dup_kept": m.ID == c.Representative, "dup_method": nil, "dup_score": nil}
			switch {
			case m.ID == c.Representative:
			case m.Exact:
				w["dup_method"] = "exact"
			case m.Similarity != nil:
				w["dup_method"], w["dup_score"] = "minhash", *m.Similarity
			case m.Distance != nil:
				w["dup_method"], w["dup_score"] = "simhash", *m.Distance
			default:
				t.Fatalf("member %s has no score", m.ID)
			}
			want[m.ID] = w
		}
	}
	return want
}

// TestDirWriteAnnotate: corpus/ holds every record, each with the fields clusters.jsonl
// and keep.txt say, for the methods that score by similarity and by distance.
func TestDirWriteAnnotate(t *testing.T) {
	for _, near := range []neardup.Near{All, SimHash} {
		t.Run(MethodName(near), func(t *testing.T) {
			dir := t.TempDir()
			docs := corpusDocs(5, 300)
			input, lines := writeJSONL(t, dir, docs)
			out := filepath.Join(dir, "out")
			d, err := CreateDir(out, false)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Abandon()
			res := runFiles(t, d, []string{input}, Options{Pipeline: neardup.Pipeline{Near: near}})
			sum, err := d.Write(res, DirOptions{Inputs: []string{input}, Annotate: true})
			if err != nil {
				t.Fatal(err)
			}
			if sum.CorpusKept != 300 || sum.Dropped == 0 {
				t.Fatalf("summary %+v: want all 300 records written", sum)
			}
			want := wantAnnotations(t, out)
			keep, _ := os.ReadFile(filepath.Join(out, FileKeep))
			kept := strings.Fields(string(keep))
			f, err := os.Open(filepath.Join(out, DirCorpus, "in.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<20)
			n, methods := 0, map[any]int{}
			for sc.Scan() {
				var m map[string]any
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					t.Fatal(err)
				}
				id := m["id"].(string)
				if want := docs[n].ID; id != want {
					t.Fatalf("line %d is %s, want %s", n, id, want)
				}
				n++
				w, ok := want[id]
				if !ok {
					w = map[string]any{"dup_cluster": nil, "dup_kept": true, "dup_method": nil, "dup_score": nil}
				}
				for k, v := range w {
					if m[k] != v {
						t.Errorf("%s: %s is %v, want %v", id, k, m[k], v)
					}
				}
				if m["dup_kept"] != slices.Contains(kept, id) {
					t.Errorf("%s: dup_kept %v, keep.txt disagrees", id, m["dup_kept"])
				}
				methods[m["dup_method"]]++
				if rest := strings.SplitN(sc.Text(), `,"dup_cluster"`, 2)[0]; rest+"}" != lines[id] {
					t.Errorf("%s: the record's own bytes changed: %s", id, rest)
				}
			}
			if n != 300 || methods["exact"] == 0 || methods[nil] == 0 || methods["exact"]+methods[nil] == n {
				t.Errorf("%d lines, methods %v: want 300 with exact and near duplicates", n, methods)
			}
		})
	}
}

// TestDirWriteRemoved: the removed records go to their own directory, published beside
// the output, and with corpus/ they are the input's records; misuses are refused before
// anything is written.
func TestDirWriteRemoved(t *testing.T) {
	dir := t.TempDir()
	input, lines := writeJSONL(t, dir, corpusDocs(5, 300))
	res := run(t, corpusDocs(5, 300), Options{})
	out, removed := filepath.Join(dir, "out"), filepath.Join(dir, "removed")
	sum, err := WriteDir(out, res, DirOptions{Inputs: []string{input}, Removed: removed})
	if err != nil {
		t.Fatal(err)
	}
	if sum.CorpusRemoved != int64(sum.Dropped) || sum.CorpusKept != int64(sum.Kept) || sum.Dropped == 0 {
		t.Errorf("summary %+v", sum)
	}
	ids := func(path string) []string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			var r struct{ ID string }
			if err := json.Unmarshal([]byte(l), &r); err != nil || lines[r.ID] != l {
				t.Fatalf("%s: line %q is not an input line (%v)", path, l, err)
			}
			got = append(got, r.ID)
		}
		return got
	}
	drop, _ := os.ReadFile(filepath.Join(out, FileDrop))
	keep, _ := os.ReadFile(filepath.Join(out, FileKeep))
	if got := ids(filepath.Join(removed, "in.jsonl")); !slices.Equal(got, strings.Fields(string(drop))) {
		t.Errorf("removed/in.jsonl has %d records, drop.txt %d", len(got), len(strings.Fields(string(drop))))
	}
	if got := ids(filepath.Join(out, DirCorpus, "in.jsonl")); !slices.Equal(got, strings.Fields(string(keep))) {
		t.Errorf("corpus/in.jsonl has %d records, keep.txt %d", len(got), len(strings.Fields(string(keep))))
	}
	d, err := CreateDir(filepath.Join(dir, "o2"), false)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]error{removed: ErrDirNotEmpty, filepath.Join(dir, "o2", "x"): ErrOptions, filepath.Join(dir, "new"): nil} {
		if err := d.CheckRemoved(path, false); !errors.Is(err, want) {
			t.Errorf("CheckRemoved(%s): %v, want %v", path, err, want)
		}
	}
	d.Abandon()
	for name, opt := range map[string]DirOptions{
		"not empty": {Inputs: []string{input}, Removed: removed},
		"inside":    {Inputs: []string{input}, Removed: filepath.Join(dir, "o2", "removed")},
		"holds":     {Inputs: []string{input}, Removed: dir},
		"annotate":  {Inputs: []string{input}, Removed: filepath.Join(dir, "r3"), Annotate: true},
		"no corpus": {Inputs: []string{input}, Removed: filepath.Join(dir, "r4"), NoCorpus: true},
	} {
		if _, err := WriteDir(filepath.Join(dir, "o2"), res, opt); err == nil || !strings.HasPrefix(err.Error(), "dedup: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "in.jsonl" && e.Name() != "out" && e.Name() != "removed" {
			t.Errorf("a refused write left %s", e.Name())
		}
	}
	if _, err := WriteDir(filepath.Join(dir, "o2"), res, DirOptions{Inputs: []string{input}, Removed: removed, Force: true}); err != nil {
		t.Errorf("Force: %v", err)
	}
}

// TestAnnotatorSkipped: a record the Result does not hold (Run skipped it) is annotated
// as kept and unclustered, and the documents after it still find theirs.
func TestAnnotatorSkipped(t *testing.T) {
	res := run(t, corpusDocs(5, 60), Options{})
	annotate := annotator(res, func(s string) string { return s })
	for i := range res.Docs {
		if i == 10 {
			if a := annotate("skipped"); a != (corpus.Annotation{Kept: true}) {
				t.Errorf("a record not in the Result: %+v", a)
			}
		}
		if a := annotate(res.Docs[i].ID); a != res.Annotation(i) {
			t.Fatalf("document %d: %+v, want %+v", i, a, res.Annotation(i))
		}
	}
}
