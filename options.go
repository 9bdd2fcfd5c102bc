package neardup

import (
	"fmt"
	"time"

	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/internal/names"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/urlnorm"
)

// Near selects how a Detector decides that two contents are nearly the same.
type Near int

const (
	// NearAny (the default) calls a pair near-duplicate when either the SimHash distance
	// is at most Distance or the MinHash similarity reaches Threshold.
	NearAny Near = iota
	// NearSimHash uses the SimHash distance alone.
	NearSimHash
	// NearMinHash uses the MinHash similarity alone.
	NearMinHash
	// NearBoth requires both.
	NearBoth
)

var nearNames = names.Names{NearAny: "any", NearSimHash: "simhash", NearMinHash: "minhash", NearBoth: "both"}

// String returns "any", "simhash", "minhash" or "both".
func (n Near) String() string { return nearNames.Of(int(n), "Near") }

// ParseNear reads the names String returns.
func ParseNear(s string) (Near, error) {
	v, ok := nearNames.Parse(s)
	if !ok {
		return 0, fmt.Errorf("%w: near method %q: use any, simhash, minhash or both", ErrOptions, s)
	}
	return Near(v), nil
}

// Defaults of Options.
const (
	DefaultDistance = 3
	// DefaultThreshold is lower than lsh.DefaultThreshold (0.8) because a detector
	// compares extracted main text, and extraction errors put two copies of one article
	// between 0.6 and 0.8 often: chosen on aeb-scrapinghub and debian-doc-versions
	// together (cmd/neardup/internal/accuracy TestDocumentsThresholdChoice holds the choice).
	DefaultThreshold  = 0.6
	DefaultMaxMatches = 16
	DefaultExpected   = 1_000_000
	DefaultFilterRate = 0.01
	// DefaultBandMemory is the default Options.BandMemory: 512 MiB, the band postings of
	// about two million documents at the default Threshold (25 bands).
	DefaultBandMemory = 512 << 20
)

// Options configure a Fingerprinter and a Detector. The zero value is the documented
// default of every field.
type Options struct {
	// URL configures URL canonicalization, the URL key; nil means the Aggressive
	// profile with its default lists (scheme, www., tracking and session parameters,
	// index pages and trailing slashes do not make a URL new). Give
	// &urlnorm.Options{} for the Safe profile, which keeps all of those apart.
	URL *urlnorm.Options
	// Extract configures main-content extraction from HTML; the zero value is
	// extract's default. Document.ContentType and Document.URL override its
	// ContentType and URL.
	Extract extract.Options
	// NoExtract uses the whole page's visible text as the main text.
	NoExtract bool

	// Near is the near-duplicate rule; the default is NearAny.
	Near Near
	// Distance is the largest SimHash Hamming distance of a near-duplicate; 0 means
	// DefaultDistance (3). A negative value means 0: equal fingerprints only.
	Distance int
	// Threshold is the smallest MinHash similarity of a near-duplicate, in (0, 1]; 0
	// means DefaultThreshold (0.6).
	Threshold float64
	// Shingle is the text pipeline: its normalization and tokenization make every
	// fingerprint (the normalized text that Main hashes is its units joined by spaces),
	// and its shingles make the MinHash signature. The zero value is shingle's default
	// (word 5-shingles). SimHash uses the same options but, while Unit is Words and K is
	// 0, simhash.SchemeNeardup's word 2-shingles, so that the default SimHash is that
	// scheme's. Bag and Weighting are ignored.
	Shingle shingle.Options
	// NoSimHash and NoMinHash leave that fingerprint out (zero SimHash, nil MinHash),
	// for jobs that search by the other one only and want the time back. A Detector
	// needs the fingerprints its Near rule uses: NoSimHash requires NearMinHash and
	// NoMinHash requires NearSimHash.
	NoSimHash, NoMinHash bool
	// MinHashK is the signature size; 0 means minhash.DefaultK (128).
	MinHashK int
	// Seed seeds the MinHash signature.
	Seed uint64
	// MinWords is the fewest words of main text a document needs to be compared for
	// near-duplicates (it is still compared exactly); 0 means 1, so that empty pages are
	// never near-duplicates of everything else that is empty.
	MinWords int
	// Keep chooses the survivor of a group of duplicates; nil means DefaultKeepPolicy.
	Keep KeepPolicy
	// MaxAge, when positive, drops stored documents not seen for longer (by FetchTime,
	// or by the time of the check when FetchTime is zero), so that stale copies are
	// evaluated afresh.
	MaxAge time.Duration
	// MaxMatches caps Verdict.Matches; 0 means DefaultMaxMatches (16).
	MaxMatches int
	// Expected and FilterRate size the key filter (the pre-screen): 0 means
	// DefaultExpected (1M) keys and DefaultFilterRate (1%). The filter is rebuilt twice
	// as large when it fills.
	Expected   int
	FilterRate float64
	// BandMemory bounds, in bytes, a Detector's in-memory copy of its LSH band postings,
	// which answers the band lookups of checks and queries without asking the store (10
	// to 20 bytes a posting, a posting per band of each indexed document). 0 means
	// DefaultBandMemory (512 MiB), except for NewDetector, whose store is in memory
	// already: no copy. A negative value keeps no copy. While the copy holds them, the
	// band postings are not written to the store (they are rebuilt from the records at
	// open), which makes adds about a third cheaper. When the copy would grow past the
	// bound, or at open when the store's postings would not fit, the detector writes
	// them to the store (in the background while serving, at open before it returns),
	// drops the copy, and asks the store from then on, skipping the bands a Bloom
	// filter of band keys rules out. The verdicts are the same either way.
	BandMemory int64
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time
}

