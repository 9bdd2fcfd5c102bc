package neardup

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/neardup/neardup/hamming"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/simhash"
	"github.com/neardup/neardup/store"
)

// Entry is a fingerprinted document as a Detector takes it: what Fingerprinter makes of
// a Document, with the document's id and keep-policy fields.
type Entry struct {
	ID        string
	Priority  float64
	FetchTime time.Time
	// RawURL is the URL as the document gave it, when canonicalization changed it
	// (Fingerprints.URL is the canonical one, the dedup key); "" otherwise.
	RawURL string
	Fingerprints
}

// Stored is a document as a Detector keeps it.
type Stored struct {
	Entry
	// LastSeen is what MaxAge is measured from: the entry's FetchTime (never later than
	// when it was checked), or the last time a URL duplicate of it was checked.
	LastSeen time.Time
	// seq is the document's record id in the store: the order of arrival.
	seq uint64
}

func (r *Stored) candidate() Candidate {
	return Candidate{ID: r.ID, Priority: r.Priority, FetchTime: r.FetchTime, Seq: r.seq, Words: r.Words}
}

// Detector is the crawler's check-and-add: for each document it answers whether its
// URL, its exact content or nearly the same content has been seen, and which copy
// survives under the keep policy, and stores it for the documents that follow.
//
// A check goes URL, then exact, then near:
//
//  1. The canonical URL is stored: the same content (equal at some exact level, or
//     near) makes the document a URLDuplicate, which is not stored again (the stored
//     copy counts as seen now, for MaxAge); different content makes it Changed, and it
//     replaces the stored copy.
//  2. A stored document has the same main-text hash: ExactDuplicate, with the level
//     (raw, text, main) at which they first agree.
//  3. A stored document is near by SimHash distance and/or MinHash similarity
//     (Options.Near): NearDuplicate. Candidates come from Manku's permuted tables (every
//     fingerprint within Distance bits, exactly; package hamming) and from LSH bands
//     (weighted 9 to 1 against misses, so a pair at the threshold is found 87% of the
//     time at the defaults; package lsh), and each is checked against both measures
//     before it is reported.
//  4. Otherwise Unique.
//
// Every document but a URL duplicate is stored, duplicates included, so that later
// copies match all of them and the survivor can change when a better copy arrives. A
// document whose id is already stored replaces the stored one (it is never its own
// match).
//
// # Storage
//
// Everything lives in a store.Store: each document's Entry under a record id given in
// order of arrival, and postings from its keys to that id (see the package
// documentation, "The index in a store"). NewDetector keeps them in memory;
// OpenDetector takes a persistent store, and a detector reopened on it answers as before
// without fingerprinting anything again. Besides a count, a Detector keeps in memory what
// it rebuilds from the postings when it opens a store: the key filter (the pre-screen,
// about 1.2 bytes a key at 1%), which also spares checks the URL and exact lookups of
// keys it rules out (once full, it is replaced by one for twice its keys, which a
// goroutine fills from the store while adds go on); the SimHash tables (package hamming);
// a Bloom filter of the band keys; and a copy of the band postings while they fit
// Options.BandMemory, which is then their only copy, rebuilt from the records' signatures
// (see Options.BandMemory and the package Caveats).
//
// A Detector is safe for concurrent use, and concurrent adds give the verdicts of some
// order of them. Check fingerprints and reads the store outside any lock; then, under
// one mutex, an add merges in the writes made since its reads began (a document added
// meanwhile with the same main text or near content joins its matches; one that touches
// its id or URL, or removes what it read, makes it read again under the mutex) and
// writes its batch (store.Store.Write); it waits for the store to make the write durable
// (store.Store.Sync) outside the mutex, so that concurrent adds share one fsync. A
// verdict with Added true is returned only once the document is durable. Remove and
// Expire write under the mutex too. Peek, Near and Get only read, without the mutex:
// they see every write that has returned, durable or not yet.
type Detector struct {
	opt   Options
	fpr   *Fingerprinter
	st    store.Store
	bands int
	rows  int
	// sim, bandIdx and bandKeys are in-memory accelerators of the store's postings,
	// rebuilt when the detector opens it: every stored SimHash by record id, the band
	// postings while they fit Options.BandMemory (nil when they did not at open), and a
	// filter of the band keys with postings in the store, which takes over when bandIdx
	// gives up; it is filled only once the store gets band postings (postsBands), as
	// filling it costs an add a few percent of its CPU. They assume the detector is its
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
	moves       sync.WaitGroup // the background moves, for tests
	moveHook    func()         // if set, moveBands calls it at each record it reads; tests hold it there
	// shared reports a store other processes write too (store.Conditional, such as
	// Redis Cluster): the detector keeps no accelerator, reads every verdict's postings
	// from the store, and commits an add only if the document-id, URL, main-text and
	// band postings it read still hold (see conds).
	shared bool
	// perms are the permutations of a shared store's SimHash tables (nsSimTab), nil
	// when it finds near candidates by bands alone (Near minhash, or NoSimHash).
	perms []hamming.Permutation

	mu      sync.Mutex // serializes writers from their merge to Write
	gen     uint64     // writes so far
	changes []change   // the last writes, up to maxChanges
	count   int        // documents stored
	filter  *KeyFilter
	swept   time.Time // when expiry last ran
	// refill holds the keys added while a larger key filter is filled from the store in
	// the background (nil when none is); refillFailed is when the last failed fill
	// ended, and the next waits moveRetry. Both change under mu.
	refill       *filterKeys
	refillFailed time.Time
	refills      sync.WaitGroup // the background fills, for tests
	refillHook   func()         // if set, a fill calls it at each key it reads; tests hold it there
}

// filterKeys are the keys added to the key filter while its successor is filled.
type filterKeys struct {
	urls  []string
	exact []Hash
}

// Namespaces of a detector's postings in its store. They are persisted: never renumber.
const (
	nsDoc  store.Namespace = 1 // document id -> record id
	nsURL  store.Namespace = 2 // canonical URL -> record id
	nsMain store.Namespace = 3 // main-text hash (32 bytes) -> record ids
	nsSeen store.Namespace = 4 // last seen (seenKey) -> record ids
	nsFP   store.Namespace = 5 // SimHash (8 bytes, big-endian) -> record ids
	nsBand store.Namespace = 6 // LSH band key (8 bytes, big-endian) -> record ids
	// nsState holds markers of the store's state: bandsKey -> 1 once every band posting
	// is in the store.
	nsState store.Namespace = 7
	// nsSimTab is a shared store's SimHash index (the in-memory one of a store with one
	// writer would hold only its own process's documents): under each of the
	// permuted tables' keys (simTabKeys), the record ids.
	nsSimTab store.Namespace = 8
)

// bandsKey is the nsState key of the marker that the store holds every band posting.
var bandsKey = []byte("bands")

// metaID is the record id of the detector's meta record (detectorMeta); store.NextID
// never returns it.
const metaID = 0

// maxGroup bounds the stored documents of one exact-content key that a check reads: the
// matches and the survivor are chosen among the first maxGroup to arrive.
const maxGroup = 1024

// NewDetector returns an empty Detector with the options, keeping its index in memory
// (store.Memory), or an error wrapping ErrOptions naming the first field out of range.
// Its band postings are in memory already, so it keeps no copy of them unless
// Options.BandMemory asks for one.
func NewDetector(opt Options) (*Detector, error) {
	if opt.BandMemory == 0 {
		opt.BandMemory = -1
	}
	return OpenDetector(store.NewMemory(), opt)
}

