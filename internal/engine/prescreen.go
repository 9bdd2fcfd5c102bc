package engine

import (
	"sync"
	"time"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/internal/keyfilter"
	"github.com/neardup/neardup/store"
)

// sharedScreen is a shared engine's pre-screen. The engine cannot keep a key filter up
// to date as on a store it alone writes (addKeys), since other processes add keys it
// never sees, and filling one from the store is a scan of every URL and main-text
// posting of the cluster, seconds at a million documents, which loads every master:
// too much for each request. So it keeps a snapshot, the last fill plus the keys this
// engine added since (its own adds show at once), and fills the next in the
// background once the snapshot is older than Config.PrescreenRefresh, one fill at a
// time however many requests come. Another process's add shows once a fill that began
// after it is done. Its times are Config.Now's, which tests set.
type sharedScreen struct {
	mu     sync.Mutex
	filter *keyfilter.Filter // the snapshot; nil until a fill succeeds
	began  time.Time         // when the snapshot's fill began
	// filling holds the keys this engine adds while a fill is under way (nil when none
	// is): the fill may have read their postings before they were written. done is
	// closed when that fill ends.
	filling *filterKeys
	done    chan struct{}
	failed  time.Time // when the last failed fill ended; the next waits PrescreenRefresh
	// hook, if set, is called as each fill begins; an error fails the fill. Tests count
	// the fills with it, and make them fail.
	hook func() error
}

// sharedPrescreen is Prescreen on a shared store: a copy of the snapshot, and a fill in
// the background when the snapshot is stale. Before the first snapshot it waits for the
// fill under way (Open starts one), and answers keyfilter.Full if that fails.
func (d *Engine) sharedPrescreen() *keyfilter.Filter {
	sc := &d.screen
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.filter == nil && sc.filling == nil {
		d.startFill()
	}
	if sc.filter == nil && sc.filling != nil {
		done := sc.done
		sc.mu.Unlock()
		<-done
		sc.mu.Lock()
	}
	if sc.filter == nil {
		return keyfilter.Full(d.cfg.FilterRate)
	}
	if d.cfg.Now().Sub(sc.began) >= d.cfg.PrescreenRefresh {
		d.startFill()
	}
	return sc.filter.Clone()
}

// startFill starts a fill of the next snapshot in the background, unless one is under
// way or the last failed less than PrescreenRefresh ago; d.screen.mu is held. A failed
// fill keeps the snapshot there is.
func (d *Engine) startFill() {
	sc := &d.screen
	if sc.filling != nil || d.cfg.Now().Sub(sc.failed) < d.cfg.PrescreenRefresh {
		return
	}
	sc.filling = &filterKeys{}
	sc.done = make(chan struct{})
	began, hook := d.cfg.Now(), sc.hook
	d.refills.Add(1)
	go func() {
		defer d.refills.Done()
		var f *keyfilter.Filter
		var err error
		if hook != nil {
			err = hook()
		}
		if err == nil {
			f, err = d.fillFilter(d.screenSize())
		}
		sc.mu.Lock()
		defer sc.mu.Unlock()
		keys := sc.filling
		sc.filling = nil
		close(sc.done)
		if err != nil {
			sc.failed = d.cfg.Now()
			return
		}
		keys.addTo(f)
		sc.filter, sc.began = f, began
		d.screenGen.Add(1)
	}()
}

// screenSize returns the keys a shared engine's next snapshot is sized for: two a
// stored document (URL and main text) with room for as many again, and at least
// Config.Expected. A store that does not count (store.Counter) gets Config.Expected.
func (d *Engine) screenSize() int {
	n := d.cfg.Expected
	if c, ok := d.st.(store.Counter); ok {
		if docs, err := c.Count(nsDoc); err == nil {
			n = max(n, 4*int(docs))
		}
	}
	return n
}

// screenAdd adds the keys of a document this engine stored to a shared engine's
// snapshot (url may be empty), and to the keys of the fill under way.
func (d *Engine) screenAdd(url string, main api.Hash) {
	sc := &d.screen
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.filter != nil {
		addKey(sc.filter, url, main)
		d.screenGen.Add(1)
	}
	if sc.filling != nil {
		sc.filling.add(url, main)
	}
}

// PrescreenGen returns a number that changes whenever Prescreen's answer may have, so
// that a caller can keep what it made of one answer (its encoding, say) until then. A
// Prescreen called after PrescreenGen returned g answers the filter of generation g or a
// later one. It costs an atomic load.
func (d *Engine) PrescreenGen() uint64 { return d.screenGen.Load() }
