package pebblestore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
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

// Open opens the store in dir, creating the directory and an empty store if there is
// none, and reads the largest record id for NextID (one seek). It refuses, with an error
// wrapping ErrFormat, a directory that holds a pebble database this package did not
// write, or one of another format version (such as format 1, before Postings); with one
// wrapping store.ErrNoSpace, a directory on a disk with less free space than the
// watermark (Options.MinFree); with one wrapping ErrLocked, a directory another process
// has open (pebble locks it). It logs what it replayed from the write-ahead log, and an
// error for every gap it sees in the log's sequence (a log file removed or truncated).
func Open(dir string, opt Options) (*DB, error) {
	fs := opt.FS
	if fs == nil {
		fs = vfs.Default
	}
	log := opt.Logger
	if log == nil {
		log = slog.Default()
	}
	sp := &space{fs: fs, dir: dir}
	switch {
	case opt.MinFree == 0:
		sp.min = DefaultMinFree
	case opt.MinFree > 0:
		sp.min = uint64(opt.MinFree)
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pebblestore: opening %s: %w", dir, err)
	}
	// Below the watermark pebble may not be able to write its new log and manifest, and
	// pebble v2.1.7 then panics (a nil pointer in fileBufferedWritable.Abort).
	if u, err := fs.GetDiskUsage(dir); err == nil && sp.min > 0 {
		if err := sp.verdict(u.AvailBytes); err != nil {
			return nil, fmt.Errorf("pebblestore: refusing to open %s: %w", dir, err)
		}
	}
	wals, walErr := scanWALs(fs, dir)
	if walErr != nil {
		log.Warn("pebblestore: listing the write-ahead logs failed; not checking their sequence", "data", dir, "err", walErr)
	}
	cache := pebble.NewCache(cmp.Or(opt.CacheSize, DefaultCacheSize))
	defer cache.Unref()
	lg := &logger{log: log}
	o := &pebble.Options{
		FS:            fs,
		Cache:         cache,
		Comparer:      comparer,
		Logger:        lg,
		EventListener: sp.listener(),
		// A pinned format, so a newer pebble does not ratchet a store past what the
		// build that wrote it can read. It has WAL sync chunks, which tell a torn WAL
		// tail from corruption on replay, and value separation (below). Opening a store
		// of the earlier pinned format, TableFormatV6, upgrades it in place.
		FormatMajorVersion: pebble.FormatValueSeparation,
		// Tuned for the service's writes, dozens of random keys (hashes) per document:
		// larger memtables (two at most, for memory) and a larger base level flush and
		// rewrite less often (with pebble's defaults, compaction took a third of the
		// CPU at a million documents), and a second compaction may run when the first
		// falls behind, as reads slow down with every file waiting in L0.
		MemTableSize:                64 << 20,
		MemTableStopWritesThreshold: 2,
		L0StopWritesThreshold:       24,
		LBaseMaxBytes:               512 << 20,
		CompactionConcurrencyRange:  func() (int, int) { return 1, 2 },
	}
	// Records (about 700 bytes: hashes and a MinHash signature) go to blob files, so
	// that compactions rewrite references to them, not the records (the package
	// documentation says why and what it saved). A blob file a fifth garbage is
	// rewritten once it is five minutes old. Pebble asks for the policy at every flush
	// and compaction: on a disk nearly full it gets none (see space.blobsSafe).
	o.Experimental.ValueSeparationPolicy = func() pebble.ValueSeparationPolicy {
		if !sp.blobsSafe() {
			return pebble.ValueSeparationPolicy{TargetGarbageRatio: 1} // no blob files written or rewritten
		}
		return pebble.ValueSeparationPolicy{
			Enabled:               true,
			MinimumSize:           256,
			MaxBlobReferenceDepth: 10,
			RewriteMinimumAge:     5 * time.Minute,
			TargetGarbageRatio:    0.2,
		}
	}
	o.Levels[0].FilterPolicy = bloom.FilterPolicy(10) // the deeper levels inherit it
	o.TargetFileSizes[0] = 16 << 20                   // the deeper levels double it
	o.EnsureDefaults()                                // as Open would; CheckCompatibility needs them
	if err := checkComparer(fs, dir, o); err != nil {
		return nil, err
	}
	db, err := openPebble(dir, o, sp, lg)
	if err != nil {
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) || strings.Contains(err.Error(), "lock held by current process") {
			by := "another process"
			if pid := lockHolder(filepath.Join(dir, "LOCK")); pid > 0 {
				by = fmt.Sprintf("process %d", pid)
			}
			return nil, fmt.Errorf("%w: %s is open in %s (a running neardup serve?): stop it, or use another --data; to copy a store a service holds, run neardup backup against the service: %v", ErrLocked, dir, by, err)
		}
		return nil, fmt.Errorf("pebblestore: opening %s: %w", dir, err)
	}
	if walErr == nil {
		checkReplay(log, dir, wals, lg.replays())
	}
	if err := checkFormat(db, dir); err != nil {
		db.Close()
		return nil, err
	}
	last, err := lastRecordID(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("pebblestore: reading %s: %w", dir, err)
	}
	d := &DB{db: db, gate: gate.New(), space: sp}
	d.lastID.Store(last)
	return d, nil
}

