package evaldata

import (
	"slices"
	"strings"
	"unicode"
)

// AEBScore accumulates the Article Extraction Benchmark's metrics over pages, as its
// evaluate.py computes them: word 4-gram precision and recall per page, averaged. It is
// the one scorer every extractor is measured with, here and in the comparison module
// (eval/). The zero value is an empty score; it is not safe for concurrent use.
type AEBScore struct {
	precisions, recalls []float64
	exact, pages        int
}

// aebTokens splits text as evaluate.py does, with Python's re.findall(r'\w+') on str:
// runs of letters, numbers (Unicode categories L and N) and underscores. Case is kept.
func aebTokens(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_')
	})
}

// aebShingles counts the word 4-grams of toks as evaluate.py's _ngrams does: a text of
// fewer than 4 tokens (but at least one) has one shingle of all of them.
func aebShingles(toks []string) map[string]int {
	m := map[string]int{}
	for i := 0; i < max(1, len(toks)-3); i++ {
		if sh := toks[i:min(i+4, len(toks))]; len(sh) > 0 {
			m[strings.Join(sh, "\x00")]++
		}
	}
	return m
}

// Add scores one page, the reference gold against the prediction pred, as evaluate.py's
// string_shingle_matching, precision_score, recall_score and get_accuracy do: shingle
// counts matched with multiplicity, normalized so that each page weighs the same. It
// returns the page's own precision and recall (1 for an empty side with nothing to
// miss).
func (s *AEBScore) Add(gold, pred string) (precision, recall float64) {
	gt, pt := aebTokens(gold), aebTokens(pred)
	g, p := aebShingles(gt), aebShingles(pt)
	var tp, fp, fn float64
	for k, c := range g {
		tp += float64(min(c, p[k]))
		fn += float64(max(0, c-p[k]))
	}
	for k, c := range p {
		fp += float64(max(0, c-g[k]))
	}
	if sum := tp + fp + fn; sum > 0 {
		tp, fp, fn = tp/sum, fp/sum, fn/sum
	}
	perfect := fp == 0 && fn == 0
	precision, recall = 1, 1
	if tp+fp > 0 {
		precision = aebRatio(perfect, tp, fp)
		s.precisions = append(s.precisions, precision)
	}
	if tp+fn > 0 {
		recall = aebRatio(perfect, tp, fn)
		s.recalls = append(s.recalls, recall)
	}
	s.pages++
	if slices.Equal(gt, pt) {
		s.exact++
	}
	return precision, recall
}

func aebRatio(perfect bool, tp, miss float64) float64 {
	switch {
	case perfect:
		return 1
	case tp == 0:
		return 0
	}
	return tp / (tp + miss)
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	sum := 0.0
	for _, v := range x {
		sum += v
	}
	return sum / float64(len(x))
}

// Precision is the mean precision of the pages with a prediction.
func (s *AEBScore) Precision() float64 { return mean(s.precisions) }

// Recall is the mean recall of the pages with a reference.
func (s *AEBScore) Recall() float64 { return mean(s.recalls) }

// F1 is the harmonic mean of Precision and Recall (not a mean of the pages' F1s), as
// evaluate.py reports it.
func (s *AEBScore) F1() float64 {
	p, r := s.Precision(), s.Recall()
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// Accuracy is the share of pages whose tokens equal the reference's.
func (s *AEBScore) Accuracy() float64 {
	if s.pages == 0 {
		return 0
	}
	return float64(s.exact) / float64(s.pages)
}

// PageF1 is one page's F1 from the precision and recall Add returned.
func PageF1(precision, recall float64) float64 {
	if precision+recall == 0 {
		return 0
	}
	return 2 * precision * recall / (precision + recall)
}