// OpenDetector returns a Detector over the documents in s, which it reads (not the
// documents: their stored fingerprints), adding the ones it checks. A store is made with
// one set of the options that shape its keys (Distance, Threshold, MinHashK, Seed,
// Shingle): opening it with others is an error wrapping ErrOptions that names both, as
// is any option out of range; the other options may change between openings. Opening
// costs a pass over the stored URL and exact keys to fill the key filter: about a second
// per million documents on disk. The caller keeps s: closing the Detector is closing s,
// after the last call to it returns.
//
// A store that other processes write too (a store.Conditional, such as package
// store/redisstore's) makes a shared detector: it reads nothing in full when it opens,
// keeps no in-memory index, reads each verdict's postings from the store (in one call
// when s is a store.MultiReader), and commits each add only if the postings it decided
// on still hold, reading again otherwise; so detectors in many processes give the
// verdicts of some order of their adds. It finds near candidates by the band postings
// and, unless Near is minhash, by SimHash postings under permuted-table keys (Distance
// 3: 20 tables), which cost an add that many more postings. Prescreen scans the store.
func OpenDetector(s store.Store, opt Options) (*Detector, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if (o.NoSimHash && o.Near != NearMinHash) || (o.NoMinHash && o.Near != NearSimHash) {
		return nil, fmt.Errorf("%w: Near %v needs the fingerprint that NoSimHash or NoMinHash leaves out", ErrOptions, o.Near)
	}
	fpr, err := NewFingerprinter(opt)
	if err != nil {
		return nil, err
	}
	sim, err := hamming.NewIndex(hamming.IndexOptions{MaxDistance: o.Distance})
	if err != nil {
		return nil, fmt.Errorf("%w: Distance %d: %v", ErrOptions, o.Distance, err)
	}
	bands, rows, err := lsh.Options{Threshold: o.Threshold, K: o.MinHashK, FPWeight: 0.1, FNWeight: 0.9}.Banding()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	d := &Detector{opt: o, fpr: fpr, st: s, bands: bands, rows: rows, sim: sim, recs: newRecordCache()}
	if err := d.checkMeta(); err != nil {
		return nil, err
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
	if d.filter, err = d.fillFilter(max(o.Expected, 4*d.count)); err != nil {
		return nil, err
	}
	return d, nil
}

// openShared finishes OpenDetector on a store that other processes write too: it reads
// nothing in full, so a replica is ready in the time of a few round trips. Near
// candidates come from the postings in the store alone (an in-memory SimHash index
// would hold only this process's documents): band postings, and SimHash table postings
// (nsSimTab) unless Near is minhash.
func (d *Detector) openShared() (*Detector, error) {
	if !d.opt.NoSimHash && d.opt.Near != NearMinHash {
		// Distance+3 blocks: tables of 3 blocks' prefix, about 30 bits at Distance 3,
		// so that a key holds about one document in a billion.
		k := max(d.opt.Distance, 0)
		perms, err := hamming.Permutations(k+3, k)
		if err != nil || len(perms) > maxSimTables {
			return nil, fmt.Errorf("%w: Distance %d on a shared store needs %d SimHash tables (%v); use Distance 5 or less, or Near minhash", ErrOptions, d.opt.Distance, len(perms), err)
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
	var err error
	if d.filter, err = NewKeyFilter(max(d.opt.Expected, 1), d.opt.FilterRate); err != nil {
		return nil, err
	}
	return d, nil
}

// maxSimTables bounds the SimHash tables of a shared store: each is a posting an add
// writes and a check reads.
const maxSimTables = 64

// simTabKeys returns the nsSimTab keys of an entry on a shared store: for each table,
// its number and the table's prefix of the permuted SimHash; none when the detector
// keeps no SimHash tables or the entry is not indexed.
func (d *Detector) simTabKeys(e *Entry) [][]byte {
	if d.perms == nil || !d.indexed(e) {
		return nil
	}
	keys := make([][]byte, len(d.perms))
	for i, p := range d.perms {
		keys[i] = binary.BigEndian.AppendUint64([]byte{byte(i)}, p.Apply(e.SimHash)&p.SearchMask())
	}
	return keys
}

// detectorMeta is the meta record of a detector's store: the options that shape its
// keys and postings, which a store keeps for life.
type detectorMeta struct {
	Format      int      `json:"format"`
	Distance    int      `json:"distance"`
	Bands       int      `json:"bands"`
	Rows        int      `json:"rows"`
	MinHashK    int      `json:"minhash_k"`
	Seed        uint64   `json:"seed"`
	MinWords    int      `json:"min_words"`
	NoSimHash   bool     `json:"no_simhash,omitempty"`
	NoMinHash   bool     `json:"no_minhash,omitempty"`
	Unit        string   `json:"unit"`
	K           int      `json:"k"`
	Normalize   string   `json:"normalize"`
	StopWords   []string `json:"stop_words,omitempty"`
	ShingleSeed uint64   `json:"shingle_seed"`
	SampleMod   uint64   `json:"sample_mod,omitempty"`
}

// metaMagic starts the meta record; metaFormat is the version of the detector's layout
// of keys and records. Format 1 stores kept every band posting; format 2 ones keep them
// once the nsState marker says so, and a format 1 store becomes a format 2 one with the
// marker when it is opened.
const (
	metaMagic  = "NDDETECT"
	metaFormat = 2
)

func (d *Detector) meta() detectorMeta {
	o, sh := &d.opt, &d.opt.Shingle
	unit, _ := sh.Unit.MarshalText()
	return detectorMeta{
		Format: metaFormat, Distance: o.Distance, Bands: d.bands, Rows: d.rows,
		MinHashK: o.MinHashK, Seed: o.Seed, MinWords: o.MinWords,
		NoSimHash: o.NoSimHash, NoMinHash: o.NoMinHash,
		Unit: string(unit), K: sh.K,
		Normalize: fmt.Sprintf("case=%t punct=%t accents=%t nfkc=%t cjk=%t numbers=%t stop=%t",
			!sh.KeepCase, !sh.KeepPunct, !sh.KeepAccents, !sh.NoNFKC, !sh.NoCJK, sh.MaskNumbers, sh.RemoveStopWords),
		StopWords: sh.StopWords, ShingleSeed: sh.Seed, SampleMod: sh.SampleMod,
	}
}

// checkMeta writes the meta record of an empty store, or compares the store's with the
// detector's options, bringing a format 1 store to format 2.
func (d *Detector) checkMeta() error {
	m := d.meta()
	want, err := json.Marshal(m)
	if err != nil {
		return err
	}
	want = append([]byte(metaMagic), want...)
	rec, ok, err := d.st.Record(metaID)
	if err != nil {
		return storeErr(err)
	}
	if !ok {
		var b store.Batch
		b.PutRecord(metaID, want)
		return storeErrOrNil(d.st.Apply(&b))
	}
	m.Format = 1
	old, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if bytes.Equal(rec, append([]byte(metaMagic), old...)) {
		var b store.Batch
		b.PutRecord(metaID, want)
		b.Add(nsState, bandsKey, 1)
		return storeErrOrNil(d.st.Apply(&b))
	}
	if !bytes.Equal(rec, want) {
		if !bytes.HasPrefix(rec, []byte(metaMagic)) {
			return fmt.Errorf("%w: the store holds no detector (no meta record); use an empty store", ErrOptions)
		}
		return fmt.Errorf("%w: the store was made with the options %s, these give %s: open it with the options it was made with, or use a new store",
			ErrOptions, rec[len(metaMagic):], want[len(metaMagic):])
	}
	return nil
}

// loadAccelerators fills sim from the SimHash postings, and the band filter and copy
// from the band postings or, when the store does not hold them, from the records. When
// the copy cannot hold them, it first writes them to the store.
func (d *Detector) loadAccelerators() error {
	var ids, fps []uint64
	flush := func() {
		d.sim.AddBatch(ids, fps)
		ids, fps = ids[:0], fps[:0]
	}
	err := d.st.Postings(nsFP, func(key []byte, seq uint64) bool {
		if len(key) == 8 {
			ids, fps = append(ids, seq), append(fps, binary.BigEndian.Uint64(key))
			if len(ids) == 1<<16 {
				flush()
			}
		}
		return true
	})
	if err != nil {
		return storeErr(err)
	}
	flush()
	d.newBands()
	if !d.bandsStored {
		if err := d.loadBandsFromRecords(); err != nil || !d.bandsStored {
			return err
		}
		// The store holds them now: load them as from any such store.
		d.newBands()
	}
	var keys, seqs []uint64
	add := func() {
		d.bandKeys.add(keys)
		d.bandIdx.addPostings(keys, seqs)
		keys, seqs = keys[:0], seqs[:0]
	}
	err = d.st.Postings(nsBand, func(key []byte, seq uint64) bool {
		if len(key) == 8 {
			keys, seqs = append(keys, binary.BigEndian.Uint64(key)), append(seqs, seq)
			if len(keys) == 1<<16 {
				add()
			}
		}
		return true
	})
	add()
	return storeErrOrNil(err)
}

// newBands gives the detector an empty band filter, with room for a quarter more
// documents (past it the filter grows by a layer), and a band copy sized for its
// documents, or none when they would not fit Options.BandMemory.
func (d *Detector) newBands() {
	d.bandKeys = newBandFilter(uint(d.bands * max(d.count, d.opt.Expected) * 5 / 4))
	d.bandIdx = newBandTable(d.opt.BandMemory, d.bands*d.count)
}

// loadBandsFromRecords fills a copy that keeps its postings from the band keys of the
// stored records' signatures. When the copy cannot hold them, it writes them to the
// store instead (moveBands) and sets bandsStored.
func (d *Detector) loadBandsFromRecords() error {
	if d.bandIdx != nil {
		d.bandIdx.keep = true
		var keys, seqs []uint64
		err := d.recordBands(func(seq uint64, ks []uint64) bool {
			keys = append(keys, ks...)
			for range ks {
				seqs = append(seqs, seq)
			}
			if len(keys) >= 1<<16 {
				d.bandIdx.addPostings(keys, seqs)
				keys, seqs = keys[:0], seqs[:0]
			}
			return !d.bandIdx.isOver()
		})
		d.bandIdx.addPostings(keys, seqs)
		if err != nil {
			return err
		}
		if !d.bandIdx.isOver() {
			return nil
		}
	}
	return d.storeBands()
}

// storeBands moves the band postings to the store now (moveBands), then records that
// the store holds them and drops the copy.
func (d *Detector) storeBands() error {
	if err := d.moveBands(); err != nil {
		return err
	}
	d.bandsMoved()
	return nil
}

// bandsMoved records that the store holds every band posting, and drops the copy.
func (d *Detector) bandsMoved() {
	d.bandsStored = true
	d.bandIdx.stop()
}

// recordBands calls fn with the band keys of every stored document, in record id order,
// until fn returns false, decoding the records as they were when it started.
func (d *Detector) recordBands(fn func(seq uint64, keys []uint64) bool) error {
	var failed error
	err := d.st.Records(func(seq uint64, rec []byte) bool {
		if seq == metaID {
			return true
		}
		var r Stored
		if failed = r.unmarshalRecord(rec); failed != nil {
			failed = fmt.Errorf("neardup: record %d: %w", seq, failed)
			return false
		}
		return fn(seq, d.bandKeysOf(&r.Entry))
	})
	if err != nil {
		return storeErr(err)
	}
	return failed
}

// moveChunk is how many band postings moveBands writes in one batch.
const moveChunk = 1 << 14

// moveBands writes the band postings of every stored document to the store, and their
// keys to the band filter, makes them durable, then marks the store as holding them
// all. Writes made meanwhile must keep their own band postings in the store (d.moving),
// as it sees the records as they were when it started; it may write postings of
// documents removed meanwhile, which the checks skip, as they find no record. It runs
// without d.mu.
func (d *Detector) moveBands() error {
	var b store.Batch
	var failed error
	err := d.recordBands(func(seq uint64, keys []uint64) bool {
		if d.moveHook != nil {
			d.moveHook()
		}
		for _, k := range keys {
			b.Add(nsBand, be64(k), seq)
		}
		d.bandKeys.add(keys)
		if b.Len() >= moveChunk {
			if failed = d.st.Write(&b); failed != nil {
				return false
			}
			b.Reset()
		}
		return true
	})
	if err == nil && failed != nil {
		err = storeErr(failed)
	}
	if err != nil {
		return err
	}
	b.Add(nsState, bandsKey, 1)
	// Apply syncs the log, which makes every earlier Write durable before the marker.
	return storeErrOrNil(d.st.Apply(&b))
}

// moveRetry is how long after a failed move of the band postings the next may start.
const moveRetry = time.Minute

// startMove starts moving the band postings to the store in the background, once the
// copy has outgrown its budget; d.mu is held.
func (d *Detector) startMove() {
	if d.bandsStored || d.moving || !d.bandIdx.isOver() || time.Since(d.moveFailed) < moveRetry {
		return
	}
	d.moving = true
	d.moves.Add(1)
	go func() {
		defer d.moves.Done()
		err := d.moveBands()
		d.mu.Lock()
		defer d.mu.Unlock()
		d.moving = false
		if err != nil {
			d.moveFailed = time.Now()
			return
		}
		d.bandsMoved()
	}()
}

// postsBands reports whether writes put band postings in the store; d.mu is held.
func (d *Detector) postsBands() bool { return d.bandsStored || d.moving }

// storeErr wraps an error of the store.
func storeErr(err error) error { return fmt.Errorf("neardup: store: %w", err) }

// Fingerprinter returns the Fingerprinter the detector uses, for callers that
// fingerprint documents themselves and call CheckEntry.
func (d *Detector) Fingerprinter() *Fingerprinter { return d.fpr }

// Options returns the detector's options with every default filled in.
func (d *Detector) Options() Options { return d.opt }

// Check fingerprints the document, decides its verdict against the stored documents and
// stores it (see Detector). It returns an error for a document that cannot be
// fingerprinted, and then stores nothing, or the store's error.
func (d *Detector) Check(doc Document) (Verdict, error) {
	fp, err := d.fpr.Fingerprint(doc)
	if err != nil {
		return Verdict{}, err
	}
	return d.CheckEntry(entryOf(&doc, fp), true)
}

// Peek is Check without storing anything: the verdict the document would get now.
func (d *Detector) Peek(doc Document) (Verdict, error) {
	fp, err := d.fpr.Fingerprint(doc)
	if err != nil {
		return Verdict{}, err
	}
	return d.CheckEntry(entryOf(&doc, fp), false)
}

// CheckEntry decides the verdict of an already fingerprinted document and, when add is
// true, stores it. Its fingerprints must come from this detector's Fingerprinter (or
// one with the same options); a signature of another size is treated as having no
// near-duplicates. A priority that is NaN, which no keep policy can order, is an error
// wrapping ErrDocument; any other error is the store's. A verdict with Added true is
// durable.
func (d *Detector) CheckEntry(e Entry, add bool) (Verdict, error) {
	if math.IsNaN(e.Priority) {
		return Verdict{}, errNaNPriority(e.ID)
	}
	now := d.opt.Now()
	if e.FetchTime.IsZero() {
		// Before the peek too: the keep policy orders by fetch time, and a peek must
		// name the survivor an add would.
		e.FetchTime = now
	}
	if !add {
		d.mu.Lock()
		h := d.hints(&e)
		d.mu.Unlock()
		p, err := d.gather(&e, h)
		if err != nil {
			return Verdict{}, err
		}
		return d.verdict(&e, &p), nil
	}
	if d.shared {
		return d.sharedAdd(&e, now)
	}
	// The reads go without the lock; under it, the changes made meanwhile are merged
	// in (or, when they touch what the reads found, the reads are made again).
	d.mu.Lock()
	gen, h := d.gen, d.hints(&e)
	d.mu.Unlock()
	p, err := d.gather(&e, h)
	if err != nil {
		return Verdict{}, err
	}
	d.mu.Lock()
	v, wrote, err := d.commitAdd(&e, now, gen, p)
	d.mu.Unlock()
	if err == nil && wrote {
		if err = d.st.Sync(); err != nil {
			err = storeErr(err)
		}
	}
	if err != nil {
		return Verdict{}, err
	}
	return v, nil
}

// maxConflicts bounds how often an add on a shared store reads again after a conflict;
// each conflict means another process added a document with the same id, URL or main
// text meanwhile, so a few suffice unless one key is hammered.
const maxConflicts = 64

// conds returns the conditions of an add of e on a shared store: the postings of its
// document id, URL and main text hold what gather read (the main text's only when it
// read them all: past maxGroup the verdict is a duplicate whichever copies are read).
// With them, of two processes adding the same URL or content at once, one commits and
// the other reads again and finds it.
func (d *Detector) conds(e *Entry, p *plan) []store.Cond {
	cs := []store.Cond{{Namespace: nsDoc, Key: []byte(e.ID), IDs: p.docIDs}}
	if e.URL != "" {
		cs = append(cs, store.Cond{Namespace: nsURL, Key: []byte(e.URL), IDs: p.urlIDs})
	}
	if p.mainAll {
		cs = append(cs, store.Cond{Namespace: nsMain, Key: e.Main[:], IDs: p.mainIDs})
	}
	for _, b := range p.bands {
		cs = append(cs, store.Cond{Namespace: b.ns, Key: b.key, IDs: b.ids})
	}
	return cs
}

// sharedAdd is CheckEntry's add on a shared store. It takes no lock of the process
// around its reads and write: the conditions of the write (conds) order it with every
// other add, of this process or another, that touched what it read. On a conflict it
// reads again and decides again, as if it had come after the other add.
func (d *Detector) sharedAdd(e *Entry, now time.Time) (Verdict, error) {
	d.mu.Lock()
	err := d.sweep(now)
	d.mu.Unlock()
	if err != nil {
		return Verdict{}, err
	}
	mr, multi := d.st.(store.MultiReader)
	for try := 0; ; try++ {
		var p plan
		if multi {
			p, err = d.gatherMany(e, mr)
		} else {
			p, err = d.gather(e, d.hints(e))
		}
		if err != nil {
			return Verdict{}, err
		}
		v, _, err := d.commitAdd(e, now, 0, p)
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, store.ErrConflict) || try == maxConflicts {
			return Verdict{}, err
		}
	}
}

// plan is what gather found for an entry: the stored document with its id (which an add
// replaces), the one with its URL (seen: the same content, a URL duplicate; replaced:
// other content, which an add replaces), and the stored documents with the same main
// text or, when there are none, near content.
type plan struct {
	self, seen, replaced *Stored
	exact, near          []*Stored
	// docIDs, urlIDs and mainIDs are the ids gather read under the entry's document id,
	// URL and main text (mainAll: all of them): on a shared store, an add is committed
	// only if those postings still hold them.
	docIDs, urlIDs, mainIDs []uint64
	mainAll                 bool
	// bands are the band postings nearStored read, on a shared store: an add is
	// committed only if they still hold, so that of two near copies added at once
	// through two processes, the second reads again and finds the first (they share a
	// band key whenever either would find the other).
	bands []bandRead
}

// bandRead is a near-candidate posting (a band, or a SimHash table on a shared store)
// and the ids read under it.
type bandRead struct {
	ns  store.Namespace
	key []byte
	ids []uint64
}

// skip reports whether seq is the stored document an add replaces (by its id or its
// URL), which is no match of its own replacement.
func (p *plan) skip(seq uint64) bool {
	return (p.self != nil && seq == p.self.seq) || (p.replaced != nil && seq == p.replaced.seq)
}

// byURL records in p what the stored document old, holding e's URL, is to e: the same
// content (seen: a URL duplicate, and the verdict needs nothing more, so it returns true)
// or other content, which an add replaces. old may be nil.
func (d *Detector) byURL(e *Entry, p *plan, old *Stored) bool {
	if old == nil {
		return false
	}
	if m := d.compare(e, old); m.Level != LevelNone || d.near(m, d.opt.Near) {
		p.seen = old
		return true
	}
	p.replaced = old
	return false
}

// change is one write of the detector, kept for the adds whose reads ran meanwhile.
type change struct {
	added   *Stored
	removed []*Stored
}

// maxChanges is how many changes the detector keeps: an add whose reads overlapped more
// writes than that reads again under the lock.
const maxChanges = 1024

// logChange records a write; d.mu is held.
func (d *Detector) logChange(c change) {
	d.gen++
	if len(d.changes) == maxChanges {
		copy(d.changes, d.changes[1:])
		d.changes = d.changes[:maxChanges-1]
	}
	d.changes = append(d.changes, c)
}

// since returns the changes made after generation gen, or false when they are no longer
// all kept; d.mu is held.
func (d *Detector) since(gen uint64) ([]change, bool) {
	n := d.gen - gen
	if n > uint64(len(d.changes)) {
		return nil, false
	}
	return d.changes[uint64(len(d.changes))-n:], true
}

// commitAdd finishes CheckEntry's add under d.mu, given the plan read at generation gen;
// wrote reports a Write to Sync. On a shared store it runs without d.mu (sharedAdd),
// taking it only to count.
func (d *Detector) commitAdd(e *Entry, now time.Time, gen uint64, p plan) (v Verdict, wrote bool, err error) {
	if d.shared {
		// sharedAdd swept.
	} else if err := d.sweep(now); err != nil {
		return v, false, err
	}
	if d.gen != gen && !d.shared {
		if cs, ok := d.since(gen); !ok || !d.merge(e, &p, cs) {
			if p, err = d.gather(e, d.hints(e)); err != nil {
				return v, false, err
			}
		}
	}
	v = d.verdict(e, &p)
	var b store.Batch
	if p.seen != nil {
		// A URL duplicate: the stored copy counts as seen now. It is not acknowledged as
		// a write (Added is false), so it becomes durable with the next Sync. Its record
		// is read again: another URL duplicate may have moved its last-seen time since.
		seen, err := d.load(p.seen.seq)
		if err != nil || seen == nil {
			return v, false, err
		}
		if t := seenAt(e.FetchTime, now); t.After(seen.LastSeen) {
			b.Remove(nsSeen, seenKey(seen.LastSeen), seen.seq)
			seen.LastSeen = t
			b.Add(nsSeen, seenKey(t), seen.seq)
			b.PutRecord(seen.seq, seen.appendRecord(nil))
			err := d.st.Write(&b)
			d.recs.drop(seen.seq)
			if err != nil {
				return v, false, storeErr(err)
			}
		}
		return v, false, nil
	}
	var old []*Stored // the distinct stored documents the entry replaces
	for _, r := range []*Stored{p.replaced, p.self} {
		if r != nil && !slices.ContainsFunc(old, func(o *Stored) bool { return o.seq == r.seq }) {
			old = append(old, r)
		}
	}
	for _, r := range old {
		d.removeOps(&b, r)
	}
	seq, err := d.st.NextID()
	if err != nil {
		return v, false, storeErr(err)
	}
	if !d.bandsStored && seq > math.MaxUint32 {
		// The copy cannot hold this id, so the store must hold the band postings before
		// the document is added: a move now, under the lock (once in 4 billion adds).
		if err := d.storeBands(); err != nil {
			return v, false, err
		}
	}
	r := &Stored{Entry: *e, LastSeen: seenAt(e.FetchTime, now), seq: seq}
	bandKeys := d.putOps(&b, r)
	if d.shared {
		err = d.st.(store.Conditional).ApplyIf(&b, d.conds(e, &p))
	} else {
		err = d.st.Write(&b)
	}
	if err != nil {
		return v, false, storeErr(err)
	}
	for _, o := range old {
		d.unindex(o)
	}
	if d.shared {
		d.mu.Lock()
		d.count += 1 - len(old)
		d.mu.Unlock()
		v.Added = true
		return v, true, nil
	}
	d.index(r, bandKeys)
	d.count += 1 - len(old)
	d.logChange(change{added: r, removed: old})
	d.addKeys(e.URL, e.Main)
	v.Added = true
	return v, true, nil
}

// merge brings a plan up to date with changes made after its reads, as if the reads had
// come after them: added documents with the entry's main text or near content join its
// matches. It reports false when a change touches what the plan stands on (a document
// with the entry's id or URL was added, or one the plan holds was removed): the plan
// must be read again.
func (d *Detector) merge(e *Entry, p *plan, cs []change) bool {
	holds := func(seq uint64) bool {
		has := func(r *Stored) bool { return r.seq == seq }
		return (p.self != nil && p.self.seq == seq) || (p.seen != nil && p.seen.seq == seq) ||
			(p.replaced != nil && p.replaced.seq == seq) ||
			slices.ContainsFunc(p.exact, has) || slices.ContainsFunc(p.near, has)
	}
	mine := func(r *Stored) bool { return r.ID == e.ID || (e.URL != "" && r.URL == e.URL) }
	for _, c := range cs {
		for _, r := range c.removed {
			if holds(r.seq) || mine(r) {
				return false
			}
		}
		a := c.added
		if a == nil || p.seen != nil {
			continue
		}
		if mine(a) {
			return false
		}
		switch {
		case holds(a.seq):
			// The reads saw it already.
		case a.Main == e.Main && !e.Main.Empty():
			if len(p.exact) < maxGroup {
				p.exact = append(p.exact, a)
			}
		case len(p.exact) == 0 && d.indexed(e) && d.indexed(&a.Entry) && d.near(d.compare(e, a), d.opt.Near):
			p.near = append(p.near, a)
		}
	}
	return true
}

// keyHints says which of an entry's keys the key filter may hold. One it rules out has
// no postings, as the filter holds every stored URL and main-text hash (and never
// forgets one), so gather does not look it up: a new document's two lookups are most of
// its reads.
type keyHints struct{ url, main bool }

// hints returns the key filter's hints for e; d.mu is held. The filter holds the keys of
// every write logged so far, so an add that takes its hints with its generation misses
// no key but those of later writes, which it merges or reads again.
func (d *Detector) hints(e *Entry) keyHints {
	if d.shared {
		// Other processes add keys this filter never sees.
		return keyHints{url: e.URL != "", main: !e.Main.Empty()}
	}
	return keyHints{url: e.URL != "" && d.filter.HasURL(e.URL), main: !e.Main.Empty() && d.filter.HasExact(e.Main)}
}

// gather reads what the verdict of e depends on (see plan), given the key filter's hints.
func (d *Detector) gather(e *Entry, h keyHints) (plan, error) {
	var p plan
	self, ids, err := d.byKeyIDs(nsDoc, []byte(e.ID))
	if err != nil {
		return p, err
	}
	p.self, p.docIDs = self, ids

	// 1. The URL.
	if h.url {
		old, ids, err := d.byKeyIDs(nsURL, []byte(e.URL))
		if err != nil {
			return p, err
		}
		p.urlIDs = ids
		if d.byURL(e, &p, old) {
			return p, nil
		}
	}
	skip := p.skip

	// 2 and 3. Exact, then near.
	if h.main {
		var loadErr error
		p.mainAll = true
		err = d.st.IDs(nsMain, e.Main[:], func(seq uint64) bool {
			p.mainIDs = append(p.mainIDs, seq)
			if skip(seq) {
				return true
			}
			r, err := d.load(seq)
			if err != nil {
				loadErr = err
				return false
			}
			if r != nil {
				p.exact = append(p.exact, r)
			}
			if len(p.exact) < maxGroup {
				return true
			}
			p.mainAll = false
			return false
		})
		if err = cmp.Or(loadErr, storeErrOrNil(err)); err != nil {
			return p, err
		}
	}
	if len(p.exact) == 0 {
		var bands *[]bandRead
		if d.shared {
			bands = &p.bands
		}
		p.near, err = d.nearStored(e, d.opt.Near, skip, bands)
	}
	return p, err
}

// gatherMany is gather on a shared store that reads many postings at once: every
// posting the verdict may need (document id, URL, main text, band keys) in one call,
// then every record among them not in the record cache in another, so that a verdict
// waits for two round trips to Redis, not one for each key and candidate. It reads
// more than gather when the URL or main text decides (the band postings and their
// records), and finds the same plan.
func (d *Detector) gatherMany(e *Entry, mr store.MultiReader) (plan, error) {
	var p plan
	keys := []store.Key{{Namespace: nsDoc, Key: []byte(e.ID)}, {Namespace: nsMain, Key: e.Main[:]}}
	if e.URL != "" {
		keys = append(keys, store.Key{Namespace: nsURL, Key: []byte(e.URL)})
	}
	var bands []uint64
	if d.indexed(e) && d.opt.Near != NearSimHash && len(e.MinHash) == d.opt.MinHashK {
		bands = lsh.AppendBandKeys(nil, e.MinHash, d.bands, d.rows)
	}
	for _, k := range bands {
		keys = append(keys, store.Key{Namespace: nsBand, Key: be64(k)})
	}
	if d.opt.Near != NearMinHash {
		for _, k := range d.simTabKeys(e) {
			keys = append(keys, store.Key{Namespace: nsSimTab, Key: k})
		}
	}
	ids, err := mr.IDsMany(keys)
	if err != nil {
		return p, storeErr(err)
	}
	p.docIDs, p.mainIDs = ids[0], ids[1]
	bandIDs := ids[2:]
	if e.URL != "" {
		p.urlIDs, bandIDs = ids[2], ids[3:]
	}

	// Every record the plan may look at, from the cache or in one read.
	recs := map[uint64]*Stored{}
	var want []uint64
	var epochs []uint64
	need := func(seq uint64) {
		if _, ok := recs[seq]; ok {
			return
		}
		r, epoch := d.recs.get(seq)
		recs[seq] = r
		if r == nil {
			want, epochs = append(want, seq), append(epochs, epoch)
		}
	}
	if len(p.docIDs) > 0 {
		need(p.docIDs[0])
	}
	if len(p.urlIDs) > 0 {
		need(p.urlIDs[0])
	}
	for i, seq := range p.mainIDs {
		if i == maxGroup+2 { // self and replaced may be among them
			break
		}
		need(seq)
	}
	for _, b := range bandIDs {
		for _, seq := range b {
			need(seq)
		}
	}
	if len(want) > 0 {
		got, ok, err := mr.RecordsMany(want)
		if err != nil {
			return p, storeErr(err)
		}
		for i, seq := range want {
			if !ok[i] {
				continue
			}
			r := &Stored{seq: seq}
			if err := r.unmarshalRecord(got[i]); err != nil {
				return p, fmt.Errorf("neardup: record %d: %w", seq, err)
			}
			recs[seq] = r
			d.recs.put(seq, r, epochs[i])
		}
	}

	if len(p.docIDs) > 0 {
		p.self = recs[p.docIDs[0]]
	}
	// 1. The URL.
	if len(p.urlIDs) > 0 && d.byURL(e, &p, recs[p.urlIDs[0]]) {
		return p, nil
	}
	skip := p.skip
	// 2. Exact: an empty main text is a duplicate of nothing.
	p.mainAll = true
	mainIDs := p.mainIDs
	if e.Main.Empty() {
		mainIDs = nil
	}
	for _, seq := range mainIDs {
		if len(p.exact) == maxGroup {
			p.mainAll = false
			break
		}
		if r := recs[seq]; r != nil && !skip(seq) {
			p.exact = append(p.exact, r)
		}
	}
	if len(p.exact) > 0 {
		return p, nil
	}
	// 3. Near, by the band postings.
	seen := map[uint64]bool{}
	for i, b := range bandIDs {
		k := keys[len(keys)-len(bandIDs)+i]
		p.bands = append(p.bands, bandRead{ns: k.Namespace, key: k.Key, ids: b})
		for _, seq := range b {
			if seen[seq] || skip(seq) {
				continue
			}
			seen[seq] = true
			if r := recs[seq]; r != nil && d.near(d.compare(e, r), d.opt.Near) {
				p.near = append(p.near, r)
			}
		}
	}
	return p, nil
}

// verdict returns the verdict of e given its plan.
func (d *Detector) verdict(e *Entry, p *plan) Verdict {
	v := Verdict{ID: e.ID, URL: e.URL, RawURL: e.RawURL, Survivor: e.ID}
	if p.seen != nil {
		m := d.compare(e, p.seen)
		m.Kind = URLDuplicate
		v.Kind, v.Matches, v.Survivor = URLDuplicate, []Match{m}, p.seen.ID
		return v
	}
	if p.replaced != nil {
		// A changed document's matches are reported too, after the one it replaces.
		m := d.compare(e, p.replaced)
		m.Kind = URLDuplicate
		v.Kind, v.Matches = Changed, []Match{m}
	}
	found, kind := p.exact, ExactDuplicate
	if len(found) == 0 {
		// A copy with the same main text can reach the near list without the exact one:
		// added between an add's two reads, it is found by the second. It is exact.
		for _, r := range p.near {
			if r.Main == e.Main {
				found = append(found, r)
			}
		}
	}
	if len(found) == 0 {
		found, kind = p.near, NearDuplicate
	}
	if v.Kind == Unique && len(found) > 0 {
		v.Kind = kind
	}
	best := e.pending()
	start := len(v.Matches)
	for _, r := range found {
		m := d.compare(e, r)
		m.Kind = kind
		v.Matches = append(v.Matches, m)
		if c := r.candidate(); d.opt.Keep.Prefer(c, best) {
			best = c
		}
	}
	v.Survivor = best.ID
	slices.SortFunc(v.Matches[start:], compareMatches)
	if len(v.Matches) > d.opt.MaxMatches {
		v.Matches = v.Matches[:d.opt.MaxMatches]
	}
	return v
}

// storeErrOrNil wraps a non-nil error of the store.
func storeErrOrNil(err error) error {
	if err == nil {
		return nil
	}
	return storeErr(err)
}

// byKey returns the stored document posted under (ns, key) for a namespace with at most
// one (nsDoc, nsURL), or nil.
func (d *Detector) byKey(ns store.Namespace, key []byte) (*Stored, error) {
	r, _, err := d.byKeyIDs(ns, key)
	return r, err
}

// byKeyIDs is byKey that also returns every id posted under the key: one, or on a
// shared store, more while a race is being settled.
func (d *Detector) byKeyIDs(ns store.Namespace, key []byte) (*Stored, []uint64, error) {
	var ids []uint64
	if err := d.st.IDs(ns, key, func(id uint64) bool { ids = append(ids, id); return d.shared }); err != nil {
		return nil, nil, storeErr(err)
	}
	if len(ids) == 0 {
		return nil, nil, nil
	}
	r, err := d.load(ids[0])
	return r, ids, err
}

// load returns the stored document with the record id, or nil when there is none.
func (d *Detector) load(seq uint64) (*Stored, error) {
	rec, ok, err := d.st.Record(seq)
	if err != nil {
		return nil, storeErr(err)
	}
	if !ok {
		return nil, nil
	}
	r := &Stored{seq: seq}
	if err := r.unmarshalRecord(rec); err != nil {
		return nil, fmt.Errorf("neardup: record %d: %w", seq, err)
	}
	return r, nil
}

// A record is the last-seen time (8 bytes, little-endian Unix nanoseconds) and then the
// Entry's binary form.
func (r *Stored) appendRecord(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(r.LastSeen.UnixNano()))
	b, _ = r.Entry.AppendBinary(b) // it never fails
	return b
}

func (r *Stored) unmarshalRecord(rec []byte) error {
	if len(rec) < 8 {
		return fmt.Errorf("%w: record of %d bytes", ErrEncoding, len(rec))
	}
	r.LastSeen = time.Unix(0, int64(binary.LittleEndian.Uint64(rec)))
	return r.Entry.UnmarshalBinary(rec[8:])
}

// seenKey is the nsSeen key of a last-seen time: Unix nanoseconds with the sign bit
// flipped, big-endian, so that keys sort in time order.
func seenKey(t time.Time) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano())^1<<63)
}

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// indexed reports whether a stored entry is in the near-duplicate postings.
func (d *Detector) indexed(e *Entry) bool { return e.Words >= d.opt.MinWords }

