package slots

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// model is the oracle: one row and id per slot, in plain slices.
type model[T any] struct {
	rows [][]T
	ids  []uint64
}

func (m *model[T]) check(t *testing.T, s *Store[T]) {
	t.Helper()
	if s.Len() != len(m.ids) {
		t.Fatalf("Len() = %d, want %d", s.Len(), len(m.ids))
	}
	for i := range m.ids {
		slot := uint32(i)
		if got := s.ID(slot); got != m.ids[i] {
			t.Fatalf("ID(%d) = %d, want %d", i, got, m.ids[i])
		}
		row := s.Row(slot)
		if len(row) != s.Width() || cap(row) != s.Width() {
			t.Fatalf("Row(%d) has len %d cap %d, want both %d", i, len(row), cap(row), s.Width())
		}
		for j := range row {
			if any(row[j]) != any(m.rows[i][j]) {
				t.Fatalf("Row(%d) = %v, want %v", i, row, m.rows[i])
			}
		}
		if any(s.Value(slot)) != any(m.rows[i][0]) {
			t.Fatalf("Value(%d) = %v, want %v", i, s.Value(slot), m.rows[i][0])
		}
	}
}

// TestStoreAgainstModel appends, overwrites and rewrites ids across several chunks (past
// the doubling first chunk), for widths 1 and several, and checks every slot against the
// model after each phase.
func TestStoreAgainstModel(t *testing.T) {
	for _, width := range []int{1, 3, 128} {
		for _, reserve := range []int{0, 10, 3*ChunkLen + 5} {
			r := rand.New(rand.NewPCG(uint64(width), uint64(reserve)))
			s := New[uint32](width)
			s.Reserve(reserve)
			var m model[uint32]
			n := 3*ChunkLen + 17
			row := make([]uint32, width)
			for i := range n {
				for j := range row {
					row[j] = r.Uint32()
				}
				id := r.Uint64()
				got := uint32(0)
				if width == 1 && i%2 == 0 { // both ways of appending to a width-1 store
					got = s.Append(id, row[0])
				} else {
					got = s.AppendRow(id, row)
				}
				if got != uint32(i) {
					t.Fatalf("width %d: Append returned slot %d, want %d", width, got, i)
				}
				m.rows, m.ids = append(m.rows, slices.Clone(row)), append(m.ids, id)
			}
			m.check(t, &s)
			for range 1000 {
				i := r.IntN(n)
				for j := range row {
					row[j] = r.Uint32()
				}
				if width == 1 && i%2 == 0 {
					s.Set(uint32(i), uint64(i), row[0])
				} else {
					s.SetRow(uint32(i), uint64(i), row)
				}
				m.rows[i], m.ids[i] = slices.Clone(row), uint64(i)
				if k := r.IntN(n); k%2 == 0 {
					s.SetID(uint32(k), 0)
					m.ids[k] = 0
				}
			}
			m.check(t, &s)
			// Writing through Row is writing the slot.
			s.Row(5)[width-1] = 42
			m.rows[5][width-1] = 42
			m.check(t, &s)
		}
	}
}

// TestZeroStore uses the zero value as a store of width 1 of uint64, as hamming does.
func TestZeroStore(t *testing.T) {
	var s Store[uint64]
	if s.Width() != 1 || s.Len() != 0 || s.Bytes() != 0 {
		t.Fatalf("zero store: width %d, len %d, %d bytes", s.Width(), s.Len(), s.Bytes())
	}
	var m model[uint64]
	for i := range ChunkLen + 1 {
		s.Append(uint64(i)*7, uint64(i)*3)
		m.rows, m.ids = append(m.rows, []uint64{uint64(i) * 3}), append(m.ids, uint64(i)*7)
	}
	s.Set(9, 1, 2)
	m.rows[9], m.ids[9] = []uint64{2}, 1
	m.check(t, &s)
}

