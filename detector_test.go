package neardup

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/store/pebblestore"
)

// words returns n pseudo-random words from a small vocabulary, deterministic in seed.
func words(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%d", r.IntN(5000))
	}
	return out
}

// forStores runs a detector test over each backend: newDetector opens a detector on an
// empty store of it.
func forStores(t *testing.T, test func(t *testing.T, newDetector func(testing.TB, Options) *Detector)) {
	t.Run("memory", func(t *testing.T) { test(t, newDetector) })
	t.Run("pebble", func(t *testing.T) {
		test(t, func(t testing.TB, opt Options) *Detector {
			t.Helper()
			d, err := OpenDetector(openPebble(t, t.TempDir()), opt)
			if err != nil {
				t.Fatal(err)
			}
			return d
		})
	})
}

// openPebble opens a pebble store in dir, closed when the test ends.
func openPebble(t testing.TB, dir string) *pebblestore.DB {
	t.Helper()
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newDetector(t testing.TB, opt Options) *Detector {
	t.Helper()
	d, err := NewDetector(opt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func check(t testing.TB, d *Detector, doc Document) Verdict {
	t.Helper()
	v, err := d.Check(doc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDetectorVerdicts(t *testing.T) { forStores(t, testDetectorVerdicts) }

func testDetectorVerdicts(t *testing.T, newDetector func(testing.TB, Options) *Detector) {
	base := strings.Join(words(1, 300), " ")
	edited := strings.Replace(base, "w", "W", 1) // same after case folding
	near := base + " and a few more words at the end"
	other := strings.Join(words(2, 300), " ")

	d := newDetector(t, Options{})
	steps := []struct {
		doc      Document
		kind     Kind
		survivor string
		level    Level
		added    bool
	}{
		{Document{ID: "a", URL: "http://example.com/a", Text: base}, Unique, "a", LevelNone, true},
		{Document{ID: "b", URL: "http://example.com/b", Text: base}, ExactDuplicate, "a", LevelRaw, true},
		{Document{ID: "c", Text: edited}, ExactDuplicate, "a", LevelText, true},
		{Document{ID: "d", Text: near, Priority: 1}, NearDuplicate, "d", LevelNone, true},
		{Document{ID: "e", URL: "http://EXAMPLE.com/a#top", Text: base}, URLDuplicate, "a", LevelRaw, false},
		{Document{ID: "f", Text: other}, Unique, "f", LevelNone, true},
		{Document{ID: "g", URL: "http://example.com/a", Text: other + " changed"}, Changed, "f", LevelNone, true},
	}
	for i, s := range steps {
		v := check(t, d, s.doc)
		if v.Kind != s.kind || v.Survivor != s.survivor || v.Added != s.added {
			t.Fatalf("step %d (%s): got %v survivor %s added %v, want %v survivor %s added %v; %+v",
				i, s.doc.ID, v.Kind, v.Survivor, v.Added, s.kind, s.survivor, s.added, v)
		}
		if s.kind != Unique && (len(v.Matches) == 0 || v.Matches[0].Level != s.level) {
			t.Fatalf("step %d (%s): matches %+v, want first at level %v", i, s.doc.ID, v.Matches, s.level)
		}
	}
	// g replaced a under its URL: a is gone, g is stored, and the url maps to g.
	if d.Len() != 5 {
		t.Fatalf("Len %d, want 5 (a replaced by g, e not added)", d.Len())
	}
	v := check(t, d, Document{ID: "h", URL: "http://example.com/a", Text: other + " changed"})
	if v.Kind != URLDuplicate || v.Matches[0].ID != "g" {
		t.Fatalf("after change: %+v", v)
	}
	// The changed document's matches include its near-duplicate f.
	if ok, err := d.Remove("f"); !ok || err != nil {
		t.Fatal("Remove f", err)
	}
	if ok, _ := d.Remove("f"); ok {
		t.Fatal("Remove f twice")
	}
}

func TestDetectorPeekAndSelf(t *testing.T) { forStores(t, testDetectorPeekAndSelf) }

func testDetectorPeekAndSelf(t *testing.T, newDetector func(testing.TB, Options) *Detector) {
	d := newDetector(t, Options{})
	text := strings.Join(words(3, 100), " ")
	if v, _ := d.Peek(Document{ID: "a", Text: text}); v.Kind != Unique || v.Added {
		t.Fatalf("peek on empty: %+v", v)
	}
	if d.Len() != 0 {
		t.Fatal("Peek stored a document")
	}
	check(t, d, Document{ID: "a", Text: text})
	if v, _ := d.Peek(Document{ID: "b", Text: text}); v.Kind != ExactDuplicate || v.Added {
		t.Fatalf("peek: %+v", v)
	}
	// The same id again is a replacement, never its own duplicate.
	if v := check(t, d, Document{ID: "a", Text: text}); v.Kind != Unique || d.Len() != 1 {
		t.Fatalf("re-check of a: %+v, Len %d", v, d.Len())
	}
}

func TestDetectorErrors(t *testing.T) {
	d := newDetector(t, Options{})
	for _, doc := range []Document{{}, {ID: "x", HTML: []byte("<p>a"), Text: "a"}} {
		if _, err := d.Check(doc); err == nil {
			t.Errorf("Check(%+v) succeeded", doc)
		}
	}
	for _, o := range []Options{{Pipeline: Pipeline{Threshold: 1.5}}, {Pipeline: Pipeline{Near: 9}}, {Pipeline: Pipeline{Near: NearExact}}, {Pipeline: Pipeline{MinHashK: 1 << 20}}, {NoMinHash: true}, {Pipeline: Pipeline{Near: NearSimHash}, NoSimHash: true}, {Pipeline: Pipeline{Near: NearBoth}, NoSimHash: true, NoMinHash: true}, {Pipeline: Pipeline{Keep: KeepPolicy{99}}}, {FilterRate: 2}, {MaxAge: -1}, {PrescreenRefresh: -1}} {
		if _, err := NewDetector(o); err == nil {
			t.Errorf("NewDetector(%+v) succeeded", o)
		}
	}
}

func TestDetectorEmptyDocuments(t *testing.T) {
	d := newDetector(t, Options{})
	check(t, d, Document{ID: "a", Text: ""})
	// Texts empty once normalized are duplicates of nothing: there is nothing to compare
	// (they were all exact duplicates of each other), and never near-duplicates of
	// everything.
	for _, doc := range []Document{{ID: "b", Text: "  "}, {ID: "c", Text: "!!!"}, {ID: "d", Text: "!!!"},
		{ID: "e", HTML: []byte("<html><body><img src=x></body></html>")}, {ID: "f", Text: "word"}} {
		if v, err := d.Peek(doc); err != nil || v.Kind != Unique {
			t.Fatalf("peek of %+v after empty ones: %+v, %v", doc, v, err)
		}
		if v := check(t, d, doc); v.Kind != Unique {
			t.Fatalf("%+v after empty ones: %+v", doc, v)
		}
	}
	// The same URL is still a URL duplicate.
	check(t, d, Document{ID: "u1", URL: "http://example.com/", Text: "?"})
	if v := check(t, d, Document{ID: "u2", URL: "http://example.com/", Text: "?"}); v.Kind != URLDuplicate {
		t.Fatalf("same URL, both empty: %+v", v)
	}
}

// TestDetectorPeekAgreesWithCheck: under every keep rule, Peek names the survivor Check
// then does, for a document without a fetch time against stored ones with and without.
func TestDetectorPeekAgreesWithCheck(t *testing.T) {
	text := strings.Join(words(5, 100), " ")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, keep := range []KeepPolicy{{KeepPriority}, {KeepFirstSeen}, {KeepLastSeen}, {KeepLongest}, {KeepShortest}, {KeepSmallestID}, DefaultKeepPolicy} {
		now := t0
		d := newDetector(t, Options{Pipeline: Pipeline{Keep: keep}, Now: func() time.Time { now = now.Add(time.Minute); return now }})
		check(t, d, Document{ID: "p1", Text: text})
		check(t, d, Document{ID: "p2", Text: text + " more", FetchTime: t0.Add(-time.Hour), Priority: 1})
		for _, doc := range []Document{{ID: "t9", Text: text}, {ID: "t8", Text: text, FetchTime: t0.Add(-2 * time.Hour)}, {ID: "a0", Text: text + " more words"}} {
			peek, err := d.Peek(doc)
			if err != nil {
				t.Fatal(err)
			}
			v := check(t, d, doc)
			v.Added = false
			if !reflect.DeepEqual(peek, v) {
				t.Errorf("keep %v, %s: peek %+v, check %+v", keep, doc.ID, peek, v)
			}
		}
	}
}

func TestDetectorKeepPolicy(t *testing.T) { forStores(t, testDetectorKeepPolicy) }

func testDetectorKeepPolicy(t *testing.T, newDetector func(testing.TB, Options) *Detector) {
	text := strings.Join(words(4, 200), " ")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		keep KeepPolicy
		want string
	}{
		{nil, "hi"},                        // priority first
		{KeepPolicy{KeepFirstSeen}, "old"}, // fetched first
		{KeepPolicy{KeepLastSeen}, "new"},
		{KeepPolicy{KeepLongest}, "long"},
		{KeepPolicy{KeepShortest}, "hi"}, // three tie: smallest id
		{KeepPolicy{KeepSmallestID}, "hi"},
	} {
		d := newDetector(t, Options{Pipeline: Pipeline{Keep: c.keep}, Now: func() time.Time { return t0.Add(time.Hour) }})
		check(t, d, Document{ID: "new", Text: text, FetchTime: t0.Add(3 * time.Minute)})
		check(t, d, Document{ID: "old", Text: text, FetchTime: t0})
		check(t, d, Document{ID: "hi", Text: text, Priority: 5, FetchTime: t0.Add(time.Minute)})
		v := check(t, d, Document{ID: "long", Text: text + " extra words here", FetchTime: t0.Add(2 * time.Minute)})
		if v.Survivor != c.want {
			t.Errorf("keep %v: survivor %s, want %s (%+v)", c.keep, v.Survivor, c.want, v)
		}
	}
}

func TestDetectorExpiry(t *testing.T) { forStores(t, testDetectorExpiry) }

func testDetectorExpiry(t *testing.T, newDetector func(testing.TB, Options) *Detector) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := newDetector(t, Options{MaxAge: time.Hour, Now: func() time.Time { return now }})
	text := strings.Join(words(5, 100), " ")
	check(t, d, Document{ID: "a", URL: "http://x.org/", Text: text})
	now = now.Add(50 * time.Minute)
	if v := check(t, d, Document{ID: "b", URL: "http://x.org/", Text: text}); v.Kind != URLDuplicate {
		t.Fatalf("within MaxAge: %+v", v)
	}
	now = now.Add(50 * time.Minute) // 100 minutes after a, 50 after it was seen again
	if n, err := d.Expire(); n != 0 || err != nil || d.Len() != 1 {
		t.Fatal("a expired though seen 50 minutes ago")
	}
	now = now.Add(11 * time.Minute)
	if v := check(t, d, Document{ID: "c", Text: text}); v.Kind != Unique {
		t.Fatalf("after MaxAge: %+v", v)
	}
	if d.Len() != 1 {
		t.Fatalf("Len %d after expiry, want 1", d.Len())
	}
}

func TestDetectorConcurrent(t *testing.T) { forStores(t, testDetectorConcurrent) }

func testDetectorConcurrent(t *testing.T, newDetector func(testing.TB, Options) *Detector) {
	d := newDetector(t, Options{MaxAge: time.Hour})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				text := strings.Join(words(uint64(i%10), 80), " ")
				id := fmt.Sprintf("%d-%d", g, i)
				if _, err := d.Check(Document{ID: id, URL: "http://h/" + id, Text: text}); err != nil {
					t.Error(err)
				}
				if i%7 == 0 {
					if _, err := d.Remove(id); err != nil {
						t.Error(err)
					}
					d.Prescreen()
				}
			}
		}()
	}
	wg.Wait()
	if d.Len() == 0 {
		t.Fatal("nothing stored")
	}
}

