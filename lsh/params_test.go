package lsh

import (
	"errors"
	"math"
	"testing"
)

// integrate returns ∫_a^b f by adaptive Simpson quadrature: the numerical oracle for the
// closed forms of falsePositiveArea and falseNegativeArea.
func integrate(f func(float64) float64, a, b float64) float64 {
	fa, fm, fb := f(a), f((a+b)/2), f(b)
	return simpson(f, a, b, fa, fm, fb, (b-a)/6*(fa+4*fm+fb), 1e-13, 50)
}

func simpson(f func(float64) float64, a, b, fa, fm, fb, whole, eps float64, depth int) float64 {
	m := (a + b) / 2
	lm, rm := (a+m)/2, (m+b)/2
	flm, frm := f(lm), f(rm)
	left := (m - a) / 6 * (fa + 4*flm + fm)
	right := (b - m) / 6 * (fm + 4*frm + fb)
	if d := left + right - whole; depth <= 0 || math.Abs(d) <= 15*eps {
		return left + right + d/15
	}
	return simpson(f, a, m, fa, flm, fm, left, eps/2, depth-1) +
		simpson(f, m, b, fm, frm, fb, right, eps/2, depth-1)
}

func TestAreasMatchQuadrature(t *testing.T) {
	k := 128
	if testing.Short() {
		k = 40
	}
	worst := 0.0
	for _, th := range []float64{0.05, 0.5, 0.8, 0.95, 0.999} {
		for b := 1; b <= k; b++ {
			for r := 1; r <= k/b; r++ {
				fp := integrate(func(s float64) float64 { return Probability(s, b, r) }, 0, th)
				fn := integrate(func(s float64) float64 { return 1 - Probability(s, b, r) }, th, 1)
				e := max(math.Abs(fp-falsePositiveArea(th, b, r)), math.Abs(fn-falseNegativeArea(th, b, r)))
				worst = max(worst, e)
				if e > 1e-10 {
					t.Fatalf("t=%v b=%d r=%d: closed form FP %v FN %v, quadrature %v %v", th, b, r,
						falsePositiveArea(th, b, r), falseNegativeArea(th, b, r), fp, fn)
				}
			}
		}
	}
	t.Logf("largest difference from quadrature: %.2g", worst)
}

func TestParams(t *testing.T) {
	cases := []struct {
		t, fp, fn  float64
		k          int
		bands, row int
	}{
		// The first two are the values datasketch's documentation quotes for its
		// optimal_param; the rest are this implementation's, pinned.
		{0.75, 0.5, 0.5, 256, 21, 12},
		{0.75, 0.1, 0.9, 256, 28, 9},
		{0.8, 0.5, 0.5, 128, DefaultBands, DefaultRows},
		{0.8, 0.1, 0.9, 128, 14, 9},
		{0.9, 0.5, 0.5, 128, 5, 25},
		{0.5, 0.5, 0.5, 128, 25, 5},
		{0.8, 0.5, 0.5, 256, 17, 15},
		{1, 0.5, 0.5, 128, 1, 128},
		{0.8, 1, 0, 128, 1, 128},
		{0.8, 0, 1, 128, 128, 1},
		{0.8, 0.5, 0.5, 1, 1, 1},
	}
	for _, c := range cases {
		b, r := Params(c.t, c.fp, c.fn, c.k)
		if b != c.bands || r != c.row {
			t.Errorf("Params(%v, %v, %v, %d) = (%d, %d), want (%d, %d)", c.t, c.fp, c.fn, c.k, b, r, c.bands, c.row)
		}
	}
}

func TestParamsIsOptimal(t *testing.T) {
	// Brute force over the same space with the quadrature oracle.
	const th, k = 0.7, 48
	bb, br := Params(th, 0.3, 0.7, k)
	best := math.Inf(1)
	var ob, or int
	for b := 1; b <= k; b++ {
		for r := 1; r*b <= k; r++ {
			fp := integrate(func(s float64) float64 { return Probability(s, b, r) }, 0, th)
			fn := integrate(func(s float64) float64 { return 1 - Probability(s, b, r) }, th, 1)
			if c := 0.3*fp + 0.7*fn; c < best {
				best, ob, or = c, b, r
			}
		}
	}
	if bb != ob || br != or {
		t.Fatalf("Params = (%d, %d), the quadrature's optimum is (%d, %d)", bb, br, ob, or)
	}
}

