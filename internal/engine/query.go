package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/store"
)

// Get returns the stored document with the id; ok reports whether there is one. The
// error is the store's.
func (d *Engine) Get(id string) (Record, bool, error) {
	r, err := d.byKey(nsDoc, []byte(id))
	if err != nil || r == nil {
		return Record{}, false, err
	}
	return *r, true, nil
}

// Near returns the stored documents near the query's fingerprints, strongest first, at
// most Config.MaxMatches. The engine's Near rule applies to the measures the query
// has: with only a SimHash, a match is within Distance bits; with only a signature, its
// similarity reaches Threshold. Matches have Kind api.NearDuplicate and no Level. It returns
// an error wrapping ErrOptions for a query with neither fingerprint, a signature of
// another size, or, on a shared store with Near minhash (which keeps no SimHash
// postings), no signature; or the store's error.
func (d *Engine) Near(q api.Query) ([]api.Match, error) {
	if !q.HasSimHash && len(q.MinHash) == 0 {
		return nil, fmt.Errorf("%w: a query needs a SimHash, a MinHash signature or both", ErrOptions)
	}
	if len(q.MinHash) != 0 && len(q.MinHash) != d.cfg.MinHashK {
		return nil, fmt.Errorf("%w: a signature of %d values, want %d (MinHashK)", ErrOptions, len(q.MinHash), d.cfg.MinHashK)
	}
	if d.shared && len(q.MinHash) == 0 && d.perms == nil {
		return nil, fmt.Errorf("%w: a detector on a shared store with Near minhash finds candidates by MinHash bands: give the query a signature", ErrOptions)
	}
	near := d.cfg.Near
	switch {
	case !q.HasSimHash:
		near = NearMinHash
	case len(q.MinHash) == 0:
		near = NearSimHash
	}
	e := api.Entry{Fingerprints: api.Fingerprints{SimHash: q.SimHash, MinHash: q.MinHash, Words: d.cfg.MinWords}}
	var found []*Record
	var err error
	if mr, ok := d.st.(store.MultiReader); ok && d.shared {
		found, err = d.queryMany(&e, near, mr)
	} else {
		found, err = d.nearStored(&e, near, func(uint64) bool { return false }, nil)
	}
	if err != nil {
		return nil, err
	}
	out := make([]api.Match, 0, len(found))
	for _, r := range found {
		m := d.compare(&e, r)
		m.Kind, m.Level = api.NearDuplicate, api.LevelNone
		out = append(out, m)
	}
	slices.SortFunc(out, compareMatches)
	if len(out) > d.cfg.MaxMatches {
		out = out[:d.cfg.MaxMatches]
	}
	return out, nil
}

// Remove deletes the document with the id and reports whether it was stored; true
// means the deletion is durable. The key filter keeps its keys until it is next rebuilt
// (a filter cannot forget). The error is the store's.
func (d *Engine) Remove(id string) (bool, error) {
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
			d.logChange(change{removed: []*Record{r}})
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
func (d *Engine) Expire() (int, error) {
	d.mu.Lock()
	n, err := d.expire(d.cfg.Now())
	d.mu.Unlock()
	if err == nil && n > 0 {
		err = storeErrOrNil(d.st.Sync())
	}
	return n, err
}

func (d *Engine) sweep(now time.Time) error {
	if d.cfg.MaxAge > 0 && now.Sub(d.swept) >= d.cfg.MaxAge/64 {
		_, err := d.expire(now)
		return err
	}
	return nil
}

// expireChunk is the most documents expire removes in one batch.
const expireChunk = 1000

func (d *Engine) expire(now time.Time) (int, error) {
	if d.cfg.MaxAge <= 0 {
		return 0, nil
	}
	d.swept = now
	cut := seenKey(now.Add(-d.cfg.MaxAge))
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
		var gone []*Record
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
