package redisstore

import "errors"

// ErrOptions reports Options or a --redis URL that cannot be used: the message names
// the field and what to change. Test for it with errors.Is.
var ErrOptions = errors.New("redisstore: bad options")

// ErrWait reports that fewer replicas than Options.Wait acknowledged a batch within
// Options.WaitTimeout: the batch is applied on the masters but may be lost if one of
// them fails now. Check the replicas (INFO replication), or lower Wait. Test for it with
// errors.Is.
var ErrWait = errors.New("redisstore: too few replicas acknowledged the write")

// ErrLayout reports a store written by a version of neardup whose key layout this one
// does not read: Open refuses it rather than misread it. Test for it with errors.Is.
var ErrLayout = errors.New("redisstore: the store has another key layout")

// errNoID is NextID's error once a record id or an id it returned is the largest uint64;
// callers have nothing to do about it but start a new store, so it is no class.
var errNoID = errors.New("redisstore: no id left: a record id or an id NextID returned is the largest uint64")

// errWounded is the internal signal that an older transaction aborted this one: Apply
// starts it again.
var errWounded = errors.New("redisstore: transaction aborted by an older one")