// withDefaults returns the options with every zero field replaced by its default, or an
// error naming the first field out of range.
func (o Options) withDefaults() (Options, error) {
	if !nearNames.Valid(int(o.Near)) {
		return o, fmt.Errorf("%w: Near %d", ErrOptions, int(o.Near))
	}
	if o.NoSimHash && o.NoMinHash {
		return o, fmt.Errorf("%w: NoSimHash and NoMinHash together leave nothing to compare", ErrOptions)
	}
	o.Distance = distanceOption(o.Distance)
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if !(o.Threshold > 0 && o.Threshold <= 1) {
		return o, fmt.Errorf("%w: Threshold %g: use a similarity in (0, 1]", ErrOptions, o.Threshold)
	}
	if o.MinHashK == 0 {
		o.MinHashK = minhash.DefaultK
	}
	if o.MinHashK < 1 {
		return o, fmt.Errorf("%w: MinHashK %d", ErrOptions, o.MinHashK)
	}
	if o.MinWords <= 0 {
		o.MinWords = 1
	}
	if o.Keep == nil {
		o.Keep = DefaultKeepPolicy
	}
	if err := o.Keep.validate(); err != nil {
		return o, err
	}
	if o.MaxAge < 0 {
		return o, fmt.Errorf("%w: MaxAge %v", ErrOptions, o.MaxAge)
	}
	if o.MaxMatches <= 0 {
		o.MaxMatches = DefaultMaxMatches
	}
	if o.Expected <= 0 {
		o.Expected = DefaultExpected
	}
	if o.FilterRate == 0 {
		o.FilterRate = DefaultFilterRate
	}
	if !(o.FilterRate > 0 && o.FilterRate < 1) {
		return o, fmt.Errorf("%w: FilterRate %g: use a rate in (0, 1)", ErrOptions, o.FilterRate)
	}
	if o.BandMemory == 0 {
		o.BandMemory = DefaultBandMemory
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// distanceOption resolves a Distance field: 0 means DefaultDistance, a negative value 0.
func distanceOption(d int) int {
	switch {
	case d == 0:
		return DefaultDistance
	case d < 0:
		return 0
	}
	return d
}
