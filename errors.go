package neardup

import (
	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/internal/engine"
	"github.com/neardup/neardup/internal/keyfilter"
)

// Errors of this package, tested with errors.Is; the messages wrapping them say what
// to change. Each is the same value as the sentinel of the package below that returns
// it, so either name tests it.
var (
	// ErrOptions: an Options field is out of range.
	ErrOptions = engine.ErrOptions
	// ErrDocument: a Document cannot be fingerprinted (no id, or no content).
	// It is api.ErrDocument, so either tests a client's error too.
	ErrDocument = api.ErrDocument
	// ErrEncoding: an Entry's binary form is truncated, corrupt or of another version
	// (api.ErrEncoding).
	ErrEncoding = api.ErrEncoding
	// ErrFilter: a key filter snapshot is malformed.
	ErrFilter = keyfilter.ErrFilter
)
