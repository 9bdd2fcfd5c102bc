package neardup

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/neardup/neardup/hamming"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/simhash"
)

// Entry is a fingerprinted document as a Detector takes it: what Fingerprinter makes of
// a Document, with the document's id and keep-policy fields.
type Entry struct {
	ID        string
	Priority  float64
	FetchTime time.Time
	Fingerprints
}

// record is a stored document.
type record struct {
	Entry
	seq      uint64    // the id of the document in the hamming and lsh indexes
	lastSeen time.Time // what MaxAge is measured from
}

func (r *record) candidate() Candidate {
	return Candidate{ID: r.ID, Priority: r.Priority, FetchTime: r.FetchTime, Seq: r.seq, Words: r.Words}
}

// Detector is the crawler's check-and-add in memory: for each document it answers
// whether its URL, its exact content or nearly the same content has been seen, and which
// copy survives under the keep policy, and stores it for the documents that follow.
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
//     (Options.Near): NearDuplicate. Candidates come from a hamming.Index (every
//     fingerprint within Distance bits, exactly) and an lsh.Index (banding weighted 9 to
//     1 against misses, so a pair at the threshold is found 87% of the time at the
//     defaults), and each is checked against both measures before it is reported.
//  4. Otherwise Unique.
//
// Every document but a URL duplicate is stored, duplicates included, so that later
// copies match all of them and the survivor can change when a better copy arrives. A
// document whose id is already stored replaces the stored one (it is never its own
// match).
//
// A Detector is safe for concurrent use: Check fingerprints outside the lock, then one
// mutex guards the maps and indexes. Memory is about 1.9 KB a document at the defaults
// (the MinHash signature and its bands, the SimHash tables, three hashes, the id and the
// URL, and the maps over them); a check-and-add of 2 KB of text takes 43-66 µs on one
// core, most of it fingerprinting (BenchmarkDetector).
type Detector struct {
	opt Options
	fpr *Fingerprinter

	mu      sync.Mutex
	byID    map[string]*record
	bySeq   map[uint64]*record
	byURL   map[string]*record
	byMain  map[Hash][]*record
	sim     *hamming.Index
	lsh     *lsh.Index
	filter  *KeyFilter
	nextSeq uint64
	swept   time.Time // when expiry last ran

	hbuf []hamming.Match
	lbuf []lsh.Match
}

// NewDetector returns an empty Detector with the options, or an error wrapping
// ErrOptions naming the first field out of range.
func NewDetector(opt Options) (*Detector, error) {
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
	lx, err := lsh.New(lsh.Options{Threshold: o.Threshold, K: o.MinHashK, FPWeight: 0.1, FNWeight: 0.9})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	filter, err := NewKeyFilter(o.Expected, o.FilterRate)
	if err != nil {
		return nil, err
	}
	return &Detector{
		opt: o, fpr: fpr,
		byID: map[string]*record{}, bySeq: map[uint64]*record{},
		byURL: map[string]*record{}, byMain: map[Hash][]*record{},
		sim: sim, lsh: lx, filter: filter,
	}, nil
}

// Fingerprinter returns the Fingerprinter the detector uses, for callers that
// fingerprint documents themselves and call CheckEntry.
func (d *Detector) Fingerprinter() *Fingerprinter { return d.fpr }

// Check fingerprints the document, decides its verdict against the stored documents and
// stores it (see Detector). It returns an error only for a document that cannot be
// fingerprinted, and then stores nothing.
func (d *Detector) Check(doc Document) (Verdict, error) {
	fp, err := d.fpr.Fingerprint(doc)
	if err != nil {
		return Verdict{}, err
	}
	return d.CheckEntry(doc.entry(fp), true)
}

// Peek is Check without storing anything: the verdict the document would get now.
func (d *Detector) Peek(doc Document) (Verdict, error) {
	fp, err := d.fpr.Fingerprint(doc)
	if err != nil {
		return Verdict{}, err
	}
	return d.CheckEntry(doc.entry(fp), false)
}

