package store

import "errors"

// ErrClosed reports a call on a store that Close has closed or is closing; test for it
// with errors.Is. Every backend returns it.
var ErrClosed = errors.New("store: closed")
