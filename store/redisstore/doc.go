// Package redisstore is a store.Store on a Redis Cluster, shared by any number of
// processes: the backend of neardup serve --redis, whose replicas keep no state of their
// own. It implements store.Conditional, so that a replica commits a verdict only if the
// postings it read still hold.
//
// # Layout
//
// Every posting (namespace, key) and every record is one Redis hash, under a key whose
// hash tag is a hash of the posting's namespace and key, or of the record id, so that
// they spread over every slot; the caller's bytes never decide the slot. A posting's
// fields are its ids, 8 bytes big-endian each; a record's field "v" is the record. The
// id counter is one more key (NextID, one round trip).
//
// # Atomic batches across slots
//
// Redis runs a script or a MULTI only on keys of one slot; a batch writes keys in many.
// Apply makes it atomic as Percolator does, with a status key per transaction as the one
// atomic step:
//
//  1. Prepare: on every key of the batch, a script places the transaction's intent (its
//     id in field "L", the changes in fields beside the committed ones) unless another
//     transaction holds the key, and checks ApplyIf's condition there. One pipelined
//     round trip per master.
//  2. Commit: SET status "c" NX. From here the batch is applied, whatever happens next.
//  3. Resolve: on every key, a script applies the intent and drops it. One pipelined
//     round trip per master; then the status expires after ten minutes.
//
// A reader that finds an intent looks its transaction's status up (and caches the
// committed): committed, it sees the changes; otherwise it sees the key as it was. So
// a reader sees none of a batch until step 2 and all of it after. Of two writers on one
// key, the younger waits while the older holds it, and the older aborts the younger
// (SET status "a" NX, the same step the younger commits with, so exactly one wins); a
// holder older than Options.LockTimeout is taken to be dead and aborted. That orders
// writers (wound-wait) without deadlock.
//
// # Caveats
//
//   - Records and Postings scan every master and hold what they read in memory: tools for
//     tests and small stores, not for a replica's startup. Their snapshot is per key, not
//     of the whole store: a batch committed while they read may show in the keys read
//     after its commit and not in those read before. The same holds for reads of several
//     keys one after the other (IDsMany and RecordsMany see each batch whole or not at
//     all); what never shows is a batch in part after it showed whole.
//   - A posting is read whole (HGETALL): a key with very many ids costs that much on
//     every read, and every write to it (the resolve script lists its fields).
//   - Durability is Redis's: appendonly and appendfsync decide what a crash loses, and a
//     failover loses the writes its replica had not received, unless Options.Wait makes
//     writes wait for replicas (WAIT). CheckConfig reports settings that fall short.
package redisstore
