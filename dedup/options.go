package dedup

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/neardup/neardup"
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

// The near-duplicate methods of a batch run, as Options.Near takes them. A run
// always groups exact duplicates first; the method says what it adds.
const (
	// All (the default, neardup.NearDefault) adds near-duplicates by MinHash among the
	// first documents of the exact groups.
	All = neardup.NearDefault
	// Exact groups documents whose normalized main text is identical (SHA-256) and adds
	// nothing.
	Exact = neardup.NearExact
	// SimHash adds near-duplicates by SimHash: fingerprints within Distance bits.
	SimHash = neardup.NearSimHash
	// MinHash adds near-duplicates by MinHash: estimated Jaccard similarity of the word
	// 5-shingle sets at least Threshold.
	MinHash = neardup.NearMinHash
)

// MethodName returns the name of a batch run's method as `neardup dedup --method`
// takes it: "all" for All, else the method's own name ("exact", "simhash", "minhash").
func MethodName(m neardup.Near) string {
	if m == All {
		return "all"
	}
	return m.String()
}

// ParseMethod reads the names MethodName returns.
func ParseMethod(s string) (neardup.Near, error) {
	switch s {
	case "all":
		return All, nil
	case "exact":
		return Exact, nil
	case "simhash":
		return SimHash, nil
	case "minhash":
		return MinHash, nil
	}
	return 0, fmt.Errorf("%w: method %q: use all, exact, simhash or minhash", ErrOptions, s)
}

// nearOf reports the near-duplicate method in effect: SimHash, MinHash, or Exact for none.
func nearOf(m neardup.Near) neardup.Near {
	if m == All {
		return MinHash
	}
	return m
}

// Options configure a Run. The zero value is the documented default of every field.
type Options struct {
	// Pipeline is the fingerprinting configuration shared with a neardup.Detector. Its
	// Near is one of All (the zero value), Exact, SimHash and MinHash: a batch run
	// builds the one index it searches by. Distance (method SimHash) must be below 32.
	// Threshold (methods MinHash and All) defaults to neardup.DefaultBatchThreshold
	// (0.8), above a Detector's. URL, as in a Detector, canonicalizes Doc.URL.
	neardup.Pipeline

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
	switch o.Near {
	case All, Exact, SimHash, MinHash:
	default:
		return o, fmt.Errorf("%w: method %v: use all, exact, simhash or minhash", ErrOptions, o.Near)
	}
	if o.Distance >= 32 {
		return o, fmt.Errorf("%w: distance %d: use at most 31 bits", ErrOptions, o.Distance)
	}
	p, err := o.Pipeline.WithDefaults(neardup.DefaultBatchThreshold)
	if err != nil {
		return o, optionsError(err)
	}
	o.Pipeline = p
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
	near := nearOf(o.Near)
	p := o.Pipeline
	p.Near = neardup.NearDefault // the Fingerprinter's Near is the detector's; dedup's is its own
	fpr, err := neardup.NewFingerprinter(neardup.Options{Pipeline: p, NoSimHash: near == MinHash, NoMinHash: near != MinHash})
	if err != nil {
		return nil, optionsError(err)
	}
	return fpr, nil
}

// optionsError is an error of the shared configuration as this package's ErrOptions,
// its message without the root package's prefix.
func optionsError(err error) error {
	return fmt.Errorf("%w: %s", ErrOptions, strings.TrimPrefix(err.Error(), neardup.ErrOptions.Error()+": "))
}
