package api

import "errors"

// ErrDocument is wrapped by the errors for a Document that cannot be fingerprinted (no
// id, or no content) and for a Hash whose text form is not 64 hex digits.
// neardup.ErrDocument is the same value.
var ErrDocument = errors.New("neardup: invalid document")

// ErrEncoding is wrapped when an Entry's binary form is truncated, corrupt or of another version.
// neardup.ErrEncoding is the same value.
var ErrEncoding = errors.New("neardup: bad entry encoding")
