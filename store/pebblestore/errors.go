package pebblestore

import "errors"

// ErrFormat reports a directory that holds a database this package did not write, or one
// written in another format version of it: open it with the build that wrote it, or
// point Open at another directory. Test for it with errors.Is. A closed DB returns
// store.ErrClosed.
var ErrFormat = errors.New("pebblestore: not a store of this format")

// errNoID is NextID's error once a record id or an id it returned is the largest uint64;
// callers have nothing to do about it but start a new store, so it is no class.
var errNoID = errors.New("pebblestore: no id left: a record id or an id NextID returned is the largest uint64")
