package evaldata

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/minhash"
)

// TestDenseCloud checks that the cloud is dense where it should be (hundreds of pairs
// between 0.7 and 0.9), that its pairs are every pair at or above the bound with their
// exact similarity, and that a seed gives the same cloud.
func TestDenseCloud(t *testing.T) {
	docs, pairs := DenseCloud(1, 200, 0.5)
	again, pairs2 := DenseCloud(1, 200, 0.5)
	if !slices.Equal(docs, again) || !slices.Equal(pairs, pairs2) {
		t.Fatal("DenseCloud is not deterministic")
	}
	listed := map[[2]string]float64{}
	for _, p := range pairs {
		listed[[2]string{p.A, p.B}] = p.Jaccard
	}
	feats := make([][]uint64, len(docs))
	for i, d := range docs {
		feats[i] = RefShingles(d.Text)
	}
	var bands [5]int // < 0.5, 0.5-0.7, 0.7-0.8, 0.8-0.9, >= 0.9
	for i := range docs {
		for j := i + 1; j < len(docs); j++ {
			s := minhash.Jaccard(feats[i], feats[j])
			got, ok := listed[[2]string{docs[i].ID, docs[j].ID}]
			if ok != (s >= 0.5) || (ok && got != s) {
				t.Fatalf("%s ~ %s: Jaccard %v, listed %v (%v)", docs[i].ID, docs[j].ID, s, got, ok)
			}
			switch {
			case s < 0.5:
				bands[0]++
			case s < 0.7:
				bands[1]++
			case s < 0.8:
				bands[2]++
			case s < 0.9:
				bands[3]++
			default:
				bands[4]++
			}
		}
	}
	t.Logf("pairs by Jaccard: < 0.5 %d, 0.5-0.7 %d, 0.7-0.8 %d, 0.8-0.9 %d, >= 0.9 %d", bands[0], bands[1], bands[2], bands[3], bands[4])
	if bands[2] < 300 || bands[3] < 300 {
		t.Errorf("only %d pairs in 0.7-0.8 and %d in 0.8-0.9: not dense near 0.8", bands[2], bands[3])
	}
}

// TestAPIReference checks the loader against SOURCE.md's counts, and that VisibleText and
// RefShingles give back the labelled Jaccard of the reference pairs (so accuracy measured
// against these labels is measured against their definition).
func TestAPIReference(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	pages, pairs, err := APIReference(root)
	if err != nil {
		t.Fatal(err)
	}
	dup, mid := 0, 0
	for _, p := range pairs {
		if p.Jaccard >= 0.8 {
			dup++
		}
		if p.Jaccard >= 0.7 && p.Jaccard < 0.9 {
			mid++
		}
	}
	if len(pages) != 580 || len(pairs) != 15886 || dup != 233 || mid != 601 {
		t.Fatalf("%d pages, %d pairs, %d at 0.8 or above, %d in 0.7-0.9; SOURCE.md says 580, 15886, 233, 601", len(pages), len(pairs), dup, mid)
	}
	feats := map[string][]uint64{}
	for _, p := range pages {
		feats[p.ID] = RefShingles(VisibleText(string(p.HTML)))
	}
	bad := 0
	for _, p := range pairs {
		if j := minhash.Jaccard(feats[p.A], feats[p.B]); j < p.Jaccard-0.00005 || j > p.Jaccard+0.00005 {
			bad++
			if bad < 5 {
				t.Logf("%s ~ %s: %.4f, labelled %.4f", p.A, p.B, j, p.Jaccard)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d reference pairs not reproduced", bad, len(pairs))
	}
}
