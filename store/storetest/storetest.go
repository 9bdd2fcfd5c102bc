// Package storetest is the conformance suite of package store: Run checks a store.Store
// against a model of what it should hold, so every backend (store.Memory,
// pebblestore.DB, and any later one) passes the same tests.
package storetest

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/store"
)

// Run runs the conformance suite on the stores open returns. Each call of open must
// return a new, empty store; Run closes it, and open may register a cleanup that closes
// it again (a second Close returns store.ErrClosed). Run takes a few seconds: the
// subtests apply and read a few thousand small batches and run some concurrently.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	for _, c := range []struct {
		name string
		test func(t *testing.T, open func(t *testing.T) store.Store)
	}{
		{"Table", testTable},
		{"Random", testRandom},
		{"BatchCopies", testBatchCopies},
		{"StopEarly", testStopEarly},
		{"Atomic", testAtomic},
		{"ConcurrentApply", testConcurrentApply},
		{"Nested", testNested},
		{"Postings", testPostings},
		{"NextID", testNextID},
		{"Close", testClose},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, open) })
	}
}

func apply(t testing.TB, s store.Store, b *store.Batch) {
	t.Helper()
	if err := s.Apply(b); err != nil {
		t.Fatal(err)
	}
}

// posting names one (namespace, key) pair.
type posting struct {
	ns  store.Namespace
	key string
}

// model is the oracle: what a store should hold.
type model struct {
	records  map[uint64]string
	postings map[posting][]uint64 // sorted; no empty slices
}

func newModel() *model {
	return &model{records: map[uint64]string{}, postings: map[posting][]uint64{}}
}

// apply applies b to m, one operation after the other.
func (m *model) apply(b *store.Batch) {
	for o := range b.All() {
		p := posting{o.Namespace, string(o.Data)}
		switch o.Kind {
		case store.OpPutRecord:
			m.records[o.ID] = string(o.Data)
		case store.OpDeleteRecord:
			delete(m.records, o.ID)
		case store.OpAdd:
			if i, ok := slices.BinarySearch(m.postings[p], o.ID); !ok {
				m.postings[p] = slices.Insert(m.postings[p], i, o.ID)
			}
		case store.OpRemove:
			if i, ok := slices.BinarySearch(m.postings[p], o.ID); ok {
				m.postings[p] = slices.Delete(m.postings[p], i, i+1)
				if len(m.postings[p]) == 0 {
					delete(m.postings, p)
				}
			}
		}
	}
}

