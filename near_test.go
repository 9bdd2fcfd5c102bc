package neardup

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/simhash"
)

// TestDetectorNearOracle checks the near-duplicate matches against brute force over every
// stored document: with NearSimHash the hamming index is exact, so the sets must be equal;
// with NearMinHash every reported match must reach the threshold and the misses must be
// few (the S-curve's).
func TestDetectorNearOracle(t *testing.T) { forStores(t, testDetectorNearOracle) }

func testDetectorNearOracle(t *testing.T, newDetector func(testing.TB, Options) *Detector) {
	r := rand.New(rand.NewPCG(7, 7))
	var texts []string
	for i := range 400 {
		w := words(uint64(i%60), 150) // 60 bases, each edited several times
		for range r.IntN(12) {
			w[r.IntN(len(w))] = fmt.Sprintf("x%d", r.IntN(1000))
		}
		texts = append(texts, strings.Join(w, " "))
	}
	for _, c := range []struct {
		near     Near
		distance int
	}{{NearSimHash, 3}, {NearSimHash, 7}, {NearSimHash, -1}, {NearMinHash, 3}} {
		near := c.near
		d := newDetector(t, Options{Pipeline: Pipeline{Near: near, Distance: c.distance}, MaxMatches: 1000})
		var stored []Entry
		missed, total := 0, 0
		for i, text := range texts {
			doc := Document{ID: fmt.Sprintf("d%03d", i), Text: text}
			fp, err := d.Fingerprinter().Fingerprint(doc)
			if err != nil {
				t.Fatal(err)
			}
			e := entryOf(&doc, fp)
			v := checkEntry(t, d, e, true)
			var want []string
			exact := false
			for _, s := range stored {
				if s.Main == e.Main {
					exact = true
				}
			}
			for _, s := range stored {
				m := measure(&e, &s)
				if (exact && s.Main == e.Main) || (!exact && isNear(d.Options(), m)) {
					want = append(want, s.ID)
				}
			}
			var got []string
			for _, m := range v.Matches {
				got = append(got, m.ID)
				if !exact && !isNear(d.Options(), m) {
					t.Fatalf("%v: %s reported %+v below the thresholds", near, doc.ID, m)
				}
			}
			slices.Sort(got)
			total += len(want)
			if near == NearSimHash || exact {
				if !slices.Equal(got, want) {
					t.Fatalf("%v: %s matched %v, brute force %v", near, doc.ID, got, want)
				}
			} else {
				missed += len(want) - len(got)
			}
			stored = append(stored, e)
		}
		if total == 0 || float64(missed) > 0.1*float64(total) {
			t.Errorf("%v: missed %d of %d near pairs", near, missed, total)
		}
		t.Logf("%v: %d pairs, %d missed", near, total, missed)
	}
}

// measure returns the SimHash distance and MinHash similarity of two entries, the
// measures a detector's near rule applies to.
func measure(a, b *Entry) Match {
	m := Match{Distance: simhash.Distance(a.SimHash, b.SimHash)}
	if len(a.MinHash) == len(b.MinHash) && len(a.MinHash) > 0 {
		m.Similarity = minhash.Similarity(a.MinHash, b.MinHash)
	}
	return m
}

// isNear applies the options' near rule (with their defaults) to a match's measures.
func isNear(o Options, m Match) bool {
	bySim, byMin := m.Distance <= o.Distance, m.Similarity >= o.Threshold
	switch o.Near {
	case NearSimHash:
		return bySim
	case NearMinHash:
		return byMin
	case NearBoth:
		return bySim && byMin
	}
	return bySim || byMin
}