// putOps adds to b the record and postings of r, and returns r's band keys.
func (d *Detector) putOps(b *store.Batch, r *Stored) (bandKeys []uint64) {
	b.PutRecord(r.seq, r.appendRecord(nil))
	b.Add(nsDoc, []byte(r.ID), r.seq)
	if r.URL != "" {
		b.Add(nsURL, []byte(r.URL), r.seq)
	}
	b.Add(nsMain, r.Main[:], r.seq)
	b.Add(nsSeen, seenKey(r.LastSeen), r.seq)
	if !d.indexed(&r.Entry) {
		return nil
	}
	if !d.opt.NoSimHash {
		b.Add(nsFP, be64(r.SimHash), r.seq)
	}
	for _, k := range d.simTabKeys(&r.Entry) {
		b.Add(nsSimTab, k, r.seq)
	}
	bandKeys = d.bandKeysOf(&r.Entry)
	if d.postsBands() {
		for _, k := range bandKeys {
			b.Add(nsBand, be64(k), r.seq)
		}
	}
	return bandKeys
}

// bandKeysOf returns the LSH band keys an entry is posted under: none when it is not
// indexed or has a signature of another size.
func (d *Detector) bandKeysOf(e *Entry) []uint64 {
	if !d.indexed(e) || len(e.MinHash) != d.opt.MinHashK {
		return nil
	}
	return lsh.AppendBandKeys(nil, e.MinHash, d.bands, d.rows)
}