func TestParamsPanics(t *testing.T) {
	for _, c := range []struct {
		t, fp, fn float64
		k         int
	}{{0, .5, .5, 128}, {1.1, .5, .5, 128}, {math.NaN(), .5, .5, 128}, {.8, -1, .5, 128},
		{.8, 0, 0, 128}, {.8, math.Inf(1), .5, 128}, {.8, .5, .5, 0}, {.8, .5, .5, 1 << 20}} {
		func() {
			defer func() {
				err, _ := recover().(error)
				if !errors.Is(err, ErrOptions) {
					t.Errorf("Params(%v, %v, %v, %d) panicked with %v, want an ErrOptions", c.t, c.fp, c.fn, c.k, err)
				}
			}()
			Params(c.t, c.fp, c.fn, c.k)
		}()
	}
}

func TestProbabilityAndRecall(t *testing.T) {
	for _, c := range []struct {
		s          float64
		bands, row int
	}{{0, 9, 13}, {1, 9, 13}, {0.8, 9, 13}, {0.5, 20, 5}, {0.99, 1, 128}, {1e-3, 128, 1}} {
		want := 1 - math.Pow(1-math.Pow(c.s, float64(c.row)), float64(c.bands))
		if got := Probability(c.s, c.bands, c.row); math.Abs(got-want) > 1e-12 {
			t.Errorf("Probability(%v, %d, %d) = %v, want %v", c.s, c.bands, c.row, got, want)
		}
	}
	if p := Probability(0.8, 9, 13); math.Abs(p-0.3988) > 1e-4 {
		t.Errorf("Probability(0.8, 9, 13) = %.4f, the documented value is 0.40", p)
	}
	if r := Recall(0.8, 9, 13); math.Abs(r-0.834) > 1e-3 {
		t.Errorf("Recall(0.8, 9, 13) = %.4f, the documented value is 0.834", r)
	}
	if r := Recall(1, 9, 13); r != 1 {
		t.Errorf("Recall(1, ...) = %v", r)
	}
	// Recall is the mean of Probability over [t, 1].
	mean := integrate(func(s float64) float64 { return Probability(s, 14, 9) }, 0.8, 1) / 0.2
	if r := Recall(0.8, 14, 9); math.Abs(r-mean) > 1e-9 {
		t.Errorf("Recall(0.8, 14, 9) = %v, the mean of Probability is %v", r, mean)
	}
}

func BenchmarkParams(b *testing.B) {
	for b.Loop() {
		Params(0.75, 0.5, 0.5, 128)
	}
}

func TestRecallParams(t *testing.T) {
	b, r := RecallParams(0.8, 0.001, 128)
	if b != 18 || r != 5 {
		t.Errorf("RecallParams(0.8, 0.001, 128) = (%d, %d), want (18, 5)", b, r)
	}
	// Brute force with the quadrature oracle: every banding that meets the miss bound
	// makes at least as many candidates below the threshold.
	for _, c := range []struct {
		th, miss float64
		k        int
	}{{0.8, 0.001, 128}, {0.7, 0.01, 48}, {0.9, 0.0001, 256}} {
		b, r := RecallParams(c.th, c.miss, c.k)
		if m := 1 - Probability(c.th, b, r); m > c.miss || b*r > c.k {
			t.Fatalf("RecallParams(%v, %v, %d) = (%d, %d): misses %v at the threshold", c.th, c.miss, c.k, b, r, m)
		}
		got := integrate(func(s float64) float64 { return Probability(s, b, r) }, 0, c.th)
		for ob := 1; ob <= c.k; ob++ {
			for or := 1; or*ob <= c.k; or++ {
				if 1-Probability(c.th, ob, or) > c.miss {
					continue
				}
				if fp := integrate(func(s float64) float64 { return Probability(s, ob, or) }, 0, c.th); fp < got-1e-9 {
					t.Fatalf("RecallParams(%v, %v, %d) = (%d, %d) with area %v; (%d, %d) has %v", c.th, c.miss, c.k, b, r, got, ob, or, fp)
				}
			}
		}
	}
	// No banding of 4 values misses less than 1e-9 at 0.5: the one that misses least.
	if b, r := RecallParams(0.5, 1e-9, 4); b != 4 || r != 1 {
		t.Errorf("RecallParams(0.5, 1e-9, 4) = (%d, %d), want (4, 1)", b, r)
	}
	for _, miss := range []float64{0, 1, math.NaN(), -0.1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RecallParams with miss %v did not panic", miss)
				}
			}()
			RecallParams(0.8, miss, 128)
		}()
	}
}
