package accuracy

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
)

// The figures these tests print are docs/accuracy.md's tables:
//
//	go test ./internal/accuracy -run . -v

var sets struct {
	once    sync.Once
	debian  *Corpus
	spam    *Corpus
	answers []evaldata.Answer
	err     error
}

func load(t *testing.T) (debian, spam *Corpus, answers []evaldata.Answer) {
	t.Helper()
	sets.once.Do(func() {
		root, err := evaldata.Root()
		if err != nil {
			sets.err = err
			return
		}
		docs, pairs, err := evaldata.Debian(root)
		if err == nil {
			sets.debian, err = NewCorpus("debian-doc-versions", docs, pairs)
		}
		if err == nil {
			docs, pairs, err = evaldata.Spam(root)
		}
		if err == nil {
			sets.spam, err = NewCorpus("spamassassin-2003-subset", docs, pairs)
		}
		if err == nil {
			sets.answers, err = evaldata.Clough(root)
		}
		sets.err = err
	})
	if sets.err != nil {
		evaldata.Need(t, sets.err)
	}
	return sets.debian, sets.spam, sets.answers
}

// TestMinHashLSH holds the goal on debian-doc-versions (all pages of both folders
// together, reference = labelled word-5-shingle Jaccard): at threshold 0.8 the default
// pipeline (shingle defaults, K = 128, lsh defaults) has recall and precision >= 0.97. It
// also reports spamassassin and the other signature lengths considered.
func TestMinHashLSH(t *testing.T) {
	debian, spam, _ := load(t)
	for _, c := range []*Corpus{debian, spam} {
		feats, err := Features(c.Docs, shingle.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{64, 128, 256} {
			s, err := MinHashScore(c, feats, minhash.Hasher{K: k}, lsh.Options{K: k})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s, MinHash K=%d + LSH at 0.8: %v", c.Name, k, s)
			if c == debian && k == minhash.DefaultK && (s.Recall() < 0.97 || s.Precision() < 0.97) {
				t.Errorf("%s: recall %.4f, precision %.4f; the goal is >= 0.97 each", c.Name, s.Recall(), s.Precision())
			}
		}
	}
}

// TestSimHash reports the default SimHash pipeline (simhash.SchemeNeardup) on both sets:
// precision and recall at k = 3 and at every k to 10, and the Hamming distance of the
// reference pairs by their Jaccard. It fails if the default no longer finds the exact
// duplicates (k = 0 recall of identical texts) or loses its measured quality.
func TestSimHash(t *testing.T) {
	debian, spam, _ := load(t)
	for _, c := range []*Corpus{debian, spam} {
		fps := make([]uint64, len(c.Docs))
		for i, d := range c.Docs {
			fps[i] = simhash.SchemeNeardup.Fingerprint(d.Text)
		}
		sweep, err := SimHashSweep(c, fps, 0.8, 10)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s, SimHash (SchemeNeardup) against reference Jaccard >= 0.8:\n| k | precision | recall | F1 |\n|---|---|---|---|\n", c.Name)
		best := 0
		for k, s := range sweep {
			fmt.Fprintf(&b, "| %d | %.4f | %.4f | %.4f |\n", k, s.Precision(), s.Recall(), s.F1())
			if s.F1() > sweep[best].F1() {
				best = k
			}
		}
		fmt.Fprintf(&b, "best k = %d\n\nHamming distance of the reference pairs (Jaccard >= 0.5) by Jaccard:\n", best)
		DistanceTable(&b, c, fps)
		t.Log("\n" + b.String())
		if c == debian && sweep[best].F1() < 0.99 {
			t.Errorf("%s: best SimHash F1 %.4f, measured 0.996 at seed 0", c.Name, sweep[best].F1())
		}
	}
}

// TestClough measures the ranking of clough-stevenson-tasks-abc: each answer is scored
// by its similarity to its task's source, and the AUC is how well cut and lightly revised
// answers rank above non-plagiarised ones. The goal is AUC >= 0.95. SimHash
// depends on the feature-hash draw, so its AUC is given over Seeds seeds (seed 0 is
// SchemeNeardup itself); containment and Jaccard are exact, and given for word 1- to
// 5-shingles. Two copies copied text that is not in their task's source file, which no
// measure of copying from that file can find; the test lists them and holds the goal on
// the other copies, and over all answers it holds regression floors at the measured
// figures.
func TestClough(t *testing.T) {
	_, _, answers := load(t)
	var b strings.Builder
	below := 0 // seeds that miss the goal
	sh, err := OverSeeds(Seeds, func(seed uint64) (float64, error) {
		auc, err := CloughSimHash(answers, simhashFeatures, seed)
		if auc < 0.95 {
			below++
		}
		return auc, err
	})
	if err != nil {
		t.Fatal(err)
	}
	auc0, minPos, maxNeg := CloughAUC(answers, func(a, b string) float64 {
		return -float64(simhash.Distance(simhash.SchemeNeardup.Fingerprint(a), simhash.SchemeNeardup.Fingerprint(b)))
	})
	if seed0, _ := CloughSimHash(answers, simhashFeatures, 0); seed0 != auc0 {
		t.Fatalf("seed 0 gives AUC %.3f, SchemeNeardup %.3f: simhashFeatures is not its pipeline", seed0, auc0)
	}
	fmt.Fprintf(&b, "SimHash (SchemeNeardup's features), AUC over %d seeds: mean %v; seed 0 (SchemeNeardup) %.3f, closest copy %.0f bits, closest non-copy %.0f bits\n", Seeds, sh, auc0, -minPos, -maxNeg)
	if sh.Mean < 0.95 {
		fmt.Fprintf(&b, "the issue's goal, AUC >= 0.95, is NOT met by SimHash on average (mean %.3f, %d of %d seeds below)\n", sh.Mean, below, Seeds)
	}
	if sh.Mean < 0.8 {
		t.Errorf("mean SimHash AUC %.3f over %d seeds; it was 0.86 when measured", sh.Mean, Seeds)
	}
	b.WriteString("\n| features | containment of the answer in the source | exact Jaccard |\n|---|---|---|\n")
	for k := 1; k <= 5; k++ {
		s, err := shingle.New(shingle.Options{K: k})
		if err != nil {
			t.Fatal(err)
		}
		feats := func(x string) []uint64 { return s.AppendHashes(nil, x) }
		cont, _, _ := CloughAUC(answers, func(a, b string) float64 { return minhash.Containment(feats(a), feats(b)) })
		jac, _, _ := CloughAUC(answers, func(a, b string) float64 { return minhash.Jaccard(feats(a), feats(b)) })
		fmt.Fprintf(&b, "| word %d-shingles | %.3f | %.3f |\n", k, cont, jac)
		if k == shingle.DefaultWordK && cont < 0.9 {
			t.Errorf("word %d-shingle containment AUC %.3f; it was 0.946 when measured", k, cont)
		}
	}
	mh, _, err := CloughMinHash(answers, shingle.Options{}, Seeds)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "\nword 5-shingles, MinHash estimate of Jaccard (K=128), AUC over %d seeds: mean %v\n", Seeds, mh)
	cloughOnSource(t, answers, &b)
	t.Log("\n" + b.String())
}

