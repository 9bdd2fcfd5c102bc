package pebblestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/internal/gate"
)

// DefaultCacheSize is the block cache of a DB whose Options.CacheSize is 0.
const DefaultCacheSize = 64 << 20

// Options configures Open. The zero value means a block cache of DefaultCacheSize
// bytes, a free-space watermark of DefaultMinFree bytes, logs to slog.Default() and the
// operating system's file system.
type Options struct {
	// CacheSize is the size in bytes of the cache of sstable blocks; 0 means
	// DefaultCacheSize.
	CacheSize int64
	// MinFree is the free-space watermark in bytes: while the disk of the directory has
	// less free space, Open refuses the directory and Apply and Write refuse batches
	// that add anything (puts and postings) with an error wrapping store.ErrNoSpace,
	// and take them again once there is more. Batches of deletions only, and reads, go
	// on. 0 means DefaultMinFree; a negative value turns the watermark off.
	MinFree int64
	// Logger receives what Open replayed from the write-ahead log, the gaps it found in
	// it, and pebble's errors; nil means slog.Default().
	Logger *slog.Logger
	// FS is the file system the store lives on; nil means the operating system's.
	// Tests give pebble's in-memory one (vfs.NewCrashableMem) or a fault-injecting one
	// (vfs/errorfs).
	FS vfs.FS
}

// DB is the persistent store.Store: an LSM tree (github.com/cockroachdb/pebble) in one
// directory, whose write-ahead log makes each batch durable before Apply, or the Sync
// after a Write, returns. Concurrent Applies and Syncs share fsyncs (pebble's group
// commit), so many writers reach far more durable batches per second than one. Record is
// one point lookup; IDs is one prefix seek that the sstables' Bloom filters usually
// answer without reading a data block when the key has no postings; Postings and Records
// are one range scan; NextID is an atomic add. DB implements store.Store and is safe for
// concurrent use; make one with Open.
type DB struct {
	db     *pebble.DB
	gate   *gate.Gate
	lastID atomic.Uint64 // the largest record id put or found at Open, or id NextID returned
	space  *space
	failed atomic.Pointer[error] // set once writing or syncing the log failed
}

var _ store.Store = (*DB)(nil)

// Apply applies b as one pebble batch and returns once pebble has synced it to the
// write-ahead log; pebble commits concurrent synced batches with one fsync. It copies
// b's operations into pebble's batch, whose memory pebble pools. See store.Store.Apply.
func (d *DB) Apply(b *store.Batch) error { return d.commit(b, pebble.Sync) }

// Write applies b as Apply does but returns before pebble writes it out of its log
// buffer, let alone syncs it. See store.Store.Write.
func (d *DB) Write(b *store.Batch) error { return d.commit(b, pebble.NoSync) }

// Sync syncs the write-ahead log by committing an empty LogData record with
// pebble.Sync: its commit waits until the log file is fsynced up to and including that
// record (pebble's commitPipeline.Commit and LogWriter), and the log is written in
// order, so every record written before it, every batch a Write returned from, is synced
// with it. When pebble moves to a new log file it syncs the old one first
// (DB.rotateWAL). Concurrent Syncs, and Applies, share fsyncs as Applies do. See
// store.Store.Sync.
func (d *DB) Sync() error {
	if !d.gate.Enter() {
		return store.ErrClosed
	}
	defer d.gate.Leave()
	if err := d.guard(func() error { return d.db.LogData(nil, pebble.Sync) }); err != nil {
		return fmt.Errorf("pebblestore: syncing the log: %w", err)
	}
	return nil
}

// NextID returns one more than the largest record id put or found at Open and id
// returned, from an atomic counter. See store.Store.NextID.
func (d *DB) NextID() (uint64, error) {
	if !d.gate.Enter() {
		return 0, store.ErrClosed
	}
	defer d.gate.Leave()
	for {
		last := d.lastID.Load()
		if last == math.MaxUint64 {
			return 0, errNoID
		}
		if d.lastID.CompareAndSwap(last, last+1) {
			return last + 1, nil
		}
	}
}

