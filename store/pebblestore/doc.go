// Package pebblestore is the persistent store.Store: records and postings in a
// cockroachdb/pebble LSM tree in one directory. It is a package of its own so that
// binaries that use only package store (the interface, Memory) do not link pebble, which
// is most of the size of a binary that opens a DB.
//
//	db, err := pebblestore.Open(dir, pebblestore.Options{})
//	if err != nil { ... }
//	defer db.Close()
//	var s store.Store = db // then as in package store's example
//
// # Durability
//
// DB.Apply writes the batch to pebble's write-ahead log and returns once the log is
// fsynced. DB.Write returns once the batch is in the memtable, visible to readers, with
// the log record still in pebble's buffer; DB.Sync commits an empty log record with
// fsync, and since the log is written in order that fsync covers every earlier Write.
// Pebble syncs the records that wait meanwhile with one fsync (group commit), so durable
// throughput grows with concurrent Applies or Syncs, and a service can Write under its
// lock and Sync outside it. Close syncs what Write left.
//
// BenchmarkApply compares the three ways from 1 and 32 writers: with 32, shared fsyncs
// make many times the durable batches a second of one writer, and Write under a lock
// then Sync outside it keeps up with Apply. TestCrash kills a process writing batches with SIGKILL at random
// moments, 20 times with Write then Sync and 5 times with Apply, and finds every
// acknowledged document, record and postings, after each restart.
//
// # On disk
//
// Keys carry a tag byte: records are tag 1 and the id (8 bytes, big-endian); postings are
// tag 2, the namespace (2 bytes, big-endian), the key's length, the key and the id (8
// bytes, big-endian), with an empty value. The length is in an order-preserving form (1
// byte under 128, 2 under 16,384, 3 under 2^21, else 5), so posting keys sort by
// (namespace, key length, key, id), the order of Postings, and one range scan serves it.
// The length also makes (namespace, key) prefixes prefix-free, so the postings of a key
// are one prefix range in id order, and pebble's comparer splits keys there, so its
// Bloom filters skip the sstables that lack a key. A format record (magic and version
// 2) and the comparer's name are checked by Open, which refuses other stores with
// ErrFormat; pebble's own format major version is pinned (FormatValueSeparation; a store
// of the version pinned before, FormatTableFormatV6, is upgraded when opened).
//
// Values of 256 bytes or more, which are the records, are kept apart from the keys in
// pebble's blob files; the sstables hold a reference to each. Records at old ids are
// rewritten now and then (a URL duplicate's last-seen time, a replaced or expired
// document), so every flush spans the whole range of record keys, and each compaction
// into the base level would rewrite every record there along with the new postings.
// With the records apart it rewrites their references only, so a stream of adds writes
// much less to disk for the same CPU time. Reading a record costs one more block lookup.
//
// IDs costs a seek into the key's prefix range and a step for each id; BenchmarkIDs
// compares it with Memory's map lookup for keys with no, one and about 100 ids.
//
// # Disk space, failures and backups
//
// Below a free-space watermark (Options.MinFree, DefaultMinFree by default) Open refuses
// the directory and Apply and Write refuse batches that add anything with
// store.ErrNoSpace, until space is freed (DB.Health says so); a flush that ran out of
// space does the same until one succeeds. When writing or syncing the write-ahead log
// fails, pebble would end the process; here that write and every later one fail with
// store.ErrFailed, reads go on, and reopening replays what the log holds. Open logs
// what it replayed, and a gap it sees in the log's sequence numbers (a log file removed
// or truncated) as an error; it names the process holding a locked directory
// (ErrLocked). DB.Checkpoint writes a consistent copy of a store in use.
//
// TestPowerLoss runs the store on pebble's in-memory file system and crash-clones it
// (keeping what was synced and a random part of what was not) while 4 writers
// acknowledge batches, in 50 seeded rounds: every acknowledged batch is found.
// TestLogFaults and TestTableFaults inject ENOSPC and EIO (vfs/errorfs) into the log,
// tables and blob files.
//
// # Caveats
//
//   - TestCrash kills the process, not the machine: the page cache survives, so it
//     proves an acknowledged batch was in the WAL file, not on the disk; TestPowerLoss
//     is the test against power loss. A batch acknowledged after Write without Sync is
//     not durable even against a process kill (-crash.nosync shows the test failing).
//   - After the log failed (store.ErrFailed), the batch that met the failure may be
//     visible to reads, and present after a restart, though its call returned an error.
//   - A fatal error in pebble's background work (a failed manifest write) still ends
//     the process.
//   - NextID's ids are not persisted until a record is put under them: after a restart,
//     ids above the largest record may be handed out again.
//   - Keys of postings are limited to 2^32-1 bytes.
//   - One process at a time may open a directory (pebble locks it).
package pebblestore
