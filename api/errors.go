package api

import "errors"

// ErrDocument: a Document cannot be fingerprinted (no id, or no content), or a Hash's
// text form is not 64 hex digits. neardup.ErrDocument is the same value.
var ErrDocument = errors.New("neardup: invalid document")

// ErrEncoding: an Entry's binary form is truncated, corrupt or of another version.
// neardup.ErrEncoding is the same value.
var ErrEncoding = errors.New("neardup: bad entry encoding")
