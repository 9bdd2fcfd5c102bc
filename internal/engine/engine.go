// Package engine is the storage engine under neardup.Detector: it keeps fingerprinted
// documents (api.Entry) in a store.Store, decides each one's verdict against those it
// holds, and keeps the in-memory accelerators of the store's postings. The root package
// is the façade over it: it fingerprints documents, fills in the options' defaults and
// hands the engine entries; the engine knows nothing of documents, HTML or options
// structs, and does not import the root package.
//
// An Engine is opened on a store with a Config (Open) and answers through a few methods:
// Check (check, and add), Get, Near, Remove, Expire, Len, Prescreen, PrescreenGen,
// BandCopy, BandPostings and Wait. Its files hold one concern each: the store's key namespaces
// and record format (record.go), the meta record (meta.go), the verdict and the add
// (check.go), the reads a verdict stands on (gather.go), the merge of writes made during
// an add's reads (merge.go), the band postings' accelerators and their move to the store
// (bands.go, bandtable.go, bandfilter.go), the record cache (recordcache.go), the key
// filter's refill (refill.go), a shared store's pre-screen snapshot (prescreen.go), and
// the reads and removals of the rest of the API (query.go).
//
// The root package's Detector documentation describes what the engine promises
// (verdicts, concurrency, durability); this package's comments say how.
package engine

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/hamming"
	"github.com/neardup/neardup/internal/keyfilter"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/store"
)

// ErrOptions is wrapped when a Config is out of range, or does not match the store's.
// neardup.ErrOptions is the same value.
var ErrOptions = errors.New("neardup: invalid options")

// Near is the near-duplicate rule (neardup.Near): which measures make two contents near.
type Near int

const (
	NearAny     Near = iota // either the SimHash distance or the MinHash similarity
	NearSimHash             // the SimHash distance alone
	NearMinHash             // the MinHash similarity alone
	NearBoth                // both
)

// Config is what an Engine needs of neardup.Options, every default filled in and every
// field in range (neardup.Options documents each field).
type Config struct {
	Near       Near
	Distance   int
	Threshold  float64
	MinHashK   int
	Seed       uint64
	MinWords   int
	NoSimHash  bool
	NoMinHash  bool
	Shingle    shingle.Options // written to the meta record, with the fields above
	MaxAge     time.Duration
	MaxMatches int
	Expected   int
	FilterRate float64
	// PrescreenRefresh is how old a shared engine's pre-screen snapshot may grow before
	// the next fill starts (sharedScreen); it must be positive on a shared store.
	PrescreenRefresh time.Duration
	BandMemory       int64
	Now              func() time.Time
	// Prefer is the keep policy: whether a survives rather than b.
	Prefer func(a, b api.Candidate) bool
	// Verify takes a MinHash candidate's similarity from the two entries' sketches when
	// both have one (compare), and bands for recall at the threshold (banding).
	Verify bool
}

