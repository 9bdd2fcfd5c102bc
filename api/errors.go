package api

import "errors"

// ErrDocument: a Document cannot be fingerprinted (no id, or no content), or a Hash's
// text form is not 64 hex digits. neardup.ErrDocument is the same value.
var ErrDocument = errors.New("neardup: invalid document")
