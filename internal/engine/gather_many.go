package engine

import (
	"fmt"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/store"
)

// gatherMany is gather on a shared store that reads many postings at once: every
// posting the verdict may need (document id, URL, main text, band and SimHash table
// keys) in one call, then every record among them not in the record cache in another,
// so that a verdict waits for two round trips to Redis, not one for each key and
// candidate. On a store.ReadingConditional the near candidates' records are read with
// the add's write instead (plan.later): no round trip of their own. It reads more than
// gather when the URL or main text decides (the band postings), and finds the same plan.
func (d *Engine) gatherMany(e *api.Entry, mr store.MultiReader) (plan, error) {
	var p plan
	keys := []store.Key{{Namespace: nsDoc, Key: []byte(e.ID)}, {Namespace: nsMain, Key: e.Main[:]}}
	if e.URL != "" {
		keys = append(keys, store.Key{Namespace: nsURL, Key: []byte(e.URL)})
	}
	var bands []uint64
	if d.indexed(e) && d.cfg.Near != NearSimHash && len(e.MinHash) == d.cfg.MinHashK {
		bands = lsh.AppendBandKeys(nil, e.MinHash, d.bands, d.rows)
	}
	for _, k := range bands {
		keys = append(keys, store.Key{Namespace: nsBand, Key: be64(k)})
	}
	for _, k := range d.simTabKeys(e) {
		keys = append(keys, store.Key{Namespace: nsSimTab, Key: k})
	}
	ids, err := mr.IDsMany(keys)
	if err != nil {
		return p, storeErr(err)
	}
	p.docIDs, p.mainIDs = ids[0], ids[1]
	nearIDs := ids[2:]
	if e.URL != "" {
		p.urlIDs, nearIDs = ids[2], ids[3:]
	}
	_, reading := d.st.(store.ReadingConditional)
	recs, later, err := d.recordsMany(mr, &p, nearIDs, reading)
	if err != nil {
		return p, err
	}
	d.planMany(e, &p, recs, keys[len(keys)-len(nearIDs):], nearIDs)
	if p.bands != nil {
		p.later, p.recs = later, recs
	}
	if len(p.later) == 0 {
		d.nearMany(e, &p, recs)
	}
	return p, nil
}

