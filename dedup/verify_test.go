package dedup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/minhash"
)

// denseDocs is a synthetic dense cloud as documents, with the exact Jaccard similarity of
// every pair by the labels' definition (RefShingles), indexed [i][j].
func denseDocs(t *testing.T, n int) ([]neardup.Document, [][]float64) {
	t.Helper()
	cloud, _ := evaldata.DenseCloud(7, n, 1)
	docs := make([]neardup.Document, n)
	feats := make([][]uint64, n)
	for i, d := range cloud {
		docs[i] = neardup.Document{ID: d.ID, Text: d.Text}
		feats[i] = evaldata.RefShingles(d.Text)
	}
	sim := make([][]float64, n)
	for i := range sim {
		sim[i] = make([]float64, n)
		for j := range sim[i] {
			sim[i][j] = minhash.Jaccard(feats[i], feats[j])
		}
	}
	return docs, sim
}

// TestRunVerifiesExactly runs MinHash over a dense cloud, where hundreds of pairs lie
// between 0.7 and 0.9 and the estimate errs on many of them, and checks the pairs against
// brute force: every pair reported has an exact Jaccard similarity of at least the
// threshold, reported as its Similarity, and every such pair is reported. It fails if a
// pair is taken on its estimate alone: the cloud has pairs whose estimate reaches the
// threshold and whose similarity does not, checked to exist.
func TestRunVerifiesExactly(t *testing.T) {
	docs, sim := denseDocs(t, 250)
	res := run(t, docs, Options{Pipeline: neardup.Pipeline{Near: MinHash}})
	got := map[[2]int]bool{}
	for _, p := range res.Pairs {
		if p.Method != MinHash {
			t.Fatalf("pair %+v: want only MinHash pairs in the cloud", p)
		}
		got[[2]int{p.A, p.B}] = true
		if s := sim[p.A][p.B]; s < neardup.DefaultBatchThreshold || p.Similarity != s {
			t.Fatalf("pair %+v: exact similarity %v (threshold %v)", p, s, neardup.DefaultBatchThreshold)
		}
		if est := minhash.Similarity(res.Signature(p.A), res.Signature(p.B)); p.Estimate != est {
			t.Fatalf("pair %+v: estimate %v, want %v", p, p.Estimate, est)
		}
	}
	want, missed, estimateOnly := 0, 0, 0
	for i := range docs {
		for j := i + 1; j < len(docs); j++ {
			est := minhash.Similarity(res.Signature(i), res.Signature(j))
			if sim[i][j] < neardup.DefaultBatchThreshold {
				if est >= neardup.DefaultBatchThreshold {
					estimateOnly++
				}
				continue
			}
			want++
			if !got[[2]int{i, j}] {
				missed++
			}
		}
	}
	t.Logf("%d pairs at or above %v, %d reported, %d missed; %d pairs below it estimated above", want, neardup.DefaultBatchThreshold, len(got), missed, estimateOnly)
	if estimateOnly < 10 || want < 300 {
		t.Fatalf("the cloud does not test verification: %d pairs estimated above the threshold and below it, %d above", estimateOnly, want)
	}
	// The banding misses 1 in 1,000 pairs at exactly the threshold, fewer above.
	if missed > want/200 {
		t.Errorf("%d of %d pairs missed", missed, want)
	}
}

// TestRunSpill checks that the sets verify the same whether they stay in memory, go to
// the file from the first, or part each, and that the file is removed.
func TestRunSpill(t *testing.T) {
	docs, _ := denseDocs(t, 120)
	mem := run(t, docs, Options{Pipeline: neardup.Pipeline{Near: MinHash}})
	for _, limit := range []int64{-1, 40_000} { // all on file; the first two dozen in memory
		dir := t.TempDir()
		res := run(t, docs, Options{Pipeline: neardup.Pipeline{Near: MinHash}, VerifyMemory: limit, TempDir: dir})
		if !slices.Equal(res.Pairs, mem.Pairs) {
			t.Errorf("VerifyMemory %d: %d pairs, %d with the sets in memory", limit, len(res.Pairs), len(mem.Pairs))
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("VerifyMemory %d: %d files left in TempDir", limit, len(left))
		}
	}
	_, err := Run(source(docs), Options{Pipeline: neardup.Pipeline{Near: MinHash}, VerifyMemory: -1, TempDir: filepath.Join(t.TempDir(), "missing")}, nil)
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "dedup: ") {
		t.Errorf("spilling to a missing directory: %v", err)
	}
}

