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

// ErrLocked reports a directory that another process, or another DB in this process,
// has open: pebble locks it, and one process at a time may write it. Stop the other
// process (its id is in the message where the system tells it), or point Open at another
// directory; to copy a store a running service holds, ask the service for a backup.
// Test for it with errors.Is.
var ErrLocked = errors.New("pebblestore: the directory is locked by another process")
