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

// Near selects how two contents are found nearly the same: by which fingerprint, or
// not at all. It is the one method enum of both faces, a Detector (Options.Near) and a
// batch run of package dedup (dedup.Options.Near), which accept different subsets.
type Near int

const (
	// NearDefault, the zero value, is each face's default: NearAny for a Detector, and
	// for dedup exact duplicates, then near-duplicates by MinHash (its "all"). The faces
	// differ on purpose: a Detector keeps both indexes online anyway, while a batch run
	// builds only the index it searches by.
	NearDefault Near = iota
	// NearAny calls a pair near-duplicate when either the SimHash distance is at most
	// Distance or the MinHash similarity reaches Threshold (a Detector only).
	NearAny
	// NearSimHash uses the SimHash distance alone.
	NearSimHash
	// NearMinHash uses the MinHash similarity alone.
	NearMinHash
	// NearBoth requires both (a Detector only).
	NearBoth
	// NearExact finds exact duplicates only, no near ones (dedup only: a Detector always
	// looks for near-duplicates).
	NearExact
)

var nearNames = names.Names{
	NearDefault: "default", NearAny: "any", NearSimHash: "simhash", NearMinHash: "minhash",
	NearBoth: "both", NearExact: "exact",
}

// String returns "default", "any", "simhash", "minhash", "both" or "exact".
func (n Near) String() string { return nearNames.Of(int(n), "Near") }

// ParseNear reads the names String returns.
func ParseNear(s string) (Near, error) {
	v, ok := nearNames.Parse(s)
	if !ok {
		return 0, fmt.Errorf("%w: near method %q: use any, simhash, minhash or both", ErrOptions, s)
	}
	return Near(v), nil
}

// Defaults of Options and of dedup.Options: every default of the fingerprinting
// configuration is stated here, for both faces.
const (
	DefaultDistance = 3
	// DefaultThreshold is a Detector's default Threshold. It is lower than
	// DefaultBatchThreshold, on purpose: a detector compares extracted main text, and
	// extraction errors put two copies of one article between 0.6 and 0.8 often: chosen
	// on aeb-scrapinghub and debian-doc-versions together (cmd/neardup/internal/accuracy
	// TestDocumentsThresholdChoice holds the choice).
	DefaultThreshold = 0.6
	// DefaultBatchThreshold is dedup's default Threshold, the usual threshold of corpus
	// deduplication with word 5-shingles (and lsh.DefaultThreshold): a batch run drops
	// what it pairs without a person looking, so it asks for closer copies.
	DefaultBatchThreshold = 0.8
	DefaultMaxMatches     = 16
	DefaultExpected       = 1_000_000
	DefaultFilterRate     = 0.01
	// DefaultBandMemory is the default Options.BandMemory: 512 MiB, the band postings of
	// about two million documents at the default Threshold (26 bands).
	DefaultBandMemory = 512 << 20
	// DefaultPrescreenRefresh is the default Options.PrescreenRefresh: a minute, the
	// interval at which client/prescreen asks for a new snapshot by default, so a
	// crawler's copy is at most about two minutes behind the cluster; a fill at a
	// million documents takes seconds, so each replica spends a few percent of a minute
	// scanning, however many crawlers ask.
	DefaultPrescreenRefresh = time.Minute
)

// Pipeline is the fingerprinting configuration that a Detector (Options) and a batch
// run (dedup.Options) share, embedded in both: how a document becomes fingerprints, when
// two are near-duplicates, and which of a group survives. The zero value is the
// documented default of every field; the two faces differ only in the defaults of Near
// and Threshold (see NearDefault and DefaultBatchThreshold).
type Pipeline struct {
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
	// Shingle is the text pipeline: its normalization and tokenization make every
	// fingerprint (the normalized text that Main hashes is its units joined by spaces),
	// and its shingles make the MinHash signature. The zero value is shingle's default
	// (word 5-shingles). SimHash uses the same options but, while Unit is Words and K is
	// 0, simhash.SchemeNeardup's word 2-shingles, so that the default SimHash is that
	// scheme's. Bag and Weighting are ignored.
	Shingle shingle.Options
	// MinHashK is the signature size, 1 to minhash.MaxK; 0 means minhash.DefaultK (128).
	MinHashK int
	// Seed seeds the MinHash signature.
	Seed uint64

	// Near is the near-duplicate rule; the zero value is each face's default (see
	// NearDefault).
	Near Near
	// Distance is the largest SimHash Hamming distance of a near-duplicate; 0 means
	// DefaultDistance (3). A negative value means 0: equal fingerprints only.
	Distance int
	// Threshold is the smallest MinHash similarity of a near-duplicate, in (0, 1]; 0
	// means the face's default: DefaultThreshold (0.6) for a Detector,
	// DefaultBatchThreshold (0.8) for dedup.
	Threshold float64
	// Keep chooses the survivor of a group of duplicates; nil means DefaultKeepPolicy.
	Keep KeepPolicy
}

