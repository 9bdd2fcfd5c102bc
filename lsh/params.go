package lsh

import (
	"fmt"
	"math"
)

// Probability returns the probability that a signature pair of Jaccard similarity s
// shares at least one of bands bands of rows rows each, and so becomes a candidate:
// 1 - (1 - s^rows)^bands. Plotted against s it is the S-curve of banding, steepest near
// (1/bands)^(1/rows). It treats the K values as independent, as for K permutations.
func Probability(s float64, bands, rows int) float64 {
	// -expm1(b*log1p(-s^r)) keeps precision where s^r is tiny or the result near 1.
	return -math.Expm1(float64(bands) * math.Log1p(-math.Pow(s, float64(rows))))
}

// Recall returns the mean of Probability over similarities from threshold to 1: the
// fraction of true pairs the bands find when their similarities are spread evenly over
// [threshold, 1]. Real near-duplicates cluster near 1, where Probability is close to 1, so
// their recall is usually higher; pairs right at the threshold are found with
// Probability(threshold, bands, rows). It returns 1 for threshold 1.
func Recall(threshold float64, bands, rows int) float64 {
	if threshold >= 1 {
		return 1
	}
	return 1 - falseNegativeArea(threshold, bands, rows)/(1-threshold)
}

// falsePositiveArea is ∫_0^t Probability(s) ds: the weight of pairs below the threshold
// that become candidates.
func falsePositiveArea(t float64, bands, rows int) float64 {
	// ∫_0^t 1 - (1-s^r)^b ds = t - ∫_0^t (1-s^r)^b ds, and with u = s^r the integral is
	// (1/r) ∫_0^{t^r} u^(1/r-1) (1-u)^b du = B(t^r; 1/r, b+1) / r, an incomplete beta
	// function.
	a, b := 1/float64(rows), float64(bands)+1
	p, q := powPair(t, rows)
	return max(0, t-math.Exp(lbeta(a, b))*regIncBeta(a, b, p, q)/float64(rows))
}

// falseNegativeArea is ∫_t^1 (1 - Probability(s)) ds: the weight of pairs at or above
// the threshold that are missed.
func falseNegativeArea(t float64, bands, rows int) float64 {
	// ∫_t^1 (1-s^r)^b ds = (B(1/r, b+1) - B(t^r; 1/r, b+1)) / r
	//                    = B(1/r, b+1) I_{1-t^r}(b+1, 1/r) / r.
	a, b := 1/float64(rows), float64(bands)+1
	p, q := powPair(t, rows)
	return math.Exp(lbeta(a, b)) * regIncBeta(b, a, q, p) / float64(rows)
}

// powPair returns t^r and 1 - t^r, each to full precision.
func powPair(t float64, r int) (p, q float64) {
	if t <= 0 {
		return 0, 1
	}
	l := float64(r) * math.Log(t)
	return math.Exp(l), -math.Expm1(l)
}

// lbeta returns the log of the beta function B(a, b) for a, b > 0.
func lbeta(a, b float64) float64 {
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab
}

// regIncBeta returns the regularized incomplete beta function I_x(a, b) for a, b > 0,
// x in [0, 1] and y = 1 - x (passed separately, so that neither loses precision near 0),
// from its continued fraction, evaluated where it converges fast (x below (a+1)/(a+b+2))
// and through I_x(a, b) = 1 - I_y(b, a) elsewhere.
func regIncBeta(a, b, x, y float64) float64 {
	switch {
	case x <= 0:
		return 0
	case y <= 0:
		return 1
	}
	front := math.Exp(a*math.Log(x) + b*math.Log(y) - lbeta(a, b))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, y)/b
}

// betaFraction evaluates the continued fraction of the incomplete beta function,
// 1/(1+ d1/(1+ d2/(1+ ...))) with d(2m+1) = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)) and
// d(2m) = m(b-m)x / ((a+2m-1)(a+2m)), by the modified Lentz method.
func betaFraction(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	f := d
	for m := 1.0; m <= 1000; m++ {
		for _, num := range [2]float64{
			m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m)),
			-(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1)),
		} {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			f *= c * d
		}
		if math.Abs(c*d-1) < eps {
			break
		}
	}
	return f
}

