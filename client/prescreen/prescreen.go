package prescreen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/client"
	"github.com/neardup/neardup/extract"
)

// DefaultEvery is how often a Prescreen asks for a new snapshot by default.
const DefaultEvery = time.Minute

// Options configure a Prescreen. The zero value is the documented default of
// every field.
type Options struct {
	// Neardup must be the service's detector options, or at least agree with them on
	// everything that makes the two keys: URL (canonicalization), Extract, NoExtract and
	// Shingle (the normalized main text). With other options the local keys differ from
	// the service's and a "certainly absent" answer is wrong. The client and the service
	// must also run the same version of neardup's fingerprinting.
	Neardup neardup.Options
	// Every is how often the snapshot is refreshed in the background; 0 means
	// DefaultEvery (1 minute), a negative value never (call Refresh).
	Every time.Duration
	// Stale is how long a snapshot stays in use without the service confirming it (a
	// 200 or a 304 to a refresh); past it every answer is "maybe", so a client whose
	// refreshes fail asks the service rather than trust an ever older filter. 0 means
	// 5 * Every, or no limit when Every is negative; a negative value means no limit.
	Stale time.Duration
}

// Prescreen is the crawler-side pre-screen: a local copy of the service's key filter
// (GET /v1/prescreen, a neardup.KeyFilter of every stored canonical URL and main-text
// hash) and a local neardup.Fingerprinter to make a page's keys. It answers "certainly
// not stored" or "maybe stored" without a round trip; see the package documentation for
// exactly what that allows a caller to skip.
//
// A Prescreen is safe for concurrent use: lookups read one immutable snapshot, which a
// refresh replaces whole. Close stops its background refresh.
type Prescreen struct {
	c      *client.Client
	fpr    *neardup.Fingerprinter
	opt    Options
	budget time.Duration // the local extraction's time budget, 0 for none

	snap    atomic.Pointer[snapshot]
	lastErr atomic.Pointer[refreshError]
	mu      sync.Mutex // one refresh at a time

	stop func()
	done chan struct{}
	now  func() time.Time // time.Now; tests set it
}

// snapshot is one filter as the service sent it. It is never changed once published.
type snapshot struct {
	filter    *neardup.KeyFilter
	etag      string
	fetched   time.Time // when this filter was downloaded
	confirmed time.Time // when the service last said it is current
}

type refreshError struct{ err error }

// New downloads the service's key filter through c and returns a Prescreen that keeps it
// fresh every opt.Every until Close. It fails if the first snapshot cannot be had, or
// for options the Fingerprinter refuses (wrapping neardup.ErrOptions).
func New(ctx context.Context, c *client.Client, opt Options) (*Prescreen, error) {
	fpr, err := neardup.NewFingerprinter(opt.Neardup)
	if err != nil {
		return nil, fmt.Errorf("prescreen: %w", err)
	}
	if opt.Every == 0 {
		opt.Every = DefaultEvery
	}
	if opt.Stale == 0 && opt.Every > 0 {
		opt.Stale = 5 * opt.Every
	}
	var budget time.Duration
	if !opt.Neardup.NoExtract {
		switch t := opt.Neardup.Extract.Timeout; {
		case t == 0:
			budget = extract.DefaultTimeout
		case t > 0:
			budget = t
		}
	}
	p := &Prescreen{c: c, fpr: fpr, opt: opt, budget: budget, done: make(chan struct{}), now: time.Now}
	if _, err := p.Refresh(ctx); err != nil {
		return nil, err
	}
	bg, stop := context.WithCancel(context.Background())
	p.stop = stop
	if opt.Every < 0 {
		close(p.done)
		return p, nil
	}
	go p.loop(bg)
	return p, nil
}

func (p *Prescreen) loop(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.opt.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A refresh that hangs must not stop the next ones; its error is kept for Info.
		rctx, cancel := context.WithTimeout(ctx, max(p.opt.Every, time.Minute))
		p.Refresh(rctx)
		cancel()
	}
}

// Close stops the background refresh and waits for it to end. The Prescreen keeps
// answering from its last snapshot (until it is Stale). Close is idempotent.
func (p *Prescreen) Close() error {
	p.stop()
	<-p.done
	return nil
}

// Refresh asks the service for its filter now, sending the current snapshot's ETag, and
// reports whether the filter changed. On a 304 the snapshot stays and counts as
// confirmed; on an error it stays too, unconfirmed, and Info reports the error.
// Refreshes do not overlap: a second caller waits for the first.
func (p *Prescreen) Refresh(ctx context.Context) (changed bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	changed, err = p.refresh(ctx)
	if err != nil {
		p.lastErr.Store(&refreshError{err})
	} else {
		p.lastErr.Store(nil)
	}
	return changed, err
}

