package neardup

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	t.Run("Across", func(t *testing.T) {
		testSharedAcross(t, replicas(t, 2, Options{PrescreenRefresh: 50 * time.Millisecond}))
	})
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
	t.Run("Expiry", func(t *testing.T) {
		var now atomic.Int64
		now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
		clock := func() time.Time { return time.Unix(0, now.Load()) }
		testSharedExpiry(t, replicas(t, 2, Options{MaxAge: time.Hour, Now: clock}), &now)
		checkSeenOrdered(t, c.Addrs, fmt.Sprintf("d%d", n.Load()), 11) // the 10 young documents and "new"
	})
	t.Run("SimRace", func(t *testing.T) {
		testSimRace(t, replicas(t, 2, Options{Pipeline: Pipeline{Near: NearSimHash}, NoMinHash: true}))
	})
	t.Run("NearMany", func(t *testing.T) { testSharedNear(t, replicas(t, 1, Options{})[0]) })
	t.Run("Keep", func(t *testing.T) {
		testSharedKeep(t, replicas(t, 2, Options{}), replicas(t, 2, Options{Pipeline: Pipeline{Keep: KeepPolicy{KeepFirstSeen, KeepSmallestID}}}))
	})
	t.Run("Options", func(t *testing.T) {
		s, err := redisstore.Open(redisstore.Options{Addrs: c.Addrs, Prefix: "opts"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s9, err := redisstore.Open(redisstore.Options{Addrs: c.Addrs, Prefix: "opts9"})
		if err != nil {
			t.Fatal(err)
		}
		defer s9.Close()
		if _, err := OpenDetector(s9, Options{Pipeline: Pipeline{Distance: 9}}); !errors.Is(err, ErrOptions) {
			t.Errorf("OpenDetector on a shared store with Distance 9 (220 SimHash tables): %v, want ErrOptions", err)
		}
		d, err := OpenDetector(s, Options{Pipeline: Pipeline{Near: NearMinHash}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Near(Query{SimHash: 1, HasSimHash: true}); !errors.Is(err, ErrOptions) {
			t.Errorf("Near by a SimHash alone with Near minhash on a shared store: %v, want ErrOptions", err)
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
	// A SimHash alone, three bits off, finds them by the SimHash tables in the store.
	if ms, err := b.Near(Query{SimHash: e.SimHash ^ 0x8000_0000_0100_0001, HasSimHash: true}); err != nil || len(ms) != 2 {
		t.Errorf("Near by a SimHash alone, 3 bits off, on the other replica = %v, %v; want documents 1 and 3", ms, err)
	}
	if ms, err := b.Near(Query{SimHash: e.SimHash ^ 0xf, HasSimHash: true}); err != nil || len(ms) != 0 {
		t.Errorf("Near by a SimHash 4 bits off = %v, %v; want none", ms, err)
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
	if f := b.Prescreen(); !f.HasURL(w) {
		t.Errorf("the pre-screen of a replica lacks the URL it just added")
	}
	// The other replica's snapshot shows it once refilled (PrescreenRefresh, 50ms here).
	for deadline := time.Now().Add(10 * time.Second); !a.Prescreen().HasURL(w); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pre-screen of one replica lacks the URL the other added 10s before")
		}
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

// testSimRace is testNearRace for detectors that find near copies by SimHash alone
// (the SimHash tables in the store): of two copies a few words apart posted at the same
// instant, one is unique and the other a near duplicate of it when their SimHashes are
// within Distance, and both are unique otherwise.
func testSimRace(t *testing.T, ds []*Detector) {
	const races = 150
	within := 0
	for i := range races {
		base := words(uint64(5000+i), 300)
		var docs [2]Document
		var fps [2]uint64
		for j := range docs {
			docs[j] = Document{ID: fmt.Sprintf("s%d-%d", i, j), Text: strings.Join(append(base[:299:299], fmt.Sprintf("x%d", j)), " ")}
			e, err := ds[0].Fingerprinter().Fingerprint(docs[j])
			if err != nil {
				t.Fatal(err)
			}
			fps[j] = e.SimHash
		}
		near := bits.OnesCount64(fps[0]^fps[1]) <= DefaultDistance
		if near {
			within++
		}
		var vs [2]Verdict
		var errs [2]error
		var wg sync.WaitGroup
		start := make(chan struct{})
		for j, d := range ds {
			wg.Go(func() {
				<-start
				vs[j], errs[j] = d.Check(docs[j])
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs[:]...); err != nil {
			t.Fatalf("race %d: %v", i, err)
		}
		u, o := vs[0], vs[1]
		if o.Kind == Unique {
			u, o = o, u
		}
		ok := u.Kind == Unique && o.Kind == NearDuplicate && len(o.Matches) > 0 && o.Matches[0].ID == u.ID
		if !near {
			ok = u.Kind == Unique && o.Kind == Unique
		}
		if !ok {
			t.Fatalf("race %d (SimHashes %d bits apart): verdicts %v (%v) and %v (%v)", i, bits.OnesCount64(fps[0]^fps[1]), vs[0].Kind, vs[0].Matches, vs[1].Kind, vs[1].Matches)
		}
	}
	if within < races/2 {
		t.Errorf("only %d of %d pairs were within the distance: the test hardly races near copies", within, races)
	}
}

// testSharedExpiry checks that a document older than MaxAge is removed by the next add
// on any replica, and one younger is kept: the sweep reads the last-seen namespace in
// order, up to the cutoff, from the store.
// checkSeenOrdered fails the test unless the shared index under prefix keeps its
// last-seen postings (the engine's namespace 4) in order: a shared detector asks a
// store.Orderer for that before it writes, so that expiry reads up to its cutoff and no
// further rather than every master's postings. The order is seen through Order's
// contract: asking again changes nothing, but asking for a namespace written unordered
// hides the postings written before from Postings.
func checkSeenOrdered(t *testing.T, addrs []string, prefix string, want int) {
	t.Helper()
	s, err := redisstore.Open(redisstore.Options{Addrs: addrs, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Order(4); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.Postings(4, func([]byte, uint64) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Errorf("the last-seen postings, once ordered, hold %d documents, want %d (were they written before the detector ordered them?)", n, want)
	}
}

func testSharedExpiry(t *testing.T, ds []*Detector, now *atomic.Int64) {
	for i := range 30 {
		if _, err := ds[i%2].Check(Document{ID: fmt.Sprintf("old%d", i), Text: fmt.Sprintf("old text %d", i)}); err != nil {
			t.Fatal(err)
		}
		now.Add(int64(time.Second))
	}
	now.Add(int64(time.Hour - 10*time.Second)) // the last ten are younger than an hour
	if _, err := ds[1].Check(Document{ID: "new", Text: "new text"}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		_, ok, err := ds[0].Get(fmt.Sprintf("old%d", i))
		if err != nil || ok != (i >= 20) {
			t.Errorf("Get(old%d) after the sweep = %v, %v; want %v", i, ok, err, i >= 20)
		}
	}
}

// testSharedNear checks Near on a shared store, which reads a query's postings and
// candidates' records a call a master (store.MultiReader), against Near on a memory
// store holding the same documents, where the SimHash index and the bands are in
// memory: by both fingerprints, by a SimHash alone up to 4 bits off, and by a
// signature alone.
func testSharedNear(t *testing.T, shared *Detector) {
	mem, err := NewDetector(Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := func(i int) []string { return words(uint64(i%40), 150) } // 40 originals, copies of each
	for i := range 120 {
		w := text(i)
		w[i%150] = fmt.Sprintf("x%d", i) // copies differ in a word
		doc := Document{ID: fmt.Sprint(i), URL: fmt.Sprintf("https://example.com/%d", i), Text: strings.Join(w, " ")}
		for _, d := range []*Detector{shared, mem} {
			if _, err := d.Check(doc); err != nil {
				t.Fatal(err)
			}
		}
	}
	found := 0
	for i := range 60 {
		w := text(i)
		w[(i+7)%150], w[(i+70)%150] = "q1", "q2"
		e, err := mem.Fingerprinter().Fingerprint(Document{ID: "q", Text: strings.Join(w, " ")})
		if err != nil {
			t.Fatal(err)
		}
		flip := uint64(1)<<(i%64) | uint64(1)<<((i*7)%64) | uint64(1)<<((i*13)%64) | uint64(1)<<((i*29)%64)
		if i%3 == 0 {
			flip &= flip - 1 // 3 bits or fewer
		}
		for _, q := range []Query{
			{SimHash: e.SimHash, HasSimHash: true, MinHash: e.MinHash},
			{SimHash: e.SimHash ^ flip, HasSimHash: true},
			{MinHash: e.MinHash},
		} {
			want, err := mem.Near(q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := shared.Near(q)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("query %d (%x, %d values): shared Near = %v, memory Near = %v", i, q.SimHash, len(q.MinHash), got, want)
			}
			found += len(want)
		}
	}
	if found < 60 {
		t.Fatalf("%d matches in all: the queries found too little to compare", found)
	}
}

// TestSharedReshard adds a master to a cluster under way and moves slots to it from two
// others (redis-cli --cluster reshard: the keys migrate one by one, and the clients get
// MOVED and ASK) while two replicas race URL, exact and near copies as TestShared's do
// on a still cluster: every race still gives exactly one unique and the other a
// duplicate of it, and no add fails.
func TestSharedReshard(t *testing.T) {
	c := redistest.Start(t)
	var ds []*Detector
	for range 2 {
		s, err := redisstore.Open(redisstore.Options{Addrs: c.Addrs, Prefix: "reshard"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		d, err := OpenDetector(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	testRace(t, ds, func(i, j int) Document { // some keys to move
		return Document{ID: fmt.Sprintf("p%d-%d", i, j), Text: strings.Join(words(uint64(5000+i), 80), " ")}
	}, ExactDuplicate)
	added := c.AddMaster(t)
	moved := make(chan error, 1)
	start := time.Now()
	var took time.Duration
	go func() {
		err := c.Reshard(0, added, 1000)
		if err == nil {
			err = c.Reshard(1, added, 1000)
		}
		moved <- err
	}()
	rounds := 0
	for done := false; !done; rounds++ {
		select {
		case err := <-moved:
			if err != nil {
				t.Fatal(err)
			}
			done, took = true, time.Since(start)
		default:
		}
		off := 10_000 * (rounds + 1)
		testRace(t, ds, func(i, j int) Document {
			return Document{ID: fmt.Sprintf("u%d-%d", off+i, j), URL: fmt.Sprintf("https://example.com/%d", off+i),
				Text: strings.Join(words(uint64(off+i), 80), " ")}
		}, URLDuplicate)
		testRace(t, ds, func(i, j int) Document {
			return Document{ID: fmt.Sprintf("e%d-%d", off+i, j), Text: strings.Join(words(uint64(off+5000+i), 80), " ")}
		}, ExactDuplicate)
		if rounds == 0 {
			testNearRace(t, ds)
		}
	}
	// The races ran from the move's start until a round began after its end.
	t.Logf("2,000 slots moved to a new master in less than %v, with %d rounds of 600 races (the first with 200 near ones too)", took.Round(time.Millisecond), rounds)
}

// testSharedKeep checks keep policies across replicas: the survivor a verdict names is
// chosen among the copies whichever replica stored each, by priority (the default
// policy, on byPriority) and by fetch time (KeepFirstSeen, on byFetch).
func testSharedKeep(t *testing.T, byPriority, byFetch []*Detector) {
	text := strings.Join(words(77, 120), " ")
	at := func(s int) time.Time { return time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC) }
	for i, c := range []struct {
		ds       []*Detector
		doc      Document
		survivor string
	}{
		{byPriority, Document{ID: "a", Text: text, Priority: 1}, "a"},
		{byPriority, Document{ID: "b", Text: text, Priority: 5}, "b"},
		{byPriority, Document{ID: "c", Text: text, Priority: 3}, "b"},
		{byFetch, Document{ID: "x", Text: text, FetchTime: at(10)}, "x"},
		{byFetch, Document{ID: "y", Text: text, FetchTime: at(5)}, "y"},
		{byFetch, Document{ID: "z", Text: text, FetchTime: at(20)}, "y"},
	} {
		v, err := c.ds[i%2].Check(c.doc) // each copy on the other replica than the one before
		if err != nil {
			t.Fatal(err)
		}
		if v.Survivor != c.survivor {
			t.Errorf("%s: %v, survivor %q; want %q", c.doc.ID, v.Kind, v.Survivor, c.survivor)
		}
	}
}
