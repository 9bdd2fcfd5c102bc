package store

import "errors"

// Errors returned by this package; test for them with errors.Is.
var (
	// ErrFormat reports a directory that holds a database this package did not write, or
	// one written in another format version of it: open it with the build that wrote it,
	// or point Open at another directory.
	ErrFormat = errors.New("store: not a store of this format")
	// ErrClosed reports a call on a store that Close has closed or is closing.
	ErrClosed = errors.New("store: closed")
)
