package neardup

import (
	"fmt"
	"math"
	"time"

	"github.com/neardup/neardup/internal/engine"
	"github.com/neardup/neardup/store"
)

// Stored is a document as a Detector keeps it.
type Stored struct {
	Entry
	// LastSeen is what MaxAge is measured from: the entry's FetchTime (never later than
	// when it was checked), or the last time a URL duplicate of it was checked.
	LastSeen time.Time
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
//     (package lsh), and each is checked against both measures before it is reported.
//     The MinHash similarity is verified: taken from the two documents' sketches (the
//     exact Jaccard similarity of their shingle sets up to minhash.DefaultSketchCap
//     shingles), with bands chosen for recall (a pair at the threshold is missed 3% of
//     the time); with Options.NoVerify it is the signatures' estimate, with bands
//     weighted 9 to 1 against misses (13% missed at the threshold).
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
	opt Options
	fpr *Fingerprinter
	eng *engine.Engine // the store, its accelerators, and every verdict (internal/engine)
}

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
// 3: 20 tables), which cost an add that many more postings; a Distance that needs more
// than 64 tables (above 5) is an error wrapping ErrOptions. Prescreen answers a snapshot
// refilled from the store in the background (Options.PrescreenRefresh); the first fill
// starts as OpenDetector returns.
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
	if o.verifies() {
		fpr.sketchCap = o.SketchCap
	}
	eng, err := engine.Open(s, engineConfig(&o))
	if err != nil {
		return nil, err
	}
	return &Detector{opt: o, fpr: fpr, eng: eng}, nil
}

// engineConfig returns the engine's config for options with their defaults filled in.
func engineConfig(o *Options) engine.Config {
	return engine.Config{
		Near: engineNear(o.Near), Distance: o.Distance, Threshold: o.Threshold,
		MinHashK: o.MinHashK, Seed: o.Seed, MinWords: o.MinWords,
		NoSimHash: o.NoSimHash, NoMinHash: o.NoMinHash, Shingle: o.Shingle,
		MaxAge: o.MaxAge, MaxMatches: o.MaxMatches,
		Expected: o.Expected, FilterRate: o.FilterRate, BandMemory: o.BandMemory,
		PrescreenRefresh: o.PrescreenRefresh,
		Now:              o.Now, Prefer: o.Keep.Prefer, Verify: o.verifies(),
	}
}

// engineNear returns the engine's name of a near rule.
func engineNear(n Near) engine.Near {
	switch n {
	case NearSimHash:
		return engine.NearSimHash
	case NearMinHash:
		return engine.NearMinHash
	case NearBoth:
		return engine.NearBoth
	}
	return engine.NearAny
}

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
// one with the same options, whose entries lack the sketch and so are compared by the
// MinHash estimate); a signature of another size is treated as having no
// near-duplicates. A priority that is NaN, which no keep policy can order, is an error
// wrapping ErrDocument; any other error is the store's. A verdict with Added true is
// durable.
func (d *Detector) CheckEntry(e Entry, add bool) (Verdict, error) {
	if math.IsNaN(e.Priority) {
		return Verdict{}, errNaNPriority(e.ID)
	}
	return d.eng.Check(e, add)
}

// Get returns the stored document with the id; ok reports whether there is one. The
// error is the store's.
func (d *Detector) Get(id string) (s Stored, ok bool, err error) {
	r, ok, err := d.eng.Get(id)
	if !ok || err != nil {
		return Stored{}, false, err
	}
	return Stored{Entry: r.Entry, LastSeen: r.LastSeen}, true, nil
}

// Near returns the stored documents near the query's fingerprints, strongest first, at
// most Options.MaxMatches. The detector's Near rule applies to the measures the query
// has: with only a SimHash, a match is within Distance bits; with only a signature, its
// similarity reaches Threshold. Matches have Kind NearDuplicate and no Level. It returns
// an error wrapping ErrOptions for a query with neither fingerprint, a signature of
// another size, or, on a shared store with Near minhash (which keeps no SimHash
// postings), no signature; or the store's error.
func (d *Detector) Near(q Query) ([]Match, error) {
	return d.eng.Near(q)
}

// Remove deletes the document with the id and reports whether it was stored; true
// means the deletion is durable. The key filter keeps its keys until it is next rebuilt
// (a filter cannot forget). The error is the store's.
func (d *Detector) Remove(id string) (bool, error) {
	return d.eng.Remove(id)
}

// Expire deletes every document not seen for longer than MaxAge and returns how many it
// deleted; with MaxAge 0 it deletes nothing. Adding checks call it themselves at most
// every MaxAge/64, so calling it is only needed to free space between checks. It costs
// a scan of the expired documents' last-seen postings and records, and blocks adding
// checks meanwhile. The error is the store's.
func (d *Detector) Expire() (int, error) {
	return d.eng.Expire()
}

// Len returns the number of stored documents. On a shared store that keeps counts
// (store.Counter) it is the store's count, which may lag by the last add of each other
// process; on another shared store, what this detector added less what it removed.
func (d *Detector) Len() int {
	return d.eng.Len()
}

// Prescreen returns a copy of the key filter of every stored canonical URL and main-text
// hash (see KeyFilter): a client that finds neither of a page's keys in it knows the page
// is not a URL or exact duplicate without asking. It costs a copy of the filter (1.2 MB
// at the defaults).
//
// On a shared store (see OpenDetector) other processes add keys the detector never
// sees, and a filter filled from the store is a scan of every URL and main-text key,
// seconds a million documents. So Prescreen answers a snapshot: the last fill, with the
// detector's own adds since, refilled in the background, one fill at a time, when it is
// older than Options.PrescreenRefresh; another process's add shows within about that
// interval plus a fill's time, once calls keep coming (the call that finds the snapshot
// stale still gets it). Only a call made before the first fill is done waits for it; if
// no fill has succeeded, it returns a filter that holds every key, which costs clients
// lookups, never a missed duplicate. A failed fill keeps the snapshot, and the next is
// tried a PrescreenRefresh later.
func (d *Detector) Prescreen() *KeyFilter {
	return &KeyFilter{d.eng.Prescreen()}
}

// PrescreenGen returns a number that changes whenever Prescreen's answer may have
// changed, at the cost of an atomic load: a caller that encodes the filter (the service,
// for one) keeps the encoding until it changes. A Prescreen called after PrescreenGen
// returned g answers the filter of generation g or a later one.
func (d *Detector) PrescreenGen() uint64 {
	return d.eng.PrescreenGen()
}

// BandCopy reports whether the detector keeps its in-memory copy of the band postings
// (see Options.BandMemory), and the bytes the copy takes.
func (d *Detector) BandCopy() (active bool, bytes int64) {
	return d.eng.BandCopy()
}

// BandPostings reports where the band postings are kept (see Options.BandMemory):
// "memory", only in the copy, which is rebuilt from the records at open; "moving", being
// written to the store, the copy answering meanwhile; "store", in the store.
func (d *Detector) BandPostings() string {
	return d.eng.BandPostings()
}