func TestDetectorPrescreen(t *testing.T) { forStores(t, testDetectorPrescreen) }

func testDetectorPrescreen(t *testing.T, newDetector func(testing.TB, Options) *Detector) {
	d := newDetector(t, Options{Expected: 4}) // forces rebuilds
	var fps []Fingerprints
	for i := range 50 {
		v := check(t, d, Document{ID: fmt.Sprint(i), URL: fmt.Sprintf("http://h.org/%d", i), Text: fmt.Sprint("text ", i)})
		fp, _ := d.Fingerprinter().Fingerprint(Document{ID: "q", URL: v.URL, Text: fmt.Sprint("text ", i)})
		fps = append(fps, fp)
	}
	d.eng.Wait()
	f := d.Prescreen()
	if f.Capacity() < 16 {
		t.Fatalf("filter capacity %d after 100 keys: it did not grow", f.Capacity())
	}
	for _, fp := range fps {
		if !f.HasURL(fp.URL) || !f.HasExact(fp.Main) {
			t.Fatalf("prescreen lacks %s", fp.URL)
		}
	}
}

// TestDetectorForeignSignature feeds entries whose signatures do not fit the detector: they
// must be compared as dissimilar, never crash it.
func TestDetectorForeignSignature(t *testing.T) {
	d := newDetector(t, Options{})
	fp, _ := d.Fingerprinter().Fingerprint(Document{ID: "a", Text: strings.Join(words(1, 200), " ")})
	checkEntry(t, d, Entry{ID: "a", Fingerprints: fp}, true)
	for _, sig := range [][]uint32{nil, {1, 2, 3}, make([]uint32, 1000)} {
		e := Entry{ID: "b", Fingerprints: fp}
		e.Main[0] ^= 1 // not an exact duplicate
		e.MinHash = sig
		if v := checkEntry(t, d, e, false); v.Kind != NearDuplicate || v.Matches[0].Similarity != 0 {
			t.Errorf("signature of %d values: %+v", len(sig), v)
		}
	}
}