// index adds a stored document to the accelerators once its batch is written.
func (d *Detector) index(r *Stored, bandKeys []uint64) {
	if d.shared {
		return
	}
	if d.indexed(&r.Entry) && !d.opt.NoSimHash {
		d.sim.Add(r.seq, r.SimHash)
	}
	d.bandIdx.add(bandKeys, r.seq)
	if d.postsBands() {
		d.bandKeys.add(bandKeys)
	}
	d.startMove()
}

// unindex removes a stored document from the accelerators once the batch removing it is
// written (the band filter cannot forget).
func (d *Detector) unindex(r *Stored) {
	d.recs.drop(r.seq)
	if d.shared {
		return
	}
	d.sim.Remove(r.seq)
	d.bandIdx.remove(d.bandKeysOf(&r.Entry), r.seq)
}

// removeOps adds to b the removal of r's record and postings; the caller unindexes r
// once b is written.
func (d *Detector) removeOps(b *store.Batch, r *Stored) {
	b.DeleteRecord(r.seq)
	b.Remove(nsDoc, []byte(r.ID), r.seq)
	if r.URL != "" {
		b.Remove(nsURL, []byte(r.URL), r.seq)
	}
	b.Remove(nsMain, r.Main[:], r.seq)
	b.Remove(nsSeen, seenKey(r.LastSeen), r.seq)
	if !d.indexed(&r.Entry) {
		return
	}
	if !d.opt.NoSimHash {
		b.Remove(nsFP, be64(r.SimHash), r.seq)
	}
	for _, k := range d.simTabKeys(&r.Entry) {
		b.Remove(nsSimTab, k, r.seq)
	}
	if d.postsBands() {
		for _, k := range d.bandKeysOf(&r.Entry) {
			b.Remove(nsBand, be64(k), r.seq)
		}
	}
}

