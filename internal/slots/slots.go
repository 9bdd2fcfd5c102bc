// Package slots holds the slot store the indexes share: a growable array of slots
// numbered from 0, each an id and a row of Width values of one type, kept in chunks of
// ChunkLen slots so that growing never copies, nor over-allocates, more than one chunk.
// hamming keeps one fingerprint per slot (Store[uint64] of width 1), lsh one MinHash
// signature of K values (Store[uint32] of width K). A store of width 1 is read and written
// by Value, Set and Append, a wider one by Row, SetRow and AppendRow. What a free slot
// holds, and which slots are live, is the caller's.
package slots

import (
	"fmt"
	"unsafe"
)

const (
	// ChunkBits is log2 of ChunkLen.
	ChunkBits = 12
	// ChunkLen is the number of slots in every chunk but a short first one: 4096, which
	// keeps a chunk's ids at 32 KiB, small enough to allocate at any time, large enough
	// that the chunk index stays under a thousandth of the data.
	ChunkLen = 1 << ChunkBits
	// MaxLen is the most slots a store holds, so that every slot number fits a uint32.
	MaxLen = 1<<32 - 1
	// firstLen is the length the first chunk starts with: it doubles up to ChunkLen, which
	// keeps small stores small.
	firstLen = 16
)

// Store holds slots 0..Len()-1, each an id and a row of Width values of T, in chunks of
// ChunkLen slots: values and ids in separate arrays, so that a scan of either reads no
// byte of the other.
//
// Cost: ID, Value and Row are two dependent loads, and they, Set and SetID inline, so an
// index's hot loops pay no call for them; Append and AppendRow are amortized constant and
// copy at most one chunk (only the first chunk, while it is short, ever grows by
// copying). Memory is Width*sizeof(T)+8 bytes per slot, and at most one partly filled
// chunk.
//
// A Store is not safe for concurrent use: the read-only methods (Len, Width, ID, Value,
// Row, Bytes) may run in parallel with one another, never with a method that writes
// (Append, AppendRow, Set, SetRow, SetID, Reserve, or a write through Row); the indexes
// call it under their own lock. The zero value is an empty store of
// width 1.
type Store[T any] struct {
	width int
	vals  [][]T      // chunk c holds the rows of slots c*ChunkLen.., width values each
	ids   [][]uint64 // chunk c holds the ids of the same slots
	n     int
}

// New returns an empty store whose slots hold width values each. It panics when width is
// below 1.
func New[T any](width int) Store[T] {
	if width < 1 {
		panic(fmt.Sprintf("slots: width %d is below 1", width))
	}
	return Store[T]{width: width}
}

// Len returns the number of slots.
func (s *Store[T]) Len() int { return s.n }

// Width returns the number of values in each slot's row.
func (s *Store[T]) Width() int { return max(s.width, 1) }

// ID returns the id of slot i, which must be below Len.
func (s *Store[T]) ID(i uint32) uint64 { return s.ids[i>>ChunkBits][i&(ChunkLen-1)] }

// Value returns the first value of slot i's row (for a store of width 1, its value).
func (s *Store[T]) Value(i uint32) T {
	if s.width <= 1 {
		return s.vals[i>>ChunkBits][i&(ChunkLen-1)]
	}
	return s.vals[i>>ChunkBits][int(i&(ChunkLen-1))*s.width]
}

// Row returns slot i's row: Width values, aliasing the store (the caller may write them,
// not append to them).
func (s *Store[T]) Row(i uint32) []T {
	w := s.width // set by New, or by the first append or Reserve, before any slot exists
	off := int(i&(ChunkLen-1)) * w
	return s.vals[i>>ChunkBits][off : off+w : off+w]
}

// SetID replaces the id of slot i.
func (s *Store[T]) SetID(i uint32, id uint64) { s.ids[i>>ChunkBits][i&(ChunkLen-1)] = id }