func (p *Prescreen) refresh(ctx context.Context) (bool, error) {
	old := p.snap.Load()
	var etag string
	if old != nil {
		etag = old.etag
	}
	body, etag, err := p.c.KeyFilter(ctx, etag)
	if err != nil {
		return false, err // the client's error names the request
	}
	now := p.now()
	if body == nil {
		if old == nil {
			return false, errors.New("prescreen: GET /v1/prescreen: 304 Not Modified without a snapshot to keep")
		}
		s := *old
		s.confirmed = now
		p.snap.Store(&s)
		return false, nil
	}
	defer body.Close()
	f, err := neardup.ReadKeyFilter(body)
	if err != nil {
		return false, fmt.Errorf("prescreen: GET /v1/prescreen: %w", err)
	}
	p.snap.Store(&snapshot{filter: f, etag: etag, fetched: now, confirmed: now})
	return true, nil
}

// current returns the snapshot to answer from, or nil when it is stale.
func (p *Prescreen) current() *snapshot {
	s := p.snap.Load()
	if p.opt.Stale > 0 && p.now().Sub(s.confirmed) > p.opt.Stale {
		return nil
	}
	return s
}

// SeenURL reports whether the URL's canonical form may be stored: false means it
// certainly was not when the snapshot was taken, so the service would call a page from
// it neither a URL duplicate nor changed (unless a document with that URL was added
// since). It needs no page, so a crawler can ask before fetching. It costs a URL
// canonicalization and a filter lookup, and no round trip. The error is the URL's, if it
// cannot be canonicalized (the service would refuse the document too).
func (p *Prescreen) SeenURL(rawURL string) (maybe bool, err error) {
	u, err := p.fpr.CanonicalURL(rawURL)
	if err != nil {
		return false, fmt.Errorf("prescreen: %w", err)
	}
	s := p.current()
	return s == nil || s.filter.HasURL(u), nil
}

// Result is what the pre-screen says of a fetched page. A false field is certain
// as of the snapshot; a true one means "ask the service".
type Result struct {
	// URL is false when the page's canonical URL was certainly not stored: the service
	// would not call the page a URL duplicate or changed. It is false for a page
	// without a URL.
	URL bool
	// Exact is false when the page's main-text hash was certainly not stored: the
	// service would not call it an exact duplicate.
	Exact bool
	// Fingerprints are the page's fingerprints, made locally: Query takes them to look
	// for near duplicates without sending the page.
	Fingerprints neardup.Fingerprints
}

// Maybe reports whether the service could call the page a URL duplicate, changed or an
// exact duplicate (URL || Exact). When it is false the service's verdict can only be
// unique or near-duplicate, and only the service can tell which.
func (r Result) Maybe() bool { return r.URL || r.Exact }

// Screen fingerprints the page with the local Fingerprinter and looks its canonical URL
// and main-text hash up in the snapshot. It costs what neardup.Fingerprinter.Fingerprint
// costs (extraction, about a millisecond for a typical page) and no round trip. A page
// whose local extraction may have run out of time (it took the whole
// extract.Options.Timeout and fell back to the visible text) gets Exact true, since the
// service may have extracted it in time and keyed it differently. The error is
// Fingerprint's, wrapping neardup.ErrDocument.
func (p *Prescreen) Screen(doc neardup.Document) (Result, error) {
	start := p.now()
	fp, err := p.fpr.Fingerprint(doc)
	if err != nil {
		return Result{}, fmt.Errorf("prescreen: %w", err)
	}
	r := Result{Fingerprints: fp}
	timedOut := doc.HTML != nil && p.budget > 0 && fp.Method == extract.MethodVisibleText && p.now().Sub(start) >= p.budget
	s := p.current()
	if s == nil {
		r.URL, r.Exact = fp.URL != "", true
		return r, nil
	}
	r.URL = fp.URL != "" && s.filter.HasURL(fp.URL)
	r.Exact = timedOut || s.filter.HasExact(fp.Main)
	return r, nil
}

// Info describes a Prescreen's snapshot.
type Info struct {
	// ETag is the service's tag of the snapshot.
	ETag string
	// Fetched is when the snapshot was downloaded; Confirmed when the service last said
	// it is current.
	Fetched, Confirmed time.Time
	// Stale reports that the snapshot is past Options.Stale and every answer
	// is "maybe".
	Stale bool
	// Keys, Capacity and FalsePositiveRate are the filter's (neardup.KeyFilter):
	// the rate is the chance that a key never stored answers "maybe".
	Keys, Capacity    int
	FalsePositiveRate float64
	// Err is the last refresh's error, nil when it succeeded.
	Err error
}

// Info describes the current snapshot and the last refresh.
func (p *Prescreen) Info() Info {
	s := p.snap.Load()
	i := Info{
		ETag: s.etag, Fetched: s.fetched, Confirmed: s.confirmed, Stale: p.current() == nil,
		Keys: s.filter.Len(), Capacity: s.filter.Capacity(), FalsePositiveRate: s.filter.FalsePositiveRate(),
	}
	if e := p.lastErr.Load(); e != nil {
		i.Err = e.err
	}
	return i
}