// TestChunks checks the growth policy: the first chunk doubles from 16 up to ChunkLen,
// later chunks are allocated full size, and the memory reported is the values', ids'
// and chunk index's.
func TestChunks(t *testing.T) {
	s := New[uint32](4)
	for i := range 2*ChunkLen + 1 {
		s.AppendRow(uint64(i), []uint32{1, 2, 3, 4})
		if i == 16 && cap(s.ids[0]) != 32 {
			t.Fatalf("after 17 slots the first chunk has room for %d, want 32", cap(s.ids[0]))
		}
	}
	if len(s.ids) != 3 || cap(s.ids[0]) != ChunkLen || cap(s.ids[2]) != ChunkLen || cap(s.vals[2]) != 4*ChunkLen {
		t.Fatalf("chunks: %d, first holds %d, last %d ids and %d values", len(s.ids), cap(s.ids[0]), cap(s.ids[2]), cap(s.vals[2]))
	}
	min := int64(3 * ChunkLen * (4*4 + 8))
	if b := s.Bytes(); b < min || b > min+1024 {
		t.Fatalf("Bytes() = %d, want %d plus the chunk index", b, min)
	}
}

// TestReserve checks that appending the reserved number of slots copies no chunk: it
// allocates only the chunks after the first.
func TestReserve(t *testing.T) {
	const n = 3*ChunkLen + 1
	s := New[uint64](1)
	s.Reserve(n)
	if cap(s.ids[0]) != ChunkLen || cap(s.ids) != 4 {
		t.Fatalf("Reserve(%d): first chunk of %d, index of %d", n, cap(s.ids[0]), cap(s.ids))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		s.Append(uint64(i), uint64(i))
	}
	runtime.ReadMemStats(&after)
	if allocs := after.Mallocs - before.Mallocs; allocs > 2*3 { // values and ids of 3 more chunks
		t.Fatalf("appending %d reserved slots made %d allocations, want at most 6", n, allocs)
	}
	small := New[uint64](1)
	small.Reserve(5)
	if cap(small.ids[0]) != firstLen {
		t.Fatalf("Reserve(5): first chunk of %d, want %d", cap(small.ids[0]), firstLen)
	}
	s.Reserve(10) // not empty: no effect
	if s.Len() != n || s.ID(n-1) != n-1 {
		t.Fatalf("Reserve on a full store changed it: len %d", s.Len())
	}
}

// TestWrongWidth checks that a row of the wrong length is refused, not half stored.
func TestWrongWidth(t *testing.T) {
	for name, f := range map[string]func(s *Store[uint32]){
		"AppendRow short": func(s *Store[uint32]) { s.AppendRow(1, []uint32{1}) },
		"AppendRow long":  func(s *Store[uint32]) { s.AppendRow(1, []uint32{1, 2, 3}) },
		"SetRow":          func(s *Store[uint32]) { s.SetRow(0, 1, []uint32{1}) },
		"Append":          func(s *Store[uint32]) { s.Append(1, 1) },
		"Set":             func(s *Store[uint32]) { s.Set(0, 1, 1) },
		"New":             func(*Store[uint32]) { New[uint32](0) },
	} {
		s := New[uint32](2)
		s.AppendRow(7, []uint32{8, 9})
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f(&s)
		}()
		if s.Len() != 1 || s.ID(0) != 7 || !slices.Equal(s.Row(0), []uint32{8, 9}) {
			t.Errorf("%s changed the store: len %d, slot 0 = %d %v", name, s.Len(), s.ID(0), s.Row(0))
		}
	}
}

// TestConcurrentReads runs readers in parallel with one another, as the indexes do under
// their read lock, between writes under the write lock; run it with -race.
func TestConcurrentReads(t *testing.T) {
	s := New[uint32](2)
	var mu sync.RWMutex
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				if g == 0 {
					mu.Lock()
					s.AppendRow(uint64(i), []uint32{uint32(i), uint32(i) + 1})
					mu.Unlock()
					continue
				}
				mu.RLock()
				if n := s.Len(); n > 0 {
					slot := uint32(i % n)
					if row := s.Row(slot); s.ID(slot) != uint64(row[0]) || row[1] != row[0]+1 || s.Value(slot) != row[0] {
						t.Errorf("slot %d: id %d, row %v", slot, s.ID(slot), row)
					}
				}
				_ = s.Bytes()
				mu.RUnlock()
			}
		}()
	}
	wg.Wait()
	if s.Len() != 2000 {
		t.Fatalf("Len() = %d, want 2000", s.Len())
	}
}

func BenchmarkValue(b *testing.B) {
	s := New[uint64](1)
	for i := range 1 << 16 {
		s.Append(uint64(i), uint64(i))
	}
	var sum uint64
	for i := 0; b.Loop(); i++ {
		slot := uint32(i) & (1<<16 - 1)
		sum += s.Value(slot) + s.ID(slot)
	}
	if sum == 1 {
		b.Log(sum)
	}
}
