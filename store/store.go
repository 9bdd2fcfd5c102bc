package store

import "iter"

// Namespace separates kinds of keys in one store: the same key bytes under two namespaces
// are two independent postings. A service uses one namespace for URL keys, one for
// exact-content keys, one per SimHash table, one per LSH band, and so on; the numbers are
// the caller's to choose and to keep stable, since they are persisted.
type Namespace uint16

// Store keeps document records, opaque bytes under a uint64 id, and postings: under a
// (namespace, key) pair, a set of uint64 ids. It keeps no index math; which keys a
// document is posted under is the caller's business (packages hamming and lsh).
//
// Every method is safe for concurrent use. Close waits for the calls in progress; calls
// that start after it, including calls made from an IDs or Records callback while Close
// waits, return ErrClosed.
type Store interface {
	// Apply applies a batch atomically: a concurrent reader sees all of it or none of it,
	// and so does a restart after a crash. The operations apply in the order they were
	// added, so of two on the same record or posting the later wins. A persistent
	// backend returns only once the batch is durable (its write-ahead log synced;
	// concurrent Applies may share one sync). Apply does not keep b; an empty batch
	// does nothing.
	Apply(b *Batch) error
	// Write applies b as Apply does, atomically and visible to readers before it
	// returns, but need not make it durable: a crash may lose it, whole. Sync makes it
	// durable. Write does not keep b.
	Write(b *Batch) error
	// Sync makes durable every batch whose Write returned before Sync was called;
	// concurrent Syncs may share one sync of the log. The pattern for a service is Write
	// under its own lock, so that batches apply in the order it decides, then Sync
	// outside it, so that one log sync covers many writers, then acknowledge.
	Sync() error
	// Record returns a copy of the record stored under id, which the caller owns; ok
	// reports whether there is one.
	Record(id uint64) (rec []byte, ok bool, err error)
	// IDs calls fn with each id posted under (ns, key), in ascending order, until fn
	// returns false. It sees the postings as they were when it started, and fn may call
	// the store's other methods. IDs does not keep key.
	IDs(ns Namespace, key []byte, fn func(id uint64) bool) error
	// Records calls fn with every record in ascending id order until fn returns false,
	// as they were when it started: the way to rebuild in-memory indexes at startup
	// without recomputing fingerprints. rec is valid only during the call and fn must not
	// modify it; fn may call the store's other methods.
	Records(fn func(id uint64, rec []byte) bool) error
	// Postings calls fn with every posting of namespace ns, ordered by the key's length,
	// then the key's bytes, then the id, until fn returns false; it sees them as they
	// were when it started. Keys of one length, such as 8-byte big-endian times, come in
	// bytewise order, so a time-keyed namespace can be scanned up to a cutoff. key is
	// valid only during the call and fn must not modify it; fn may call the store's other
	// methods. Its cost grows with the postings it visits: a startup or a background scan,
	// not a query.
	Postings(ns Namespace, fn func(key []byte, id uint64) bool) error
	// NextID returns an id greater than every record id in the store and than every id
	// NextID returned before, so never 0 (callers may reserve it). Ids are not
	// persisted until a record is put under them: after a restart, ids above the
	// largest record may be handed out again. It fails when no id is left: once a record
	// id, or an id NextID returned, is the largest uint64.
	NextID() (uint64, error)
	// Close waits for the calls in progress, then releases the store; later calls
	// return ErrClosed, and so does a second Close.
	Close() error
}

// OpKind is the kind of one operation of a Batch.
type OpKind uint8

// The kinds of operations, one per method of Batch that adds one.
const (
	OpPutRecord    OpKind = iota // Batch.PutRecord
	OpDeleteRecord               // Batch.DeleteRecord
	OpAdd                        // Batch.Add
	OpRemove                     // Batch.Remove
)

// Op is one operation of a Batch, as Batch.All yields it to a backend: Namespace is that
// of an OpAdd or OpRemove and 0 otherwise; Data is the key of an OpAdd or OpRemove, the
// record of an OpPutRecord, and empty for an OpDeleteRecord.
type Op struct {
	Kind      OpKind
	Namespace Namespace
	ID        uint64
	// Data is the batch's own copy: valid until the batch is next Reset, and not to be
	// modified.
	Data []byte
}

// op is one operation of a Batch; its key (OpAdd, OpRemove) or record (OpPutRecord) is
// Batch.data[start:end].
type op struct {
	kind       OpKind
	ns         Namespace
	id         uint64
	start, end int
}

// Batch collects operations for Store.Apply and Store.Write, which apply them all or
// none. A Batch copies the keys and records given to it, so the caller may reuse its
// buffers at once. The zero value is an empty batch ready to use; Reset empties it and
// keeps its memory for the next one. Not safe for concurrent use.
type Batch struct {
	ops  []op
	data []byte
}