// compare returns a Match of stored document r against e, without its Kind.
func (d *Detector) compare(e *Entry, r *Stored) Match {
	m := Match{ID: r.ID, URL: r.URL, Distance: simhash.Distance(e.SimHash, r.SimHash)}
	if len(e.MinHash) == len(r.MinHash) && len(e.MinHash) > 0 {
		// Signatures of other sizes (or none, with NoMinHash) are not comparable: 0.
		m.Similarity = minhash.Similarity(e.MinHash, r.MinHash)
	}
	switch {
	case e.Raw == r.Raw:
		m.Level = LevelRaw
	case e.Text == r.Text:
		m.Level = LevelText
	case e.Main == r.Main:
		m.Level = LevelMain
	}
	return m
}

// near applies the near rule to a match's measures.
func (d *Detector) near(m Match, near Near) bool {
	bySim := m.Distance <= d.opt.Distance
	byMin := m.Similarity >= d.opt.Threshold
	switch near {
	case NearSimHash:
		return bySim
	case NearMinHash:
		return byMin
	case NearBoth:
		return bySim && byMin
	}
	return bySim || byMin
}

// nearStored returns the stored documents near e by the near rule, other than those
// skip reports. Candidates come from the SimHash tables (whose postings are the permuted
// fingerprints themselves, so a candidate is checked against the distance before any
// record is read) and the band postings; each is read and checked against both measures.
func (d *Detector) nearStored(e *Entry, near Near, skip func(seq uint64) bool, bands *[]bandRead) ([]*Stored, error) {
	if e.Words < d.opt.MinWords {
		return nil, nil
	}
	seen := map[uint64]bool{}
	var out []*Stored
	var failed error
	consider := func(seq uint64) bool {
		if seen[seq] || skip(seq) {
			return true
		}
		seen[seq] = true
		r, epoch := d.recs.get(seq)
		if r == nil {
			var err error
			if r, err = d.load(seq); err != nil {
				failed = err
				return false
			}
			if r != nil {
				d.recs.put(seq, r, epoch)
			}
		}
		if r != nil && d.near(d.compare(e, r), near) {
			out = append(out, r)
		}
		return true
	}
	if near != NearMinHash && d.shared {
		for _, k := range d.simTabKeys(e) {
			if err := d.readNear(nsSimTab, k, consider, bands); err != nil {
				return nil, err
			}
			if failed != nil {
				return nil, failed
			}
		}
	}
	if near != NearMinHash && !d.opt.NoSimHash && !d.shared {
		ms, err := d.sim.Query(e.SimHash, d.opt.Distance)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if consider(m.ID); failed != nil {
				return nil, failed
			}
		}
	}
	if near != NearSimHash && len(e.MinHash) == d.opt.MinHashK {
		keys := lsh.AppendBandKeys(nil, e.MinHash, d.bands, d.rows)
		if ids, ok := d.bandIdx.appendIDs(nil, keys); ok && !d.shared {
			for _, id := range ids {
				if consider(id); failed != nil {
					return nil, failed
				}
			}
			return out, nil
		}
		for _, k := range keys {
			if !d.shared && !d.bandKeys.mayHave(k) {
				continue
			}
			if err := d.readNear(nsBand, be64(k), consider, bands); err != nil {
				return nil, err
			}
			if failed != nil {
				return nil, failed
			}
		}
	}
	return out, nil
}

