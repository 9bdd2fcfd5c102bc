package engine

import (
	"fmt"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/store"
)

// gatherMany is gather on a shared store that reads many postings at once: every
// posting the verdict may need (document id, URL, main text, band and SimHash table
// keys) in one call,
// then every record among them not in the record cache in another, so that a verdict
// waits for two round trips to Redis, not one for each key and candidate. It reads
// more than gather when the URL or main text decides (the band postings and their
// records), and finds the same plan.
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
	recs, err := d.recordsMany(mr, &p, nearIDs)
	if err != nil {
		return p, err
	}
	d.planMany(e, &p, recs, keys[len(keys)-len(nearIDs):], nearIDs)
	return p, nil
}

// recordsMany returns every record the plan may look at, by record id (nil for one
// that is gone): those of the ids read, from the record cache or in one read.
func (d *Engine) recordsMany(mr store.MultiReader, p *plan, nearIDs [][]uint64) (map[uint64]*Record, error) {
	recs := map[uint64]*Record{}
	var want, epochs []uint64
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
	for _, b := range nearIDs {
		for _, seq := range b {
			need(seq)
		}
	}
	if len(want) == 0 {
		return recs, nil
	}
	got, ok, err := mr.RecordsMany(want)
	if err != nil {
		return nil, storeErr(err)
	}
	for i, seq := range want {
		if !ok[i] {
			continue
		}
		r := &Record{seq: seq}
		if err := r.unmarshalRecord(got[i]); err != nil {
			return nil, fmt.Errorf("neardup: record %d: %w", seq, err)
		}
		recs[seq] = r
		d.recs.put(seq, r, epochs[i])
	}
	return recs, nil
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
	// 3. Near, by the band and SimHash table postings.
	seen := map[uint64]bool{}
	for i, b := range nearIDs {
		k := nearKeys[i]
		p.bands = append(p.bands, bandRead{ns: k.Namespace, key: k.Key, ids: b})
		for _, seq := range b {
			if seen[seq] || skip(seq) {
				continue
			}
			seen[seq] = true
			if r := recs[seq]; r != nil && d.near(d.compare(e, r), d.cfg.Near) {
				p.near = append(p.near, r)
			}
		}
	}
}