// Params returns the banding (bands, rows), bands*rows <= k, that minimizes
// fpWeight*FP + fnWeight*FN, where FP = ∫_0^threshold Probability(s) ds is the area of
// the S-curve below the threshold (dissimilar pairs that become candidates) and
// FN = ∫_threshold^1 (1 - Probability(s)) ds the area above it that the curve misses. It
// tries every (bands, rows) in the order bands = 1..k, rows = 1..k/bands and keeps the
// first minimum, as datasketch's MinHashLSH does, so it gives the same answers:
// (0.8, 0.5, 0.5, 128) gives 9 bands of 13 rows, whose recall at exactly 0.8 is
// Probability(0.8, 9, 13) = 0.399 and whose Recall over [0.8, 1] is 0.83; (0.75, 0.5,
// 0.5, 256) gives (21, 12).
//
// Raising fnWeight buys recall with more candidates to verify: (0.8, 0.1, 0.9, 128) gives
// 14 bands of 9 rows, which find 87% of the pairs at exactly 0.8. The integrals are
// incomplete beta functions, evaluated in closed form (about 1,200 of them at k = 128,
// about 0.3 ms). Params panics if threshold is not in (0, 1], a weight is negative or not
// finite, both weights are 0, or k is not in [1, minhash.MaxK]: these are programming
// errors (New checks its Options and returns an error instead).
func Params(threshold, fpWeight, fnWeight float64, k int) (bands, rows int) {
	if err := checkParams(threshold, fpWeight, fnWeight, k); err != nil {
		panic(err)
	}
	best := math.Inf(1)
	for b := 1; b <= k; b++ {
		for r := 1; r <= k/b; r++ {
			cost := fpWeight*falsePositiveArea(threshold, b, r) + fnWeight*falseNegativeArea(threshold, b, r)
			if cost < best {
				best, bands, rows = cost, b, r
			}
		}
	}
	return bands, rows
}

// RecallParams returns the banding for an index whose candidates are verified exactly
// (QueryVerified), where extra candidates cost a check and a missed pair is lost: of the
// bandings of at most k values whose chance of missing a pair of similarity exactly
// threshold, 1 - Probability(threshold, bands, rows), is at most miss, the one that makes
// the fewest candidates below the threshold (the least area under the S-curve from 0 to
// threshold). Pairs above the threshold are missed less often still. When no banding
// meets miss (k too small) it returns the one that misses least. (0.8, 0.001, 128) gives
// 18 bands of 5 rows, which miss 8 in 10,000 pairs at exactly 0.8 and make a candidate
// of 44% of the pairs at 0.5 (Params' 9 bands of 13 rows miss 60% at 0.8). It costs
// about 1,200 incomplete beta functions at k = 128, about 0.3 ms, and panics as Params
// does, or for miss outside (0, 1).
func RecallParams(threshold, miss float64, k int) (bands, rows int) {
	if err := checkParams(threshold, 1, 1, k); err != nil {
		panic(err)
	}
	if !(miss > 0 && miss < 1) {
		panic(fmt.Errorf("%w: miss %v is outside (0, 1)", ErrOptions, miss))
	}
	bestFP, bestMiss := math.Inf(1), math.Inf(1)
	for b := 1; b <= k; b++ {
		for r := 1; r <= k/b; r++ {
			m := 1 - Probability(threshold, b, r)
			fp := falsePositiveArea(threshold, b, r)
			switch {
			case m <= miss && (bestMiss > miss || fp < bestFP):
				bands, rows, bestFP, bestMiss = b, r, fp, m
			case bestMiss > miss && m < bestMiss:
				bands, rows, bestFP, bestMiss = b, r, fp, m
			}
		}
	}
	return bands, rows
}