// WithDefaults returns p with every zero field replaced by its default, Threshold by
// threshold (DefaultThreshold for a Detector, DefaultBatchThreshold for dedup), or an
// error wrapping ErrOptions naming the first field out of range. Near is left to each
// face, which accepts a subset of it (see Near). It is cheap and safe for concurrent
// use.
func (p Pipeline) WithDefaults(threshold float64) (Pipeline, error) {
	if !nearNames.Valid(int(p.Near)) {
		return p, fmt.Errorf("%w: Near %d", ErrOptions, int(p.Near))
	}
	p.Distance = distanceOption(p.Distance)
	if p.Threshold == 0 {
		p.Threshold = threshold
	}
	if !(p.Threshold > 0 && p.Threshold <= 1) {
		return p, fmt.Errorf("%w: Threshold %g: use a similarity in (0, 1]", ErrOptions, p.Threshold)
	}
	if p.MinHashK == 0 {
		p.MinHashK = minhash.DefaultK
	}
	if p.MinHashK < 1 || p.MinHashK > minhash.MaxK {
		return p, fmt.Errorf("%w: MinHashK %d: use 1 to %d", ErrOptions, p.MinHashK, minhash.MaxK)
	}
	if p.Keep == nil {
		p.Keep = DefaultKeepPolicy
	}
	if err := p.Keep.validate(); err != nil {
		return p, err
	}
	return p, nil
}

// Options configure a Fingerprinter and a Detector. The zero value is the documented
// default of every field.
type Options struct {
	// Pipeline is the fingerprinting configuration shared with package dedup; a
	// Detector's Near defaults to NearAny and NearExact is refused.
	Pipeline

	// NoSimHash and NoMinHash leave that fingerprint out (zero SimHash, nil MinHash),
	// for jobs that search by the other one only and want the time back. A Detector
	// needs the fingerprints its Near rule uses: NoSimHash requires NearMinHash and
	// NoMinHash requires NearSimHash.
	NoSimHash, NoMinHash bool
	// NoVerify turns off the verification of MinHash near candidates. By default a
	// Detector whose Near rule uses MinHash (any, minhash, both) keeps each document's
	// shingle set as a minhash.Sketch in its record (about 4 bytes a distinct shingle,
	// at most minhash.DefaultSketchCap of them) and takes a candidate's similarity from
	// the two sketches: the exact Jaccard similarity, or a bottom-k estimate with a
	// standard error of at most 0.0125 at 0.8 for a set of more shingles, instead of the
	// signature's estimate (0.035 at 0.8 with K = 128); its bands are chosen for recall
	// at the threshold, as verification removes the excess candidates. NoVerify saves
	// the sketch's bytes a record and the sort of the shingles a fingerprint, and
	// decides by the estimate. A stored entry without a sketch (stored with NoVerify, or
	// before sketches were kept) is compared by the estimate either way.
	NoVerify bool
	// SketchCap is the most shingle hashes a document's sketch keeps; 0 means
	// minhash.DefaultSketchCap (1,024). A document with more distinct shingles keeps the
	// SketchCap smallest, and a pair with such a document is compared by their bottom-k
	// estimate, whose standard error is at most sqrt(J(1-J)/SketchCap). A smaller cap
	// saves record bytes on long documents at that cost.
	SketchCap int
	// MinWords is the fewest words of main text a document needs to be compared for
	// near-duplicates (it is still compared exactly); 0 means 1, so that empty pages are
	// never near-duplicates of everything else that is empty.
	MinWords int
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
	// open), which saves an add its band writes. When the copy would grow past the
	// bound, or at open when the store's postings would not fit, the detector writes
	// them to the store (in the background while serving, at open before it returns),
	// drops the copy, and asks the store from then on, skipping the bands a Bloom
	// filter of band keys rules out. The verdicts are the same either way.
	BandMemory int64
	// PrescreenRefresh matters on a shared store only (see OpenDetector): how old the
	// detector's pre-screen snapshot (Prescreen) may grow before it fills the next from
	// the store, in the background; 0 means DefaultPrescreenRefresh (a minute). Another
	// process's add shows in this detector's Prescreen within about PrescreenRefresh
	// plus the time of a fill (a scan of the store's URL and main-text keys); its own
	// adds show at once.
	PrescreenRefresh time.Duration
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time
}

// withDefaults returns the options with every zero field replaced by its default, or an
// error naming the first field out of range.
func (o Options) withDefaults() (Options, error) {
	p, err := o.Pipeline.WithDefaults(DefaultThreshold)
	if err != nil {
		return o, err
	}
	o.Pipeline = p
	switch o.Near {
	case NearDefault:
		o.Near = NearAny
	case NearExact:
		return o, fmt.Errorf("%w: Near exact: a Detector always looks for near-duplicates; use any, simhash, minhash or both", ErrOptions)
	}
	if o.NoSimHash && o.NoMinHash {
		return o, fmt.Errorf("%w: NoSimHash and NoMinHash together leave nothing to compare", ErrOptions)
	}
	if o.MinWords <= 0 {
		o.MinWords = 1
	}
	if o.MaxAge < 0 {
		return o, fmt.Errorf("%w: MaxAge %v", ErrOptions, o.MaxAge)
	}
	if o.MaxMatches <= 0 {
		o.MaxMatches = DefaultMaxMatches
	}
	switch {
	case o.SketchCap == 0:
		o.SketchCap = minhash.DefaultSketchCap
	case o.SketchCap < 0:
		return o, fmt.Errorf("%w: SketchCap %d: use 0 for the default, or a positive count", ErrOptions, o.SketchCap)
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
	switch {
	case o.PrescreenRefresh == 0:
		o.PrescreenRefresh = DefaultPrescreenRefresh
	case o.PrescreenRefresh < 0:
		return o, fmt.Errorf("%w: PrescreenRefresh %v: use 0 for the default, or a positive duration", ErrOptions, o.PrescreenRefresh)
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

// verifies reports whether a Detector with the options, their defaults filled in,
// verifies MinHash near candidates by the documents' sketches (see NoVerify), and so
// whether its Fingerprinter makes them.
func (o *Options) verifies() bool {
	return !o.NoVerify && !o.NoMinHash && o.Near != NearSimHash
}
