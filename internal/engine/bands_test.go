package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/api"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/store"
)

// TestBandCopy checks that the in-memory copy of the band postings changes no
// verdict: detectors with the copy, without it, and with one that gives up halfway (its
// budget is the smallest table) get the same documents, removals and replacements, and
// must give the same verdicts and raw-query matches, by MinHash alone so that every
// match comes through the bands.
func TestBandCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	opt := testConfig()
	opt.Near, opt.MaxMatches = NearMinHash, 1000
	dir := t.TempDir()
	var stores []store.Store
	newWith := func(name string, budget int64) *Engine {
		o := opt
		o.BandMemory = budget
		s := openPebble(t, filepath.Join(dir, name))
		stores = append(stores, s)
		d := mustOpen(t, s, o)
		return d
	}
	ds := []*Engine{
		newWith("none", -1),
		newWith("copy", defaultBandMemory),
		newWith("gives-up", bandShards*bandMinSlots*8),
	}
	if ds[0].bandIdx != nil || !ds[1].bandIdx.active() || !ds[2].bandIdx.active() {
		t.Fatal("the detectors do not start with the band copies they were given")
	}
	for i := range 1200 {
		w := words(uint64(i%150), 120)
		for range r.IntN(20) {
			w[r.IntN(len(w))] = fmt.Sprintf("x%d", r.IntN(1000))
		}
		id := fmt.Sprintf("d%04d", i)
		if i%10 == 9 {
			id = fmt.Sprintf("d%04d", r.IntN(i)) // a replacement
		}
		doc := testDoc{ID: id, URL: fmt.Sprintf("https://example.com/%d", r.IntN(2000)), Text: strings.Join(w, " ")}
		var want api.Verdict
		for j, d := range ds {
			v, err := d.Check(entry(doc), true)
			if err != nil {
				t.Fatal(err)
			}
			if j == 0 {
				want = v
			} else if !reflect.DeepEqual(v, want) {
				t.Fatalf("document %d (%s): detector %d says\n%+v\nwithout a band copy:\n%+v", i, id, j, v, want)
			}
		}
		if i%7 == 6 {
			victim := fmt.Sprintf("d%04d", r.IntN(i))
			for _, d := range ds {
				if _, err := d.Remove(victim); err != nil {
					t.Fatal(err)
				}
			}
		}
		if i%5 == 0 {
			checkSameNear(t, i, ds, entry(doc).MinHash)
		}
	}
	ds[2].moves.Wait() // the copy outgrew its budget: its postings are moving to the store
	if !ds[1].bandIdx.active() || ds[2].bandIdx.active() {
		t.Errorf("band copies active at the end: %v, %v; want true, false", ds[1].bandIdx.active(), ds[2].bandIdx.active())
	}
	// Without a copy, and once one has moved, the store holds every band posting of
	// its records (and, after a move, perhaps some of documents removed during it);
	// with the copy, none.
	for i, want := range []bool{true, false, true} {
		if ds[i].bandsStored != want {
			t.Errorf("detector %d: bands stored %v, want %v", i, ds[i].bandsStored, want)
		}
		checkBandPostings(t, ds[0], stores[i], want)
	}
	testBandCopyReopen(t, opt, ds[0], stores)
}

// checkSameNear fails the test unless every engine of ds answers a query by the
// signature as the first (TestBandCopy's, without a band copy) does.
func checkSameNear(t *testing.T, i int, ds []*Engine, sig minhash.Signature) {
	t.Helper()
	want, _ := ds[0].Near(api.Query{MinHash: sig})
	for j, d := range ds[1:] {
		got, err := d.Near(api.Query{MinHash: sig})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("document %d: detector %d's query gives %v (%v), without a band copy %v", i, j+1, got, err, want)
		}
	}
}

// testBandCopyReopen opens TestBandCopy's stores again (1, written with a copy; 2, whose
// copy moved): an engine opened on each answers as base, which never had a copy, does:
// the one with a copy rebuilds it from the records, the others load it from the
// postings when it fits.
func testBandCopyReopen(t *testing.T, opt Config, base *Engine, stores []store.Store) {
	query := func(name string, d *Engine) {
		t.Helper()
		matched := 0
		for i := range 150 {
			fp := entry(testDoc{ID: "q", Text: strings.Join(words(uint64(i), 120), " ")})
			want, _ := base.Near(api.Query{MinHash: fp.MinHash})
			got, err := d.Near(api.Query{MinHash: fp.MinHash})
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("base %d: the %s detector's query gives %v (%v), without a band copy %v", i, name, got, err, want)
			}
			if len(want) > 0 {
				matched++
			}
		}
		if matched < 100 {
			t.Errorf("only %d of 150 base texts have near copies stored: the queries test little", matched)
		}
	}
	reopen := func(s store.Store, budget int64) *Engine {
		t.Helper()
		o := opt
		o.BandMemory = budget
		d := mustOpen(t, s, o)
		return d
	}
	d := reopen(stores[1], defaultBandMemory)
	if !d.bandIdx.active() || d.bandsStored {
		t.Fatalf("reopened with a copy: copy %v, bands stored %v; want the copy, rebuilt from the records", d.bandIdx.active(), d.bandsStored)
	}
	query("reopened", d)
	// Reopened with a copy too small for them, it moves them to the store first.
	d = reopen(stores[1], bandShards*bandMinSlots*8)
	if d.bandIdx.active() || !d.bandsStored {
		t.Fatalf("reopened with a small copy: copy %v, bands stored %v; want no copy, the bands moved", d.bandIdx.active(), d.bandsStored)
	}
	checkBandPostings(t, base, stores[1], true)
	query("moved at open", d)
	// A format 1 store (which kept every band posting, and had no marker) is a store
	// that holds them: it is upgraded, not moved again.
	m := base.meta()
	m.Format = 1
	raw, _ := json.Marshal(m)
	var b store.Batch
	b.PutRecord(metaID, append([]byte(metaMagic), raw...))
	b.Remove(nsState, bandsKey, 1)
	if err := stores[2].Apply(&b); err != nil {
		t.Fatal(err)
	}
	d = reopen(stores[2], defaultBandMemory)
	if !d.bandIdx.active() || !d.bandsStored {
		t.Fatalf("format 1 store reopened: copy %v, bands stored %v; want the copy, loaded from the postings", d.bandIdx.active(), d.bandsStored)
	}
	if rec, _, _ := stores[2].Record(metaID); !bytes.Contains(rec, []byte(`"format":2`)) {
		t.Errorf("format 1 store reopened: its meta record is still %s", rec)
	}
	query("upgraded", d)
}