// cloughOnSource checks the AUC over the answers that copied the task's source file,
// writing what it measures to b.
func cloughOnSource(t *testing.T, answers []evaldata.Answer, b *strings.Builder) {
	t.Helper()
	// Copies whose source text is not the task's source file: what they copied shares
	// no word 5-shingle with it, so every measure of copying from that file scores them
	// among the non-plagiarised answers, and the AUC over all answers cannot reach the
	// goal. Without them, the copies of the file given must rank above every other answer.
	src := CloughSources(answers)
	var onSource []evaldata.Answer
	b.WriteString("\ncopies that share no run of 5 words with their task's source:\n")
	off := 0
	for _, a := range answers {
		if a.Category == "cut" || a.Category == "light" {
			run, err := CommonRun(a.Text, src[a.Task], shingle.DefaultWordK)
			if err != nil {
				t.Fatal(err)
			}
			if run < shingle.DefaultWordK {
				fmt.Fprintf(b, "  %s (%s, task %s): longest shared run %d words\n", a.ID, a.Category, a.Task, run)
				off++
				continue
			}
		}
		onSource = append(onSource, a)
	}
	mhOn, jacOn, err := CloughMinHash(onSource, shingle.Options{}, Seeds)
	if err != nil {
		t.Fatal(err)
	}
	shOn, err := OverSeeds(Seeds, func(seed uint64) (float64, error) { return CloughSimHash(onSource, simhashFeatures, seed) })
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(b, "without those %d: word 5-shingles, MinHash estimate %v, exact Jaccard %.3f; SimHash %v\n", off, mhOn, jacOn, shOn)
	if mhOn.Min < 0.95 || jacOn < 0.95 {
		t.Errorf("copies of the source file: MinHash AUC %v, exact Jaccard %.3f, below the goal of 0.95", mhOn, jacOn)
	}
}

