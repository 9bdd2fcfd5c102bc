package store

import "errors"

// ErrClosed reports a call on a store that Close has closed or is closing; test for it
// with errors.Is. Every backend returns it.
var ErrClosed = errors.New("store: closed")

// errNoID is Memory.NextID's error once a record id or an id it returned is the largest
// uint64; callers have nothing to do about it but start a new store, so it is no class.
var errNoID = errors.New("store: no id left: a record id or an id NextID returned is the largest uint64")

// ErrNoSpace reports a write refused because the disk of a persistent store has less
// free space than its watermark, or ran out of it; reads still work, and writes are
// taken again once space is freed. Test for it with errors.Is.
var ErrNoSpace = errors.New("store: not enough free disk space")

// ErrUnavailable reports a call that a shared store could not complete for now: a node
// that does not answer, a failover or a resharding under way, too few replicas to
// acknowledge a write. Whether a write that fails so was applied is not known; the same
// call, made again in a moment, completes once the store has recovered. Test for it with
// errors.Is.
var ErrUnavailable = errors.New("store: unavailable for now")

// ErrFailed reports a write refused because the store failed to write or sync its log
// earlier and can no longer tell which writes are durable; reads still work. Restart the
// process: the store's log replay recovers every write that was durable. Test for it
// with errors.Is.
var ErrFailed = errors.New("store: failed writing its log; restart to recover")

// ErrConflict reports that Conditional.ApplyIf applied nothing because a condition did
// not hold: another writer changed a posting the caller read. Read again and decide
// again. Test for it with errors.Is.
var ErrConflict = errors.New("store: conflict: a posting the batch was conditioned on changed since it was read")
