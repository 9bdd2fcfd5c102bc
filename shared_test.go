package neardup

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/store/redisstore"
)

// TestShared runs detectors as service replicas do: several, each with its own client,
// over one real Redis Cluster. Each subtest uses a key prefix of its own.
func TestShared(t *testing.T) {
	c := redistest.Start(t)
	var n atomic.Int64
	// replicas opens k detectors over one new, empty index.
	replicas := func(t *testing.T, k int, opt Options) []*Detector {
		t.Helper()
		prefix := fmt.Sprintf("d%d", n.Add(1))
		var ds []*Detector
		for range k {
			s, err := redisstore.Open(redisstore.Options{Addrs: c.Addrs, Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			d, err := OpenDetector(s, opt)
			if err != nil {
				t.Fatal(err)
			}
			ds = append(ds, d)
		}
		return ds
	}
	t.Run("Across", func(t *testing.T) { testSharedAcross(t, replicas(t, 2, Options{})) })
	t.Run("URLRace", func(t *testing.T) {
		testRace(t, replicas(t, 2, Options{}), func(i, j int) Document {
			return Document{ID: fmt.Sprintf("u%d-%d", i, j), URL: fmt.Sprintf("https://example.com/%d", i),
				Text: strings.Join(words(uint64(i), 80), " ")}
		}, URLDuplicate)
	})
	t.Run("ExactRace", func(t *testing.T) {
		testRace(t, replicas(t, 2, Options{}), func(i, j int) Document {
			return Document{ID: fmt.Sprintf("e%d-%d", i, j), URL: fmt.Sprintf("https://example.com/%d/%d", i, j),
				Text: strings.Join(words(uint64(i), 80), " ")}
		}, ExactDuplicate)
	})
	t.Run("NearRace", func(t *testing.T) { testNearRace(t, replicas(t, 2, Options{})) })
	t.Run("Options", func(t *testing.T) {
		s, err := redisstore.Open(redisstore.Options{Addrs: c.Addrs, Prefix: "opts"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := OpenDetector(s, Options{Pipeline: Pipeline{Near: NearSimHash}}); err == nil {
			t.Errorf("OpenDetector on a shared store with Near simhash: no error; it finds candidates by bands")
		}
	})
}

// testSharedAcross checks that what one replica adds or removes, another sees at once.
func testSharedAcross(t *testing.T, ds []*Detector) {
	a, b := ds[0], ds[1]
	text := strings.Join(words(7, 200), " ")
	check := func(d *Detector, doc Document, want Kind) Verdict {
		t.Helper()
		v, err := d.Check(doc)
		if err != nil {
			t.Fatal(err)
		}
		if v.Kind != want {
			t.Fatalf("Check(%s) = %v, want %v", doc.ID, v.Kind, want)
		}
		return v
	}
	x := check(a, Document{ID: "1", URL: "https://a.example/x", Text: text}, Unique).URL
	check(b, Document{ID: "2", URL: "https://a.example/x", Text: text}, URLDuplicate)
	check(b, Document{ID: "3", URL: "https://a.example/y", Text: text}, ExactDuplicate)
	if v, err := b.Peek(Document{ID: "p", URL: "https://a.example/p", Text: text}); err != nil || v.Kind != ExactDuplicate || v.Added {
		t.Errorf("Peek of the same text on the other replica = %v, added %v, %v", v.Kind, v.Added, err)
	}
	e, err := a.Fingerprinter().Fingerprint(Document{ID: "q", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	if ms, err := b.Near(Query{SimHash: e.SimHash, HasSimHash: true, MinHash: e.MinHash}); err != nil || len(ms) != 2 {
		t.Errorf("Near by both fingerprints on the other replica = %v, %v; want documents 1 and 3", ms, err)
	}
	if _, err := b.Near(Query{SimHash: e.SimHash, HasSimHash: true}); !errors.Is(err, ErrOptions) {
		t.Errorf("Near by a SimHash alone on a shared store: %v, want ErrOptions", err)
	}
	near := strings.Join(append(words(7, 200)[:195], "changed", "a", "few", "words", "here"), " ")
	v := check(b, Document{ID: "4", URL: "https://a.example/z", Text: near}, NearDuplicate)
	if v.Matches[0].ID != "1" && v.Matches[0].ID != "3" {
		t.Errorf("near duplicate of %v, want of 1 or 3", v.Matches)
	}
	if s, ok, err := a.Get("4"); err != nil || !ok || s.ID != "4" {
		t.Errorf("Get(4) on the other replica = %v, %v, %v", s.ID, ok, err)
	}
	if ok, err := a.Remove("4"); !ok || err != nil {
		t.Errorf("Remove(4) = %v, %v", ok, err)
	}
	if _, ok, err := b.Get("4"); ok || err != nil {
		t.Errorf("Get(4) after the other replica removed it = %v, %v", ok, err)
	}
	// The pre-screen holds what every replica added.
	f := a.Prescreen()
	w := check(b, Document{ID: "5", URL: "https://a.example/w", Text: "a text of its own, once"}, Unique).URL
	if !f.HasURL(x) || f.HasURL(w) {
		t.Errorf("the pre-screen before %s was added: HasURL(%s) %v, HasURL(%s) %v; want true, false", w, x, f.HasURL(x), w, f.HasURL(w))
	}
	if f := a.Prescreen(); !f.HasURL(w) {
		t.Errorf("the pre-screen of one replica lacks the URL the other just added")
	}
	check(b, Document{ID: "1", URL: "https://a.example/x", Text: "other text altogether, so the URL's content changed"}, Changed)
	// 1, 2 (a URL duplicate, not stored), 3, 4 (removed), 5, and 1 replaced: 3
	// documents, counted alike by both, the one that added most and the other.
	for i, d := range ds {
		if n := d.Len(); n != 3 {
			t.Errorf("replica %d: Len = %d, want 3", i, n)
		}
	}
}

// testRace posts doc(i, 0) and doc(i, 1) to two replicas at the same instant, for
// hundreds of i: exactly one of each pair is unique, and the other is a dup of it.
func testRace(t *testing.T, ds []*Detector, doc func(i, j int) Document, dup Kind) {
	const races = 300
	for i := range races {
		var vs [2]Verdict
		var errs [2]error
		var wg sync.WaitGroup
		start := make(chan struct{})
		for j, d := range ds {
			wg.Go(func() {
				<-start
				vs[j], errs[j] = d.Check(doc(i, j))
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("race %d: %v", i, err)
			}
		}
		u, o := vs[0], vs[1]
		if o.Kind == Unique {
			u, o = o, u
		}
		if u.Kind != Unique || o.Kind != dup || len(o.Matches) == 0 || o.Matches[0].ID != u.ID {
			t.Fatalf("race %d: verdicts %v (%v) and %v (%v); want one unique and the other a %v of it",
				i, vs[0].Kind, vs[0].Matches, vs[1].Kind, vs[1].Matches, dup)
		}
	}
}

// testNearRace posts two near (not exact) copies to two replicas at the same instant,
// hundreds of times: as with URLs and exact content, exactly one is unique and the other a
// near duplicate of it, since each add is conditioned on the band postings it read. A
// third copy, posted after both, matches both.
func testNearRace(t *testing.T, ds []*Detector) {
	const races = 200
	for i := range races {
		base := words(uint64(1000+i), 200)
		var vs [2]Verdict
		var errs [2]error
		var wg sync.WaitGroup
		start := make(chan struct{})
		for j, d := range ds {
			wg.Go(func() {
				<-start
				text := strings.Join(append(base[:198:198], fmt.Sprintf("x%d", j), "end"), " ")
				vs[j], errs[j] = d.Check(Document{ID: fmt.Sprintf("n%d-%d", i, j), Text: text})
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("race %d: %v", i, err)
			}
		}
		u, o := vs[0], vs[1]
		if o.Kind == Unique {
			u, o = o, u
		}
		if u.Kind != Unique || o.Kind != NearDuplicate || len(o.Matches) == 0 || o.Matches[0].ID != u.ID {
			t.Fatalf("race %d: verdicts %v (%v) and %v (%v); want one unique and the other a near duplicate of it",
				i, vs[0].Kind, vs[0].Matches, vs[1].Kind, vs[1].Matches)
		}
		v, err := ds[0].Check(Document{ID: fmt.Sprintf("n%d-late", i), Text: strings.Join(append(base[:198:198], "late", "end"), " ")})
		if err != nil {
			t.Fatal(err)
		}
		if v.Kind != NearDuplicate || len(v.Matches) < 2 {
			t.Fatalf("race %d: a later copy is %v with matches %v; want a near duplicate of both", i, v.Kind, v.Matches)
		}
	}
}
