package neardup

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/store/pebblestore"
)

// editedTexts returns n texts of 150 words made from 40 bases, each with 1 to 4 words
// replaced: two edits of one base have a Jaccard similarity crowding 0.7-0.9.
func editedTexts(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, seed))
	var texts []string
	for i := range n {
		w := words(uint64(i%40), 150)
		for range 1 + r.IntN(4) { // at least one: no exact copies, whose verdicts list no near ones
			w[r.IntN(len(w))] = fmt.Sprintf("x%d", r.IntN(1000))
		}
		texts = append(texts, strings.Join(w, " "))
	}
	return texts
}

// shingleSet returns the document's shingle set as the detector verifies it (the low 32
// bits of its features), by brute force: a map.
func shingleSet(t testing.TB, f *Fingerprinter, doc Document) map[uint32]bool {
	t.Helper()
	_, features, err := f.FingerprintFeatures(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	set := map[uint32]bool{}
	for _, h := range features {
		set[uint32(h)] = true
	}
	return set
}

// bruteJaccard is the Jaccard similarity of two sets by brute force.
func bruteJaccard(a, b map[uint32]bool) float64 {
	both := 0
	for h := range a {
		if b[h] {
			both++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}

// TestDetectorVerifiedOracle checks a verifying detector's near matches against brute
// force over every stored document, where pairs crowd the threshold: every match's
// similarity is the exact Jaccard similarity of the two shingle sets and reaches the
// threshold, and few pairs at or above it are missed (the bands', 3% at the threshold).
// With NoVerify the similarities are the signatures' estimates instead.
func TestDetectorVerifiedOracle(t *testing.T) { forStores(t, testDetectorVerifiedOracle) }

func testDetectorVerifiedOracle(t *testing.T, newDetector func(testing.TB, Options) *Detector) {
	texts := editedTexts(11, 300)
	for _, noVerify := range []bool{false, true} {
		d := newDetector(t, Options{Pipeline: Pipeline{Near: NearMinHash, Threshold: 0.8}, MaxMatches: 1000, NoVerify: noVerify})
		var stored []Entry
		var sets []map[uint32]bool
		missed, total, crowded := 0, 0, 0
		for i, text := range texts {
			doc := Document{ID: fmt.Sprintf("d%03d", i), Text: text}
			fp, err := d.Fingerprinter().Fingerprint(doc)
			if err != nil {
				t.Fatal(err)
			}
			if fp.Sketch.Empty() != noVerify {
				t.Fatalf("NoVerify %v: a sketch of %d hashes", noVerify, len(fp.Sketch.Hashes))
			}
			e := entryOf(&doc, fp)
			set := shingleSet(t, d.Fingerprinter(), doc)
			v := checkEntry(t, d, e, true)
			got := map[string]bool{}
			for _, m := range v.Matches {
				got[m.ID] = true
				j := 0
				fmt.Sscanf(m.ID, "d%d", &j)
				want := bruteJaccard(set, sets[j])
				if noVerify {
					want = minhash.Similarity(e.MinHash, stored[j].MinHash)
				}
				if m.Similarity != want || m.Similarity < 0.8 {
					t.Fatalf("NoVerify %v: %s matched %s at %v, want %v (at least 0.8)", noVerify, doc.ID, m.ID, m.Similarity, want)
				}
			}
			for j, s := range sets {
				switch bj := bruteJaccard(set, s); {
				case bj >= 0.8:
					total++
					if !got[stored[j].ID] {
						missed++
					}
					if bj < 0.85 {
						crowded++
					}
				}
			}
			stored, sets = append(stored, e), append(sets, set)
		}
		// A Fingerprinter of its own, as dedup and the pre-screen use, makes none.
		own, err := NewFingerprinter(d.Options())
		if err != nil {
			t.Fatal(err)
		}
		if fp, err := own.Fingerprint(Document{ID: "x", Text: texts[0]}); err != nil || !fp.Sketch.Empty() {
			t.Errorf("NewFingerprinter made a sketch of %d hashes (%v)", len(fp.Sketch.Hashes), err)
		}
		if crowded < 100 {
			t.Fatalf("only %d pairs in [0.8, 0.85): the texts do not crowd the threshold", crowded)
		}
		if !noVerify && float64(missed) > 0.03*float64(total) {
			t.Errorf("missed %d of %d pairs at or above 0.8", missed, total)
		}
		t.Logf("NoVerify %v: %d pairs at or above 0.8 (%d below 0.85), %d missed", noVerify, total, crowded, missed)
	}
}

// TestDetectorVerifyReopen opens a store made without verification with it, and the
// other way round: the store keeps its banding, and a record stored without a sketch is
// compared by the estimate, one with a sketch against another with one exactly.
func TestDetectorVerifyReopen(t *testing.T) {
	base := words(9, 150)
	var texts []string
	for i := range 4 {
		w := append([]string(nil), base...)
		for j := range 3 {
			w[(37*i+11*j)%len(w)] = fmt.Sprintf("edit%d", i*3+j)
		}
		texts = append(texts, strings.Join(w, " "))
	}
	opt := Options{Pipeline: Pipeline{Near: NearMinHash, Threshold: 0.5}, MaxMatches: 100}
	// run opens the store in dir with or without verification, checks the texts with
	// the ids given in order, each matching every one before it, and closes the store.
	run := func(dir string, noVerify bool, ids ...int) {
		t.Helper()
		s, err := pebblestore.Open(dir, pebblestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		o := opt
		o.NoVerify = noVerify
		d, err := OpenDetector(s, o)
		if err != nil {
			t.Fatalf("NoVerify %v: %v", noVerify, err)
		}
		for _, id := range ids {
			doc := Document{ID: fmt.Sprint(id), Text: texts[id]}
			fp, err := d.Fingerprinter().Fingerprint(doc)
			if err != nil {
				t.Fatal(err)
			}
			v := checkEntry(t, d, entryOf(&doc, fp), true)
			if len(v.Matches) != id {
				t.Fatalf("NoVerify %v: doc %d has %d matches, want %d: %+v", noVerify, id, len(v.Matches), id, v.Matches)
			}
			for _, m := range v.Matches {
				st, _, err := d.Get(m.ID)
				if err != nil {
					t.Fatal(err)
				}
				want, exact := minhash.Similarity(fp.MinHash, st.MinHash), !noVerify && !st.Sketch.Empty()
				if exact {
					want = fp.Sketch.Similarity(st.Sketch)
				}
				if m.Similarity != want {
					t.Errorf("NoVerify %v: doc %d against %s: similarity %v, want %v (exact %v)", noVerify, id, m.ID, m.Similarity, want, exact)
				}
			}
		}
	}
	dir := t.TempDir()
	run(dir, true, 0)     // made without verification
	run(dir, false, 1, 2) // 1 against 0 by the estimate; 2 against 1 exactly
	run(dir, true, 3)     // the estimate, sketches or not
	dir = t.TempDir()
	run(dir, false, 0, 1) // made with verification
	run(dir, true, 2, 3)
}

// TestDetectorExactCopiesVerified checks the verdicts around exact copies, whose stored
// records a check reads without decoding their sketches: an exact copy still matches at
// similarity 1, and a near copy checked after it, before and after the store is opened
// again (which rebuilds the band postings from the records), is still compared by the
// sketches (the exact Jaccard similarity, not the estimate), so no record read without
// its sketch took a sketch's place.
func TestDetectorExactCopiesVerified(t *testing.T) {
	dir := t.TempDir()
	base := words(7, 150)
	text := strings.Join(base, " ")
	edited := slices.Clone(base)
	edited[40], edited[90] = "lorem", "ipsum"
	near := Document{ID: "near", Text: strings.Join(edited, " ")}
	for round := range 2 {
		s, err := pebblestore.Open(dir, pebblestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := OpenDetector(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			doc := Document{ID: fmt.Sprintf("copy-%d-%d", round, i), URL: fmt.Sprintf("https://example.com/%d/%d", round, i), Text: text}
			v, err := d.Check(doc)
			if err != nil {
				t.Fatal(err)
			}
			want := ExactDuplicate
			if round == 0 && i == 0 {
				want = Unique
			}
			if v.Kind != want || want != Unique && (v.Matches[0].Similarity != 1 || v.Matches[0].Distance != 0) {
				t.Fatalf("round %d copy %d: %v %+v, want %v at similarity 1", round, i, v.Kind, v.Matches, want)
			}
		}
		v, err := d.Peek(near)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteJaccard(shingleSet(t, d.Fingerprinter(), near), shingleSet(t, d.Fingerprinter(), Document{ID: "x", Text: text}))
		if v.Kind != NearDuplicate || len(v.Matches) == 0 || v.Matches[0].Similarity != want || want == 1 {
			t.Fatalf("round %d: near copy %v %+v, want near at the exact similarity %v", round, v.Kind, v.Matches, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
