package neardup

import "github.com/neardup/neardup/api"

// The value types live in package api, a leaf that a service client can import without
// this package's extractor, indexes and store; these aliases keep their names here. See
// package api for their documentation.
type (
	// Document is one fetched page or text as the detector takes it (api.Document).
	Document = api.Document
	// Query is a raw near-duplicate query (api.Query).
	Query = api.Query
	// Verdict is a Detector's answer for one document (api.Verdict).
	Verdict = api.Verdict
	// Match is one stored document that a checked document duplicates (api.Match).
	Match = api.Match
	// Kind is what a Detector decided about a document (api.Kind).
	Kind = api.Kind
	// Level says at which level two documents' contents are exactly equal (api.Level).
	Level = api.Level
	// Hash is a SHA-256 digest, the exact-duplicate key of one level (api.Hash).
	Hash = api.Hash
	// Fingerprints are everything a Detector keeps of a document's content and address
	// (api.Fingerprints).
	Fingerprints = api.Fingerprints
	// Entry is a fingerprinted document as a Detector takes it, with its binary form
	// (api.Entry).
	Entry = api.Entry
	// Candidate is what a KeepPolicy compares of a document (api.Candidate).
	Candidate = api.Candidate
)

// The kinds of a Verdict or a Match (see api.Kind).
const (
	Unique         = api.Unique
	URLDuplicate   = api.URLDuplicate
	ExactDuplicate = api.ExactDuplicate
	NearDuplicate  = api.NearDuplicate
	Changed        = api.Changed
)

// The exact levels of a Match (see api.Level).
const (
	LevelNone = api.LevelNone
	LevelRaw  = api.LevelRaw
	LevelText = api.LevelText
	LevelMain = api.LevelMain
)