// Engine is a detector's storage engine (see the package documentation). It is safe for
// concurrent use: Check reads the store outside any lock, then, under one mutex, merges
// in the writes made since its reads began (merge.go) and writes its batch; it waits for
// the store to make the write durable outside the mutex, so that concurrent adds share
// one fsync. Remove and Expire write under the mutex too; Get, Near and a Check that
// does not add only read.
type Engine struct {
	cfg   Config
	st    store.Store
	bands int
	rows  int
	// sim, bandIdx and bandKeys are in-memory accelerators of the store's postings,
	// rebuilt when the engine opens it: every stored SimHash by record id, the band
	// postings while they fit Config.BandMemory (nil when they did not at open), and a
	// filter of the band keys with postings in the store, which takes over when bandIdx
	// gives up; it is filled only once the store gets band postings (postsBands), as
	// filling it costs an add a few percent of its CPU. They assume the engine is its
	// store's only writer.
	sim      *hamming.Index
	bandIdx  *bandTable
	bandKeys *bandFilter
	recs     *recordCache // the records near-duplicate candidates read most
	// bandsStored reports that the store holds every band posting (its nsState marker
	// says so) and that writes keep them there. Until then bandIdx is their only copy,
	// rebuilt from the records at open, and writes leave them out of the store: most of
	// an add's keys. moving is set while moveBands writes them to the store, in the
	// background, once bandIdx outgrows its budget; writes keep them there meanwhile.
	// moveFailed is when the last failed move ended; the next waits moveRetry. All
	// three change under mu.
	bandsStored bool
	moving      bool
	moveFailed  time.Time
	moves       sync.WaitGroup // the background moves
	moveHook    func()         // if set, moveBands calls it at each record it reads; tests hold it there
	// shared reports a store other processes write too (store.Conditional, such as
	// Redis Cluster): the engine keeps no accelerator, reads every verdict's postings
	// from the store, and commits an add only if the document-id, URL, main-text and
	// band postings it read still hold (see conds).
	shared bool
	// perms are the permutations of a shared store's SimHash tables (nsSimTab), nil
	// when it finds near candidates by bands alone (Near minhash, or NoSimHash).
	perms []hamming.Permutation

	mu      sync.Mutex        // serializes writers from their merge to Write
	gen     uint64            // writes so far
	changes []change          // the last writes, up to maxChanges
	count   int               // documents stored
	filter  *keyfilter.Filter // the key filter; nil on a shared store, which keeps screen
	swept   time.Time         // when expiry last ran
	// refill holds the keys added while a larger key filter is filled from the store in
	// the background (nil when none is); refillFailed is when the last failed fill
	// ended, and the next waits moveRetry. Both change under mu.
	refill       *filterKeys
	refillFailed time.Time
	refills      sync.WaitGroup // the background fills
	refillHook   func()         // if set, a fill calls it at each key it reads; tests hold it there
	screen       sharedScreen   // a shared engine's pre-screen
	screenGen    atomic.Uint64  // bumped at each change of the pre-screen (PrescreenGen)
}

// Open returns an Engine over the documents in s with the config (see
// neardup.OpenDetector for what opening reads and costs), or an error wrapping
// ErrOptions when the config does not fit the store's meta record, or the store's error.
// A store.Conditional makes a shared engine (openShared).
func Open(s store.Store, c Config) (*Engine, error) {
	sim, err := hamming.NewIndex(hamming.IndexOptions{MaxDistance: c.Distance})
	if err != nil {
		return nil, fmt.Errorf("%w: Distance %d: %v", ErrOptions, c.Distance, err)
	}
	bands, rows, err := banding(c, c.Verify)
	if err != nil {
		return nil, err
	}
	d := &Engine{cfg: c, st: s, bands: bands, rows: rows, sim: sim, recs: newRecordCache()}
	if err := d.checkMeta(); err != nil {
		// A store keeps the banding it was made with: one made with verification on
		// (or off) opens with it off (or on) in its own banding.
		if !errors.Is(err, ErrOptions) {
			return nil, err
		}
		d.bands, d.rows, _ = banding(c, !c.Verify)
		if d.checkMeta() != nil {
			return nil, err
		}
	}
	if _, ok := s.(store.Conditional); ok {
		return d.openShared()
	}
	if err := s.IDs(nsState, bandsKey, func(uint64) bool { d.bandsStored = true; return false }); err != nil {
		return nil, storeErr(err)
	}
	if err := s.Postings(nsDoc, func([]byte, uint64) bool { d.count++; return true }); err != nil {
		return nil, storeErr(err)
	}
	if err := d.loadAccelerators(); err != nil {
		return nil, err
	}
	// Two keys a document (URL, main text), with room for as many again.
	if d.filter, err = d.fillFilter(max(c.Expected, 4*d.count)); err != nil {
		return nil, err
	}
	return d, nil
}

// verifyMiss is the chance that the bands of a verifying engine never make a candidate
// of a pair whose similarity is the threshold (lsh.RecallParams): verification removes
// the candidates below the threshold that more bands let in, so the bands are chosen
// for recall. At 0.8 and K = 128 it gives 15 bands of 7 rows.
const verifyMiss = 0.03