func (b *Batch) push(kind OpKind, ns Namespace, id uint64, data []byte) {
	start := len(b.data)
	b.data = append(b.data, data...)
	b.ops = append(b.ops, op{kind: kind, ns: ns, id: id, start: start, end: len(b.data)})
}

// All yields the operations of b in the order they were added, for a backend to apply;
// it copies no key or record. The Data of each Op aliases b's memory: see Op.
func (b *Batch) All() iter.Seq[Op] {
	return func(yield func(Op) bool) {
		for _, o := range b.ops {
			if !yield(Op{Kind: o.kind, Namespace: o.ns, ID: o.id, Data: b.data[o.start:o.end:o.end]}) {
				return
			}
		}
	}
}

// PutRecord sets the record under id to a copy of rec, replacing any record there.
func (b *Batch) PutRecord(id uint64, rec []byte) { b.push(OpPutRecord, 0, id, rec) }

// DeleteRecord deletes the record under id, if there is one. It leaves the postings of
// id alone: remove those with Remove.
func (b *Batch) DeleteRecord(id uint64) { b.push(OpDeleteRecord, 0, id, nil) }

// Add posts id under (ns, key); a key may be empty. Adding an id that is already posted
// there changes nothing.
func (b *Batch) Add(ns Namespace, key []byte, id uint64) { b.push(OpAdd, ns, id, key) }

// Remove removes id from the postings of (ns, key), if it is there.
func (b *Batch) Remove(ns Namespace, key []byte, id uint64) { b.push(OpRemove, ns, id, key) }

// Len returns the number of operations in the batch.
func (b *Batch) Len() int { return len(b.ops) }

// Reset empties the batch and keeps its memory.
func (b *Batch) Reset() {
	b.ops = b.ops[:0]
	b.data = b.data[:0]
}

// Cond is a condition of Conditional.ApplyIf: the postings of (Namespace, Key) are
// exactly IDs (in any order; none for an empty posting).
type Cond struct {
	Namespace Namespace
	Key       []byte
	IDs       []uint64
}

// Conditional is a Store that several processes write at once, such as a Redis Cluster
// shared by service replicas: a writer's in-process lock no longer orders every write,
// so a decision read from the store is committed only if what it read still holds.
type Conditional interface {
	Store
	// ApplyIf applies b as Apply does, but only if every condition holds when it
	// applies, atomically with it; otherwise it applies nothing and returns an error
	// wrapping ErrConflict. Each condition's key must be one that b adds to or removes
	// from. ApplyIf does not keep b or conds.
	ApplyIf(b *Batch, conds []Cond) error
}

// ReadingConditional is a Conditional that reads records in the round trip of its
// write's first step, so that records a decision needs, but which do not change what it
// writes (a near-duplicate check's candidates), cost no round trip of their own.
type ReadingConditional interface {
	Conditional
	// ApplyIfRead is ApplyIf that also returns the records under ids, as RecordsMany
	// would, read before the batch applies and while its conditions held. On an error
	// the records are nil.
	ApplyIfRead(b *Batch, conds []Cond, ids []uint64) (recs [][]byte, ok []bool, err error)
}

// Key names the posting of one (namespace, key) pair.
type Key struct {
	Namespace Namespace
	Key       []byte
}

// MultiReader is a Store that reads many postings or records in one call, for a backend
// where each read is a round trip over the network (a Redis Cluster answers a pipeline in
// one round trip to each master, in parallel).
type MultiReader interface {
	Store
	// IDsMany returns the ids posted under each key, each in ascending order, as IDs
	// would; ids[i] is nil when keys[i] has none.
	IDsMany(keys []Key) (ids [][]uint64, err error)
	// RecordsMany returns the records under ids, as Record would: recs[i] is a copy the
	// caller owns, and nil when ok[i] is false.
	RecordsMany(ids []uint64) (recs [][]byte, ok []bool, err error)
}

// Counter is a Store that keeps a count of the postings of each namespace, for a
// backend where counting them by Postings would read the whole store.
type Counter interface {
	Store
	// Count returns the number of postings, (key, id) pairs, in namespace ns.
	Count(ns Namespace) (int64, error)
}

// Orderer is a Store that keeps the keys of a namespace in order when asked to, so
// that Postings over it reads only as far as its callback goes: the way to scan a
// namespace of 8-byte times up to a cutoff on a backend whose Postings otherwise reads
// the whole namespace (a Redis Cluster, where it scans every master).
type Orderer interface {
	Store
	// Order makes the store keep ns in order from now on, for every process that
	// shares it; it is persisted. Call it before the first posting of ns is written:
	// the postings written before are not found by Postings after.
	Order(ns Namespace) error
}