// checkEntry calls d.CheckEntry and fails the test on an error.
func checkEntry(t testing.TB, d *Detector, e Entry, add bool) Verdict {
	t.Helper()
	v, err := d.CheckEntry(e, add)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDetectorGetAndNear reads a stored document back and queries by its raw
// fingerprints, each measure alone and both.
func TestDetectorGetAndNear(t *testing.T) { forStores(t, testDetectorGetAndNear) }

func testDetectorGetAndNear(t *testing.T, newDetector func(testing.TB, Options) *Detector) {
	d := newDetector(t, Options{})
	base := words(3, 300)
	check(t, d, Document{ID: "a", URL: "http://x.org/a", Text: strings.Join(base, " "), Priority: 2})
	edited := slices.Clone(base)
	edited[150] = "changed"
	check(t, d, Document{ID: "b", Text: strings.Join(edited, " ")})
	check(t, d, Document{ID: "c", Text: strings.Join(words(4, 300), " ")})

	s, ok, err := d.Get("a")
	if err != nil || !ok || s.ID != "a" || s.URL != "http://x.org/a" || s.Priority != 2 || s.LastSeen.IsZero() || len(s.MinHash) != d.Options().MinHashK {
		t.Fatalf("Get a: %+v %v %v", s, ok, err)
	}
	if _, ok, err := d.Get("nope"); ok || err != nil {
		t.Fatalf("Get nope: %v %v", ok, err)
	}
	for _, q := range []Query{
		{SimHash: s.SimHash, HasSimHash: true},
		{MinHash: s.MinHash},
		{SimHash: s.SimHash, HasSimHash: true, MinHash: s.MinHash},
	} {
		ms, err := d.Near(q)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.ID)
			if m.Kind != NearDuplicate {
				t.Errorf("match %+v: kind", m)
			}
		}
		if len(ids) != 2 || ids[0] != "a" || ids[1] != "b" {
			t.Errorf("query %v/%d values: %v, want [a b]", q.HasSimHash, len(q.MinHash), ids)
		}
	}
	for _, q := range []Query{{}, {MinHash: s.MinHash[:5]}} {
		if _, err := d.Near(q); !errors.Is(err, ErrOptions) {
			t.Errorf("query %+v: %v, want ErrOptions", q, err)
		}
	}
}