// Set replaces the id and the value of slot i of a store of width 1, and panics on a
// wider store. It inlines.
func (s *Store[T]) Set(i uint32, id uint64, v T) {
	if s.width > 1 {
		panic(errNotScalar)
	}
	s.vals[i>>ChunkBits][i&(ChunkLen-1)] = v
	s.ids[i>>ChunkBits][i&(ChunkLen-1)] = id
}

// SetRow replaces the id and the row of slot i; row must hold Width values.
func (s *Store[T]) SetRow(i uint32, id uint64, row []T) {
	s.check(row)
	copy(s.Row(i), row)
	s.ids[i>>ChunkBits][i&(ChunkLen-1)] = id
}

// errNotScalar is the panic of Set and Append on a store wider than 1.
const errNotScalar = "slots: Set or Append of one value on a store of width above 1; use SetRow or AppendRow"

// Append stores id and v in a new slot of a store of width 1 and returns its number. It
// panics on a wider store, and when the store already holds MaxLen slots.
func (s *Store[T]) Append(id uint64, v T) uint32 {
	if s.width > 1 {
		panic(errNotScalar)
	}
	s.width = 1 // a zero store's width
	c := s.grow()
	s.vals[c] = append(s.vals[c], v)
	s.ids[c] = append(s.ids[c], id)
	s.n++
	return uint32(s.n - 1)
}

// AppendRow stores id and row in a new slot and returns its number; row must hold Width
// values. It panics when the store already holds MaxLen slots.
func (s *Store[T]) AppendRow(id uint64, row []T) uint32 {
	s.check(row)
	s.width = len(row) // a zero store's width becomes 1 (check allows no other)
	c := s.grow()
	s.vals[c] = append(s.vals[c], row...)
	s.ids[c] = append(s.ids[c], id)
	s.n++
	return uint32(s.n - 1)
}

// grow makes room for one more slot and returns the chunk it goes in.
func (s *Store[T]) grow() int {
	i := s.n
	if i >= MaxLen {
		panic("slots: store full: it holds 2^32-1 slots")
	}
	c := i >> ChunkBits
	if c == len(s.ids) {
		size := ChunkLen
		if c == 0 {
			size = firstLen
		}
		s.vals = append(s.vals, make([]T, 0, size*s.width))
		s.ids = append(s.ids, make([]uint64, 0, size))
	} else if len(s.ids[c]) == cap(s.ids[c]) { // only chunk 0 is ever short
		size := min(2*cap(s.ids[c]), ChunkLen)
		s.vals[c] = append(make([]T, 0, size*s.width), s.vals[c]...)
		s.ids[c] = append(make([]uint64, 0, size), s.ids[c]...)
	}
	return c
}

// check panics unless row holds Width values: a caller's programming error.
func (s *Store[T]) check(row []T) {
	if len(row) != s.Width() {
		panic(fmt.Sprintf("slots: a row of %d values in a store of width %d", len(row), s.Width()))
	}
}

// Reserve makes room in an empty store's chunk index for n slots, and makes its first
// chunk full size when n needs it, so that appending n slots never copies a chunk. It
// does nothing to a store that holds slots, and allocates the chunks after the first as
// they fill.
func (s *Store[T]) Reserve(n int) {
	if s.n > 0 || n <= 0 {
		return
	}
	w := s.Width()
	s.width = w
	chunks := (n + ChunkLen - 1) >> ChunkBits
	s.vals = make([][]T, 0, chunks)
	s.ids = make([][]uint64, 0, chunks)
	size := min(max(n, firstLen), ChunkLen)
	s.vals = append(s.vals, make([]T, 0, size*w))
	s.ids = append(s.ids, make([]uint64, 0, size))
}

// Bytes returns the memory the store holds, from the capacities of its chunks and chunk
// index. It visits every chunk: one per ChunkLen slots.
func (s *Store[T]) Bytes() int64 {
	var zero T
	size := int64(unsafe.Sizeof(zero))
	n := int64(cap(s.vals)+cap(s.ids)) * int64(unsafe.Sizeof([]T(nil)))
	for c := range s.ids {
		n += int64(cap(s.vals[c]))*size + int64(cap(s.ids[c]))*8
	}
	return n
}
