package neardup

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
	"github.com/neardup/neardup/urlnorm"
)

// entryOf is the Entry the detector stores for the document with the fingerprints.
func entryOf(doc *Document, fp Fingerprints) Entry {
	e := Entry{ID: doc.ID, Priority: doc.Priority, FetchTime: doc.FetchTime, Fingerprints: fp}
	if doc.URL != fp.URL {
		e.RawURL = doc.URL
	}
	return e
}

// Fingerprinter turns Documents into Fingerprints: the canonical URL, the three exact
// hashes, the SimHash and the MinHash signature of the main text. A Detector's own
// Fingerprinter (Detector.Fingerprinter) also makes the sketch of the main text's
// shingle set that the Detector verifies near candidates with (see Options.NoVerify);
// one from NewFingerprinter does not, so that the faces that do not verify this way
// (dedup, the client's pre-screen) skip its sort. It is safe for concurrent use (it
// keeps a pool of shinglers).
type Fingerprinter struct {
	opt    Options
	url    *urlnorm.Canonicalizer
	hasher minhash.Hasher
	pool   sync.Pool // of *fpState
	// sketchCap is the capacity of the sketches Fingerprint makes: Options.SketchCap
	// for a verifying Detector's Fingerprinter, 0 (none) otherwise.
	sketchCap int
}

// fpState is one goroutine's shinglers and buffers.
type fpState struct {
	sim      *shingle.Shingler // simhash.SchemeNeardup's features
	min      *shingle.Shingler // the default word 5-shingles, as a bag: its signature is the set's
	units    []uint64          // the hashes of the main text's units
	features []uint64
	hashes   []uint32     // the sketch's, before they are copied out
	norm     []byte       // the normalized units of the text, joined by single spaces
	words    int          // and how many there are
	observe  func([]byte) // appends a unit to norm
}

// NewFingerprinter returns a Fingerprinter with the options, or an error wrapping
// ErrOptions.
func NewFingerprinter(opt Options) (*Fingerprinter, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	uo := urlnorm.Options{Profile: urlnorm.Aggressive}
	if o.URL != nil {
		uo = *o.URL
	}
	c, err := urlnorm.New(uo)
	if err != nil {
		return nil, fmt.Errorf("%w: URL: %v", ErrOptions, err)
	}
	simOpt, minOpt := o.Shingle, o.Shingle
	if scheme, _ := simhash.SchemeNeardup.ShingleOptions(); o.Shingle.K == 0 && o.Shingle.Unit == shingle.Words {
		simOpt.K = scheme.K // the scheme's word 2-shingles
	}
	minOpt.Bag = true // a bag's signature is its set's, without the set's sort
	for _, so := range []shingle.Options{simOpt, minOpt} {
		if _, err := shingle.New(so); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrOptions, err)
		}
	}
	f := &Fingerprinter{opt: o, url: c, hasher: minhash.Hasher{K: o.MinHashK, Seed: o.Seed}}
	f.pool.New = func() any {
		st := &fpState{}
		st.sim, _ = shingle.New(simOpt) // both checked above
		st.min, _ = shingle.New(minOpt)
		st.observe = func(u []byte) {
			if st.words > 0 {
				st.norm = append(st.norm, ' ')
			}
			st.norm = append(st.norm, u...)
			st.words++
		}
		return st
	}
	return f, nil
}

// CanonicalURL returns the canonical form of a URL, the URL key: what Fingerprint puts
// in Fingerprints.URL for a document with that URL. It costs a URL parse, without the
// page, so a crawler can look a URL up (KeyFilter.HasURL) before fetching it. The
// error is urlnorm's for a URL that cannot be canonicalized.
func (f *Fingerprinter) CanonicalURL(raw string) (string, error) {
	return f.url.Canonicalize(raw)
}

// Fingerprint returns the document's fingerprints. It fails, wrapping ErrDocument, for a
// document without an id, with both HTML and Text, with a priority that is NaN, with a
// URL that cannot be canonicalized, or whose HTML is over extract's size or depth
// limits. A page whose extraction runs over its time budget (extract.Options.Timeout) is
// fingerprinted on its whole visible text instead, and its Method says so.
func (f *Fingerprinter) Fingerprint(doc Document) (Fingerprints, error) {
	fp, _, err := f.fingerprint(doc, nil, false)
	return fp, err
}

// FingerprintFeatures is Fingerprint that also appends to dst the features the MinHash
// signature is made of (the main text's shingle hashes, word 5-shingles by default, in
// text order with repeats; minhash.SortUnique makes them the set whose exact Jaccard
// similarity the signature estimates), even with Options.NoMinHash, and returns the
// extended slice. A verifier that keeps them can decide a near pair exactly instead of
// by the estimate. On error dst is returned unchanged. It costs Fingerprint plus the
// features appended; it does not keep dst.
func (f *Fingerprinter) FingerprintFeatures(doc Document, dst []uint64) (Fingerprints, []uint64, error) {
	return f.fingerprint(doc, dst, true)
}

