// Package store keeps the online index of a dedup service: document records, opaque
// bytes under a uint64 id, and postings, the set of ids under a (Namespace, key) pair. A
// service posts each document under its URL key, its exact-content key, its SimHash
// table keys and its LSH band keys, one namespace for each kind; the index math, which
// keys a document gets, stays in packages hamming and lsh, so one query path serves every
// backend.
//
// Store is the interface and Batch its unit of change; Memory keeps everything in maps
// (tests, throwaway indexes). The persistent backend is package store/pebblestore, kept
// apart so that a binary that needs only the interface or Memory does not link pebble;
// package store/storetest is the conformance suite every backend passes.
//
//	var s store.Store = store.NewMemory() // or pebblestore.Open(dir, pebblestore.Options{})
//	defer s.Close()
//
//	var b store.Batch
//	b.PutRecord(id, record)                  // e.g. the document's fingerprints
//	b.Add(nsURL, []byte(canonicalURL), id)
//	b.Add(nsSimHashTable0, tableKey, id)     // 8 bytes, big-endian
//	if err := s.Apply(&b); err != nil { ... } // all or nothing, durable when it returns
//
//	err = s.IDs(nsSimHashTable0, tableKey, func(id uint64) bool {
//		... // candidates, in ascending order; verify each against its record
//		return true
//	})
//
// At startup, Records streams every record in id order, so in-memory indexes are rebuilt
// from the stored fingerprints instead of from the documents, and Postings streams the
// keys of a namespace (to rebuild a Bloom filter, or to scan a namespace of 8-byte
// big-endian times up to a cutoff). NextID hands out ids above every record.
//
// # Durability
//
// Apply returns once the batch is durable. A service that orders its batches under a
// lock should not fsync under it: Write applies a batch (visible at once, not yet
// durable), Sync makes every batch written before it durable, and concurrent Syncs share
// one fsync in pebblestore. The pattern:
//
//	mu.Lock()
//	id, err := s.NextID()
//	... // fill b; check the index for near duplicates under the same lock
//	err = s.Write(&b)
//	mu.Unlock()
//	if err == nil {
//		err = s.Sync() // outside the lock: many writers, one fsync
//	}
//	... // acknowledge only now
//
// Memory keeps nothing durable: its Write is Apply and its Sync does nothing.
//
// # Caveats
//
//   - Keys and ids are the caller's: the store does not know which postings belong to a
//     record, so DeleteRecord leaves them; remove them in the same batch.
//   - Namespaces and key encodings are persisted; changing them needs a new store.
//   - Memory holds everything in RAM and copies a key's id slice on each change to it,
//     so keys with very many ids make its Apply slow.
package store
