package dedup

import "errors"

// ErrOptions reports an Options field out of range; the message says which and what to use.
var ErrOptions = errors.New("dedup: invalid options")
