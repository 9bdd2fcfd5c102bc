package accuracy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// detectorPairs checks every document into a fresh in-memory detector, in order, and
// returns the near pairs its verdicts name (each document with the earlier ones it
// matches).
func detectorPairs(t *testing.T, docs []evaldata.Doc, opt neardup.Options) map[[2]string]bool {
	t.Helper()
	d, err := neardup.NewDetector(opt)
	if err != nil {
		t.Fatal(err)
	}
	found := map[[2]string]bool{}
	for _, doc := range docs {
		v, err := d.Check(neardup.Document{ID: doc.ID, Text: doc.Text})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range v.Matches {
			if m.Kind == neardup.NearDuplicate || m.Kind == neardup.ExactDuplicate {
				a, b := m.ID, doc.ID
				if a > b {
					a, b = b, a
				}
				found[[2]string{a, b}] = true
			}
		}
	}
	return found
}

// TestDetectorNearThreshold measures the service's near verdicts (the Detector, which
// cannot re-read documents and so decides by the MinHash estimate) at a threshold of 0.8
// where pairs crowd it: the synthetic dense cloud and the SciPy API pages (the labels'
// visible text, \w+ words), by signature size, with precision and recall against the
// exact Jaccard labels and the signature's bytes a document. It holds floors under
// today's figures at K = 128, so that a change that makes them worse fails; the goal of
// 0.97 is not met by an estimate (see docs/accuracy.md).
func TestDetectorNearThreshold(t *testing.T) {
	root, err := evaldata.Root()
	if err != nil {
		t.Fatal(err)
	}
	pages, scipyPairs, err := evaldata.APIReference(root)
	if err != nil {
		t.Fatal(err)
	}
	var scipy []evaldata.Doc
	for _, p := range pages {
		scipy = append(scipy, evaldata.Doc{ID: p.ID, Text: evaldata.VisibleText(string(p.HTML))})
	}
	cloud, cloudPairs := evaldata.DenseCloud(1, 400, 0.8)
	sets := []struct {
		name  string
		docs  []evaldata.Doc
		pairs []evaldata.Pair
		floor float64 // of precision and recall at K = 128
	}{
		{"synthetic dense cloud, 400 documents", cloud, cloudPairs, 0.8},
		{"scipy API pages, the labels' visible text", scipy, scipyPairs, 0.8},
	}
	var b strings.Builder
	b.WriteString("| set | K | signature bytes a document | labelled pairs ≥ 0.8 | found | precision | recall | the estimate over all pairs: precision | recall |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range sets {
		truth := map[[2]string]bool{}
		for _, p := range s.pairs {
			if p.Jaccard >= 0.8 {
				a, b := p.A, p.B
				if a > b {
					a, b = b, a
				}
				truth[[2]string{a, b}] = true
			}
		}
		for _, k := range []int{128, 256, 512} {
			opt := neardup.Options{Pipeline: neardup.Pipeline{Near: neardup.NearMinHash, Threshold: 0.8, MinHashK: k, Shingle: shingle.Options{SplitPunct: true}, NoExtract: true}, MaxMatches: len(s.docs)}
			found := detectorPairs(t, s.docs, opt)
			// The estimate alone, every pair compared: the error that is not the bands'.
			estFound, estTP := estimatePairs(t, s.docs, opt, truth)
			tp := 0
			for p := range found {
				if truth[p] {
					tp++
				}
			}
			prec, rec := float64(tp)/float64(max(1, len(found))), float64(tp)/float64(len(truth))
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.4f | %.4f | %.4f | %.4f |\n", s.name, k, 4*k, len(truth), len(found), prec, rec,
				float64(estTP)/float64(max(1, estFound)), float64(estTP)/float64(len(truth)))
			if k == 128 && (prec < s.floor || rec < s.floor) {
				t.Errorf("%s, K = %d: precision %.4f, recall %.4f, below the floor %.2f", s.name, k, prec, rec, s.floor)
			}
		}
	}
	t.Logf("the detector's near verdicts (MinHash estimate, threshold 0.8) against exact Jaccard:\n%s", b.String())
}

// estimatePairs compares the MinHash estimate of every pair of docs with 0.8, counting the
// pairs found and those of them in truth.
func estimatePairs(t *testing.T, docs []evaldata.Doc, opt neardup.Options, truth map[[2]string]bool) (estFound, estTP int) {
	t.Helper()
	fpr, err := neardup.NewFingerprinter(opt)
	if err != nil {
		t.Fatal(err)
	}
	sigs := make([]minhash.Signature, len(docs))
	for i, d := range docs {
		fp, err := fpr.Fingerprint(neardup.Document{ID: d.ID, Text: d.Text})
		if err != nil {
			t.Fatal(err)
		}
		sigs[i] = fp.MinHash
	}
	for i := range sigs {
		for j := i + 1; j < len(sigs); j++ {
			if minhash.Similarity(sigs[i], sigs[j]) >= 0.8 {
				estFound++
				a, b := docs[i].ID, docs[j].ID
				if a > b {
					a, b = b, a
				}
				if truth[[2]string{a, b}] {
					estTP++
				}
			}
		}
	}
	return estFound, estTP
}
