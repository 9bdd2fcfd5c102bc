package neardup

import (
	"errors"

	"github.com/neardup/neardup/api"
)

// Errors of this package, tested with errors.Is; the messages wrapping them say what
// to change.
var (
	// ErrOptions: an Options field is out of range.
	ErrOptions = errors.New("neardup: invalid options")
	// ErrDocument: a Document cannot be fingerprinted (no id, or no content).
	// It is api.ErrDocument, so either tests a client's error too.
	ErrDocument = api.ErrDocument
	// ErrEncoding: an Entry's binary form is truncated, corrupt or of another version.
	ErrEncoding = errors.New("neardup: bad entry encoding")
	// ErrFilter: a key filter snapshot is malformed.
	ErrFilter = errors.New("neardup: bad key filter")
)
