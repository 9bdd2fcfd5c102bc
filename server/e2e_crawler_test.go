package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/client"
	"github.com/neardup/neardup/client/prescreen"
)

// outcome is what the crawler learnt of one page.
type outcome struct {
	seenURL bool             // SeenURL before the fetch
	screen  prescreen.Result // Screen after it
	floor   int64            // every add acknowledged at or before this number was in the snapshot
	v       neardup.Verdict
	err     error
	acked   int64 // the add's acknowledgement number
}

// crawler is the crawler side: the client, its pre-screen and the order of the
// acknowledged adds, which says what a pre-screen snapshot must hold.
type crawler struct {
	c     *client.Client
	ps    *prescreen.Prescreen
	acks  atomic.Int64 // adds acknowledged so far
	floor atomic.Int64 // the acks before the start of the newest completed refresh
	mu    sync.Mutex
	ackOf map[string]int64 // id -> acknowledgement number
}

func newCrawler(t *testing.T, ctx context.Context, c *client.Client) *crawler {
	t.Helper()
	ps, err := prescreen.New(ctx, c, prescreen.Options{Neardup: e2eOptions(), Every: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ps.Close() })
	return &crawler{c: c, ps: ps, ackOf: map[string]int64{}}
}

// refresh takes a new pre-screen snapshot. Everything acknowledged before it starts is
// in it; the floor only rises, as a newer snapshot holds whatever an older one held.
func (cr *crawler) refresh(ctx context.Context) error {
	n := cr.acks.Load()
	if _, err := cr.ps.Refresh(ctx); err != nil {
		return err
	}
	for f := cr.floor.Load(); n > f && !cr.floor.CompareAndSwap(f, n); f = cr.floor.Load() {
	}
	return nil
}

// screen is the crawler's two-tier flow before the add: SeenURL before fetching, Screen
// after.
func (cr *crawler) screen(p *crawlPage) (o outcome) {
	o.floor = cr.floor.Load()
	if p.doc.URL != "" {
		if o.seenURL, o.err = cr.ps.SeenURL(p.doc.URL); o.err != nil {
			return o
		}
	}
	// ... the fetch ...
	o.screen, o.err = cr.ps.Screen(p.doc)
	return o
}

func (cr *crawler) ack(ids ...string) int64 {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	var n int64
	for _, id := range ids {
		n = cr.acks.Add(1)
		cr.ackOf[id] = n
	}
	return n
}

// add sends one page with Add.
func (cr *crawler) add(ctx context.Context, p *crawlPage, o *outcome) {
	if o.err != nil {
		return
	}
	o.v, o.err = cr.c.Add(ctx, p.doc)
	if o.err == nil {
		o.acked = cr.ack(p.doc.ID)
	}
}

// addBatch sends pages with AddBatch, in order.
func (cr *crawler) addBatch(ctx context.Context, ps []*crawlPage, outs []*outcome) {
	var docs []neardup.Document
	var at []int
	for i, p := range ps {
		if outs[i].err == nil {
			docs, at = append(docs, p.doc), append(at, i)
		}
	}
	res, _ := cr.c.AddBatch(ctx, docs) // each Result carries its request's error
	var ids []string
	for j, i := range at {
		outs[i].v, outs[i].err = res[j].Verdict, res[j].Err
		if outs[i].err == nil {
			ids = append(ids, ps[i].doc.ID)
		}
	}
	n := cr.ack(ids...)
	for _, i := range at {
		if outs[i].err == nil {
			outs[i].acked = n
		}
	}
}

// honest checks the pre-screen's "certainly absent" answers against the verdict: SeenURL
// false allows neither url-duplicate nor changed, Screen's Exact false no exact
// duplicate, unless the stored document behind the verdict was acknowledged after the
// snapshot was taken.
func (cr *crawler) honest(t *testing.T, p *crawlPage, o *outcome) {
	t.Helper()
	cr.mu.Lock()
	defer cr.mu.Unlock()
	inSnapshot := func(id string) bool { n, ok := cr.ackOf[id]; return ok && n <= o.floor }
	v := o.v
	if v.Kind == neardup.URLDuplicate || v.Kind == neardup.Changed {
		if m := v.Matches[0]; inSnapshot(m.ID) && (!o.seenURL || !o.screen.URL) {
			t.Errorf("%s: pre-screen said its URL was certainly not stored (SeenURL %t, Screen %t), the service answered %v of %s, stored before the snapshot",
				p.doc.ID, o.seenURL, o.screen.URL, v.Kind, m.ID)
		}
	}
	if v.Kind == neardup.ExactDuplicate && !o.screen.Exact {
		for _, m := range v.Matches {
			if inSnapshot(m.ID) {
				t.Errorf("%s: Screen said its main text was certainly not stored, the service answered exact-duplicate of %s, stored before the snapshot", p.doc.ID, m.ID)
				break
			}
		}
	}
}

// kindCounts formats verdict counts.
func kindCounts(c map[neardup.Kind]int) string {
	var b strings.Builder
	for k := neardup.Unique; k <= neardup.Changed; k++ {
		fmt.Fprintf(&b, "%s %d, ", k, c[k])
	}
	return strings.TrimSuffix(b.String(), ", ")
}
