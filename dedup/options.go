package dedup

import (
	"fmt"
	"runtime"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// The stages Options.Progress names, in the order a run goes through them.
const (
	// StageRead reads and fingerprints the documents.
	StageRead = "read"
	// StageFind finds the exact and near-duplicate pairs.
	StageFind = "find duplicates"
	// StageCluster forms the clusters and chooses their representatives.
	StageCluster = "cluster"
)

// Method selects what counts as a duplicate.
type Method int

const (
	// All (the default) groups exact duplicates, then near-duplicates by MinHash among
	// what is left.
	All Method = iota
	// Exact groups documents whose normalized main text is identical (SHA-256).
	Exact
	// SimHash adds near-duplicates by SimHash: fingerprints within Distance bits.
	SimHash
	// MinHash adds near-duplicates by MinHash: estimated Jaccard similarity of the word
	// 5-shingle sets at least Threshold.
	MinHash
)

var methodNames = [...]string{All: "all", Exact: "exact", SimHash: "simhash", MinHash: "minhash"}

// String returns "all", "exact", "simhash" or "minhash".
func (m Method) String() string {
	if m < 0 || int(m) >= len(methodNames) {
		return fmt.Sprintf("Method(%d)", int(m))
	}
	return methodNames[m]
}

// MarshalText implements encoding.TextMarshaler.
func (m Method) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler for the names String returns.
func (m *Method) UnmarshalText(text []byte) error {
	for i, n := range methodNames {
		if n == string(text) {
			*m = Method(i)
			return nil
		}
	}
	return fmt.Errorf("%w: method %q: use all, exact, simhash or minhash", ErrOptions, text)
}

// near reports the near-duplicate method in effect: SimHash, MinHash, or Exact for none.
func (m Method) near() Method {
	if m == All {
		return MinHash
	}
	return m
}

// Defaults of Options.
const (
	DefaultDistance  = 3
	DefaultThreshold = 0.8
)

// Options configure a Run. The zero value is the documented default of every field.
type Options struct {
	// Method is what counts as a duplicate; the default is All.
	Method Method
	// Distance is the largest SimHash distance of a near-duplicate pair (method
	// simhash); 0 means DefaultDistance (3), a negative value 0.
	Distance int
	// Threshold is the smallest estimated Jaccard similarity of a near-duplicate pair
	// (methods minhash and all), in (0, 1]; 0 means DefaultThreshold (0.8), the usual
	// threshold of corpus deduplication with word 5-shingles.
	Threshold float64
	// MinHashK is the MinHash signature size; 0 means minhash.DefaultK (128).
	MinHashK int
	// Containment, with methods minhash and all, makes a near pair of two documents when
	// the smaller one's shingles are found in the other at a share of at least Threshold,
	// instead of when their Jaccard similarity is. The candidates are still those the
	// MinHash bands find, so a small document inside a much larger one is found only
	// when their Jaccard similarity is not far below the threshold.
	Containment bool
	// VerifyMemory is the bytes of shingle sets (4 bytes a distinct shingle) kept in
	// memory to verify MinHash candidates exactly; the sets past it are written to a
	// temporary file in TempDir and read back for the candidates that need them. 0
	// means DefaultVerifyMemory (256 MiB), a negative value writes every set to the
	// file.
	VerifyMemory int64
	// TempDir is the directory of that file; "" means os.TempDir(). The file is removed
	// before Run returns.
	TempDir string
	// Shingle is the text pipeline (normalization, tokenization, shingles) of every
	// fingerprint, as neardup.Options.Shingle; the zero value is shingle's default.
	Shingle shingle.Options
	// NoExtract fingerprints HTML documents on their whole visible text instead of their
	// main content.
	NoExtract bool
	// Extract configures main-content extraction; the zero value is extract's default.
	Extract extract.Options
	// Keep chooses each cluster's representative, the document kept; nil means
	// neardup.DefaultKeepPolicy (priority, then first in the input, then smallest id).
	Keep neardup.KeepPolicy
	// Threads is the number of goroutines that fingerprint documents; 0 means
	// runtime.GOMAXPROCS(0). It never changes the result.
	Threads int
	// Expected, when positive, is how many documents the source is expected to yield:
	// the document table is allocated for that many at once instead of grown by copying,
	// which at ten million documents saves a gigabyte of transient memory. A wrong value
	// costs only memory (too high) or the usual growth (too low).
	Expected int
	// Progress, when set, is called with StageRead after each document is
	// fingerprinted, with the documents done, and once as each later stage starts
	// (StageFind, StageCluster), with the documents read, so that a caller can show
	// what the run is doing. It is called from one goroutine at a time.
	Progress func(stage string, docs int)
}

func (o Options) withDefaults() (Options, error) {
	if o.Method < 0 || int(o.Method) >= len(methodNames) {
		return o, fmt.Errorf("%w: method %d", ErrOptions, int(o.Method))
	}
	switch {
	case o.Distance == 0:
		o.Distance = DefaultDistance
	case o.Distance < 0:
		o.Distance = 0
	case o.Distance >= 32:
		return o, fmt.Errorf("%w: distance %d: use at most 31 bits", ErrOptions, o.Distance)
	}
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if !(o.Threshold > 0 && o.Threshold <= 1) {
		return o, fmt.Errorf("%w: threshold %g: use a similarity in (0, 1]", ErrOptions, o.Threshold)
	}
	if o.MinHashK == 0 {
		o.MinHashK = minhash.DefaultK
	}
	if o.MinHashK < 1 || o.MinHashK > minhash.MaxK {
		return o, fmt.Errorf("%w: MinHashK %d: use 1 to %d", ErrOptions, o.MinHashK, minhash.MaxK)
	}
	if o.Keep == nil {
		o.Keep = neardup.DefaultKeepPolicy
	}
	if o.Threads <= 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	return o, nil
}

// Validate reports the first option out of range, as Run would before reading anything.
func (o Options) Validate() error {
	o, err := o.withDefaults()
	if err == nil {
		_, err = o.fingerprinter()
	}
	return err
}

// fingerprinter returns the Fingerprinter of options with defaults filled in: only the
// fingerprint the method searches by, and SimHash for the exact method (the mirrors and
// the report use it; it is cheap).
func (o Options) fingerprinter() (*neardup.Fingerprinter, error) {
	near := o.Method.near()
	fpr, err := neardup.NewFingerprinter(neardup.Options{
		NoExtract: o.NoExtract, Extract: o.Extract, Shingle: o.Shingle, MinHashK: o.MinHashK, Keep: o.Keep,
		NoSimHash: near == MinHash, NoMinHash: near != MinHash,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	return fpr, nil
}
