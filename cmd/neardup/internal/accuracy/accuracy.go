// Package accuracy measures neardup's near-duplicate decisions against the labelled sets
// of package evaldata: precision and recall of MinHash+LSH and of SimHash against reference
// pairs, the Hamming distance of SimHash against reference Jaccard, and the ranking (AUC) of
// graded copies. Its tests hold the goals and print the tables that docs/accuracy.md reports.
package accuracy

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/neardup/neardup/hamming"
	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
)

// Pair is an unordered pair of document indices, A < B.
type Pair struct{ A, B int }

func mkPair(a, b int) Pair {
	if a > b {
		a, b = b, a
	}
	return Pair{a, b}
}

// Corpus is a labelled set: documents and the reference similarity of every pair that has
// one (pairs not listed are below the labels' floor, 0.5).
type Corpus struct {
	Name string
	Docs []evaldata.Doc
	Ref  map[Pair]float64
}

// NewCorpus indexes docs and the labelled pairs by document position. It fails when a pair
// names a document that is not there.
func NewCorpus(name string, docs []evaldata.Doc, pairs []evaldata.Pair) (*Corpus, error) {
	pos := make(map[string]int, len(docs))
	for i, d := range docs {
		pos[d.ID] = i
	}
	c := &Corpus{Name: name, Docs: docs, Ref: make(map[Pair]float64, len(pairs))}
	for _, p := range pairs {
		a, okA := pos[p.A]
		b, okB := pos[p.B]
		if !okA || !okB {
			return nil, fmt.Errorf("accuracy: %s: pair %s ~ %s names a missing document", name, p.A, p.B)
		}
		c.Ref[mkPair(a, b)] = p.Jaccard
	}
	return c, nil
}

// Positives returns the reference pairs with similarity >= t.
func (c *Corpus) Positives(t float64) map[Pair]bool {
	out := map[Pair]bool{}
	for p, j := range c.Ref {
		if j >= t {
			out[p] = true
		}
	}
	return out
}

// Score is precision and recall of predicted pairs against reference positives.
type Score struct {
	Found, Ref, Hits int
}

// Precision is Hits/Found, 1 when nothing was found.
func (s Score) Precision() float64 {
	if s.Found == 0 {
		return 1
	}
	return float64(s.Hits) / float64(s.Found)
}

// Recall is Hits/Ref, 1 when there is nothing to find.
func (s Score) Recall() float64 {
	if s.Ref == 0 {
		return 1
	}
	return float64(s.Hits) / float64(s.Ref)
}

// F1 is the harmonic mean of precision and recall.
func (s Score) F1() float64 {
	p, r := s.Precision(), s.Recall()
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

func (s Score) String() string {
	return fmt.Sprintf("precision %.4f (%d/%d)  recall %.4f (%d/%d)", s.Precision(), s.Hits, s.Found, s.Recall(), s.Hits, s.Ref)
}

func score(found, ref map[Pair]bool) Score {
	s := Score{Found: len(found), Ref: len(ref)}
	for p := range found {
		if ref[p] {
			s.Hits++
		}
	}
	return s
}

// Features returns the feature set of every document under opt.
func Features(docs []evaldata.Doc, opt shingle.Options) ([][]uint64, error) {
	s, err := shingle.New(opt)
	if err != nil {
		return nil, err
	}
	out := make([][]uint64, len(docs))
	for i, d := range docs {
		out[i] = s.AppendHashes(nil, d.Text)
	}
	return out, nil
}

// LSHPairs returns the pairs that an LSH index over the documents' signatures reports at
// its threshold: every document queried against an index holding all of them.
func LSHPairs(feats [][]uint64, h minhash.Hasher, opt lsh.Options) (map[Pair]bool, error) {
	x, err := lsh.New(opt)
	if err != nil {
		return nil, err
	}
	sigs := make([]minhash.Signature, len(feats))
	for i, f := range feats {
		sigs[i] = h.Signature(f)
		if err := x.Add(uint64(i), sigs[i]); err != nil {
			return nil, err
		}
	}
	found := map[Pair]bool{}
	for i, s := range sigs {
		ms, err := x.Query(s)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if int(m.ID) != i {
				found[mkPair(i, int(m.ID))] = true
			}
		}
	}
	return found, nil
}