// openPebble is pebble.Open, with its panics (logger.Fatalf's among them) turned into
// errors: opening is all the caller does with the store, and an error it can report
// says more than a stack trace. Pebble flushes the log it replayed before Open returns,
// and retries a failed flush for ever; when a flush runs out of space (sp.full), this
// returns an error wrapping store.ErrNoSpace instead of waiting; the open left behind
// closes the store if it ever completes (once space is freed), and its goroutines end
// rather than panic if pebble fails fatally (see logger.Fatalf).
func openPebble(dir string, o *pebble.Options, sp *space, lg *logger) (*pebble.DB, error) {
	type result struct {
		db  *pebble.DB
		err error
	}
	done := make(chan result, 1)
	abandoned := &lg.abandoned
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.err = fmt.Errorf("pebble failed: %v", p)
			}
			if r.db != nil && abandoned.Load() {
				closePebble(r.db)
				r.db = nil
			}
			done <- r
		}()
		r.db, r.err = pebble.Open(dir, o)
	}()
	tick := time.NewTicker(spaceCheckEvery)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			return r.db, r.err
		case <-tick.C:
			if sp.full.Load() {
				abandoned.Store(true)
				select {
				case r := <-done: // it completed meanwhile: use it after all
					if r.db != nil || r.err != nil {
						return r.db, r.err
					}
				default:
				}
				return nil, fmt.Errorf("%w: flushing the write-ahead log replayed from %s ran out of disk space: free space on it and start again", store.ErrNoSpace, dir)
			}
		}
	}
}

// lastRecordID returns the largest record id in db, or 0 if there is no record: the
// last key before the end of the record range.
func lastRecordID(db *pebble.DB) (uint64, error) {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{tagRecord}, UpperBound: []byte{tagRecord + 1}})
	if err != nil {
		return 0, err
	}
	var last uint64
	if it.SeekLT([]byte{tagRecord + 1}) {
		last = binary.BigEndian.Uint64(it.Key()[1:])
	}
	return last, it.Close()
}

// checkComparer refuses, with ErrFormat, an existing pebble database in dir made with
// another comparer: one this package did not write.
func checkComparer(fs vfs.FS, dir string, o *pebble.Options) error {
	desc, err := pebble.Peek(dir, fs)
	if err != nil || !desc.Exists || desc.OptionsFilename == "" {
		return nil // pebble.Open reports what is wrong, or creates the store
	}
	f, err := fs.Open(fs.PathJoin(dir, fs.PathBase(desc.OptionsFilename)))
	if err != nil {
		return fmt.Errorf("pebblestore: opening %s: %w", dir, err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("pebblestore: opening %s: %w", dir, err)
	}
	if err := o.CheckCompatibility(dir, string(data)); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrFormat, dir, err)
	}
	return nil
}

// checkFormat checks the format record of db, or writes it (synced) if db is empty.
func checkFormat(db *pebble.DB, dir string) error {
	v, closer, err := db.Get(metaFormatKey)
	switch {
	case err == nil:
		defer closer.Close()
		if !bytes.Equal(v, formatValue) {
			return fmt.Errorf("%w: %s holds format %q, this build reads %q", ErrFormat, dir, v, formatValue)
		}
		return nil
	case !errors.Is(err, pebble.ErrNotFound):
		return fmt.Errorf("pebblestore: reading the format of %s: %w", dir, err)
	}
	it, err := db.NewIter(nil)
	if err != nil {
		return fmt.Errorf("pebblestore: reading %s: %w", dir, err)
	}
	empty := !it.First()
	if err := it.Close(); err != nil {
		return fmt.Errorf("pebblestore: reading %s: %w", dir, err)
	}
	if !empty {
		return fmt.Errorf("%w: %s holds keys but no format record", ErrFormat, dir)
	}
	if err := db.Set(metaFormatKey, formatValue, pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: writing the format of %s: %w", dir, err)
	}
	return nil
}

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