// readNear calls consider with the ids of a near-candidate posting, and appends what it
// read to bands when not nil.
func (d *Detector) readNear(ns store.Namespace, key []byte, consider func(uint64) bool, bands *[]bandRead) error {
	read := consider
	if bands != nil {
		*bands = append(*bands, bandRead{ns: ns, key: key})
		b := &(*bands)[len(*bands)-1]
		read = func(seq uint64) bool { b.ids = append(b.ids, seq); return consider(seq) }
	}
	return storeErrOrNil(d.st.IDs(ns, key, read))
}

// Get returns the stored document with the id; ok reports whether there is one. The
// error is the store's.
func (d *Detector) Get(id string) (s Stored, ok bool, err error) {
	r, err := d.byKey(nsDoc, []byte(id))
	if err != nil || r == nil {
		return Stored{}, false, err
	}
	return *r, true, nil
}

// Near returns the stored documents near the query's fingerprints, strongest first, at
// most Options.MaxMatches. The detector's Near rule applies to the measures the query
// has: with only a SimHash, a match is within Distance bits; with only a signature, its
// similarity reaches Threshold. Matches have Kind NearDuplicate and no Level. It returns
// an error wrapping ErrOptions for a query with neither fingerprint or a signature of
// another size, or the store's error.
func (d *Detector) Near(q Query) ([]Match, error) {
	if !q.HasSimHash && len(q.MinHash) == 0 {
		return nil, fmt.Errorf("%w: a query needs a SimHash, a MinHash signature or both", ErrOptions)
	}
	if len(q.MinHash) != 0 && len(q.MinHash) != d.opt.MinHashK {
		return nil, fmt.Errorf("%w: a signature of %d values, want %d (MinHashK)", ErrOptions, len(q.MinHash), d.opt.MinHashK)
	}
	if d.shared && len(q.MinHash) == 0 && d.perms == nil {
		return nil, fmt.Errorf("%w: a detector on a shared store with Near minhash finds candidates by MinHash bands: give the query a signature", ErrOptions)
	}
	near := d.opt.Near
	switch {
	case !q.HasSimHash:
		near = NearMinHash
	case len(q.MinHash) == 0:
		near = NearSimHash
	}
	e := Entry{Fingerprints: Fingerprints{SimHash: q.SimHash, MinHash: q.MinHash, Words: d.opt.MinWords}}
	found, err := d.nearStored(&e, near, func(uint64) bool { return false }, nil)
	if err != nil {
		return nil, err
	}
	out := make([]Match, 0, len(found))
	for _, r := range found {
		m := d.compare(&e, r)
		m.Kind, m.Level = NearDuplicate, LevelNone
		out = append(out, m)
	}
	slices.SortFunc(out, compareMatches)
	if len(out) > d.opt.MaxMatches {
		out = out[:d.opt.MaxMatches]
	}
	return out, nil
}

