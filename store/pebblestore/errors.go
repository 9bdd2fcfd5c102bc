package pebblestore

import "errors"

// ErrFormat reports a directory that holds a database this package did not write, or one
// written in another format version of it: open it with the build that wrote it, or
// point Open at another directory. Test for it with errors.Is. A closed DB returns
// store.ErrClosed.
var ErrFormat = errors.New("pebblestore: not a store of this format")