// MinHashScore is the precision and recall of MinHash+LSH at opt's threshold against the
// reference pairs at the same threshold.
func MinHashScore(c *Corpus, feats [][]uint64, h minhash.Hasher, opt lsh.Options) (Score, error) {
	found, err := LSHPairs(feats, h, opt)
	if err != nil {
		return Score{}, err
	}
	t := opt.Threshold
	if t == 0 {
		t = lsh.DefaultThreshold
	}
	return score(found, c.Positives(t)), nil
}

// SimHashes returns one SimHash per document from its features under opt: unit weights,
// or the features' weights when opt.Weighting asks for them.
func SimHashes(docs []evaldata.Doc, opt shingle.Options) ([]uint64, error) {
	s, err := shingle.New(opt)
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(docs))
	var fs []shingle.Feature
	var hs []uint64
	var ws []float64
	for i, d := range docs {
		if opt.Weighting == shingle.Uniform && !opt.Bag {
			hs = s.AppendDistinct(hs[:0], d.Text) // SchemeNeardup's way, without a sort
			out[i] = simhash.Compute(hs)
			continue
		}
		fs = s.AppendWeighted(fs[:0], d.Text)
		hs, ws = hs[:0], ws[:0]
		for _, f := range fs {
			hs = append(hs, f.Hash)
			ws = append(ws, f.Weight)
		}
		out[i] = simhash.ComputeWeighted(hs, ws)
	}
	return out, nil
}

// SimHashPairs returns the pairs of documents whose fingerprints are within k bits.
func SimHashPairs(fps []uint64, k int) (map[Pair]bool, error) {
	pairs, err := hamming.Finder{Distance: k}.FindAllDocs(fps)
	if err != nil {
		return nil, err
	}
	// FindAllDocs links repeats of a fingerprint to its first document; expand to every
	// pair, as the reference lists every pair.
	groups := map[uint64][]int{}
	for i, fp := range fps {
		groups[fp] = append(groups[fp], i)
	}
	found := map[Pair]bool{}
	for _, p := range pairs {
		for _, a := range groups[fps[p.A]] {
			for _, b := range groups[fps[p.B]] {
				if a != b {
					found[mkPair(a, b)] = true
				}
			}
		}
	}
	return found, nil
}

// SimHashSweep returns the score of SimHash at every k in 0..maxK against the reference
// pairs at threshold t: one search at maxK, whose pairs within k bits are those found at k.
func SimHashSweep(c *Corpus, fps []uint64, t float64, maxK int) ([]Score, error) {
	ref := c.Positives(t)
	all, err := SimHashPairs(fps, maxK)
	if err != nil {
		return nil, err
	}
	out := make([]Score, maxK+1)
	for k := range out {
		found := map[Pair]bool{}
		for p := range all {
			if simhash.Distance(fps[p.A], fps[p.B]) <= k {
				found[p] = true
			}
		}
		out[k] = score(found, ref)
	}
	return out, nil
}

// DistanceTable writes, for the reference pairs binned by Jaccard, how their SimHash
// Hamming distances are distributed.
func DistanceTable(w io.Writer, c *Corpus, fps []uint64) {
	bins := []float64{0.5, 0.7, 0.8, 0.9, 0.95, 1.0001}
	cols := []int{0, 1, 2, 3, 4, 6, 8, 12, 16, 65}
	fmt.Fprintf(w, "| reference Jaccard | pairs | d=0 | 1 | 2 | 3 | 4-5 | 6-7 | 8-11 | 12-15 | 16+ |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i := range bins[:len(bins)-1] {
		counts := make([]int, len(cols)-1)
		n := 0
		for p, j := range c.Ref {
			if j < bins[i] || j >= bins[i+1] {
				continue
			}
			n++
			d := bits.OnesCount64(fps[p.A] ^ fps[p.B])
			for ci := range counts {
				if d >= cols[ci] && d < cols[ci+1] {
					counts[ci]++
				}
			}
		}
		hi := fmt.Sprintf("%.2f", bins[i+1])
		if bins[i+1] > 1 {
			hi = "1.00]"
		} else {
			hi += ")"
		}
		var b strings.Builder
		for _, ct := range counts {
			fmt.Fprintf(&b, " %d |", ct)
		}
		fmt.Fprintf(w, "| [%.2f, %s | %d |%s\n", bins[i], hi, n, b.String())
	}
}

// AUC returns the probability that a positive outscores a negative (ties count half).
func AUC(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return 0
	}
	var s float64
	for _, p := range pos {
		for _, n := range neg {
			switch cmp.Compare(p, n) {
			case 1:
				s++
			case 0:
				s += 0.5
			}
		}
	}
	return s / float64(len(pos)*len(neg))
}