// simhashFeatures are SchemeNeardup's shingle options.
var simhashFeatures = shingle.Options{K: 2}

// TestSimHashChoice records how the default SimHash pipeline was chosen: every candidate is
// scored on the three sets (best F1 over k on debian-doc-versions and on spamassassin, AUC
// on Clough-Stevenson), each the mean over feature-hash seeds (choiceSeeds for the F1s,
// Seeds for the AUC, which moves most with the draw), and the default must have the best
// mean of the three, so that neither one set nor one lucky seed decides. It fails if a
// candidate overtakes the default.
func TestSimHashChoice(t *testing.T) {
	debian, spam, answers := load(t)
	header := fmt.Sprintf("| features | debian best F1 (k), mean of %d seeds | spam best F1 (k) | Clough AUC, mean of %d seeds (range) | mean |\n|---|---|---|---|---|\n", choiceSeeds, Seeds)
	choose(t, header, "words 2 (default)", []candidate{
		{"words 1", shingle.Options{K: 1}},
		{"words 1, TF", shingle.Options{K: 1, Weighting: shingle.TF}},
		{"words 2 (default)", simhashFeatures},
		{"words 2, TF", shingle.Options{K: 2, Weighting: shingle.TF}},
		{"words 2, numbers masked", shingle.Options{K: 2, MaskNumbers: true}},
		{"words 2, stop words removed", shingle.Options{K: 2, RemoveStopWords: true}},
		{"words 3", shingle.Options{K: 3}},
		{"words 4", shingle.Options{K: 4}},
		{"words 5", shingle.Options{K: 5}},
		{"chars 4", shingle.Options{Unit: shingle.Chars, K: 4}},
		{"chars 5", shingle.Options{Unit: shingle.Chars, K: 5}},
	}, func(c candidate) (string, float64) {
		row, sum := "", 0.0
		for _, corpus := range []*Corpus{debian, spam} {
			// The best k of each seed; the k shown is seed 0's.
			var k0 int
			f1, err := OverSeeds(choiceSeeds, func(seed uint64) (float64, error) {
				opt := c.opt
				opt.Seed = seed
				fps, err := SimHashes(corpus.Docs, opt)
				if err != nil {
					return 0, err
				}
				sweep, err := SimHashSweep(corpus, fps, 0.8, 10)
				if err != nil {
					return 0, err
				}
				best := 0
				for k := range sweep {
					if sweep[k].F1() > sweep[best].F1() {
						best = k
					}
				}
				if seed == 0 {
					k0 = best
				}
				return sweep[best].F1(), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			row += fmt.Sprintf(" %.3f (%d) |", f1.Mean, k0)
			sum += f1.Mean
		}
		auc, err := OverSeeds(Seeds, func(seed uint64) (float64, error) { return CloughSimHash(answers, c.opt, seed) })
		if err != nil {
			t.Fatal(err)
		}
		mean := (sum + auc.Mean) / 3
		return row + fmt.Sprintf(" %v | %.3f |", auc, mean), mean
	})
}

// candidate is one feature choice that TestSimHashChoice or TestMinHashChoice scores.
type candidate struct {
	name string
	opt  shingle.Options
}

// choose logs the table of the candidates, each row its name then the cells score gives,
// and fails unless want has the best mean.
func choose(t *testing.T, header, want string, cands []candidate, score func(candidate) (cells string, mean float64)) {
	t.Helper()
	var tb strings.Builder
	tb.WriteString(header)
	means := make([]float64, len(cands))
	for i, c := range cands {
		var cells string
		cells, means[i] = score(c)
		fmt.Fprintf(&tb, "| %s |%s\n", c.name, cells)
	}
	t.Log("\n" + tb.String())
	if best := slices.Index(means, slices.Max(means)); cands[best].name != want {
		t.Errorf("%s now scores best (%.3f); re-choose the default", cands[best].name, means[best])
	}
}

// choiceSeeds is how many seeds the choice tests average the F1s over: fewer than
// Seeds, since each shingles a whole set (the package runs for minutes under -race), and
// an F1 over hundreds of pairs moves less with the seed than the AUC of 57 answers (up
// to about 0.03 on spam, against 0.1).
const choiceSeeds = 2

// TestMinHashChoice records how MinHash's shingles were chosen, as TestSimHashChoice does
// for SimHash: every candidate is scored on the three sets (F1 of MinHash+LSH at the
// default threshold against the reference pairs, on debian-doc-versions and on
// spamassassin, mean of choiceSeeds seeds; AUC of the MinHash estimate on
// Clough-Stevenson, mean of Seeds seeds), and the default must have the best mean of the
// three. The exact Jaccard AUC on Clough is shown beside it. It fails if a candidate
// overtakes the default.
func TestMinHashChoice(t *testing.T) {
	debian, spam, answers := load(t)
	header := fmt.Sprintf("| shingles | debian F1, mean of %d seeds | spam F1 | Clough AUC, MinHash, mean of %d seeds (range) | Clough AUC, exact Jaccard | mean |\n|---|---|---|---|---|---|\n", choiceSeeds, Seeds)
	choose(t, header, "words 5 (default)", []candidate{
		{"words 3", shingle.Options{K: 3}},
		{"words 4", shingle.Options{K: 4}},
		{"words 5 (default)", shingle.Options{}},
		{"words 6", shingle.Options{K: 6}},
		{"words 4, stop words removed", shingle.Options{K: 4, RemoveStopWords: true}},
		{"words 5, stop words removed", shingle.Options{K: 5, RemoveStopWords: true}},
		{"words 5, numbers masked", shingle.Options{K: 5, MaskNumbers: true}},
		{"chars 5", shingle.Options{Unit: shingle.Chars, K: 5}},
		{"chars 7", shingle.Options{Unit: shingle.Chars, K: 7}},
		{"chars 9", shingle.Options{Unit: shingle.Chars, K: 9}},
	}, func(c candidate) (string, float64) {
		row, sum := "", 0.0
		for _, corpus := range []*Corpus{debian, spam} {
			f1, err := OverSeeds(choiceSeeds, func(seed uint64) (float64, error) {
				opt := c.opt
				opt.Seed = seed
				feats, err := Features(corpus.Docs, opt)
				if err != nil {
					return 0, err
				}
				s, err := MinHashScore(corpus, feats, minhash.Hasher{Seed: seed}, lsh.Options{})
				return s.F1(), err
			})
			if err != nil {
				t.Fatal(err)
			}
			row += fmt.Sprintf(" %.3f |", f1.Mean)
			sum += f1.Mean
		}
		auc, exact, err := CloughMinHash(answers, c.opt, Seeds)
		if err != nil {
			t.Fatal(err)
		}
		mean := (sum + auc.Mean) / 3
		return row + fmt.Sprintf(" %v | %.3f | %.3f |", auc, exact, mean), mean
	})
}
