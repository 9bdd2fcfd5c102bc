package engine

import (
	"encoding/binary"
	"sync"

	"github.com/bits-and-blooms/bloom/v3"
)

// bandFilter is a Bloom filter of the LSH band keys that have postings, so that a check
// asks the store only for the bands some stored document has: a unique document's bands
// are almost all new, and each store lookup costs microseconds. It never forgets (a
// removed document's keys stay, costing a lookup each) and grows in layers, each with room
// for twice the keys of the last, so that it never has to be rebuilt from the store while
// serving. Each full layer adds about bandFilterRate to its false-positive rate: 6% with
// three. Halving each new layer's rate would bound the sum, but at 1.44 more bits a key
// for each halving; memory is what ten million documents are short of, a false positive
// costs one store lookup, and a detector opening a store starts again from one layer with
// room for a quarter more keys. Safe for concurrent use.
type bandFilter struct {
	mu     sync.RWMutex
	layers []*bloom.BloomFilter
	room   uint // keys the last layer was sized for
	count  uint // keys added to the last layer
}

// bandFilterRate is the false-positive rate of each layer: a check of 25 new bands asks
// the store about one of them in two. A lower rate halves those lookups for 1.44 more
// bits a key in every layer: memory, at ten million documents, is the scarcer of the two.
const bandFilterRate = 0.02

func newBandFilter(n uint) *bandFilter {
	n = max(n, 1<<16)
	return &bandFilter{layers: []*bloom.BloomFilter{bloom.NewWithEstimates(n, bandFilterRate)}, room: n}
}

func (f *bandFilter) add(keys []uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b [8]byte
	for _, k := range keys {
		if f.count >= f.room {
			f.room *= 2
			f.count = 0
			f.layers = append(f.layers, bloom.NewWithEstimates(f.room, bandFilterRate))
		}
		binary.BigEndian.PutUint64(b[:], k)
		f.layers[len(f.layers)-1].Add(b[:])
		f.count++
	}
}

// mayHave reports whether key may have postings; false is certain.
func (f *bandFilter) mayHave(key uint64) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], key)
	for _, l := range f.layers {
		if l.Test(b[:]) {
			return true
		}
	}
	return false
}
