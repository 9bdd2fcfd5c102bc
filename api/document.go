package api

import (
	"time"

	"github.com/neardup/neardup/minhash"
)

// Document is one fetched page or text as a neardup.Detector takes it.
type Document struct {
	// ID names the document; it is required and unique within a neardup.Detector.
	ID string
	// URL is where the document was fetched from; optional. Its canonical form is the
	// URL key.
	URL string
	// HTML is the page as fetched, in any character set; Text is plain text (UTF-8).
	// Give one of them (both empty is an empty document).
	HTML []byte
	Text string
	// ContentType is the HTTP Content-Type header, whose charset decides how HTML is
	// decoded; optional.
	ContentType string
	// Priority ranks copies for the keep policy: higher survives (neardup.KeepPriority). NaN, which
	// has no order, is refused (ErrDocument); the infinities are allowed.
	Priority float64
	// FetchTime is when the document was fetched; zero means when it is checked.
	FetchTime time.Time
}

// Query is a raw near-duplicate query for callers that fingerprint documents
// themselves (with the neardup.Detector's options): a SimHash, a MinHash signature,
// or both.
type Query struct {
	// SimHash is the fingerprint to search by when HasSimHash is true (0 is a valid
	// fingerprint).
	SimHash    uint64
	HasSimHash bool
	// MinHash is the signature to search by when it is not empty; it must have
	// neardup.Options.MinHashK values.
	MinHash minhash.Signature
}