// CheckEntry decides the verdict of an already fingerprinted document and, when add is
// true, stores it. Its fingerprints must come from this detector's Fingerprinter (or
// one with the same options); a signature of another size is treated as having no
// near-duplicates. The entry's MinHash is kept: the caller must not change it afterwards.
// The error is the store's.
func (d *Detector) CheckEntry(e Entry, add bool) (Verdict, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.opt.Now()
	d.sweep(now)
	if e.FetchTime.IsZero() {
		e.FetchTime = now
	}
	v := Verdict{ID: e.ID, URL: e.URL, Survivor: e.ID}
	self := d.byID[e.ID]

	// 1. The URL.
	var replaced *record
	if old := d.byURL[e.URL]; e.URL != "" && old != nil {
		m := d.compare(&e, old)
		m.Kind = URLDuplicate
		if m.Level != LevelNone || d.near(m, d.opt.Near) {
			if add {
				if t := seenAt(e.FetchTime, now); t.After(old.lastSeen) {
					old.lastSeen = t
				}
			}
			v.Kind, v.Matches, v.Survivor = URLDuplicate, []Match{m}, old.ID
			return v, nil
		}
		v.Kind, replaced = Changed, old
		v.Matches = append(v.Matches, m)
	}

	// 2 and 3. Exact, then near; a changed document's matches are reported too.
	var found []*record
	for _, r := range d.byMain[e.Main] {
		if r != self && r != replaced {
			found = append(found, r)
		}
	}
	kind := ExactDuplicate
	if len(found) == 0 {
		found = d.nearRecords(&e, d.opt.Near, self, replaced)
		kind = NearDuplicate
	}
	if v.Kind == Unique && len(found) > 0 {
		v.Kind = kind
	}
	best := e.pending()
	start := len(v.Matches)
	for _, r := range found {
		m := d.compare(&e, r)
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

	if add {
		if replaced != nil {
			d.remove(replaced)
		}
		if self != nil && self != replaced {
			d.remove(self)
		}
		d.store(e, now)
		v.Added = true
	}
	return v, nil
}

// compare returns a Match of stored record r against e, without its Kind.
func (d *Detector) compare(e *Entry, r *record) Match {
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

// nearRecords returns the stored records near e by the near rule, other than skip1 and
// skip2.
func (d *Detector) nearRecords(e *Entry, near Near, skip1, skip2 *record) []*record {
	if e.Words < d.opt.MinWords {
		return nil
	}
	seen := map[uint64]bool{}
	var out []*record
	consider := func(seq uint64) {
		r := d.bySeq[seq]
		if r == nil || r == skip1 || r == skip2 || seen[seq] {
			return
		}
		seen[seq] = true
		if d.near(d.compare(e, r), near) {
			out = append(out, r)
		}
	}
	if near != NearMinHash {
		d.hbuf, _ = d.sim.AppendQuery(d.hbuf[:0], e.SimHash, d.opt.Distance)
		for _, m := range d.hbuf {
			consider(m.ID)
		}
	}
	if near != NearSimHash && len(e.MinHash) == d.opt.MinHashK {
		d.lbuf, _ = d.lsh.AppendQuery(d.lbuf[:0], e.MinHash)
		for _, m := range d.lbuf {
			consider(m.ID)
		}
	}
	return out
}

func (d *Detector) store(e Entry, now time.Time) {
	d.nextSeq++
	r := &record{Entry: e, seq: d.nextSeq, lastSeen: seenAt(e.FetchTime, now)}
	d.byID[e.ID] = r
	d.bySeq[r.seq] = r
	if e.URL != "" {
		d.byURL[e.URL] = r
		d.addKey(func(f *KeyFilter) { f.AddURL(e.URL) })
	}
	d.byMain[e.Main] = append(d.byMain[e.Main], r)
	d.addKey(func(f *KeyFilter) { f.AddExact(e.Main) })
	if e.Words >= d.opt.MinWords {
		d.sim.Add(r.seq, e.SimHash)
		if len(e.MinHash) == d.opt.MinHashK {
			// The signature's size was just checked, the only error Add reports.
			_ = d.lsh.Add(r.seq, e.MinHash)
		}
	}
}

// addKey adds a key to the filter, first rebuilding the filter twice as large from the
// stored documents when it is full.
func (d *Detector) addKey(add func(*KeyFilter)) {
	if d.filter.Len() >= d.filter.Capacity() {
		f, err := NewKeyFilter(2*d.filter.Capacity(), d.opt.FilterRate)
		if err == nil { // the options were checked by NewDetector
			for _, r := range d.byID {
				if r.URL != "" {
					f.AddURL(r.URL)
				}
				f.AddExact(r.Main)
			}
			d.filter = f
		}
	}
	add(d.filter)
}

func (d *Detector) remove(r *record) {
	delete(d.byID, r.ID)
	delete(d.bySeq, r.seq)
	if r.URL != "" && d.byURL[r.URL] == r {
		delete(d.byURL, r.URL)
	}
	group := slices.DeleteFunc(d.byMain[r.Main], func(x *record) bool { return x == r })
	if len(group) == 0 {
		delete(d.byMain, r.Main)
	} else {
		d.byMain[r.Main] = group
	}
	d.sim.Remove(r.seq)
	d.lsh.Remove(r.seq)
}

// Remove deletes the document with the id and reports whether it was stored. The key
// filter keeps its keys until it is next rebuilt (a filter cannot forget). The error is
// the store's.
func (d *Detector) Remove(id string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.byID[id]
	if r != nil {
		d.remove(r)
	}
	return r != nil, nil
}

// Stored is a document as a Detector keeps it.
type Stored struct {
	Entry
	// LastSeen is what MaxAge is measured from: the entry's FetchTime (never later than
	// when it was checked), or the last time a URL duplicate of it was checked.
	LastSeen time.Time
}

// Get returns the stored document with the id; ok reports whether there is one. The
// error is the store's.
func (d *Detector) Get(id string) (s Stored, ok bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.byID[id]
	if r == nil {
		return Stored{}, false, nil
	}
	e := r.Entry
	e.MinHash = slices.Clone(e.MinHash)
	return Stored{Entry: e, LastSeen: r.lastSeen}, true, nil
}

// Query is a raw near-duplicate query for callers that fingerprint documents
// themselves (with the detector's options): a SimHash, a MinHash signature, or both.
type Query struct {
	// SimHash is the fingerprint to search by when HasSimHash is true (0 is a valid
	// fingerprint).
	SimHash    uint64
	HasSimHash bool
	// MinHash is the signature to search by when it is not empty; it must have
	// Options.MinHashK values.
	MinHash minhash.Signature
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
	near := d.opt.Near
	switch {
	case !q.HasSimHash:
		near = NearMinHash
	case len(q.MinHash) == 0:
		near = NearSimHash
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e := Entry{Fingerprints: Fingerprints{SimHash: q.SimHash, MinHash: q.MinHash, Words: d.opt.MinWords}}
	var out []Match
	for _, r := range d.nearRecords(&e, near, nil, nil) {
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

// Options returns the detector's options with every default filled in.
func (d *Detector) Options() Options { return d.opt }

// Expire deletes every document not seen for longer than MaxAge and returns how many it
// deleted; with MaxAge 0 it deletes nothing. Checks call it themselves at most every
// MaxAge/64, so calling it is only needed to free memory between checks. It costs a
// pass over all stored documents. The error is the store's.
func (d *Detector) Expire() (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.expire(d.opt.Now()), nil
}

func (d *Detector) sweep(now time.Time) {
	if d.opt.MaxAge > 0 && now.Sub(d.swept) >= d.opt.MaxAge/64 {
		d.expire(now)
	}
}

func (d *Detector) expire(now time.Time) int {
	if d.opt.MaxAge <= 0 {
		return 0
	}
	d.swept = now
	cut := now.Add(-d.opt.MaxAge)
	n := 0
	for _, r := range d.byID {
		if r.lastSeen.Before(cut) {
			d.remove(r)
			n++
		}
	}
	return n
}

// Len returns the number of stored documents.
func (d *Detector) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.byID)
}

// Prescreen returns a copy of the key filter of every stored canonical URL and main-text
// hash (see KeyFilter): a client that finds neither of a page's keys in it knows the page
// is not a URL or exact duplicate without asking. It costs a copy of the filter (1.2 MB
// at the defaults).
func (d *Detector) Prescreen() *KeyFilter {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.filter.clone()
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