// recordsMany returns every record the plan may look at, by record id (nil for one
// that is gone): those of the ids read, from the record cache or in one read. When
// reading (the store reads records with its write: store.ReadingConditional), the near
// candidates' records not cached are not read but returned in later, with the epochs
// of the record cache to put them with.
func (d *Engine) recordsMany(mr store.MultiReader, p *plan, nearIDs [][]uint64, reading bool) (map[uint64]*Record, []laterRecord, error) {
	recs := map[uint64]*Record{}
	var want, epochs []uint64
	var later []laterRecord
	near := false
	need := func(seq uint64) {
		if _, ok := recs[seq]; ok {
			return
		}
		r, epoch := d.recs.get(seq)
		recs[seq] = r
		switch {
		case r != nil:
		case near && reading:
			later = append(later, laterRecord{seq, epoch})
		default:
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
	near = true
	for _, b := range nearIDs {
		for _, seq := range b {
			need(seq)
		}
	}
	if len(want) == 0 {
		return recs, later, nil
	}
	got, ok, err := mr.RecordsMany(want)
	if err != nil {
		return nil, nil, storeErr(err)
	}
	if err := d.putRecords(recs, want, epochs, got, ok); err != nil {
		return nil, nil, err
	}
	return recs, later, nil
}

// laterRecord is a record the write reads (seq), and the record cache's epoch when it
// was found missing there.
type laterRecord struct{ seq, epoch uint64 }

// putRecords decodes the records read under seqs (got, where ok) into recs and the
// record cache.
func (d *Engine) putRecords(recs map[uint64]*Record, seqs, epochs []uint64, got [][]byte, ok []bool) error {
	for i, seq := range seqs {
		if !ok[i] {
			continue
		}
		r := &Record{seq: seq}
		if err := r.unmarshalRecord(got[i], true); err != nil {
			return fmt.Errorf("neardup: record %d: %w", seq, err)
		}
		recs[seq] = r
		d.recs.put(seq, r, epochs[i])
	}
	return nil
}

// applyReading is the shared add's write when near candidates' records are to be read
// with it (p.later): it reads them in the write's round trip, then finds the near
// copies among the candidates.
func (d *Engine) applyReading(e *api.Entry, p *plan, b *store.Batch) error {
	seqs, epochs := make([]uint64, len(p.later)), make([]uint64, len(p.later))
	for i, l := range p.later {
		seqs[i], epochs[i] = l.seq, l.epoch
	}
	got, ok, err := d.st.(store.ReadingConditional).ApplyIfRead(b, d.conds(e, p), seqs)
	if err != nil {
		return err
	}
	if err := d.putRecords(p.recs, seqs, epochs, got, ok); err != nil {
		return err
	}
	d.nearMany(e, p, p.recs)
	return nil
}

// planMany finishes gatherMany's plan from the ids read and their records: the
// document with the entry's id and URL, then the exact copies or else the near ones
// among the candidates of the near postings (nearKeys, whose ids are nearIDs), as
// gather decides.
func (d *Engine) planMany(e *api.Entry, p *plan, recs map[uint64]*Record, nearKeys []store.Key, nearIDs [][]uint64) {
	if len(p.docIDs) > 0 {
		p.self = recs[p.docIDs[0]]
	}
	// 1. The URL.
	if len(p.urlIDs) > 0 && d.byURL(e, p, recs[p.urlIDs[0]]) {
		return
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
		return
	}
	// 3. Near, by the band and SimHash table postings: nearMany, once their records are
	// read.
	p.bands = make([]bandRead, 0, len(nearIDs))
	for i, b := range nearIDs {
		k := nearKeys[i]
		p.bands = append(p.bands, bandRead{ns: k.Namespace, key: k.Key, ids: b})
	}
}

// nearMany finds the near copies among the candidates of the near postings p.bands,
// whose records are in recs.
func (d *Engine) nearMany(e *api.Entry, p *plan, recs map[uint64]*Record) {
	seen := map[uint64]bool{}
	for _, b := range p.bands {
		for _, seq := range b.ids {
			if seen[seq] || p.skip(seq) {
				continue
			}
			seen[seq] = true
			if r := recs[seq]; r != nil && d.near(d.compare(e, r), d.cfg.Near) {
				p.near = append(p.near, r)
			}
		}
	}
}

// queryMany is nearStored for a query (Near) on a store that reads many keys at once:
// the query's SimHash table and band postings in one IDsMany, then the records of the
// candidates not cached in one RecordsMany, where nearStored makes a call a key and a
// record (on Redis some 50 script calls a query instead of a few).
func (d *Engine) queryMany(e *api.Entry, near Near, mr store.MultiReader) ([]*Record, error) {
	if e.Words < d.cfg.MinWords {
		return nil, nil
	}
	var keys []store.Key
	if near != NearMinHash {
		for _, k := range d.simTabKeys(e) {
			keys = append(keys, store.Key{Namespace: nsSimTab, Key: k})
		}
	}
	if near != NearSimHash && len(e.MinHash) == d.cfg.MinHashK {
		for _, k := range lsh.AppendBandKeys(nil, e.MinHash, d.bands, d.rows) {
			keys = append(keys, store.Key{Namespace: nsBand, Key: be64(k)})
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	ids, err := mr.IDsMany(keys)
	if err != nil {
		return nil, storeErr(err)
	}
	recs := map[uint64]*Record{}
	var cands, want, epochs []uint64
	for _, list := range ids {
		for _, seq := range list {
			if _, ok := recs[seq]; ok {
				continue
			}
			r, epoch := d.recs.get(seq)
			recs[seq] = r
			cands = append(cands, seq)
			if r == nil {
				want, epochs = append(want, seq), append(epochs, epoch)
			}
		}
	}
	if len(want) > 0 {
		got, ok, err := mr.RecordsMany(want)
		if err != nil {
			return nil, storeErr(err)
		}
		if err := d.putRecords(recs, want, epochs, got, ok); err != nil {
			return nil, err
		}
	}
	var out []*Record
	for _, seq := range cands {
		if r := recs[seq]; r != nil && d.near(d.compare(e, r), near) {
			out = append(out, r)
		}
	}
	return out, nil
}
