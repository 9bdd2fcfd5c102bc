package store

import "errors"

// ErrClosed reports a call on a store that Close has closed or is closing; test for it
// with errors.Is. Every backend returns it.
var ErrClosed = errors.New("store: closed")

// errNoID is Memory.NextID's error once a record id or an id it returned is the largest
// uint64; callers have nothing to do about it but start a new store, so it is no class.
var errNoID = errors.New("store: no id left: a record id or an id NextID returned is the largest uint64")
