package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestHistogram checks quantiles against the exact ones of the sorted values, within
// the histogram's 1/128 relative precision, for values over many orders of magnitude.
func TestHistogram(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var a, b histogram
	var all []time.Duration
	for i := range 20000 {
		d := time.Duration(math.Exp(r.Float64() * 25)) // 1 ns to 72 s
		all = append(all, d)
		if i%2 == 0 {
			a.record(d)
		} else {
			b.record(d)
		}
	}
	var h histogram
	h.merge(&a)
	h.merge(&b)
	slices.Sort(all)
	if h.n != 20000 || h.min != all[0] || h.max != all[len(all)-1] {
		t.Fatalf("n %d min %v max %v; want 20000, %v, %v", h.n, h.min, h.max, all[0], all[len(all)-1])
	}
	for _, q := range []float64{0, 0.001, 0.5, 0.9, 0.99, 0.999, 1} {
		exact := all[max(int(math.Ceil(q*float64(len(all))))-1, 0)]
		got := h.quantile(q)
		if got < exact || float64(got-exact) > float64(exact)/128 {
			t.Errorf("quantile %v = %v, exact %v", q, got, exact)
		}
	}
	for v := uint64(0); v < 1<<20; v += 1 + v/7 {
		i := histBucket(v)
		if histUpper(i) < v || (i > 0 && histUpper(i-1) >= v) {
			t.Fatalf("value %d in bucket %d of upper %d", v, i, histUpper(i))
		}
	}
	if i := histBucket(math.MaxInt64); i >= histBuckets || histUpper(i) != math.MaxInt64 {
		t.Errorf("the largest duration is in bucket %d of %d, upper %d", i, histBuckets, histUpper(i))
	}
	var empty histogram
	if empty.quantile(0.5) != 0 || empty.mean() != 0 {
		t.Error("an empty histogram has a quantile or mean")
	}
}
