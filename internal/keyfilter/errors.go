package keyfilter

import "errors"

// ErrFilter is wrapped when a key filter snapshot is malformed. neardup.ErrFilter is the
// same value.
var ErrFilter = errors.New("neardup: bad key filter")
