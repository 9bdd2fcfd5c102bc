package engine

import (
	"time"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/internal/keyfilter"
)

// filterKeys are the keys added to the key filter while its successor is filled.
type filterKeys struct {
	urls  []string
	exact []api.Hash
}

// add records a stored document's keys (url may be empty).
func (k *filterKeys) add(url string, main api.Hash) {
	if url != "" {
		k.urls = append(k.urls, url)
	}
	k.exact = append(k.exact, main)
}

// addTo adds the keys to f.
func (k *filterKeys) addTo(f *keyfilter.Filter) {
	for _, u := range k.urls {
		f.AddURL(u)
	}
	for _, h := range k.exact {
		f.AddExact(h)
	}
}

// addKey adds a stored document's keys to f (url may be empty).
func addKey(f *keyfilter.Filter, url string, main api.Hash) {
	if url != "" {
		f.AddURL(url)
	}
	f.AddExact(main)
}

// Prescreen returns a copy of the key filter of every stored canonical URL and main-text
// hash (neardup.KeyFilter): a client that finds neither of a page's keys in it knows the page
// is not a URL or exact duplicate without asking. It costs a copy of the filter (1.2 MB
// for a million keys at 1%).
//
// On a shared store (see openShared) it is a snapshot (sharedScreen): the last fill from
// the store, refilled in the background every Config.PrescreenRefresh, with this
// engine's adds since. Only the first call, before any fill is done, waits for one; if
// none succeeded, it returns a filter that holds every key, which costs clients
// lookups, never a missed duplicate.
func (d *Engine) Prescreen() *keyfilter.Filter {
	if d.shared {
		return d.sharedPrescreen()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.filter.Clone()
}

// addKeys adds a stored document's keys to the key filter (url may be empty); d.mu is
// held, and the document's write is done. Once the filter is full, a filter for twice its
// keys is filled from the store in the background (startRefill): a fill reads every URL and
// main-text posting, seconds at ten million documents, which under the lock would stall
// every add that long. Meanwhile the full filter takes the keys, at a rising
// false-positive rate (which costs lookups, never a missed key), and so does d.refill,
// for the new filter.
func (d *Engine) addKeys(url string, main api.Hash) {
	addKey(d.filter, url, main)
	d.screenGen.Add(1)
	if d.refill != nil {
		d.refill.add(url, main)
		return
	}
	d.growFilter()
}

// growFilter starts filling a filter for twice the keys once the key filter is full, unless
// a fill is under way or one failed less than moveRetry ago; d.mu is held.
func (d *Engine) growFilter() {
	if d.refill == nil && d.filter.Len() >= d.filter.Capacity() && time.Since(d.refillFailed) >= moveRetry {
		d.startRefill(2 * d.filter.Len())
	}
}

// startRefill starts filling a key filter for n keys in the background; d.mu is held.
// The new filter misses no key: the fill's reads see every write done before it starts
// (all under d.mu, before this call returns), and d.refill every key added after. A
// failed fill keeps the full filter.
func (d *Engine) startRefill(n int) {
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
		keys.addTo(f)
		d.filter = f
		d.screenGen.Add(1)
		// The keys added during the fill may have filled the new filter already; the
		// next add would start the next fill, but there may be no next add.
		d.growFilter()
	}()
}

// fillFilter returns a key filter sized for n keys holding every stored URL and exact
// key.
func (d *Engine) fillFilter(n int) (*keyfilter.Filter, error) {
	f := keyfilter.New(max(n, 1), d.cfg.FilterRate)
	hook := d.refillHook
	err := d.st.Postings(nsURL, func(key []byte, _ uint64) bool {
		if hook != nil {
			hook()
		}
		f.AddURL(string(key))
		return true
	})
	if err == nil {
		err = d.st.Postings(nsMain, func(key []byte, _ uint64) bool {
			var h api.Hash
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
