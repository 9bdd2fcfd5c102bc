// Package storetest is the conformance suite of package store: Run checks a store.Store
// against a model of what it should hold, so every backend (store.Memory,
// pebblestore.DB, and any later one) passes the same tests.
package storetest

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

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
