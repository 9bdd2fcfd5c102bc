package engine

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/store"
)

// Check decides the verdict of an entry and, when add is true, stores it (see
// neardup.Detector.CheckEntry). A signature of another size than Config.MinHashK is
// treated as having no near-duplicates. The caller refuses a priority that is NaN,
// which no keep policy can order. The error is the store's. A verdict with Added true
// is durable.
func (d *Engine) Check(e api.Entry, add bool) (api.Verdict, error) {
	now := d.cfg.Now()
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
			return api.Verdict{}, err
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
		return api.Verdict{}, err
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
		return api.Verdict{}, err
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
func (d *Engine) conds(e *api.Entry, p *plan) []store.Cond {
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

// sharedAdd is Check's add on a shared store. It takes no lock of the process
// around its reads and write: the conditions of the write (conds) order it with every
// other add, of this process or another, that touched what it read. On a conflict it
// reads again and decides again, as if it had come after the other add.
func (d *Engine) sharedAdd(e *api.Entry, now time.Time) (api.Verdict, error) {
	d.mu.Lock()
	err := d.sweep(now)
	d.mu.Unlock()
	if err != nil {
		return api.Verdict{}, err
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
			return api.Verdict{}, err
		}
		v, _, err := d.commitAdd(e, now, 0, p)
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, store.ErrConflict) || try == maxConflicts {
			return api.Verdict{}, err
		}
	}
}

// plan is what gather found for an entry: the stored document with its id (which an add
// replaces), the one with its URL (seen: the same content, a URL duplicate; replaced:
// other content, which an add replaces), and the stored documents with the same main
// text or, when there are none, near content.
type plan struct {
	self, seen, replaced *Record
	exact, near          []*Record
	// docIDs, urlIDs and mainIDs are the ids gather read under the entry's document id,
	// URL and main text (mainAll: all of them): on a shared store, an add is committed
	// only if those postings still hold them.
	docIDs, urlIDs, mainIDs []uint64
	mainAll                 bool
	// bands are the near-candidate postings (band and SimHash table) nearStored read,
	// on a shared store: an add is committed only if they still hold, so that of two
	// near copies added at once through two processes, the second reads again and
	// finds the first (they share a band or table key whenever either would find the
	// other).
	bands []bandRead
	// later are the near candidates' records not in the record cache, which a shared
	// add reads with its write (store.ReadingConditional): the near copies among
	// p.bands are found once they are in recs.
	later []laterRecord
	recs  map[uint64]*Record
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
func (d *Engine) byURL(e *api.Entry, p *plan, old *Record) bool {
	if old == nil {
		return false
	}
	if m := d.compare(e, old); m.Level != api.LevelNone || d.near(m, d.cfg.Near) {
		p.seen = old
		return true
	}
	p.replaced = old
	return false
}

// markSeen makes the stored document seq, of which e is a URL duplicate, count as seen
// now. It is not acknowledged as a write (Added is false), so it becomes durable with the
// next Sync. Its record is read again: another URL duplicate may have moved its
// last-seen time since gather read it. d.mu is held, but on a shared store.
func (d *Engine) markSeen(e *api.Entry, seq uint64, now time.Time) error {
	seen, err := d.load(seq)
	if err != nil || seen == nil {
		return err
	}
	t := seenAt(e.FetchTime, now)
	if !t.After(seen.LastSeen) {
		return nil
	}
	var b store.Batch
	b.Remove(nsSeen, seenKey(seen.LastSeen), seen.seq)
	seen.LastSeen = t
	b.Add(nsSeen, seenKey(t), seen.seq)
	b.PutRecord(seen.seq, seen.appendRecord(nil))
	err = d.st.Write(&b)
	d.recs.drop(seen.seq)
	return storeErrOrNil(err)
}

// commitAdd finishes Check's add under d.mu, given the plan read at generation gen;
// wrote reports a Write to Sync. On a shared store it runs without d.mu (sharedAdd),
// taking it only to count.
func (d *Engine) commitAdd(e *api.Entry, now time.Time, gen uint64, p plan) (v api.Verdict, wrote bool, err error) {
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
	if p.seen != nil {
		return v, false, d.markSeen(e, p.seen.seq, now)
	}
	var b store.Batch
	var old []*Record // the distinct stored documents the entry replaces
	for _, r := range []*Record{p.replaced, p.self} {
		if r != nil && !slices.ContainsFunc(old, func(o *Record) bool { return o.seq == r.seq }) {
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
	r := &Record{Entry: *e, LastSeen: seenAt(e.FetchTime, now), seq: seq}
	bandKeys := d.putOps(&b, r)
	switch {
	case len(p.later) > 0:
		// The near candidates' records come with the write: the verdict is decided
		// after it, which it does not change, only what it reports.
		if err = d.applyReading(e, &p, &b); err == nil {
			v = d.verdict(e, &p)
		}
	case d.shared:
		err = d.st.(store.Conditional).ApplyIf(&b, d.conds(e, &p))
	default:
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
		d.screenAdd(e.URL, e.Main)
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

// verdict returns the verdict of e given its plan.
func (d *Engine) verdict(e *api.Entry, p *plan) api.Verdict {
	v := api.Verdict{ID: e.ID, URL: e.URL, RawURL: e.RawURL, Survivor: e.ID}
	if p.seen != nil {
		m := d.compare(e, p.seen)
		m.Kind = api.URLDuplicate
		v.Kind, v.Matches, v.Survivor = api.URLDuplicate, []api.Match{m}, p.seen.ID
		return v
	}
	if p.replaced != nil {
		// A changed document's matches are reported too, after the one it replaces.
		m := d.compare(e, p.replaced)
		m.Kind = api.URLDuplicate
		v.Kind, v.Matches = api.Changed, []api.Match{m}
	}
	found, kind := p.exact, api.ExactDuplicate
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
		found, kind = p.near, api.NearDuplicate
	}
	if v.Kind == api.Unique && len(found) > 0 {
		v.Kind = kind
	}
	best := pending(e)
	start := len(v.Matches)
	for _, r := range found {
		m := d.compare(e, r)
		m.Kind = kind
		v.Matches = append(v.Matches, m)
		if c := r.candidate(); d.cfg.Prefer(c, best) {
			best = c
		}
	}
	v.Survivor = best.ID
	slices.SortFunc(v.Matches[start:], compareMatches)
	if len(v.Matches) > d.cfg.MaxMatches {
		v.Matches = v.Matches[:d.cfg.MaxMatches]
	}
	return v
}

// pending returns the entry as a KeepPolicy sees it before it is stored: it arrived after
// every stored document.
func pending(e *api.Entry) api.Candidate {
	return api.Candidate{ID: e.ID, Priority: e.Priority, FetchTime: e.FetchTime, Seq: ^uint64(0), Words: e.Words}
}

// compareMatches orders matches strongest first: exact levels, then near by similarity
// and distance, then id.
func compareMatches(a, b api.Match) int {
	la, lb := a.Level, b.Level
	if la == api.LevelNone {
		la = api.LevelMain + 1
	}
	if lb == api.LevelNone {
		lb = api.LevelMain + 1
	}
	return cmp.Or(
		cmp.Compare(la, lb),
		cmp.Compare(b.Similarity, a.Similarity),
		cmp.Compare(a.Distance, b.Distance),
		cmp.Compare(a.ID, b.ID),
	)
}
