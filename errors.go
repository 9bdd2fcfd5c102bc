package neardup

import "errors"

// Errors of this package, tested with errors.Is; the messages wrapping them say what
// to change.
var (
	// ErrOptions: an Options field is out of range.
	ErrOptions = errors.New("neardup: invalid options")
	// ErrDocument: a Document cannot be fingerprinted (no id, or no content).
	ErrDocument = errors.New("neardup: invalid document")
	// ErrEncoding: an Entry's binary form is truncated, corrupt or of another version.
	ErrEncoding = errors.New("neardup: bad entry encoding")
	// ErrFilter: a key filter snapshot is malformed.
	ErrFilter = errors.New("neardup: bad key filter")
)