// banding returns the LSH bands and rows of a config, verifying or not. Without
// verification they are weighted 9 to 1 against misses: a pair at the threshold is
// found 87% of the time at the default threshold, and the estimate decides.
func banding(c Config, verify bool) (bands, rows int, err error) {
	bands, rows, err = lsh.Options{Threshold: c.Threshold, K: c.MinHashK, FPWeight: 0.1, FNWeight: 0.9}.Banding()
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	if verify {
		bands, rows = lsh.RecallParams(c.Threshold, verifyMiss, c.MinHashK)
	}
	return bands, rows, nil
}

// openShared finishes Open on a store that other processes write too: it reads
// nothing in full, so a replica is ready in the time of a few round trips. Near
// candidates come from the postings in the store alone (an in-memory SimHash index
// would hold only this process's documents): band postings, and SimHash table postings
// (nsSimTab) unless Near is minhash.
func (d *Engine) openShared() (*Engine, error) {
	if !d.cfg.NoSimHash && d.cfg.Near != NearMinHash {
		// Distance+3 blocks: tables of 3 blocks' prefix, about 30 bits at Distance 3,
		// so that a key holds about one document in a billion.
		k := max(d.cfg.Distance, 0)
		perms, err := hamming.Permutations(k+3, k)
		if err != nil || len(perms) > maxSimTables {
			return nil, fmt.Errorf("%w: Distance %d on a shared store needs %d SimHash tables (%v); use Distance 5 or less, or Near minhash", ErrOptions, d.cfg.Distance, len(perms), err)
		}
		d.perms = perms
	}
	d.shared = true
	d.sim = nil
	if o, ok := d.st.(store.Orderer); ok {
		// Expiry scans nsSeen up to a cutoff: in order, it reads no further.
		if err := o.Order(nsSeen); err != nil {
			return nil, storeErr(err)
		}
	}
	if err := d.st.IDs(nsState, bandsKey, func(uint64) bool { d.bandsStored = true; return false }); err != nil {
		return nil, storeErr(err)
	}
	if !d.bandsStored {
		var b store.Batch
		b.Add(nsState, bandsKey, 1)
		if err := d.st.Apply(&b); err != nil {
			return nil, storeErr(err)
		}
		d.bandsStored = true
	}
	// The first pre-screen snapshot is filled in the background: the replica is ready
	// meanwhile, and only a pre-screen request that comes before it is done waits.
	d.screen.mu.Lock()
	d.startFill()
	d.screen.mu.Unlock()
	return d, nil
}

// maxGroup bounds the stored documents of one exact-content key that a check reads: the
// matches and the survivor are chosen among the first maxGroup to arrive.
const maxGroup = 1024

// storeErr wraps an error of the store.
func storeErr(err error) error { return fmt.Errorf("neardup: store: %w", err) }

// storeErrOrNil wraps a non-nil error of the store.
func storeErrOrNil(err error) error {
	if err == nil {
		return nil
	}
	return storeErr(err)
}

// Len returns the number of stored documents. On a shared store that keeps counts
// (store.Counter) it is the store's count, which may lag by the last add of each other
// process; on another shared store, what this engine added less what it removed.
func (d *Engine) Len() int {
	if c, ok := d.st.(store.Counter); ok && d.shared {
		if n, err := c.Count(nsDoc); err == nil {
			return int(n)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.count
}

// BandCopy reports whether the engine keeps its in-memory copy of the band postings
// (see neardup.Options.BandMemory), and the bytes the copy takes.
func (d *Engine) BandCopy() (active bool, bytes int64) {
	return d.bandIdx.active(), d.bandIdx.size()
}

// BandPostings reports where the band postings are kept (see neardup.Options.BandMemory):
// "memory", only in the copy, which is rebuilt from the records at open; "moving", being
// written to the store, the copy answering meanwhile; "store", in the store.
func (d *Engine) BandPostings() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.bandsStored:
		return "store"
	case d.moving:
		return "moving"
	}
	return "memory"
}

// Wait waits for the background work under way (a move of the band postings to the
// store, a fill of a larger key filter) to end: a caller that closes the store calls it
// first, and tests call it to see the work done.
func (d *Engine) Wait() {
	d.moves.Wait()
	d.refills.Wait()
}
