package accuracy

import (
	"cmp"
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
				found[ordered(m.ID, doc.ID)] = true
			}
		}
	}
	return found
}

// TestDetectorNearThreshold measures the service's near verdicts (the Detector, which
// cannot re-read documents) at a threshold of 0.8 where pairs crowd it: the synthetic
// dense cloud and the SciPy API pages (the labels' visible text, \w+ words), with
// precision and recall against the exact Jaccard labels, and the mean bytes of a
// document's stored record. By default the detector verifies each MinHash candidate by
// the two documents' sketches (Options.NoVerify); the rows with NoVerify decide by the
// signature's estimate, by signature size. It holds the goal of 0.97 for the verified
// verdicts, and floors under the estimate's figures at K = 128 (what a store without
// sketches gets), so that a change that makes either worse fails.
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
	}{
		{"synthetic dense cloud, 400 documents", cloud, cloudPairs},
		{"scipy API pages, the labels' visible text", scipy, scipyPairs},
	}
	runs := []struct {
		k, sketchCap int
		noVerify     bool
		floor        float64 // of precision and recall
	}{
		{128, 0, false, 0.97}, // the default: the goal
		{128, 512, false, 0},
		{128, 256, false, 0},
		{128, 0, true, 0.8}, // the estimate, as before verification
		{256, 0, true, 0},
		{512, 0, true, 0},
	}
	var b strings.Builder
	b.WriteString("| set | K | verified (sketch cap) | record bytes a document (mean) | labelled pairs ≥ 0.8 | found | precision | recall | the estimate over all pairs: precision | recall |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range sets {
		truth := map[[2]string]bool{}
		for _, p := range s.pairs {
			if p.Jaccard >= 0.8 {
				truth[ordered(p.A, p.B)] = true
			}
		}
		for _, r := range runs {
			opt := neardup.Options{Pipeline: neardup.Pipeline{Near: neardup.NearMinHash, Threshold: 0.8, MinHashK: r.k, Shingle: shingle.Options{SplitPunct: true}, NoExtract: true},
				MaxMatches: len(s.docs), NoVerify: r.noVerify, SketchCap: r.sketchCap}
			found := detectorPairs(t, s.docs, opt)
			tp := 0
			for p := range found {
				if truth[p] {
					tp++
				}
			}
			prec, rec := float64(tp)/float64(max(1, len(found))), float64(tp)/float64(len(truth))
			est := "- | -"
			if r.noVerify {
				// The estimate alone, every pair compared: the error that is not the bands'.
				estFound, estTP := estimatePairs(t, s.docs, opt, truth)
				est = fmt.Sprintf("%.4f | %.4f", float64(estTP)/float64(max(1, estFound)), float64(estTP)/float64(len(truth)))
			}
			verified := fmt.Sprintf("yes (%d)", cmp.Or(r.sketchCap, minhash.DefaultSketchCap))
			if r.noVerify {
				verified = "no"
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %.0f | %d | %d | %.4f | %.4f | %s |\n", s.name, r.k, verified, recordBytes(t, s.docs, opt),
				len(truth), len(found), prec, rec, est)
			if prec < r.floor || rec < r.floor {
				t.Errorf("%s, K = %d, verified %s: precision %.4f, recall %.4f, below %.2f", s.name, r.k, verified, prec, rec, r.floor)
			}
		}
	}
	t.Logf("the detector's near verdicts (threshold 0.8) against exact Jaccard:\n%s", b.String())
}

// ordered returns the pair of ids in order.
func ordered(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// recordBytes returns the mean size of the docs' entries, fingerprinted by the
// detector's own Fingerprinter, in the binary form a detector's store keeps
// (api.Entry.AppendBinary), with the 8 bytes of the last-seen time that the record adds.
func recordBytes(t *testing.T, docs []evaldata.Doc, opt neardup.Options) float64 {
	t.Helper()
	d, err := neardup.NewDetector(opt)
	if err != nil {
		t.Fatal(err)
	}
	fpr := d.Fingerprinter()
	total := 0
	for _, d := range docs {
		fp, err := fpr.Fingerprint(neardup.Document{ID: d.ID, Text: d.Text})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := neardup.Entry{ID: d.ID, Fingerprints: fp}.MarshalBinary()
		total += 8 + len(b)
	}
	return float64(total) / float64(len(docs))
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
				if truth[ordered(docs[i].ID, docs[j].ID)] {
					estTP++
				}
			}
		}
	}
	return estFound, estTP
}