// TestDetectorReopen closes a detector's pebble store and opens it again: the documents,
// the verdicts, the key filter and the count are as before, without fingerprinting the
// stored documents again, and new documents get new record ids.
func TestDetectorReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := OpenDetector(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []Document
	for i := range 60 {
		w := words(uint64(i%20), 200) // 20 bases, three copies each
		if i >= 20 {
			w[i%200] = "edit"
		}
		docs = append(docs, Document{ID: fmt.Sprint("d", i), URL: fmt.Sprintf("http://h.org/%d", i%50), Text: strings.Join(w, " ")})
	}
	for _, doc := range docs[:40] {
		check(t, d, doc)
	}
	peek := func(d *Detector) []Verdict {
		var vs []Verdict
		for _, doc := range docs[40:] {
			v, err := d.Peek(doc)
			if err != nil {
				t.Fatal(err)
			}
			vs = append(vs, v)
		}
		return vs
	}
	before, n := peek(d), d.Len()
	got, _, _ := d.Get("d7")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openPebble(t, dir)
	d, err = OpenDetector(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if after := peek(d); !reflect.DeepEqual(after, before) || d.Len() != n {
		t.Fatalf("after reopening: Len %d (was %d), verdicts\n%+v\nwere\n%+v", d.Len(), n, after, before)
	}
	if again, ok, err := d.Get("d7"); !ok || err != nil || !reflect.DeepEqual(again, got) {
		t.Fatalf("Get d7 after reopening: %+v %v %v, was %+v", again, ok, err, got)
	}
	f := d.Prescreen()
	for _, doc := range docs[:40] {
		fp, _ := d.Fingerprinter().Fingerprint(doc)
		if !f.HasURL(fp.URL) || !f.HasExact(fp.Main) {
			t.Fatalf("the reopened key filter lacks %s", doc.ID)
		}
	}
	for _, doc := range docs[40:] {
		check(t, d, doc)
	}
	if d.Len() != 50 { // 50 URLs; d50..d59 changed d0..d9 under theirs
		t.Fatalf("Len %d after adding the rest, want 50", d.Len())
	}

	// Options that shape the keys are the store's for life.
	for _, o := range []Options{{Pipeline: Pipeline{Distance: 4}}, {Pipeline: Pipeline{Threshold: 0.7}}, {Pipeline: Pipeline{MinHashK: 64}}, {Pipeline: Pipeline{Shingle: shingle.Options{K: 3}}}} {
		if _, err := OpenDetector(s, o); !errors.Is(err, ErrOptions) {
			t.Errorf("reopening with %+v: %v, want ErrOptions", o, err)
		}
	}
	if _, err := OpenDetector(s, Options{Pipeline: Pipeline{Near: NearSimHash}, MaxAge: time.Hour, MaxMatches: 3}); err != nil {
		t.Errorf("reopening with other verdict options: %v", err)
	}
}

// TestDetectorConcurrentAdds adds groups of copies from many goroutines at once: however
// the adds interleave, each group must get exactly one Unique verdict (the reads of
// concurrent adds run outside the lock, and the writes made meanwhile are merged in), and
// ids added several times at once must be stored once.
func TestDetectorConcurrentAdds(t *testing.T) { forStores(t, testDetectorConcurrentAdds) }

func testDetectorConcurrentAdds(t *testing.T, newDetector func(testing.TB, Options) *Detector) {
	d := newDetector(t, Options{})
	const groups, copies = 12, 16
	var docs []Document
	for g := range groups {
		base := words(uint64(100+g), 200)
		for c := range copies {
			w := slices.Clone(base)
			if g%2 == 1 { // odd groups are near copies, even ones exact
				w[c] = fmt.Sprint("edit", c)
			}
			docs = append(docs, Document{ID: fmt.Sprintf("g%d-c%d", g, c), Text: strings.Join(w, " ")})
		}
		// The same id from several goroutines, with other content each time.
		for c := range 4 {
			docs = append(docs, Document{ID: fmt.Sprintf("same-%d", g), Text: strings.Join(words(uint64(1000+10*g+c), 50), " ")})
		}
	}
	rand.New(rand.NewPCG(1, 1)).Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	verdicts := make([]Verdict, len(docs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				v, err := d.Check(docs[i])
				if err != nil {
					t.Error(err)
				}
				verdicts[i] = v
			}
		})
	}
	for i := range docs {
		next <- i
	}
	close(next)
	wg.Wait()
	unique := map[int]int{}
	for i, v := range verdicts {
		var g, c int
		if n, _ := fmt.Sscanf(docs[i].ID, "g%d-c%d", &g, &c); n != 2 {
			continue
		}
		want := ExactDuplicate
		if g%2 == 1 {
			want = NearDuplicate
		}
		if v.Kind == Unique {
			unique[g]++
		} else if v.Kind != want {
			t.Errorf("%s: %v, want %v or unique", docs[i].ID, v.Kind, want)
		}
	}
	for g := range groups {
		if n := unique[g]; n != 1 {
			t.Errorf("group %d: %d unique verdicts, want 1", g, n)
		}
	}
	if want := groups*copies + groups; d.Len() != want {
		t.Errorf("Len %d, want %d (every copy, and each repeated id once)", d.Len(), want)
	}
}

// TestNaNPriority: a document or entry whose priority is NaN is refused, before any
// store sees it.
func TestNaNPriority(t *testing.T) {
	d := newDetector(t, Options{})
	doc := Document{ID: "n", Text: "some words of text", Priority: math.NaN()}
	if _, err := d.Check(doc); !errors.Is(err, ErrDocument) {
		t.Errorf("Check: %v", err)
	}
	if _, err := d.Fingerprinter().Fingerprint(doc); !errors.Is(err, ErrDocument) {
		t.Errorf("Fingerprint: %v", err)
	}
	if _, err := d.CheckEntry(Entry{ID: "n", Priority: math.NaN()}, true); !errors.Is(err, ErrDocument) {
		t.Errorf("CheckEntry: %v", err)
	}
	if d.Len() != 0 {
		t.Errorf("%d documents stored", d.Len())
	}
}
