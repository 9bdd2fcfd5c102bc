package api

import (
	"fmt"

	"github.com/neardup/neardup/internal/names"
)

// Kind is what a neardup.Detector decided about a document, or how one match relates to it.
// Its text form ("unique", "url-duplicate", ...) is what JSON carries.
type Kind int

const (
	// Unique: no stored document has the document's URL or the same or nearly the same
	// content.
	Unique Kind = iota
	// URLDuplicate: a stored document has the same canonical URL and the same or
	// nearly the same content.
	URLDuplicate
	// ExactDuplicate: a stored document has the same content at one of the three exact
	// levels (raw bytes, normalized text, normalized main text).
	ExactDuplicate
	// NearDuplicate: a stored document's content is within the near-duplicate
	// thresholds (SimHash distance, MinHash similarity).
	NearDuplicate
	// Changed: a stored document has the same canonical URL but different content; its
	// fingerprints are replaced by the new ones.
	Changed
)

var kindNames = names.Names{
	Unique:         "unique",
	URLDuplicate:   "url-duplicate",
	ExactDuplicate: "exact-duplicate",
	NearDuplicate:  "near-duplicate",
	Changed:        "changed",
}

// String returns the kind's name, or "Kind(n)" for an undeclared value.
func (k Kind) String() string { return kindNames.Of(int(k), "Kind") }

// MarshalText implements encoding.TextMarshaler with the kind's name.
func (k Kind) MarshalText() ([]byte, error) {
	if !kindNames.Valid(int(k)) {
		return nil, fmt.Errorf("neardup: undeclared %v", k)
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler for the names String returns.
func (k *Kind) UnmarshalText(text []byte) error {
	v, ok := kindNames.Parse(string(text))
	if !ok {
		return fmt.Errorf("neardup: unknown verdict kind %q", text)
	}
	*k = Kind(v)
	return nil
}

// Level says at which level two documents' contents are exactly equal.
type Level int

const (
	// LevelNone: the contents differ at every level.
	LevelNone Level = iota
	// LevelRaw: the raw bytes are equal.
	LevelRaw
	// LevelText: the normalized visible text of the whole page is equal.
	LevelText
	// LevelMain: the normalized main text (after boilerplate removal) is equal.
	LevelMain
)

var levelNames = names.Names{LevelRaw: "raw", LevelText: "text", LevelMain: "main"}

// String returns "raw", "text", "main", or "" for LevelNone.
func (l Level) String() string {
	if l == LevelNone {
		return ""
	}
	return levelNames.Of(int(l), "Level")
}

// MarshalText implements encoding.TextMarshaler with the level's name.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler for the names String returns, ""
// included (LevelNone), so that a Match read back from JSON equals the one written.
func (l *Level) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*l = LevelNone
		return nil
	}
	v, ok := levelNames.Parse(string(text))
	if !ok {
		return fmt.Errorf("neardup: unknown level %q", text)
	}
	*l = Level(v)
	return nil
}

// Match is one stored document that a checked document duplicates.
type Match struct {
	// ID and URL are the stored document's id and canonical URL.
	ID  string `json:"id"`
	URL string `json:"url,omitempty"`
	// Kind is URLDuplicate, ExactDuplicate or NearDuplicate: the strongest relation
	// found, in that order.
	Kind Kind `json:"kind"`
	// Level is the first exact level (raw, text, main) at which the contents are
	// equal, or LevelNone.
	Level Level `json:"level,omitempty"`
	// Distance is the Hamming distance between the SimHash fingerprints.
	Distance int `json:"distance"`
	// Similarity is the Jaccard similarity of the two shingle sets: from the documents'
	// sketches when both have one (exact up to minhash.DefaultSketchCap shingles; see
	// neardup.Options.NoVerify), otherwise estimated from the MinHash signatures.
	Similarity float64 `json:"similarity"`
}

// Verdict is a neardup.Detector's answer for one document.
type Verdict struct {
	// ID is the checked document's id.
	ID string `json:"id"`
	// URL is its canonical URL, "" when it has none.
	URL string `json:"url,omitempty"`
	// RawURL is its URL as given, when canonicalization changed it; "" otherwise.
	RawURL string `json:"raw_url,omitempty"`
	// Kind is the decision.
	Kind Kind `json:"verdict"`
	// Matches are the stored documents it duplicates, strongest first: URL, then
	// exact, then near duplicates by distance and similarity, then by id. A Changed
	// verdict lists the replaced document first. At most neardup.Options.MaxMatches are kept.
	Matches []Match `json:"matches,omitempty"`
	// Survivor is the id that the keep policy keeps among the document and its
	// matches; it is ID itself for a unique document.
	Survivor string `json:"survivor"`
	// Added reports whether the document was stored (Check stores unique, changed,
	// exact- and near-duplicate documents; never a URL duplicate; Peek stores nothing).
	Added bool `json:"added"`
}
