package engine

import (
	"slices"

	"github.com/neardup/neardup/api"
)

// change is one write of the detector, kept for the adds whose reads ran meanwhile.
type change struct {
	added   *Record
	removed []*Record
}

// maxChanges is how many changes the detector keeps: an add whose reads overlapped more
// writes than that reads again under the lock.
const maxChanges = 1024

// logChange records a write; d.mu is held.
func (d *Engine) logChange(c change) {
	d.gen++
	if len(d.changes) == maxChanges {
		copy(d.changes, d.changes[1:])
		d.changes = d.changes[:maxChanges-1]
	}
	d.changes = append(d.changes, c)
}

// since returns the changes made after generation gen, or false when they are no longer
// all kept; d.mu is held.
func (d *Engine) since(gen uint64) ([]change, bool) {
	n := d.gen - gen
	if n > uint64(len(d.changes)) {
		return nil, false
	}
	return d.changes[uint64(len(d.changes))-n:], true
}

// merge brings a plan up to date with changes made after its reads, as if the reads had
// come after them: added documents with the entry's main text or near content join its
// matches. It reports false when a change touches what the plan stands on (a document
// with the entry's id or URL was added, or one the plan holds was removed): the plan
// must be read again.
func (d *Engine) merge(e *api.Entry, p *plan, cs []change) bool {
	holds := func(seq uint64) bool {
		has := func(r *Record) bool { return r.seq == seq }
		return (p.self != nil && p.self.seq == seq) || (p.seen != nil && p.seen.seq == seq) ||
			(p.replaced != nil && p.replaced.seq == seq) ||
			slices.ContainsFunc(p.exact, has) || slices.ContainsFunc(p.near, has)
	}
	mine := func(r *Record) bool { return r.ID == e.ID || (e.URL != "" && r.URL == e.URL) }
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
		case len(p.exact) == 0 && d.indexed(e) && d.indexed(&a.Entry) && d.near(d.compare(e, a), d.cfg.Near):
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
func (d *Engine) hints(e *api.Entry) keyHints {
	if d.shared {
		// Other processes add keys this filter never sees.
		return keyHints{url: e.URL != "", main: !e.Main.Empty()}
	}
	return keyHints{url: e.URL != "" && d.filter.HasURL(e.URL), main: !e.Main.Empty() && d.filter.HasExact(e.Main)}
}