// Remove deletes the document with the id and reports whether it was stored; true
// means the deletion is durable. The key filter keeps its keys until it is next rebuilt
// (a filter cannot forget). The error is the store's.
func (d *Detector) Remove(id string) (bool, error) {
	d.mu.Lock()
	r, err := d.byKey(nsDoc, []byte(id))
	if err == nil && r != nil {
		var b store.Batch
		d.removeOps(&b, r)
		if err = d.st.Write(&b); err != nil {
			err = storeErr(err)
		} else {
			d.unindex(r)
			d.count--
			d.logChange(change{removed: []*Stored{r}})
		}
	}
	d.mu.Unlock()
	if err != nil || r == nil {
		return false, err
	}
	if err := d.st.Sync(); err != nil {
		return false, storeErr(err)
	}
	return true, nil
}

// Expire deletes every document not seen for longer than MaxAge and returns how many it
// deleted; with MaxAge 0 it deletes nothing. Adding checks call it themselves at most
// every MaxAge/64, so calling it is only needed to free space between checks. It costs
// a scan of the expired documents' last-seen postings and records, and blocks adding
// checks meanwhile. The error is the store's.
func (d *Detector) Expire() (int, error) {
	d.mu.Lock()
	n, err := d.expire(d.opt.Now())
	d.mu.Unlock()
	if err == nil && n > 0 {
		err = storeErrOrNil(d.st.Sync())
	}
	return n, err
}

