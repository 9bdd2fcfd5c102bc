package minhash_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/internal/mix"
	"github.com/neardup/neardup/minhash"
)

// TestEvalReference checks the local tokenizer against the data's own labels: the exact
// Jaccard of every listed pair must equal the published jaccard_w5 to its four decimals, so
// that the estimator below is measured against the real reference.
func TestEvalReference(t *testing.T) {
	sets, err := evaldata.LoadDebianSets()
	evaldata.Need(t, err)
	for _, c := range sets {
		for _, p := range c.Pairs {
			a, b := c.Docs[p.A], c.Docs[p.B]
			if a == nil || b == nil {
				t.Fatalf("%s: pair %s, %s names a missing page", c.Name, p.A, p.B)
			}
			if j := minhash.Jaccard(a, b); math.Abs(j-p.Jaccard) > 0.00005+1e-9 {
				t.Errorf("%s: Jaccard(%s, %s) = %.5f, the data says %.4f", c.Name, p.A, p.B, j, p.Jaccard)
			}
		}
	}
}

// errStats accumulates estimation errors.
type errStats struct {
	n             int
	sum, sq, want float64 // sum of errors, of squared errors, of J(1-J)/K
}

func (s *errStats) add(est, j float64, k int) {
	s.n++
	s.sum += est - j
	s.sq += (est - j) * (est - j)
	s.want += j * (1 - j) / float64(k)
}

func (s *errStats) bias() float64   { return s.sum / float64(s.n) }
func (s *errStats) rmse() float64   { return math.Sqrt(s.sq / float64(s.n)) }
func (s *errStats) theory() float64 { return math.Sqrt(s.want / float64(s.n)) }

func (s *errStats) String() string {
	return fmt.Sprintf("%6d  %+.5f  %.5f  %.5f  %.3f", s.n, s.bias(), s.rmse(), s.theory(), s.rmse()/s.theory())
}

// TestEvalEstimator measures the estimator's error against exact Jaccard on the real
// near-duplicate pairs of debian-doc-versions (every pair with Jaccard >= 0.5), over many
// seeds: bias and RMSE by similarity range, next to sqrt(J(1-J)/K), which is the RMSE of
// K independent permutations. Outside -short it also measures that k-permutation baseline.
func TestEvalEstimator(t *testing.T) {
	corpora, err := evaldata.LoadDebianSets()
	evaldata.Need(t, err)
	const k = minhash.DefaultK
	seeds := 100
	baseSeeds := 10
	if testing.Short() {
		seeds, baseSeeds = 20, 0
	}
	ranges := []struct {
		lo, hi float64
		name   string
	}{{0.5, 0.7, "[0.5,0.7)"}, {0.7, 0.9, "[0.7,0.9)"}, {0.9, 1, "[0.9,1)"}, {0.5, 1, "[0.5,1)"}}
	oph := make([]errStats, len(ranges))
	base := make([]errStats, len(ranges))
	identical := 0
	sa, sb := make(minhash.Signature, 0, k), make(minhash.Signature, 0, k)
	for _, c := range corpora {
		for _, p := range c.Pairs {
			a, b := c.Docs[p.A], c.Docs[p.B]
			j := minhash.Jaccard(a, b)
			if j == 1 {
				// Equal sets have equal signatures, whatever the seed.
				sa = minhash.Hasher{Seed: 1}.AppendSignature(sa[:0], a)
				sb = minhash.Hasher{Seed: 1}.AppendSignature(sb[:0], b)
				if minhash.Similarity(sa, sb) != 1 {
					t.Fatalf("%s, %s: equal sets, estimate %v", p.A, p.B, minhash.Similarity(sa, sb))
				}
				identical++
				continue
			}
			for seed := range uint64(seeds) {
				h := minhash.Hasher{Seed: seed}
				sa = h.AppendSignature(sa[:0], a)
				sb = h.AppendSignature(sb[:0], b)
				est := minhash.Similarity(sa, sb)
				for i, r := range ranges {
					if j >= r.lo && j < r.hi {
						oph[i].add(est, j, k)
					}
				}
			}
			for seed := range uint64(baseSeeds) {
				est := minhash.Similarity(kPermutations(a, k, seed), kPermutations(b, k, seed))
				for i, r := range ranges {
					if j >= r.lo && j < r.hi {
						base[i].add(est, j, k)
					}
				}
			}
		}
	}
	var report strings.Builder
	fmt.Fprintf(&report, "K=%d, %d identical-set pairs estimated exactly; pairs x seeds, bias, RMSE, sqrt(J(1-J)/K), ratio:\n", k, identical)
	for i, r := range ranges {
		fmt.Fprintf(&report, "  OPH+densification %-9s %s\n", r.name, &oph[i])
		if baseSeeds > 0 {
			fmt.Fprintf(&report, "  k permutations    %-9s %s\n", r.name, &base[i])
		}
	}
	t.Log(report.String())

	all := &oph[len(oph)-1]
	if all.n < 100*seeds {
		t.Fatalf("only %d pair-seed samples below Jaccard 1", all.n)
	}
	// The mean error must be within four standard errors of zero, and the spread close to
	// that of k independent permutations (OPH samples without replacement, so it may be
	// smaller on small documents).
	if se := all.rmse() / math.Sqrt(float64(all.n)); math.Abs(all.bias()) > 4*se {
		t.Errorf("estimator bias %+.5f exceeds 4 standard errors (%.5f)", all.bias(), se)
	}
	if ratio := all.rmse() / all.theory(); ratio > 1.15 || ratio < 0.7 {
		t.Errorf("estimator RMSE %.5f is %.2f times sqrt(J(1-J)/K)", all.rmse(), ratio)
	}
}

// kPermutations is the classic baseline: K independent hash functions, each applied to
// every feature, keeping the minimum of each. Each function is a multiply-add-shift of the
// mixed feature, h_i(x) = (a_i*x + b_i) >> 32 with random odd a_i: K multiply-adds per
// feature instead of one mix.
func kPermutations(features []uint64, k int, seed uint64) minhash.Signature {
	as, bs := kPermCoefficients(k, seed)
	return appendKPerm(make(minhash.Signature, 0, k), features, seed, as, bs)
}

// appendKPerm appends the k-permutation signature of features with the given coefficients.
func appendKPerm(dst minhash.Signature, features []uint64, seed uint64, as, bs []uint64) minhash.Signature {
	n := len(dst)
	dst = append(dst, make(minhash.Signature, len(as))...)
	sig := dst[n:]
	bs = bs[:len(as)]
	for i := range sig {
		sig[i] = minhash.Empty
	}
	for _, f := range features {
		x := mix.Splitmix64(f ^ seed)
		for i := range sig {
			v := min(uint32((as[i]*x+bs[i])>>32), minhash.Empty-1)
			if v < sig[i] {
				sig[i] = v
			}
		}
	}
	return dst
}

func kPermCoefficients(k int, seed uint64) (as, bs []uint64) {
	as, bs = make([]uint64, k), make([]uint64, k)
	s := seed
	for i := range as {
		s += 0x9e3779b97f4a7c15
		as[i] = mix.Splitmix64(s) | 1
		s += 0x9e3779b97f4a7c15
		bs[i] = mix.Splitmix64(s)
	}
	return as, bs
}