// noteID raises lastID to id.
func (d *DB) noteID(id uint64) {
	for last := d.lastID.Load(); id > last && !d.lastID.CompareAndSwap(last, id); last = d.lastID.Load() {
	}
}

func (d *DB) commit(b *store.Batch, sync *pebble.WriteOptions) error {
	if b.Len() == 0 {
		return nil
	}
	if !d.gate.Enter() {
		return store.ErrClosed
	}
	defer d.gate.Leave()
	pb := d.db.NewBatch()
	defer pb.Close()
	var key []byte
	adds := false
	for o := range b.All() {
		var err error
		switch o.Kind {
		case store.OpPutRecord:
			key = recordKey(key[:0], o.ID)
			err = pb.Set(key, o.Data, nil)
			adds = true
		case store.OpDeleteRecord:
			key = recordKey(key[:0], o.ID)
			err = pb.Delete(key, nil)
		case store.OpAdd, store.OpRemove:
			if len(o.Data) > maxKeyLen {
				return fmt.Errorf("pebblestore: a key of %d bytes; the limit is %d", len(o.Data), maxKeyLen)
			}
			key = postingKey(key[:0], o.Namespace, o.Data, o.ID)
			if o.Kind == store.OpAdd {
				err = pb.Set(key, nil, nil)
				adds = true
			} else {
				err = pb.Delete(key, nil)
			}
		}
		if err != nil {
			return fmt.Errorf("pebblestore: building a batch: %w", err)
		}
	}
	if adds {
		if err := d.space.check(); err != nil {
			return err
		}
		// Before the commit: NextID must exceed the batch's ids once Write returns.
		for o := range b.All() {
			if o.Kind == store.OpPutRecord {
				d.noteID(o.ID)
			}
		}
	}
	if err := d.guard(func() error { return pb.Commit(sync) }); err != nil {
		return fmt.Errorf("pebblestore: applying a batch: %w", err)
	}
	return nil
}

// guard runs fn, a call that writes pebble's log, unless an earlier one failed, and
// turns its panic into an error wrapping store.ErrFailed that every later write
// returns. Pebble ends the process (Logger.Fatalf, which logger turns into a panic) when
// writing or syncing its log fails, as its commit pipeline cannot tell what is durable
// after that; here the process lives on, reads go on, writes are refused until a restart
// replays the log, and no write is acknowledged that the log did not make durable.
func (d *DB) guard(fn func() error) (err error) {
	if p := d.failed.Load(); p != nil {
		return *p
	}
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprint(p)
			if f, ok := p.(fatalError); ok {
				msg = f.msg
			}
			e := fmt.Errorf("%w: %s", store.ErrFailed, msg)
			d.failed.CompareAndSwap(nil, &e)
			err = *d.failed.Load()
		}
	}()
	return fn()
}

// Health returns nil while the store takes writes, or why it does not: an error wrapping
// store.ErrNoSpace while the disk is below the free-space watermark or the last flush
// ran out of space (it clears by itself), or one wrapping store.ErrFailed once
// writing the log failed (it clears with a restart). It reads the disk's free space at
// most every 100 ms; it is safe for concurrent use.
func (d *DB) Health() error {
	if p := d.failed.Load(); p != nil {
		return *p
	}
	return d.space.check()
}

// Checkpoint writes a consistent copy of the store to dir, which must not exist: it
// syncs the write-ahead log first, so the copy holds every batch Apply or Sync
// acknowledged before the call, then hard-links the sstables and blob files (copying
// them across file systems) and copies the manifest and log, syncing them (pebble's
// DB.Checkpoint). Writes go on meanwhile; the copy is a store Open opens like any other.
// Its cost is the copy of the log and manifest, and links.
func (d *DB) Checkpoint(dir string) error {
	if !d.gate.Enter() {
		return store.ErrClosed
	}
	defer d.gate.Leave()
	if err := d.guard(func() error { return d.db.Checkpoint(dir, pebble.WithFlushedWAL()) }); err != nil {
		return fmt.Errorf("pebblestore: checkpoint to %s: %w", dir, err)
	}
	return nil
}

