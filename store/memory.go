package store

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/neardup/neardup/store/internal/gate"
)

// Memory is the in-memory Store: for tests, and for indexes that need not outlive the
// process. Its maps sit under one sync.RWMutex, so Apply excludes readers only while it
// changes the maps; a gate, not the lock, lets Close wait for the calls in progress. Postings are sorted slices replaced whole on each change, never
// modified in place, so IDs iterates without the lock and without copying. Adding or
// removing one posting costs O(n) for a key with n ids; IDs costs one map lookup.
//
// Records and postings are held in memory in full, with no limit. Memory implements
// Store; its zero value is not usable: call NewMemory.
type Memory struct {
	mu       sync.RWMutex
	records  map[uint64][]byte
	postings map[Namespace]map[string][]uint64
	lastID   uint64 // the largest record id ever put or id NextID returned
	gate     *gate.Gate
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	return &Memory{
		records:  map[uint64][]byte{},
		postings: map[Namespace]map[string][]uint64{},
		gate:     gate.New(),
	}
}

// Apply applies b under the write lock. See Store.Apply; Memory keeps nothing durable.
func (m *Memory) Apply(b *Batch) error {
	if !m.gate.Enter() {
		return ErrClosed
	}
	defer m.gate.Leave()
	m.mu.Lock()
	defer m.mu.Unlock()
	for o := range b.All() {
		switch o.Kind {
		case OpPutRecord:
			m.records[o.ID] = append([]byte{}, o.Data...) // not nil, even if empty
			m.lastID = max(m.lastID, o.ID)
		case OpDeleteRecord:
			delete(m.records, o.ID)
		case OpAdd:
			m.add(o.Namespace, o.Data, o.ID)
		case OpRemove:
			m.remove(o.Namespace, o.Data, o.ID)
		}
	}
	return nil
}

// Write is Apply: Memory keeps nothing durable. See Store.Write.
func (m *Memory) Write(b *Batch) error { return m.Apply(b) }

// Sync does nothing but fail after Close. See Store.Sync.
func (m *Memory) Sync() error {
	if !m.gate.Enter() {
		return ErrClosed
	}
	m.gate.Leave()
	return nil
}

// NextID returns one more than the largest record id ever put and id returned, under
// the write lock. See Store.NextID.
func (m *Memory) NextID() (uint64, error) {
	if !m.gate.Enter() {
		return 0, ErrClosed
	}
	defer m.gate.Leave()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lastID == math.MaxUint64 {
		return 0, errNoID
	}
	m.lastID++
	return m.lastID, nil
}

// add posts id under (ns, key) with a new slice. The caller holds the write lock.
func (m *Memory) add(ns Namespace, key []byte, id uint64) {
	keys := m.postings[ns]
	if keys == nil {
		keys = map[string][]uint64{}
		m.postings[ns] = keys
	}
	ids := keys[string(key)]
	i, found := slices.BinarySearch(ids, id)
	if !found {
		keys[string(key)] = slices.Insert(slices.Clip(ids), i, id)
	}
}

// remove removes id from (ns, key) with a new slice. The caller holds the write lock.
func (m *Memory) remove(ns Namespace, key []byte, id uint64) {
	keys := m.postings[ns]
	ids := keys[string(key)]
	i, found := slices.BinarySearch(ids, id)
	switch {
	case !found:
	case len(ids) == 1:
		delete(keys, string(key))
		if len(keys) == 0 {
			delete(m.postings, ns)
		}
	default:
		keys[string(key)] = slices.Concat(ids[:i], ids[i+1:])
	}
}

// Record returns a copy of the record under id. See Store.Record.
func (m *Memory) Record(id uint64) ([]byte, bool, error) {
	if !m.gate.Enter() {
		return nil, false, ErrClosed
	}
	defer m.gate.Leave()
	m.mu.RLock()
	defer m.mu.RUnlock()
	rec, ok := m.records[id]
	return slices.Clone(rec), ok, nil
}

// IDs calls fn with the ids posted under (ns, key), without holding the lock. See
// Store.IDs.
func (m *Memory) IDs(ns Namespace, key []byte, fn func(id uint64) bool) error {
	if !m.gate.Enter() {
		return ErrClosed
	}
	defer m.gate.Leave()
	m.mu.RLock()
	ids := m.postings[ns][string(key)]
	m.mu.RUnlock()
	for _, id := range ids {
		if !fn(id) {
			break
		}
	}
	return nil
}

// Records calls fn with every record in ascending id order. It sorts the ids of all
// records first: O(n log n) time and 16 bytes of memory per record. See Store.Records.
func (m *Memory) Records(fn func(id uint64, rec []byte) bool) error {
	type entry struct {
		id  uint64
		rec []byte
	}
	if !m.gate.Enter() {
		return ErrClosed
	}
	defer m.gate.Leave()
	m.mu.RLock()
	all := make([]entry, 0, len(m.records))
	for id, rec := range m.records {
		all = append(all, entry{id, rec})
	}
	m.mu.RUnlock()
	slices.SortFunc(all, func(a, b entry) int { return cmp.Compare(a.id, b.id) })
	for _, e := range all {
		if !fn(e.id, e.rec) {
			break
		}
	}
	return nil
}

// Postings calls fn with the postings of ns without holding the lock. It sorts the
// namespace's keys first: O(k log k) time for k keys, and 24 bytes of memory each. See
// Store.Postings.
func (m *Memory) Postings(ns Namespace, fn func(key []byte, id uint64) bool) error {
	if !m.gate.Enter() {
		return ErrClosed
	}
	defer m.gate.Leave()
	m.mu.RLock()
	keys := slices.Collect(maps.Keys(m.postings[ns]))
	all := make([][]uint64, len(keys)) // the slices are never modified: see add, remove
	slices.SortFunc(keys, compareKeys)
	for i, k := range keys {
		all[i] = m.postings[ns][k]
	}
	m.mu.RUnlock()
	var buf []byte
	for i, k := range keys {
		buf = append(buf[:0], k...)
		for _, id := range all[i] {
			if !fn(buf, id) {
				return nil
			}
		}
	}
	return nil
}

// compareKeys orders keys as Store.Postings does: by length, then bytewise.
func compareKeys(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

// Close waits for the calls in progress, then drops the records and postings. See
// Store.Close.
func (m *Memory) Close() error {
	if !m.gate.Close() {
		return ErrClosed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records, m.postings = nil, nil
	return nil
}