// checkBandPostings checks the band postings in s against the band keys of its records:
// when stored is false there must be none; when true, every record's, and any other
// only of a record that is gone (posted by a move while the document was removed).
// d gives the band keys of an entry.
func checkBandPostings(t *testing.T, d *Engine, s store.Store, stored bool) {
	t.Helper()
	type posting struct{ key, seq uint64 }
	want := map[posting]bool{}
	live := map[uint64]bool{}
	err := s.Records(func(seq uint64, rec []byte) bool {
		if seq == metaID {
			return true
		}
		var r Record
		if err := r.unmarshalRecord(rec, true); err != nil {
			t.Fatal(err)
		}
		live[seq] = true
		for _, k := range d.bandKeysOf(&r.Entry) {
			want[posting{k, seq}] = true
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	got, stale := 0, 0
	err = s.Postings(nsBand, func(key []byte, seq uint64) bool {
		p := posting{binary.BigEndian.Uint64(key), seq}
		switch {
		case want[p]:
			got++
		case live[seq]:
			t.Errorf("band posting %x -> %d: not one of record %d's", p.key, seq, seq)
		default:
			stale++
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case len(want) < 1000:
		t.Errorf("only %d band postings expected: the check tests little", len(want))
	case !stored && got+stale > 0:
		t.Errorf("%d band postings in a store that should hold none", got+stale)
	case stored && got != len(want):
		t.Errorf("%d of the records' %d band postings in the store", got, len(want))
	}
}

// TestBandMove holds a move of the band postings to the store while documents
// are added and removed: those writes must keep their own band postings in the store,
// checks must still find everything through the copy, and once the move ends the store
// must hold every band posting and the copy be gone. Its budget is four of the smallest
// tables: with one, the first shard to fill outgrows it before the 300 documents whose
// near copies the test adds are in.
func TestBandMove(t *testing.T) {
	opt := testConfig()
	opt.Near, opt.MaxMatches, opt.BandMemory = NearMinHash, 1000, 4*bandShards*bandMinSlots*8
	s := openPebble(t, filepath.Join(t.TempDir(), "s"))
	d := mustOpen(t, s, opt)
	release := make(chan struct{})
	d.moveHook = func() { <-release } // the move holds once it has begun reading
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) }) // a failed test must not hang in Close

	doc := func(i int) testDoc {
		w := words(uint64(i%300), 400) // long enough that two copies are surely near
		w[i%len(w)] = fmt.Sprintf("x%d", i)
		return testDoc{ID: fmt.Sprintf("d%04d", i), Text: strings.Join(w, " ")}
	}
	i := 0
	for ; !d.moving; i++ {
		if i == 5000 {
			t.Fatal("5000 documents and the copy has not outgrown its budget")
		}
		if _, err := d.Check(entry(doc(i)), true); err != nil {
			t.Fatal(err)
		}
	}
	if d.bandsStored || !d.bandIdx.active() {
		t.Fatalf("move held: bands stored %v, copy %v", d.bandsStored, d.bandIdx.active())
	}
	// While the move is held: adds (each a near copy of document i-300, which the copy
	// must find) and removals.
	for end := i + 300; i < end; i++ {
		v, err := d.Check(entry(doc(i)), true)
		if err != nil {
			t.Fatal(err)
		}
		if v.Kind != api.NearDuplicate {
			t.Fatalf("document %d, added during the move: %s, want a near duplicate", i, v.Kind)
		}
		// Remove documents added during the move, and documents the move will find
		// (the copy of this one is the only other near i-300, and the loop ends before
		// i+300).
		victim := -1
		switch i % 3 {
		case 0:
			victim = i
		case 1:
			victim = i - 300
		}
		if victim >= 0 {
			if ok, err := d.Remove(fmt.Sprintf("d%04d", victim)); !ok || err != nil {
				t.Fatalf("removing d%04d: %v %v", victim, ok, err)
			}
		}
	}
	releaseOnce.Do(func() { close(release) })
	d.moves.Wait()
	if !d.bandsStored || d.bandIdx.active() {
		t.Fatalf("after the move: bands stored %v, copy %v", d.bandsStored, d.bandIdx.active())
	}
	checkBandPostings(t, d, s, true)
	// Every stored document is found by its signature, through the store's postings.
	for j := 0; j < i; j += 7 {
		id := fmt.Sprintf("d%04d", j)
		_, stored, err := d.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		fp := entry(doc(j))
		ms, err := d.Near(api.Query{MinHash: fp.MinHash})
		if err != nil {
			t.Fatal(err)
		}
		if stored != slices.ContainsFunc(ms, func(m api.Match) bool { return m.ID == id }) {
			t.Fatalf("document %s after the move: stored %v, found by its signature among %v", id, stored, ms)
		}
	}
}
