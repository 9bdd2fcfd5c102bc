package lsh

import (
	"fmt"
	"math"

	"github.com/neardup/neardup/minhash"
)

// Defaults of Options.
const (
	// DefaultThreshold is the Jaccard similarity an index answers for when
	// Options.Threshold is 0.
	DefaultThreshold = 0.8
	// DefaultBands and DefaultRows are Params(0.8, 0.5, 0.5, 128), the banding of the
	// zero Options.
	DefaultBands = 9
	DefaultRows  = 13
)

// Options configures an Index. The zero value means threshold 0.8, signatures of 128
// values (minhash.DefaultK) and the banding Params chooses for them with equal weights:
// 9 bands of 13 rows.
type Options struct {
	// Threshold is the estimated Jaccard similarity a match must reach, in (0, 1]; 0
	// means DefaultThreshold.
	Threshold float64
	// K is the length of the signatures, 1..minhash.MaxK; 0 means minhash.DefaultK.
	K int
	// Bands and Rows set the banding: a signature's first Bands*Rows values are cut into
	// Bands bands of Rows values, and two signatures that agree on a whole band are
	// candidates. Both 0 means Params(Threshold, FPWeight, FNWeight, K); otherwise both
	// must be positive with Bands*Rows <= K.
	Bands, Rows int
	// FPWeight and FNWeight weigh false positives against false negatives when Params
	// chooses the banding; both 0 means 0.5 each. They must be finite and nonnegative.
	FPWeight, FNWeight float64
}

// Banding returns the bands and rows an index with these options uses (Params' choice
// when Bands and Rows are 0), for callers that keep band postings elsewhere
// (AppendBandKeys), or an error wrapping ErrOptions as New would return.
func (o Options) Banding() (bands, rows int, err error) {
	r, err := o.resolve()
	return r.Bands, r.Rows, err
}

// resolve returns o with its defaults filled in, or an error wrapping ErrOptions.
func (o Options) resolve() (Options, error) {
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if o.K == 0 {
		o.K = minhash.DefaultK
	}
	if o.FPWeight == 0 && o.FNWeight == 0 {
		o.FPWeight, o.FNWeight = 0.5, 0.5
	}
	if err := checkParams(o.Threshold, o.FPWeight, o.FNWeight, o.K); err != nil {
		return o, err
	}
	switch {
	case o.Bands == 0 && o.Rows == 0:
		if o.Threshold == DefaultThreshold && o.K == minhash.DefaultK && o.FPWeight == 0.5 && o.FNWeight == 0.5 {
			o.Bands, o.Rows = DefaultBands, DefaultRows // saves Params' few milliseconds
		} else {
			o.Bands, o.Rows = Params(o.Threshold, o.FPWeight, o.FNWeight, o.K)
		}
	case o.Bands <= 0 || o.Rows <= 0:
		return o, fmt.Errorf("%w: Bands %d and Rows %d must both be positive, or both 0 to choose them from the threshold", ErrOptions, o.Bands, o.Rows)
	case o.Bands > o.K || o.Rows > o.K || o.Bands*o.Rows > o.K:
		return o, fmt.Errorf("%w: %d bands of %d rows need %d values, more than K = %d", ErrOptions, o.Bands, o.Rows, o.Bands*o.Rows, o.K)
	}
	return o, nil
}

// checkParams validates the arguments of Params.
func checkParams(threshold, fpWeight, fnWeight float64, k int) error {
	switch {
	case !(threshold > 0 && threshold <= 1):
		return fmt.Errorf("%w: threshold %v is outside (0, 1]", ErrOptions, threshold)
	case k < 1 || k > minhash.MaxK:
		return fmt.Errorf("%w: K = %d is outside [1, %d]", ErrOptions, k, minhash.MaxK)
	case !(fpWeight >= 0 && fnWeight >= 0) || math.IsInf(fpWeight, 0) || math.IsInf(fnWeight, 0):
		return fmt.Errorf("%w: weights %v and %v must be finite and nonnegative", ErrOptions, fpWeight, fnWeight)
	case fpWeight == 0 && fnWeight == 0:
		return fmt.Errorf("%w: the false positive and false negative weights are both 0", ErrOptions)
	}
	return nil
}
