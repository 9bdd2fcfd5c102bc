package hamming

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestIndexAddBatch checks AddBatch against the oracle of adding each pair in order:
// batches of every size mixing new ids, ids repeated within the batch, ids already
// indexed, and ids re-added after removals (so from the free list), with and without
// Capacity.
func TestIndexAddBatch(t *testing.T) {
	for _, dz := range indexDesigns {
		for _, capacity := range []int{0, 30_000} {
			t.Run(fmt.Sprintf("blocks=%d/k=%d/capacity=%d", dz.blocks, dz.k, capacity), func(t *testing.T) {
				t.Parallel()
				r := rand.New(rand.NewPCG(11, uint64(dz.blocks*64+dz.k)))
				x := mustIndex(t, IndexOptions{MaxDistance: dz.k, Blocks: dz.blocks, Capacity: capacity})
				m := indexModel{}
				var known []uint64
				batch := func(size int) {
					ids, fps := make([]uint64, size), make([]uint64, size)
					for i := range ids {
						switch {
						case i > 0 && r.IntN(8) == 0: // repeat an id of this batch
							ids[i] = ids[r.IntN(i)]
						case len(known) > 0 && r.IntN(8) == 0: // an id indexed or removed before
							ids[i] = known[r.IntN(len(known))]
						default:
							ids[i] = newID(r, m)
						}
						fps[i] = r.Uint64()
						if i > 0 && r.IntN(4) == 0 { // near a fingerprint of the batch
							fps[i] = flipBits(r, fps[r.IntN(i)], r.IntN(dz.k+1))
						}
					}
					x.AddBatch(ids, fps)
					for i, id := range ids {
						if _, ok := m[id]; !ok {
							known = append(known, id)
						}
						m[id] = fps[i]
					}
				}
				for _, size := range []int{0, 1, 5, 63, 64, 100, 1000, 5000, 20_000} {
					batch(size)
					checkIndex(t, r, x, m, 20)
				}
				// Remove a third, so the next batch reuses free slots.
				for id := range m {
					if r.IntN(3) == 0 {
						x.Remove(id)
						delete(m, id)
					}
				}
				batch(3000)
				checkIndex(t, r, x, m, 50)
				batch(10_000)
				checkIndex(t, r, x, m, 50)
			})
		}
	}
}

func TestIndexAddBatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("AddBatch with 2 ids and 1 fingerprint did not panic")
		}
	}()
	var x Index
	x.AddBatch([]uint64{1, 2}, []uint64{3})
}

// TestIndexCapacity checks that filling an index up to its Capacity neither rebuilds the
// id table nor rebuckets, and that it allocates little beyond the slots. Buckets are short
// at this size (11 entries) and segments small enough for the allocator's size classes to
// round them up, so the reservation weighs more than at 10M, where BenchmarkIndexAdd
// reports the figure the doc gives.
func TestIndexCapacity(t *testing.T) {
	const n = 180_000
	x := mustIndex(t, IndexOptions{Capacity: n})
	reserved := float64(x.MemoryUsage()) / n
	if reserved > 60 {
		t.Errorf("an empty index with Capacity %d reserves %.1f bytes per fingerprint, want <= 60", n, reserved)
	}
	bbits, idTab := x.c.bbits, len(x.c.ids.tab)
	r := rand.New(rand.NewPCG(6, 6))
	m := indexModel{}
	for i := range n {
		fp := r.Uint64()
		x.Add(uint64(i), fp)
		m[uint64(i)] = fp
	}
	if x.c.bbits != bbits || len(x.c.ids.tab) != idTab || x.c.old != nil {
		t.Fatalf("filling to Capacity changed bucket bits %d -> %d, id table %d -> %d", bbits, x.c.bbits, idTab, len(x.c.ids.tab))
	}
	// The slots take 16 bytes per fingerprint; segments that overflowed take a little.
	if per := float64(x.MemoryUsage()) / n; per > reserved+17 {
		t.Errorf("MemoryUsage at Capacity = %.1f bytes per fingerprint, %.1f reserved: filling grew more than the slots", per, reserved)
	}
	checkIndex(t, r, x, m, 50)
}
