// Package redisstore is a store.Store on a Redis Cluster, shared by any number of
// processes: the backend of neardup serve --redis, whose replicas keep no state of their
// own. It implements store.Conditional, so that a replica commits a verdict only if the
// postings it read still hold.
//
// # Layout
//
// Postings and records live in buckets, Redis hashes, so that a posting costs a field
// of some hundred in a listpack, a few bytes, where a key of its own would cost some
// hundred. A posting (namespace, key) with a key of up to 16 bytes is the field
// (namespace, key) of one of Options.Buckets buckets that every namespace shares; a
// longer key (a URL, a content hash) is the field key of one of fewer buckets of its namespace; either
// way the bucket is a hash of the namespace and key, never the caller's bytes. A
// posting holds its ids in decimal, comma-separated (a single id is an integer to
// Redis). A record is the field id (8 bytes, big-endian) of one of Options.Buckets
// record buckets. A namespace kept in order (Order) has 256 buckets of its own, each
// with a sorted set of its keys beside it. A pending transaction's intent on a field
// is in the field's own value, after a mark that no committed value starts with:
// the transaction and the field's next state, then its committed value; resolved, the
// field holds its committed value alone. The id counter is one more key; NextID
// reserves ids from it in blocks. The layout's version is kept with the store, and
// Open refuses a store of another (ErrLayout).
//
// # Atomic batches across slots
//
// Redis runs a script or a MULTI only on keys of one slot; a batch writes keys in many.
// Apply makes it atomic as Percolator does, with a status key per transaction as the one
// atomic step:
//
//  1. Prepare: on every bucket the batch writes, a script places the transaction's
//     intent on each of its fields (its id and the field's next state, which the client
//     makes from ApplyIf's condition when there is one) unless another transaction
//     holds one of them, and checks the conditions there. One script call carries every
//     bucket of one master (see group.go), one pipelined round trip to each master in
//     parallel.
//  2. Commit: SET status "c" NX. From here the batch is applied, whatever happens next,
//     and Apply returns.
//  3. Resolve: on every bucket, a script leaves each field in its next state (or, for
//     an aborted transaction, its committed one); then the status expires after a
//     minute. This rides in the process's next prepare
//     pipeline, or goes alone once the process has written nothing for 20 ms: a
//     writer's batch costs two round trips of its own. With Options.Wait it is part of
//     the write, followed by WAIT on each master.
//
// A reader that finds an intent looks its transaction's status up (and caches the
// committed): committed, it sees the changes; otherwise it sees the field as it was. So
// a reader sees none of a batch until step 2 and all of it after. Of two writers on one
// field, the younger waits while the older holds it, and the older aborts the younger
// (SET status "a" NX, the same step the younger commits with, so exactly one wins); a
// holder older than Options.LockTimeout is taken to be dead and aborted. That orders
// writers (wound-wait) without deadlock. The scripts are sent by SHA (EVALSHA), by
// their text only to a node that does not know them yet. Reads, prepares and resolves
// go as one script call for each master, over all the buckets it serves
// (allow-cross-slot-keys), and fall back to a call a bucket, which follows the cluster's
// redirects, when a slot is on the move: an add costs some 13 commands, not 150, and
// each of its postings 5 hash commands inside them (read: HGET; prepare: HGET, HSET;
// resolve: HGET, HSET). Concurrent readers and transactions of one process share those
// calls (coalesce.go): each phase has one call in flight, and the requests that arrive
// meanwhile go together as the next, one script call a master for all of them.
//
// # Caveats
//
//   - A read, prepare or commit that arrives while another of its phase is in flight
//     waits for that call's answer before its own goes: up to a round trip more at
//     middling load, for fewer calls under load (none at all for a lone caller).
//   - Records and Postings scan every master and hold what they read in memory: tools for
//     tests and small stores, not for a replica's startup. Their snapshot is per bucket,
//     not of the whole store: a batch committed while they read may show in the buckets
//     read after its commit and not in those read before. The same holds for reads of
//     several keys one after the other (IDsMany and RecordsMany see each batch whole or
//     not at all); what never shows is a batch in part after it showed whole.
//   - A posting is read and rewritten whole: a key with very many ids costs that much
//     on every read and write.
//   - A reader stalled for more than a minute between reading an intent and looking its
//     transaction's status up finds the status gone, and sees that field without the
//     batch, though it may have seen the batch in other fields.
//   - NextID's ids come from blocks a process reserves: they are distinct and above
//     every record its own process put, but of two processes, one may hand out an id
//     below one the other put less than a second before.
//   - The number of buckets is fixed when a store is created: too few for the postings,
//     and buckets outgrow a listpack (several times the memory); too many, and most
//     hold one field at the cost of a key.
//   - Durability is Redis's: appendonly and appendfsync decide what a crash loses, and a
//     failover loses the writes its replica had not received, unless Options.Wait makes
//     writes wait for replicas (WAIT). CheckConfig reports settings that fall short.
//
// # Errors
//
// A call the cluster cannot answer for now (a node that does not answer, a failover or
// a resharding under way) fails with an error wrapping store.ErrUnavailable: made again
// in a moment, it completes. A write a master refuses for memory (maxmemory under the
// noeviction policy) wraps store.ErrNoSpace, and Health says so until the masters have
// room. A write too few replicas acknowledged is ErrWait.
package redisstore