// TestSetsAgainstBruteForce checks the store's sets and the verifier's measure on small
// sets: what get returns is the sorted distinct low halves of the features, from memory
// or from the file, at the first get and after, and the
// Jaccard similarity of two of them is brute force's over the strings' shingles.
func TestSetsAgainstBruteForce(t *testing.T) {
	texts := []string{
		"a b c d e f g h i j",
		"a b c d e f g h i k",
		"a b c d e f g h i j a b c d e", // a repeated shingle
		"x y z",                         // fewer words than a shingle
		"",
	}
	fpr, err := neardup.NewFingerprinter(neardup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int64{-1, 1 << 20} {
		st := newSets(limit, t.TempDir(), 0)
		var want [][]uint32
		for i, text := range texts {
			_, feats, err := fpr.FingerprintFeatures(neardup.Document{ID: "d", Text: text}, nil)
			if err != nil {
				t.Fatal(err)
			}
			raw := minhash.AppendLow32(nil, feats)
			if err := st.add(raw); err != nil {
				t.Fatal(err)
			}
			set := minhash.SortUnique(slices.Clone(raw))
			// Brute force: the distinct shingles as strings.
			words := strings.Fields(text)
			distinct := map[string]bool{}
			for k := 0; k+5 <= len(words); k++ {
				distinct[strings.Join(words[k:k+5], " ")] = true
			}
			if len(set) != len(distinct) && !(len(words) > 0 && len(words) < 5 && len(set) == 1) {
				t.Errorf("text %d: %d distinct shingles, %d in the set", i, len(distinct), len(set))
			}
			want = append(want, set)
		}
		if err := st.finish(); err != nil {
			t.Fatal(err)
		}
		var buf []uint32
		for range 2 { // sorted at the first get, kept sorted for the second
			for i := range texts {
				got, err := st.get(i, &buf)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want[i]) {
					t.Errorf("limit %d: set %d = %v, want %v", limit, i, got, want[i])
				}
			}
		}
		a, _ := st.get(0, &buf)
		a = slices.Clone(a)
		b, _ := st.get(1, &buf)
		// Shingles of a and b: 6 each, 5 shared.
		if j := minhash.Jaccard(a, b); j != 5.0/7 {
			t.Errorf("Jaccard of sets 0 and 1 = %v, want 5/7", j)
		}
		if err := st.close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunContainment checks that Containment pairs a page with a copy that adds a
// eighth more text, which Jaccard at the same threshold does not.
func TestRunContainment(t *testing.T) {
	docs, _ := denseDocs(t, 1)
	base := docs[0].Text
	extra := make([]string, len(strings.Fields(base))/8)
	for i := range extra {
		extra[i] = fmt.Sprintf("q%d", i)
	}
	in := []neardup.Document{{ID: "small", Text: base}, {ID: "large", Text: base + " " + strings.Join(extra, " ")}}
	if res := run(t, in, Options{Pipeline: neardup.Pipeline{Near: MinHash, Threshold: 0.9}}); len(res.Pairs) != 0 {
		t.Fatalf("Jaccard: pairs %+v, want none", res.Pairs)
	}
	res := run(t, in, Options{Pipeline: neardup.Pipeline{Near: MinHash, Threshold: 0.9}, Containment: true})
	if len(res.Pairs) != 1 || res.Pairs[0].Similarity != 1 {
		t.Fatalf("containment: pairs %+v, want one of similarity 1", res.Pairs)
	}
}
