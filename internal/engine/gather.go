package engine

import (
	"cmp"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/simhash"
	"github.com/neardup/neardup/store"
)

// gather reads what the verdict of e depends on (see plan), given the key filter's hints.
func (d *Engine) gather(e *api.Entry, h keyHints) (plan, error) {
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
			r, err := d.loadExact(seq)
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
		p.near, err = d.nearStored(e, d.cfg.Near, skip, bands)
	}
	return p, err
}

// nearStored returns the stored documents near e by the near rule, other than those
// skip reports. Candidates come from the SimHash tables (in memory, whose postings are
// the permuted fingerprints themselves, so a candidate is checked against the distance
// before any record is read; on a shared store, the nsSimTab postings) and the band
// postings; each is read and checked against both measures. On a shared store it
// appends every posting it read to bands when not nil.
func (d *Engine) nearStored(e *api.Entry, near Near, skip func(seq uint64) bool, bands *[]bandRead) ([]*Record, error) {
	if e.Words < d.cfg.MinWords {
		return nil, nil
	}
	seen := map[uint64]bool{}
	var out []*Record
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
	if near != NearMinHash && !d.cfg.NoSimHash && !d.shared {
		ms, err := d.sim.Query(e.SimHash, d.cfg.Distance)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if consider(m.ID); failed != nil {
				return nil, failed
			}
		}
	}
	if near != NearSimHash && len(e.MinHash) == d.cfg.MinHashK {
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
func (d *Engine) readNear(ns store.Namespace, key []byte, consider func(uint64) bool, bands *[]bandRead) error {
	read := consider
	if bands != nil {
		*bands = append(*bands, bandRead{ns: ns, key: key})
		b := &(*bands)[len(*bands)-1]
		read = func(seq uint64) bool { b.ids = append(b.ids, seq); return consider(seq) }
	}
	return storeErrOrNil(d.st.IDs(ns, key, read))
}

// compare returns a api.Match of stored document r against e, without its Kind.
func (d *Engine) compare(e *api.Entry, r *Record) api.Match {
	m := api.Match{ID: r.ID, URL: r.URL, Distance: simhash.Distance(e.SimHash, r.SimHash)}
	if len(e.MinHash) == len(r.MinHash) && len(e.MinHash) > 0 {
		// Signatures of other sizes (or none, with NoMinHash) are not comparable: 0.
		// With verification, two sketches replace the estimate; an entry stored without
		// one is compared by the estimate.
		if d.cfg.Verify && !e.Sketch.Empty() && !r.Sketch.Empty() {
			m.Similarity = e.Sketch.Similarity(r.Sketch)
		} else {
			m.Similarity = minhash.Similarity(e.MinHash, r.MinHash)
		}
	}
	switch {
	case e.Raw == r.Raw:
		m.Level = api.LevelRaw
	case e.Text == r.Text:
		m.Level = api.LevelText
	case e.Main == r.Main:
		m.Level = api.LevelMain
	}
	return m
}

// near applies the near rule to a match's measures.
func (d *Engine) near(m api.Match, near Near) bool {
	bySim := m.Distance <= d.cfg.Distance
	byMin := m.Similarity >= d.cfg.Threshold
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