func (d *Detector) sweep(now time.Time) error {
	if d.opt.MaxAge > 0 && now.Sub(d.swept) >= d.opt.MaxAge/64 {
		_, err := d.expire(now)
		return err
	}
	return nil
}

// expireChunk is the most documents expire removes in one batch.
const expireChunk = 1000

func (d *Detector) expire(now time.Time) (int, error) {
	if d.opt.MaxAge <= 0 {
		return 0, nil
	}
	d.swept = now
	cut := seenKey(now.Add(-d.opt.MaxAge))
	n := 0
	for {
		// The scan restarts after each chunk: the removed postings are gone by then.
		type posting struct {
			key []byte
			seq uint64
		}
		var ps []posting
		err := d.st.Postings(nsSeen, func(key []byte, seq uint64) bool {
			if string(key) >= string(cut) {
				return false
			}
			ps = append(ps, posting{slices.Clone(key), seq})
			return len(ps) < expireChunk
		})
		if err != nil {
			return n, storeErr(err)
		}
		if len(ps) == 0 {
			return n, nil
		}
		var b store.Batch
		var gone []*Stored
		for _, p := range ps {
			r, err := d.load(p.seq)
			if err != nil {
				return n, err
			}
			if r == nil {
				// A posting without its record: drop it, or every scan would find it.
				b.Remove(nsSeen, p.key, p.seq)
				continue
			}
			gone = append(gone, r)
		}
		for _, r := range gone {
			d.removeOps(&b, r)
		}
		if err := d.st.Write(&b); err != nil {
			return n, storeErr(err)
		}
		for _, r := range gone {
			d.unindex(r)
		}
		d.logChange(change{removed: gone})
		d.count -= len(gone)
		n += len(gone)
	}
}

// Len returns the number of stored documents. On a shared store that keeps counts
// (store.Counter) it is the store's count, which may lag by the last add of each other
// process; on another shared store, what this detector added less what it removed.
func (d *Detector) Len() int {
	if c, ok := d.st.(store.Counter); ok && d.shared {
		if n, err := c.Count(nsDoc); err == nil {
			return int(n)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.count
}

// Prescreen returns a copy of the key filter of every stored canonical URL and main-text
// hash (see KeyFilter): a client that finds neither of a page's keys in it knows the page
// is not a URL or exact duplicate without asking. It costs a copy of the filter (1.2 MB
// at the defaults).
//
// On a shared store (see OpenDetector) the detector keeps no filter, as other processes
// add keys it never sees: Prescreen fills one from the store each call, a scan of every
// URL and main-text key, seconds a million documents. If the scan fails, it returns a
// filter that holds every key, which costs clients lookups, never a missed duplicate.
func (d *Detector) Prescreen() *KeyFilter {
	if d.shared {
		f, err := d.fillFilter(d.opt.Expected)
		if err != nil {
			f, _ = NewKeyFilter(1, d.opt.FilterRate)
			f.f.BitSet().SetAll()
		}
		return f
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.filter.clone()
}

// addKeys adds a stored document's keys to the key filter (url may be empty); d.mu is
// held, and the document's write is done. Once the filter is full, a filter for twice its
// keys is filled from the store in the background (startRefill): a fill reads every URL and
// main-text posting, seconds at ten million documents, which under the lock would stall
// every add that long. Meanwhile the full filter takes the keys, at a rising
// false-positive rate (which costs lookups, never a missed key), and so does d.refill,
// for the new filter.
func (d *Detector) addKeys(url string, main Hash) {
	if url != "" {
		d.filter.AddURL(url)
	}
	d.filter.AddExact(main)
	if d.refill != nil {
		if url != "" {
			d.refill.urls = append(d.refill.urls, url)
		}
		d.refill.exact = append(d.refill.exact, main)
		return
	}
	d.growFilter()
}

// growFilter starts filling a filter for twice the keys once the key filter is full, unless
// a fill is under way or one failed less than moveRetry ago; d.mu is held.
func (d *Detector) growFilter() {
	if d.refill == nil && d.filter.Len() >= d.filter.Capacity() && time.Since(d.refillFailed) >= moveRetry {
		d.startRefill(2 * d.filter.Len())
	}
}

// startRefill starts filling a key filter for n keys in the background; d.mu is held.
// The new filter misses no key: the fill's reads see every write done before it starts
// (all under d.mu, before this call returns), and d.refill every key added after. A
// failed fill keeps the full filter.
func (d *Detector) startRefill(n int) {
	d.refill = &filterKeys{}
	d.refills.Add(1)
	go func() {
		defer d.refills.Done()
		f, err := d.fillFilter(n)
		d.mu.Lock()
		defer d.mu.Unlock()
		keys := d.refill
		d.refill = nil
		if err != nil {
			d.refillFailed = time.Now()
			return
		}
		for _, u := range keys.urls {
			f.AddURL(u)
		}
		for _, h := range keys.exact {
			f.AddExact(h)
		}
		d.filter = f
		// The keys added during the fill may have filled the new filter already; the
		// next add would start the next fill, but there may be no next add.
		d.growFilter()
	}()
}

// fillFilter returns a key filter sized for n keys holding every stored URL and exact
// key.
func (d *Detector) fillFilter(n int) (*KeyFilter, error) {
	f, err := NewKeyFilter(n, d.opt.FilterRate)
	if err != nil {
		return nil, err
	}
	hook := d.refillHook
	err = d.st.Postings(nsURL, func(key []byte, _ uint64) bool {
		if hook != nil {
			hook()
		}
		f.AddURL(string(key))
		return true
	})
	if err == nil {
		err = d.st.Postings(nsMain, func(key []byte, _ uint64) bool {
			var h Hash
			if len(key) == len(h) {
				copy(h[:], key)
				f.AddExact(h)
			}
			return true
		})
	}
	if err != nil {
		return nil, storeErr(err)
	}
	return f, nil
}

// pending returns the entry as a KeepPolicy sees it before it is stored: it arrived after
// every stored document.
func (e *Entry) pending() Candidate {
	return Candidate{ID: e.ID, Priority: e.Priority, FetchTime: e.FetchTime, Seq: ^uint64(0), Words: e.Words}
}

// compareMatches orders matches strongest first: exact levels, then near by similarity
// and distance, then id.
func compareMatches(a, b Match) int {
	la, lb := a.Level, b.Level
	if la == LevelNone {
		la = LevelMain + 1
	}
	if lb == LevelNone {
		lb = LevelMain + 1
	}
	return cmp.Or(
		cmp.Compare(la, lb),
		cmp.Compare(b.Similarity, a.Similarity),
		cmp.Compare(a.Distance, b.Distance),
		cmp.Compare(a.ID, b.ID),
	)
}

// seenAt is when a document fetched at fetch counts as seen for MaxAge: its fetch time,
// but never later than now.
func seenAt(fetch, now time.Time) time.Time {
	if fetch.After(now) {
		return now
	}
	return fetch
}

// BandCopy reports whether the detector keeps its in-memory copy of the band postings
// (see Options.BandMemory), and the bytes the copy takes.
func (d *Detector) BandCopy() (active bool, bytes int64) {
	return d.bandIdx.active(), d.bandIdx.size()
}

// BandPostings reports where the band postings are kept (see Options.BandMemory):
// "memory", only in the copy, which is rebuilt from the records at open; "moving", being
// written to the store, the copy answering meanwhile; "store", in the store.
func (d *Detector) BandPostings() string {
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