// Record returns a copy of the record under id: one point lookup. See store.Store.Record.
func (d *DB) Record(id uint64) ([]byte, bool, error) {
	if !d.gate.Enter() {
		return nil, false, store.ErrClosed
	}
	defer d.gate.Leave()
	var buf [9]byte
	v, closer, err := d.db.Get(recordKey(buf[:0], id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pebblestore: reading record %d: %w", id, err)
	}
	rec := slices.Clone(v)
	if rec == nil {
		rec = []byte{}
	}
	return rec, true, closer.Close()
}

// IDs calls fn with the ids posted under (ns, key), from a pebble iterator in prefix
// mode (whose Bloom filters skip the sstables without the key). See store.Store.IDs.
func (d *DB) IDs(ns store.Namespace, key []byte, fn func(id uint64) bool) error {
	if !d.gate.Enter() {
		return store.ErrClosed
	}
	defer d.gate.Leave()
	it, err := d.db.NewIter(nil)
	if err != nil {
		return fmt.Errorf("pebblestore: reading postings: %w", err)
	}
	seek := postingKey(nil, ns, key, 0)
	for ok := it.SeekPrefixGE(seek); ok; ok = it.Next() {
		if !fn(binary.BigEndian.Uint64(it.Key()[len(seek)-8:])) {
			break
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("pebblestore: reading postings: %w", err)
	}
	return nil
}

// Records calls fn with every record in ascending id order from one pebble iterator,
// which pins the sstables it reads until it returns. See store.Store.Records.
func (d *DB) Records(fn func(id uint64, rec []byte) bool) error {
	if !d.gate.Enter() {
		return store.ErrClosed
	}
	defer d.gate.Leave()
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{tagRecord}, UpperBound: []byte{tagRecord + 1}})
	if err != nil {
		return fmt.Errorf("pebblestore: reading records: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return fmt.Errorf("pebblestore: reading records: %w", err)
		}
		if !fn(binary.BigEndian.Uint64(it.Key()[1:]), v) {
			break
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("pebblestore: reading records: %w", err)
	}
	return nil
}

// Postings calls fn with the postings of ns from one pebble iterator over the
// namespace's key range, whose keys sort in the order Postings promises. See
// store.Store.Postings.
func (d *DB) Postings(ns store.Namespace, fn func(key []byte, id uint64) bool) error {
	if !d.gate.Enter() {
		return store.ErrClosed
	}
	defer d.gate.Leave()
	lower, upper := namespaceBounds(ns)
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("pebblestore: reading postings: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		p := split(k)
		if p == len(k) {
			it.Close()
			return fmt.Errorf("pebblestore: reading postings: malformed key %x", k)
		}
		_, w := readLen(k[3:])
		if !fn(k[3+w:p:p], binary.BigEndian.Uint64(k[p:])) {
			break
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("pebblestore: reading postings: %w", err)
	}
	return nil
}

// Close waits for the calls in progress, then closes the database, syncing what Write
// left unsynced (pebble syncs the log when it closes it). See store.Store.Close.
func (d *DB) Close() error {
	if !d.gate.Close() {
		return store.ErrClosed
	}
	if err := closePebble(d.db); err != nil {
		return fmt.Errorf("pebblestore: closing: %w", err)
	}
	return nil
}

// closePebble is pebble's DB.Close, with a panic turned into an error: after its log
// failed, pebble may not close cleanly, and the process is ending or moving on.
func closePebble(db *pebble.DB) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("pebble failed: %v", p)
		}
	}()
	return db.Close()
}

// Exists reports whether dir holds a pebble database (one Open would open rather than
// create), reading its directory and manifest marker only; it does not lock dir, so it
// works on a store another process has open.
func Exists(dir string) (bool, error) {
	desc, err := pebble.Peek(dir, vfs.Default)
	if err != nil {
		return false, fmt.Errorf("pebblestore: looking into %s: %w", dir, err)
	}
	return desc.Exists, nil
}
