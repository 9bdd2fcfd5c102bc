// Package pebblestore is the persistent store.Store: records and postings in a
// cockroachdb/pebble LSM tree in one directory. It is a package of its own so that
// binaries that use only package store (the interface, Memory) do not link pebble: a
// main that uses store.Memory builds to 1.9 MB, one that opens a DB to 27 MB.
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
// Measured on a 2-core VM with noisy fsync (0.3 to 1 ms; BenchmarkApply, a record and
// three postings a batch, two runs each): Apply from one writer 1,000 to 1,900 batches/s,
// from 32 writers 16,000 to 21,000/s; Write under a lock then Sync outside it from 1
// writer 1,700 to 3,100/s, from 32 writers 17,000 to 18,000/s; Write alone (not durable)
// 53,000 to 77,000/s. TestCrash kills a process writing batches with SIGKILL at random
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
// into the base level used to rewrite every record there along with the new postings.
// With the records apart it rewrites their references only. At a million documents
// (975,810, the service's bench corpus) the sstables hold 122 MB and the blob files 654
// MB, against 779 MB of sstables without; an open loop of adds at 2,500/s for 120 s made
// the service write 1.99 GB to disk against 3.12 GB without, for the same CPU time
// (121 against 118 s) and no worse a p99. Reading a record costs one more block lookup.
//
// BenchmarkIDs, 100,000 documents: IDs costs 2 to 3 µs for a key without postings, 10 to
// 12 µs for one with one id and 11 to 31 µs for one with about 100; Memory's cost 0.6 to
// 1.7 µs.
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