// IDs returns the ids posted under (ns, key) in s, in the order IDs gives them, failing
// the test on an error; nil when there are none.
func IDs(t testing.TB, s store.Store, ns store.Namespace, key []byte) []uint64 {
	t.Helper()
	var out []uint64
	if err := s.IDs(ns, key, func(id uint64) bool { out = append(out, id); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

// check compares s with m: the postings of every key in keys and of m, every record of m
// and of the ids in probe, and the whole of Records.
func check(t testing.TB, s store.Store, m *model, keys []posting, probe []uint64) {
	t.Helper()
	for _, p := range slices.Concat(keys, slices.Collect(maps.Keys(m.postings))) {
		if got, want := IDs(t, s, p.ns, []byte(p.key)), m.postings[p]; !slices.Equal(got, want) {
			t.Errorf("IDs(%d, %q) = %v, want %v", p.ns, p.key, got, want)
		}
	}
	for _, id := range slices.Concat(probe, slices.Collect(maps.Keys(m.records))) {
		rec, ok, err := s.Record(id)
		want, wantOK := m.records[id]
		if err != nil || ok != wantOK || string(rec) != want || (ok && rec == nil) {
			t.Errorf("Record(%d) = %q, %v, %v; want %q, %v", id, rec, ok, err, want, wantOK)
		}
	}
	got := map[uint64]string{}
	var order []uint64
	err := s.Records(func(id uint64, rec []byte) bool {
		got[id] = string(rec)
		order = append(order, id)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, m.records) || !slices.IsSorted(order) || len(order) != len(got) {
		t.Errorf("Records gave %v in order %v, want %v in ascending order", got, order, m.records)
	}
	namespaces := []store.Namespace{0, math.MaxUint16}
	for p := range m.postings {
		namespaces = append(namespaces, p.ns)
	}
	for _, p := range keys {
		namespaces = append(namespaces, p.ns)
	}
	slices.Sort(namespaces)
	for _, ns := range slices.Compact(namespaces) {
		if got, want := postings(t, s, ns), m.all(ns); !slices.Equal(got, want) {
			t.Errorf("Postings(%d) = %v, want %v", ns, got, want)
		}
	}
	id, err := s.NextID()
	if err != nil {
		t.Fatal(err)
	}
	for rid := range m.records {
		if id <= rid {
			t.Errorf("NextID = %d, not above record %d", id, rid)
		}
	}
}

// entry is one posting as Postings yields it.
type entry struct {
	key string
	id  uint64
}

// compareEntries is the order of Postings: key length, key bytes, id.
func compareEntries(a, b entry) int {
	return cmp.Or(cmp.Compare(len(a.key), len(b.key)), strings.Compare(a.key, b.key), cmp.Compare(a.id, b.id))
}

// all returns the postings of ns in the order of Postings.
func (m *model) all(ns store.Namespace) []entry {
	var out []entry
	for p, ids := range m.postings {
		if p.ns == ns {
			for _, id := range ids {
				out = append(out, entry{p.key, id})
			}
		}
	}
	slices.SortFunc(out, compareEntries)
	return out
}

func postings(t testing.TB, s store.Store, ns store.Namespace) []entry {
	t.Helper()
	var out []entry
	if err := s.Postings(ns, func(key []byte, id uint64) bool { out = append(out, entry{string(key), id}); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

// op builders for the table.
type step func(b *store.Batch)

func put(id uint64, rec string) step { return func(b *store.Batch) { b.PutRecord(id, []byte(rec)) } }
func del(id uint64) step             { return func(b *store.Batch) { b.DeleteRecord(id) } }
func add(ns store.Namespace, key string, id uint64) step {
	return func(b *store.Batch) { b.Add(ns, []byte(key), id) }
}
func rm(ns store.Namespace, key string, id uint64) step {
	return func(b *store.Batch) { b.Remove(ns, []byte(key), id) }
}

func be64(v uint64) string { return string(binary.BigEndian.AppendUint64(nil, v)) }

var conformance = []struct {
	name    string
	batches [][]step
	records map[uint64]string
	posts   map[posting][]uint64
}{
	{"put and add", [][]step{{put(1, "a"), add(1, "k", 1)}},
		map[uint64]string{1: "a"}, map[posting][]uint64{{1, "k"}: {1}}},
	{"overwrite record", [][]step{{put(1, "a")}, {put(1, "bb")}},
		map[uint64]string{1: "bb"}, nil},
	{"empty record exists", [][]step{{put(7, "")}},
		map[uint64]string{7: ""}, nil},
	{"large record", [][]step{{put(2, string(bytes.Repeat([]byte("x"), 1<<20)))}},
		map[uint64]string{2: string(bytes.Repeat([]byte("x"), 1<<20))}, nil},
	{"delete record keeps postings", [][]step{{put(1, "a"), add(0, "k", 1)}, {del(1)}},
		nil, map[posting][]uint64{{0, "k"}: {1}}},
	{"delete absent record", [][]step{{del(9)}}, nil, nil},
	{"remove postings", [][]step{{add(0, "k", 1), add(0, "k", 2)}, {rm(0, "k", 1)}, {rm(0, "k", 3), rm(0, "j", 1)}},
		nil, map[posting][]uint64{{0, "k"}: {2}}},
	{"remove last posting", [][]step{{add(0, "k", 1)}, {rm(0, "k", 1)}}, nil, nil},
	{"add twice", [][]step{{add(0, "k", 1), add(0, "k", 1)}, {add(0, "k", 1)}},
		nil, map[posting][]uint64{{0, "k"}: {1}}},
	{"ids ascending", [][]step{{add(3, "k", 5), add(3, "k", math.MaxUint64), add(3, "k", 0)}, {add(3, "k", 1<<63), add(3, "k", 256), add(3, "k", 1)}},
		nil, map[posting][]uint64{{3, "k"}: {0, 1, 5, 256, 1 << 63, math.MaxUint64}}},
	{"later operation wins", [][]step{{add(0, "a", 1), rm(0, "a", 1), rm(0, "b", 1), add(0, "b", 1), put(1, "x"), del(1), del(2), put(2, "y")}},
		map[uint64]string{2: "y"}, map[posting][]uint64{{0, "b"}: {1}}},
	{"namespaces apart", [][]step{{add(1, "k", 1), add(2, "k", 2), add(math.MaxUint16, "k", 3)}},
		nil, map[posting][]uint64{{1, "k"}: {1}, {2, "k"}: {2}, {math.MaxUint16, "k"}: {3}}},
	{"keys that prefix each other", [][]step{{add(0, "", 1), add(0, "a", 2), add(0, "ab", 3), add(0, "a\x00", 4), add(0, "\x00", 5), add(0, be64(7), 6), add(0, be64(7)+be64(8), 7), add(0, "\x01", 8)}},
		nil, map[posting][]uint64{{0, ""}: {1}, {0, "a"}: {2}, {0, "ab"}: {3}, {0, "a\x00"}: {4}, {0, "\x00"}: {5}, {0, be64(7)}: {6}, {0, be64(7) + be64(8)}: {7}, {0, "\x01"}: {8}}},
	{"long key", [][]step{{add(0, string(bytes.Repeat([]byte{0xff}, 5000)), 1), add(0, string(bytes.Repeat([]byte{0xff}, 4999)), 2)}},
		nil, map[posting][]uint64{{0, string(bytes.Repeat([]byte{0xff}, 5000))}: {1}, {0, string(bytes.Repeat([]byte{0xff}, 4999))}: {2}}},
	{"empty batch", [][]step{{}}, nil, nil},
}

func testTable(t *testing.T, open func(t *testing.T) store.Store) {
	for _, c := range conformance {
		t.Run(c.name, func(t *testing.T) {
			s := open(t)
			m := newModel()
			var keys []posting
			var probe []uint64
			var b store.Batch
			for _, steps := range c.batches {
				b.Reset()
				for _, st := range steps {
					st(&b)
				}
				if b.Len() != len(steps) {
					t.Fatalf("Len = %d after %d operations", b.Len(), len(steps))
				}
				for o := range b.All() {
					probe = append(probe, o.ID)
					if o.Kind == store.OpAdd || o.Kind == store.OpRemove {
						keys = append(keys, posting{o.Namespace, string(o.Data)})
					}
				}
				apply(t, s, &b)
				m.apply(&b)
			}
			// The table states the result; the model must agree with it, and the
			// store with both.
			if !maps.Equal(m.records, c.records) && len(m.records)+len(c.records) > 0 {
				t.Fatalf("model records %v, table %v", m.records, c.records)
			}
			if !maps.EqualFunc(m.postings, c.posts, slices.Equal) {
				t.Fatalf("model postings %v, table %v", m.postings, c.posts)
			}
			check(t, s, m, keys, probe)
		})
	}
}

// testRandom applies random batches to the store, with Apply or Write and now and then
// Sync, and to the model, checking after each.
func testRandom(t *testing.T, open func(t *testing.T) store.Store) {
	r := rand.New(rand.NewPCG(1, 2))
	s, m := open(t), newModel()
	// Keys of lengths about the boundaries of length encodings: Postings
	// orders by length first.
	var keys []posting
	for ns := range store.Namespace(3) {
		for _, n := range []int{0, 1, 8, 127, 128, 129, 255, 256, 16383, 16384} {
			for k := range 2 {
				keys = append(keys, posting{ns, strings.Repeat(string(rune('a'+k)), n)})
			}
		}
	}
	var b store.Batch
	for range 60 {
		b.Reset()
		for range 1 + r.IntN(8) {
			id, p := uint64(r.IntN(10)), keys[r.IntN(len(keys))]
			switch r.IntN(4) {
			case 0:
				b.PutRecord(id, fmt.Appendf(nil, "rec%d", r.IntN(100)))
			case 1:
				b.DeleteRecord(id)
			case 2:
				b.Add(p.ns, []byte(p.key), id)
			case 3:
				b.Remove(p.ns, []byte(p.key), id)
			}
		}
		// Write is Apply without durability: both must be visible at once.
		if r.IntN(2) == 0 {
			apply(t, s, &b)
		} else if err := s.Write(&b); err != nil {
			t.Fatal(err)
		}
		if r.IntN(4) == 0 {
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		m.apply(&b)
		check(t, s, m, keys, []uint64{0, 9})
	}
}

// testBatchCopies checks that a store.Batch copies what it is given, and that Record and
// Records hand out memory the store does not keep.
func testBatchCopies(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	key, rec := []byte("key"), []byte("rec")
	var b store.Batch
	b.PutRecord(1, rec)
	b.Add(0, key, 1)
	copy(key, "xxx")
	copy(rec, "xxx")
	apply(t, s, &b)
	got, _, _ := s.Record(1)
	copy(got, "yyy")
	m := newModel()
	m.records[1] = "rec"
	m.postings[posting{0, "key"}] = []uint64{1}
	check(t, s, m, []posting{{0, "xxx"}}, nil)
}

func testStopEarly(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	var b store.Batch
	for id := range uint64(5) {
		b.PutRecord(id, nil)
		b.Add(0, nil, id)
	}
	apply(t, s, &b)
	var n int
	if err := s.IDs(0, nil, func(uint64) bool { n++; return n < 2 }); err != nil || n != 2 {
		t.Errorf("IDs called fn %d times (err %v), want 2", n, err)
	}
	n = 0
	if err := s.Records(func(uint64, []byte) bool { n++; return n < 3 }); err != nil || n != 3 {
		t.Errorf("Records called fn %d times (err %v), want 3", n, err)
	}
}

// testAtomic applies batches that post id under "first", put its record, and post it
// under "last", while readers read "first" and then "last" and the records: every id of
// the first read must be in the later ones, which a batch applied one operation at a time
// would break.
func testAtomic(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	const n = 200
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		var b store.Batch
		for id := range uint64(n) {
			b.Reset()
			b.Add(0, []byte("first"), id)
			b.PutRecord(id, []byte("r"))
			b.Add(0, []byte("last"), id)
			apply(t, s, &b)
		}
	})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				first := IDs(t, s, 0, []byte("first"))
				last := IDs(t, s, 0, []byte("last"))
				for _, id := range first {
					if _, ok := slices.BinarySearch(last, id); !ok {
						t.Errorf("id %d under first but not under last", id)
						return
					}
					if _, ok, err := s.Record(id); !ok || err != nil {
						t.Errorf("id %d under first has no record (%v)", id, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// testConcurrentApply applies batches from many goroutines at once, each to ids of its
// own and to one key they share.
func testConcurrentApply(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	const workers, per = 16, 20
	var wg sync.WaitGroup
	for w := range uint64(workers) {
		wg.Go(func() {
			var b store.Batch
			for i := range uint64(per) {
				id := w*per + i
				b.Reset()
				b.PutRecord(id, fmt.Appendf(nil, "%d", id))
				b.Add(1, []byte("shared"), id)
				b.Add(2, binary.BigEndian.AppendUint64(nil, id), id)
				if err := s.Apply(&b); err != nil {
					t.Error(err)
					return
				}
				if _, ok, err := s.Record(id); !ok || err != nil {
					t.Errorf("Record(%d) after Apply: %v, %v", id, ok, err)
				}
			}
		})
	}
	wg.Wait()
	m := newModel()
	for id := range uint64(workers * per) {
		m.records[id] = fmt.Sprint(id)
		m.postings[posting{1, "shared"}] = append(m.postings[posting{1, "shared"}], id)
		m.postings[posting{2, be64(id)}] = []uint64{id}
	}
	check(t, s, m, nil, nil)
}

// testNested calls the store from inside IDs and Records callbacks.
func testNested(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	var b store.Batch
	b.PutRecord(1, []byte("a"))
	b.Add(0, []byte("k"), 1)
	apply(t, s, &b)
	err := s.IDs(0, []byte("k"), func(id uint64) bool {
		var b store.Batch
		b.Add(0, []byte("k"), id+1) // not seen by this IDs: it reads a snapshot
		b.PutRecord(id+1, []byte("b"))
		apply(t, s, &b)
		if rec, ok, err := s.Record(id); string(rec) != "a" || !ok || err != nil {
			t.Errorf("Record(%d) in IDs = %q, %v, %v", id, rec, ok, err)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	var seen []uint64
	err = s.Records(func(id uint64, _ []byte) bool {
		seen = append(seen, id)
		var b store.Batch
		b.PutRecord(id+10, nil)
		apply(t, s, &b)
		return true
	})
	if err != nil || !slices.Equal(seen, []uint64{1, 2}) {
		t.Errorf("Records with nested Apply saw %v (err %v), want [1 2]", seen, err)
	}
}

// testClose checks that Close waits for a call in progress, that calls starting
// meanwhile (here, from that call's callback) fail with store.ErrClosed, and that every call
// after Close does.
func testClose(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	var b store.Batch
	b.Add(0, nil, 1)
	apply(t, s, &b)
	closed := make(chan error)
	err := s.IDs(0, nil, func(uint64) bool {
		go func() { closed <- s.Close() }()
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, _, err := s.Record(1)
			if errors.Is(err, store.ErrClosed) {
				break
			}
			if err != nil || time.Now().After(deadline) {
				t.Errorf("Record while Close waits: %v, want store.ErrClosed", err)
				break
			}
			time.Sleep(time.Millisecond)
		}
		select {
		case err := <-closed:
			t.Errorf("Close returned %v before the IDs in progress did", err)
		case <-time.After(20 * time.Millisecond):
		}
		return true
	})
	if err != nil {
		t.Errorf("IDs in progress when Close began: %v", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	_, nextErr := s.NextID()
	for name, err := range map[string]error{
		"Apply":    s.Apply(&b),
		"Write":    s.Write(&b),
		"Sync":     s.Sync(),
		"Postings": s.Postings(0, func([]byte, uint64) bool { return true }),
		"NextID":   nextErr,
		"IDs":      s.IDs(0, nil, func(uint64) bool { return true }),
		"Records":  s.Records(func(uint64, []byte) bool { return true }),
		"Close":    s.Close(),
	} {
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close: %v, want store.ErrClosed", name, err)
		}
	}
	if _, _, err := s.Record(1); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Record after Close: %v, want store.ErrClosed", err)
	}
}

// testPostings checks that Postings stops when fn returns false, that fn may call the
// store, and that it reads a snapshot; check compares its order with the model's.
func testPostings(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	var b store.Batch
	for id := range uint64(5) {
		b.PutRecord(id, []byte("r"))
		b.Add(1, binary.BigEndian.AppendUint64(nil, 100-id), id) // time-like keys
	}
	b.Add(2, []byte("elsewhere"), 9)
	apply(t, s, &b)
	var seen []entry
	err := s.Postings(1, func(key []byte, id uint64) bool {
		seen = append(seen, entry{string(key), id})
		if got := IDs(t, s, 1, key); !slices.Equal(got, []uint64{id}) {
			t.Errorf("IDs(1, %x) in Postings = %v, want [%d]", key, got, id)
		}
		var b store.Batch
		b.Add(1, []byte{}, 7) // not seen by this Postings: it reads a snapshot
		apply(t, s, &b)
		return binary.BigEndian.Uint64(key) < 98 // a cutoff, as a time scan stops
	})
	want := []entry{{be64(96), 4}, {be64(97), 3}, {be64(98), 2}}
	if err != nil || !slices.Equal(seen, want) {
		t.Errorf("Postings(1) up to a cutoff saw %v (err %v), want %v", seen, err, want)
	}
	if got := postings(t, s, 1); len(got) != 6 || got[0] != (entry{"", 7}) {
		t.Errorf("Postings(1) after the nested Apply = %v, want the empty key first and 6 postings", got)
	}
}

// testNextID checks NextID on an empty store, after records, concurrently, and at the
// top of the id range; check compares it with the records after every batch.
func testNextID(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	next := func() uint64 {
		t.Helper()
		id, err := s.NextID()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	if id := next(); id == 0 {
		t.Errorf("NextID on an empty store = 0; 0 is reserved")
	}
	var b store.Batch
	b.PutRecord(1000, nil)
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	prev := next()
	if prev <= 1000 {
		t.Errorf("NextID after record 1000 = %d", prev)
	}
	const workers, per = 8, 100
	got := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range per {
				id, err := s.NextID()
				if err != nil {
					t.Error(err)
					return
				}
				got[w] = append(got[w], id)
			}
		})
	}
	wg.Wait()
	all := slices.Concat(got...)
	slices.Sort(all)
	if len(slices.Compact(slices.Clone(all))) != workers*per || all[0] <= prev {
		t.Errorf("concurrent NextIDs not distinct or not above %d: %v", prev, all)
	}
	b.Reset()
	b.PutRecord(math.MaxUint64, nil)
	apply(t, s, &b)
	if id, err := s.NextID(); err == nil || errors.Is(err, store.ErrClosed) {
		t.Errorf("NextID after record MaxUint64 = %d, %v; want an error", id, err)
	}
}
