package pebblestore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/internal/gate"
)

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
	o := pebbleOptions(fs, cache, sp, lg)
	if err := checkComparer(fs, dir, o); err != nil {
		return nil, err
	}
	db, err := openPebble(dir, o, sp, lg)
	if err != nil {
		if locked(err) {
			return nil, lockedError(dir, err)
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

// pebbleOptions returns the options of every store this package opens: a pinned format,
// settings tuned for the service's writes, and value separation for the records.
func pebbleOptions(fs vfs.FS, cache *pebble.Cache, sp *space, lg *logger) *pebble.Options {
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
		// rewrite less often (with pebble's defaults, compaction took a large share of
		// the CPU under a stream of adds), and a second compaction may run when the
		// first falls behind, as reads slow down with every file waiting in L0.
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
	return o
}

// locked reports whether err, from opening a store, says another process (or this one)
// holds the directory's lock.
func locked(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) || strings.Contains(err.Error(), "lock held by current process")
}

// lockedError is the ErrLocked error for dir, naming the process that holds it when its
// lock file says.
func lockedError(dir string, err error) error {
	by := "another process"
	if pid := lockHolder(filepath.Join(dir, "LOCK")); pid > 0 {
		by = fmt.Sprintf("process %d", pid)
	}
	return fmt.Errorf("%w: %s is open in %s (a running neardup serve?): stop it, or use another --data; to copy a store a service holds, run neardup backup against the service: %v", ErrLocked, dir, by, err)
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