// CloughAUC scores each answer by sim(answer, its task's source) and returns the AUC of
// cut and light answers (positives) against non-plagiarised ones (negatives), and the
// lowest positive and highest negative score.
func CloughAUC(answers []evaldata.Answer, sim func(answer, source string) float64) (auc, minPos, maxNeg float64) {
	src := CloughSources(answers)
	var pos, neg []float64
	for _, a := range answers {
		s := sim(a.Text, src[a.Task])
		switch a.Category {
		case "cut", "light":
			pos = append(pos, s)
		case "non":
			neg = append(neg, s)
		}
	}
	return AUC(pos, neg), slices.Min(pos), slices.Max(neg)
}

// CloughSources returns the source text of each task, by task.
func CloughSources(answers []evaldata.Answer) map[string]string {
	src := map[string]string{}
	for _, a := range answers {
		if a.Category == "orig" {
			src[a.Task] = a.Text
		}
	}
	return src
}

// CommonRun returns the length of the longest run of words (the units of the default
// shingle.Options) that text holds and so does source, counting up to most: the largest
// k for which some word k-shingle of text is one of source.
func CommonRun(text, source string, most int) (int, error) {
	for k := 1; k <= most; k++ {
		s, err := shingle.New(shingle.Options{K: k})
		if err != nil {
			return 0, err
		}
		a := s.AppendHashes(nil, text)
		if len(a) == 0 || minhash.Containment(a, s.AppendHashes(nil, source)) == 0 {
			return k - 1, nil
		}
	}
	return most, nil
}

// Seeds is how many feature-hash seeds (0 to Seeds-1) the seed-dependent figures are
// measured over. A SimHash AUC on the 57 Clough-Stevenson answers moves by up to 0.1
// with the hash draw, so one seed shows luck rather than quality.
const Seeds = 32

// Spread is the mean, lowest and highest value of a figure over seeds.
type Spread struct{ Mean, Min, Max float64 }

func (s Spread) String() string { return fmt.Sprintf("%.3f (%.3f-%.3f)", s.Mean, s.Min, s.Max) }

// OverSeeds returns the spread of f over the seeds 0 to n-1.
func OverSeeds(n int, f func(seed uint64) (float64, error)) (Spread, error) {
	s := Spread{Min: math.Inf(1), Max: math.Inf(-1)}
	for seed := range uint64(n) {
		v, err := f(seed)
		if err != nil {
			return Spread{}, err
		}
		s.Mean += v / float64(n)
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	}
	return s, nil
}

// CloughSimHash returns the Clough AUC (see CloughAUC) of SimHash with the features of
// opt, its Seed set to seed, ranking by minus the Hamming distance.
func CloughSimHash(answers []evaldata.Answer, opt shingle.Options, seed uint64) (float64, error) {
	opt.Seed = seed
	docs := make([]evaldata.Doc, len(answers))
	for i, a := range answers {
		docs[i].Text = a.Text
	}
	fps, err := SimHashes(docs, opt)
	if err != nil {
		return 0, err
	}
	fp := make(map[string]uint64, len(docs))
	for i, a := range answers {
		fp[a.Text] = fps[i]
	}
	auc, _, _ := CloughAUC(answers, func(a, b string) float64 { return -float64(simhash.Distance(fp[a], fp[b])) })
	return auc, nil
}

// CloughMinHash returns the Clough AUC (see CloughAUC) of the MinHash estimate (K =
// minhash.DefaultK) over the features of opt, over seeds hash seeds, and that of the
// features' exact Jaccard.
func CloughMinHash(answers []evaldata.Answer, opt shingle.Options, seeds int) (est Spread, exact float64, err error) {
	s, err := shingle.New(opt)
	if err != nil {
		return Spread{}, 0, err
	}
	feats := make(map[string][]uint64, len(answers))
	for _, a := range answers {
		feats[a.Text] = s.AppendHashes(nil, a.Text)
	}
	est, err = OverSeeds(seeds, func(seed uint64) (float64, error) {
		h := minhash.Hasher{Seed: seed}
		auc, _, _ := CloughAUC(answers, func(a, b string) float64 { return minhash.Similarity(h.Signature(feats[a]), h.Signature(feats[b])) })
		return auc, nil
	})
	exact, _, _ = CloughAUC(answers, func(a, b string) float64 { return minhash.Jaccard(feats[a], feats[b]) })
	return est, exact, err
}
