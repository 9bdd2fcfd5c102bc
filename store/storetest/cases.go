package storetest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/store"
)

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