// fingerprint is Fingerprint, and FingerprintFeatures when features is set.
func (f *Fingerprinter) fingerprint(doc Document, dst []uint64, features bool) (Fingerprints, []uint64, error) {
	var fp Fingerprints
	if doc.ID == "" {
		return fp, dst, fmt.Errorf("%w: no id", ErrDocument)
	}
	if doc.HTML != nil && doc.Text != "" {
		return fp, dst, fmt.Errorf("%w: %s: both HTML and Text: give one", ErrDocument, doc.ID)
	}
	if math.IsNaN(doc.Priority) {
		return fp, dst, errNaNPriority(doc.ID)
	}
	if doc.URL != "" {
		u, err := f.url.Canonicalize(doc.URL)
		if err != nil {
			return fp, dst, fmt.Errorf("%w: %s: %w", ErrDocument, doc.ID, err)
		}
		fp.URL = u
	}
	full, main := doc.Text, doc.Text
	if doc.HTML != nil {
		fp.Raw = sha256.Sum256(doc.HTML)
		var err error
		if full, main, fp.Title, fp.Method, err = f.texts(doc); err != nil {
			return fp, dst, err
		}
	}

	st := f.pool.Get().(*fpState)
	defer f.pool.Put(st)
	if doc.HTML == nil {
		// The raw bytes of a text are hashed from the normalized-text buffer, which the
		// passes below start over: hashing the string through io.WriteString copies it
		// to a new slice.
		st.norm = append(st.norm[:0], doc.Text...)
		fp.Raw = sha256.Sum256(st.norm)
	}
	if full != main {
		// The whole page's visible text: its normalized units, for the hash alone.
		st.start()
		st.min.ObserveUnits(st.observe)
		st.min.ObserveText(full)
		st.min.ObserveUnits(nil)
		fp.Text = sha256.Sum256(st.norm)
	}
	// One pass over the main text collects its units, and their hashes, which make both
	// fingerprints' shingles (the two Shinglers differ only in K and Bag).
	st.start()
	st.min.ObserveUnits(st.observe)
	st.units = st.min.AppendUnitHashes(st.units[:0], main)
	st.min.ObserveUnits(nil)
	if !f.opt.NoSimHash {
		st.features = st.sim.AppendDistinctShingles(st.features[:0], st.units)
		fp.SimHash = simhash.Compute(st.features)
	}
	if !f.opt.NoMinHash || features {
		st.features = st.min.AppendShingles(st.features[:0], st.units)
		if !f.opt.NoMinHash {
			fp.MinHash = f.hasher.Signature(st.features)
		}
		if f.sketchCap > 0 {
			// Sorted in the pooled buffer, and copied out at its kept size.
			sk := minhash.NewSketch(st.hashes, st.features, f.sketchCap)
			st.hashes = sk.Hashes[:0]
			sk.Hashes = slices.Clone(sk.Hashes)
			fp.Sketch = sk
		}
		if features {
			dst = append(dst, st.features...)
		}
	}
	fp.Main, fp.Words = sha256.Sum256(st.norm), st.words
	if full == main {
		fp.Text = fp.Main
	}
	if cap(st.norm) > maxPooledText {
		st.norm, st.units, st.features, st.hashes = nil, nil, nil, nil // one huge document should not pin its buffers
	}
	return fp, dst, nil
}

// errNaNPriority is the error of a document whose priority is NaN: the keep policy
// orders documents by priority, and NaN has no order.
func errNaNPriority(id string) error {
	return fmt.Errorf("%w: %s: priority is NaN: give a number", ErrDocument, id)
}

// MainText returns the text that Fingerprint makes a document's SimHash, MinHash and
// main-text hash of: its Text, or for HTML the main content extract finds, or the page's
// visible text with Options.NoExtract or when extraction runs out of time. It fails as
// Fingerprint does for a page over extract's limits; it needs no id. For HTML it costs
// what Fingerprint's extraction costs, a few milliseconds for a typical page.
func (f *Fingerprinter) MainText(doc Document) (string, error) {
	if doc.HTML == nil {
		return doc.Text, nil
	}
	_, main, _, _, err := f.texts(doc)
	return main, err
}

// texts returns an HTML document's visible text (full), the main text its fingerprints
// are made of, its title and the extract method that gave main.
func (f *Fingerprinter) texts(doc Document) (full, main, title, method string, err error) {
	eo := f.opt.Extract
	if doc.ContentType != "" {
		eo.ContentType = doc.ContentType
	}
	if doc.URL != "" {
		eo.URL = doc.URL
	}
	if f.opt.NoExtract {
		if full, err = extract.VisibleText(doc.HTML, eo); err != nil {
			return "", "", "", "", fmt.Errorf("%w: %s: %w", ErrDocument, doc.ID, err)
		}
		return full, full, "", extract.MethodVisibleText, nil
	}
	// One call reads and decodes the page once for both texts.
	res, full, err := extract.ExtractVisible(doc.HTML, eo)
	switch {
	case errors.Is(err, extract.ErrTimeout):
		// The page's visible text is at hand: a verdict on it beats none.
		return full, full, "", extract.MethodVisibleText, nil
	case err != nil:
		return "", "", "", "", fmt.Errorf("%w: %s: %w", ErrDocument, doc.ID, err)
	}
	return full, res.Text, res.Title, res.Method, nil
}

// maxPooledText is the largest normalized-text buffer a pooled state keeps.
const maxPooledText = 1 << 20

// start empties the normalized-text buffer.
func (st *fpState) start() { st.norm, st.words = st.norm[:0], 0 }
