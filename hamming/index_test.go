package hamming

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// indexModel is the brute-force oracle: the id -> fingerprint map an index should hold.
type indexModel map[uint64]uint64

// scan returns every (id, fp) of m within maxK bits of q, sorted by distance then id: the
// answer to Query(q, maxK) by linear scan. Answers for smaller k are its prefixes.
func (m indexModel) scan(q uint64, maxK int) []Match {
	var out []Match
	for id, fp := range m {
		if d := bits.OnesCount64(q ^ fp); d <= maxK {
			out = append(out, Match{ID: id, Fingerprint: fp, Distance: d})
		}
	}
	slices.SortFunc(out, compareMatches)
	return out
}

// within returns the prefix of sorted matches with Distance <= k.
func within(ms []Match, k int) []Match {
	i := 0
	for i < len(ms) && ms[i].Distance <= k {
		i++
	}
	return ms[:i]
}

// flipBits returns fp with d distinct random bits flipped.
func flipBits(r *rand.Rand, fp uint64, d int) uint64 {
	for _, b := range r.Perm(Bits)[:d] {
		fp ^= 1 << b
	}
	return fp
}

// newID returns a random id not in m; now and then a small one, so that id 0 and
// neighbours of each other are exercised.
func newID(r *rand.Rand, m indexModel) uint64 {
	for {
		id := r.Uint64()
		if r.IntN(8) == 0 {
			id = r.Uint64N(1024)
		}
		if _, ok := m[id]; !ok {
			return id
		}
	}
}

// fillIndex adds n fingerprints to x and m: random ones, or (planted) groups of copies of
// a random fingerprint at 0..maxK bit flips.
func fillIndex(r *rand.Rand, x *Index, m indexModel, n, maxK int, planted bool) {
	for i := 0; i < n; {
		base := r.Uint64()
		group := 1
		if planted {
			group = maxK + 1
		}
		for d := 0; d < group && i < n; d++ {
			id := newID(r, m)
			fp := flipBits(r, base, d)
			x.Add(id, fp)
			m[id] = fp
			i++
		}
	}
}

// queriesFor returns probe fingerprints for m: indexed ones, variants of them at
// 0..maxK+1 flips, and random ones.
func queriesFor(r *rand.Rand, m indexModel, count, maxK int) []uint64 {
	fps := make([]uint64, 0, len(m))
	for _, fp := range m {
		fps = append(fps, fp)
	}
	slices.Sort(fps) // map order is random; keep the test reproducible
	qs := make([]uint64, 0, count)
	for range count {
		if len(fps) == 0 || r.IntN(4) == 0 {
			qs = append(qs, r.Uint64())
			continue
		}
		qs = append(qs, flipBits(r, fps[r.IntN(len(fps))], r.IntN(maxK+2)))
	}
	return qs
}

// checkIndex compares x with the oracle m: Len, Fingerprint, Query at every k and the
// internal invariants.
func checkIndex(t *testing.T, r *rand.Rand, x *Index, m indexModel, queries int) {
	t.Helper()
	if x.Len() != len(m) {
		t.Fatalf("Len() = %d, want %d", x.Len(), len(m))
	}
	checkInvariants(t, x)
	i := 0
	for id, want := range m {
		if got, ok := x.Fingerprint(id); !ok || got != want {
			t.Fatalf("Fingerprint(%d) = %#x, %v; want %#x, true", id, got, ok, want)
		}
		if i++; i > 1000 {
			break
		}
	}
	maxK := x.c.d.k
	for _, q := range queriesFor(r, m, queries, maxK) {
		all := m.scan(q, maxK)
		for k := 0; k <= maxK; k++ {
			got, err := x.Query(q, k)
			if err != nil {
				t.Fatalf("Query(%#x, %d): %v", q, k, err)
			}
			if want := within(all, k); !slices.Equal(got, want) {
				t.Fatalf("Query(%#x, %d) = %v\nwant %v", q, k, got, want)
			}
		}
	}
}

// checkInvariants verifies x's structures: the id table finds every live slot exactly
// once, free slots are zeroed, and each table holds one entry per live slot, in its
// bucket, with its signature.
func checkInvariants(t *testing.T, x *Index) {
	t.Helper()
	c := &x.c
	if c.d == nil {
		return
	}
	live := make([]bool, c.slots.Len())
	n := 0
	tables := []*idTable{&c.ids}
	if c.old != nil { // a growth under way
		tables = append(tables, c.old)
		if int(c.moved) >= c.slots.Len() {
			t.Fatalf("the id table's growth has moved all %d slots but keeps the old table", c.slots.Len())
		}
	}
	for ti, tab := range tables {
		for pos, e := range tab.tab {
			if e == 0 {
				continue
			}
			slot := tab.slotOf(e)
			if ti == 1 && slot < c.moved {
				continue // stale: moved, or removed since
			}
			n++
			if e != tab.entry(c.id(slot), slot) {
				t.Fatalf("id table %d entry %#x at %d is not the entry %#x of slot %d", ti, e, pos, tab.entry(c.id(slot), slot), slot)
			}
			if live[slot] {
				t.Fatalf("slot %d appears twice in the id tables", slot)
			}
			live[slot] = true
			if ft, p, got, ok := c.find(c.id(slot)); !ok || got != slot || p != pos || ft != tab {
				t.Fatalf("find(%d) = %p, %d, %d, %v; want table %d, %d, %d, true", c.id(slot), ft, p, got, ok, ti, pos, slot)
			}
		}
	}
	if n != c.n {
		t.Fatalf("id table holds %d ids, n = %d", n, c.n)
	}
	if n+len(c.free) != c.slots.Len() {
		t.Fatalf("%d live + %d free slots != %d slots", n, len(c.free), c.slots.Len())
	}
	for _, s := range c.free {
		if live[s] || c.fp(s) != 0 || c.id(s) != 0 {
			t.Fatalf("free slot %d is live or not cleared", s)
		}
	}
	if c.n > bucketLoad<<c.bbits && c.bbits < c.maxBits {
		t.Fatalf("%d fingerprints in 2^%d buckets: rebucket missed", c.n, c.bbits)
	}
	for ti := range c.tabs {
		tab := &c.tabs[ti]
		if tab.bits != min(c.bbits, tab.width) || len(tab.meta) != 1<<tab.bits || len(tab.segs)<<tab.segShift != len(tab.meta) {
			t.Fatalf("table %d: %d bits, %d buckets, %d segments; bbits %d width %d", ti, tab.bits, len(tab.meta), len(tab.segs), c.bbits, tab.width)
		}
		seen := make([]bool, c.slots.Len())
		used := make([]uint32, len(tab.segs))
		for b, m := range tab.meta {
			if b&(1<<tab.segShift-1) == 0 && m.off != 0 {
				t.Fatalf("table %d: first bucket %d of a segment starts at %d", ti, b, m.off)
			}
			if end := tab.end(b); m.off+m.n > end || end > uint32(len(tab.segs[b>>tab.segShift])) {
				t.Fatalf("table %d: bucket %d at [%d, %d+%d) overruns its room up to %d", ti, b, m.off, m.off, m.n, end)
			}
			used[b>>tab.segShift] += m.n
			for _, e := range tab.bucket(b) {
				s := uint32(e)
				if !live[s] || seen[s] {
					t.Fatalf("table %d: slot %d dead or repeated", ti, s)
				}
				seen[s] = true
				wb, we := tab.entry(tab.perm.Apply(c.fp(s)), s)
				if wb != b || we != e {
					t.Fatalf("table %d: slot %d in bucket %d as %#x, want %d, %#x", ti, s, b, e, wb, we)
				}
			}
		}
		if !slices.Equal(used, tab.used) {
			t.Fatalf("table %d: segment counts %v, want %v", ti, tab.used, used)
		}
		for s := range live {
			if live[s] && !seen[s] {
				t.Fatalf("table %d: slot %d missing", ti, s)
			}
		}
	}
}

var indexDesigns = []struct{ blocks, k int }{
	{4, 3}, {5, 3}, {6, 3}, {3, 2}, {2, 1}, {8, 7},
}

func TestIndexMatchesBruteForce(t *testing.T) {
	for _, dz := range indexDesigns {
		for _, n := range []int{0, 1, 100, 10_000, 100_000} {
			for _, planted := range []bool{false, true} {
				if n == 0 && planted {
					continue
				}
				name := fmt.Sprintf("blocks=%d/k=%d/n=%d/planted=%v", dz.blocks, dz.k, n, planted)
				t.Run(name, func(t *testing.T) {
					if n == 100_000 && testing.Short() {
						t.Skip("large size skipped in -short mode")
					}
					t.Parallel()
					r := rand.New(rand.NewPCG(uint64(n), uint64(dz.blocks*64+dz.k)))
					x, err := NewIndex(IndexOptions{MaxDistance: dz.k, Blocks: dz.blocks})
					if err != nil {
						t.Fatal(err)
					}
					m := indexModel{}
					fillIndex(r, x, m, n, dz.k, planted)
					queries := 200
					if n >= 100_000 {
						queries = 50 // each costs a scan of all n; the race detector multiplies it
					}
					checkIndex(t, r, x, m, queries)
				})
			}
		}
	}
}

// TestIndexAddRemoveReAdd interleaves adds, removals, replacements and re-adds, checking
// against the oracle after each phase.
func TestIndexAddRemoveReAdd(t *testing.T) {
	for _, dz := range indexDesigns {
		t.Run(fmt.Sprintf("blocks=%d/k=%d", dz.blocks, dz.k), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(7, uint64(dz.blocks)))
			x, err := NewIndex(IndexOptions{MaxDistance: dz.k, Blocks: dz.blocks})
			if err != nil {
				t.Fatal(err)
			}
			m := indexModel{}
			fillIndex(r, x, m, 5000, dz.k, true)
			checkIndex(t, r, x, m, 100)

			// Remove about half, including ids that are absent.
			removed := []uint64{}
			for id := range m {
				if r.IntN(2) == 0 {
					if !x.Remove(id) {
						t.Fatalf("Remove(%d) = false for a present id", id)
					}
					if x.Remove(id) {
						t.Fatalf("second Remove(%d) = true", id)
					}
					delete(m, id)
					removed = append(removed, id)
				}
			}
			if x.Remove(newID(r, m)) {
				t.Fatal("Remove of an id never added = true")
			}
			checkIndex(t, r, x, m, 100)

			// Replace the fingerprints of some present ids (sometimes with the same one),
			// and re-add removed ids with new fingerprints near existing ones.
			for id, fp := range m {
				switch r.IntN(3) {
				case 0:
					nfp := flipBits(r, fp, r.IntN(dz.k+1))
					x.Add(id, nfp)
					m[id] = nfp
				case 1:
					x.Add(id, fp)
				}
			}
			for i, id := range removed {
				if i%2 == 0 {
					fp := r.Uint64()
					x.Add(id, fp)
					m[id] = fp
				}
			}
			checkIndex(t, r, x, m, 100)

			// Remove everything, then add again: every slot comes from the free list.
			for id := range m {
				x.Remove(id)
				delete(m, id)
			}
			checkIndex(t, r, x, m, 20)
			fillIndex(r, x, m, 3000, dz.k, true)
			checkIndex(t, r, x, m, 100)
		})
	}
}

// TestIndexIDTableGrowth: past idMoveMin entries the id table grows by moving its
// entries over the adds that follow; adds, removals, replacements, re-adds and a batch
// that come meanwhile find every id in one of the two tables.
func TestIndexIDTableGrowth(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	x := mustIndex(t, IndexOptions{})
	m := indexModel{}
	var removed []uint64
	next := uint64(0)
	growths, checks := 0, 0
	check := func() {
		checkInvariants(t, x)
		for id, fp := range m {
			if got, ok := x.Fingerprint(id); !ok || got != fp {
				t.Fatalf("Fingerprint(%d) = %#x, %v; want %#x", id, got, ok, fp)
			}
		}
		for _, id := range removed[max(0, len(removed)-100):] {
			if _, ok := m[id]; !ok {
				if _, ok := x.Fingerprint(id); ok {
					t.Fatalf("Fingerprint(%d) found a removed id", id)
				}
			}
		}
		checks++
	}
	for op := 0; x.Len() < 140_000; op++ {
		moving := x.c.old != nil
		switch k := r.IntN(10); {
		case k < 6: // a new id
			fp := r.Uint64()
			x.Add(next, fp)
			m[next] = fp
			next++
		case k < 7 && len(removed) > 0: // a removed id again
			i := r.IntN(len(removed))
			id := removed[i]
			removed[i] = removed[len(removed)-1]
			removed = removed[:len(removed)-1]
			fp := r.Uint64()
			x.Add(id, fp)
			m[id] = fp
		case k < 9 && next > 0: // remove an id, moved or not
			id := r.Uint64N(next)
			_, present := m[id]
			if x.Remove(id) != present {
				t.Fatalf("Remove(%d) = %v, want %v", id, !present, present)
			}
			if present {
				delete(m, id)
				removed = append(removed, id)
			}
		case next > 0: // a new fingerprint for a present or absent id
			id := r.Uint64N(next)
			fp := r.Uint64()
			x.Add(id, fp)
			m[id] = fp
		}
		if !moving && x.c.old != nil {
			growths++
		}
		if x.c.old != nil && op%1500 == 0 {
			check()
		}
		if x.c.old != nil && growths == 2 && r.IntN(2000) == 0 {
			// A batch finishes the move first.
			ids, fps := []uint64{next, next + 1, 3}, []uint64{r.Uint64(), r.Uint64(), r.Uint64()}
			x.AddBatch(ids, fps)
			for i, id := range ids {
				m[id] = fps[i]
			}
			next += 2
			if x.c.old != nil {
				t.Fatal("AddBatch left the id table's move under way")
			}
		}
	}
	check()
	if growths < 3 || checks < 6 {
		t.Fatalf("%d growths of the id table by moves, %d checks during them; want at least 3 and 6", growths, checks)
	}
	if len(m) != x.Len() {
		t.Fatalf("Len = %d, want %d", x.Len(), len(m))
	}
	checkIndex(t, r, x, m, 20)
}

// TestIndexRebucket checks queries right before and after each doubling of the buckets.
func TestIndexRebucket(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	x, err := NewIndex(IndexOptions{MaxDistance: 3, Blocks: 6})
	if err != nil {
		t.Fatal(err)
	}
	m := indexModel{}
	grown := 0
	for x.c.bbits < 12 {
		before := x.c.bbits
		// Fill to just before the threshold, check, cross it, check.
		fillIndex(r, x, m, bucketLoad<<before-x.Len(), 3, true)
		if x.c.bbits != before {
			t.Fatalf("rebucketed early at %d fingerprints", x.Len())
		}
		checkIndex(t, r, x, m, 30)
		fillIndex(r, x, m, 1, 3, false)
		if x.c.bbits != before+1 {
			t.Fatalf("at %d fingerprints bucket bits = %d, want %d", x.Len(), x.c.bbits, before+1)
		}
		checkIndex(t, r, x, m, 30)
		grown++
	}
	if grown < 5 {
		t.Fatalf("only %d rebuckets", grown)
	}
}

// TestIndexPrefixCapsBuckets checks a design whose prefix (8 bits for 8 blocks, k=7) is
// narrower than the bucket bits the size asks for.
func TestIndexPrefixCapsBuckets(t *testing.T) {
	x, err := NewIndex(IndexOptions{MaxDistance: 7, Blocks: 8})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(8, 7))
	m := indexModel{}
	fillIndex(r, x, m, 20_000, 7, true)
	if x.c.bbits != 8 || x.c.maxBits != 8 {
		t.Fatalf("bbits = %d, maxBits = %d; want 8, 8", x.c.bbits, x.c.maxBits)
	}
	checkIndex(t, r, x, m, 50)
}

func TestIndexConcurrent(t *testing.T) {
	x, err := NewIndex(IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const writers, readers, ops = 4, 2, 3000
	models := make([]indexModel, writers)
	var wg sync.WaitGroup
	for w := range writers {
		models[w] = indexModel{}
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			m := models[w]
			for i := range ops {
				// Each writer owns the ids congruent to w mod writers.
				id := uint64(r.IntN(ops/2)*writers + w)
				switch r.IntN(4) {
				case 0:
					_, had := m[id]
					if x.Remove(id) != had {
						t.Errorf("Remove(%d) disagrees with the model", id)
						return
					}
					delete(m, id)
				case 1:
					// A batch of two pairs, the second replacing the first.
					fp1, fp2 := r.Uint64(), r.Uint64()
					x.AddBatch([]uint64{id, id}, []uint64{fp1, fp2})
					m[id] = fp2
				default:
					fp := r.Uint64()
					if i%3 == 0 && len(m) > 0 {
						fp = flipBits(r, uint64(i)*0x9e3779b97f4a7c15, r.IntN(4))
					}
					x.Add(id, fp)
					m[id] = fp
				}
			}
		})
	}
	for g := range readers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 2))
			var buf []Match
			for range ops {
				k := r.IntN(4)
				var err error
				buf, err = x.AppendQuery(buf[:0], flipBits(r, uint64(r.IntN(ops))*0x9e3779b97f4a7c15, r.IntN(4)), k)
				if err != nil {
					t.Error(err)
					return
				}
				if !slices.IsSortedFunc(buf, compareMatches) {
					t.Errorf("unsorted result %v", buf)
					return
				}
				for _, mt := range buf {
					if mt.Distance > k {
						t.Errorf("match %v beyond k=%d", mt, k)
						return
					}
				}
				x.Len()
				x.Fingerprint(uint64(r.IntN(ops)))
			}
		})
	}
	// Snapshots taken while writers run are consistent indexes (checked below, as
	// checkInvariants must run on the test's goroutine).
	var snaps []*Index
	wg.Go(func() {
		for range 5 {
			var buf bytes.Buffer
			if _, err := x.WriteTo(&buf); err != nil {
				t.Error(err)
				return
			}
			y, err := ReadIndex(&buf)
			if err != nil {
				t.Error(err)
				return
			}
			snaps = append(snaps, y)
		}
	})
	wg.Wait()
	for _, y := range snaps {
		checkInvariants(t, y)
	}
	all := indexModel{}
	for _, m := range models {
		for id, fp := range m {
			all[id] = fp
		}
	}
	checkIndex(t, rand.New(rand.NewPCG(9, 9)), x, all, 200)
}

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

func TestNewIndexErrors(t *testing.T) {
	for _, tc := range []struct {
		opt     IndexOptions
		wantErr bool
	}{
		{IndexOptions{}, false},
		{IndexOptions{MaxDistance: 1}, false},
		{IndexOptions{MaxDistance: 1, Blocks: 64}, false},
		{IndexOptions{MaxDistance: 63}, false},
		{IndexOptions{MaxDistance: -1}, true},
		{IndexOptions{Blocks: -1}, true},
		{IndexOptions{Blocks: 3}, true},                   // blocks must exceed k = 3
		{IndexOptions{Blocks: 65}, true},                  // more blocks than bits
		{IndexOptions{MaxDistance: 64}, true},             // 65 blocks
		{IndexOptions{MaxDistance: 32, Blocks: 64}, true}, // 64 choose 32 tables
		{IndexOptions{MaxDistance: 5, Blocks: 20}, true},  // 15504 tables
		{IndexOptions{Capacity: 1}, false},
		{IndexOptions{Capacity: -1}, true},
		{IndexOptions{Capacity: 1 << 32}, true},
	} {
		x, err := NewIndex(tc.opt)
		if tc.wantErr {
			if !errors.Is(err, ErrDesign) || x != nil {
				t.Errorf("NewIndex(%+v) = %v, %v; want nil and an ErrDesign", tc.opt, x, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("NewIndex(%+v): %v", tc.opt, err)
		}
	}
}

func TestIndexQueryDistanceErrors(t *testing.T) {
	for _, x := range []*Index{mustIndex(t, IndexOptions{MaxDistance: 2}), {}} {
		maxK := 3
		if x.c.d != nil {
			maxK = x.c.d.k
		}
		for _, k := range []int{-1, maxK + 1, 64} {
			if _, err := x.Query(1, k); !errors.Is(err, ErrDesign) {
				t.Errorf("Query(1, %d) with MaxDistance %d: err = %v, want ErrDesign", k, maxK, err)
			}
		}
		if _, err := x.Query(1, maxK); err != nil {
			t.Errorf("Query(1, %d): %v", maxK, err)
		}
	}
}

func mustIndex(t testing.TB, opt IndexOptions) *Index {
	t.Helper()
	x, err := NewIndex(opt)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestIndexZeroValue(t *testing.T) {
	var x Index
	if x.Len() != 0 || x.Remove(1) {
		t.Fatal("zero Index is not empty")
	}
	if _, ok := x.Fingerprint(1); ok {
		t.Fatal("zero Index has a fingerprint")
	}
	if ms, err := x.Query(0, 3); err != nil || ms != nil {
		t.Fatalf("Query on zero Index = %v, %v", ms, err)
	}
	x.Add(5, 0xff)
	ms, err := x.Query(0xfe, 3)
	if err != nil || len(ms) != 1 || ms[0] != (Match{ID: 5, Fingerprint: 0xff, Distance: 1}) {
		t.Fatalf("Query = %v, %v", ms, err)
	}
	if x.c.d.blocks != 4 || x.c.d.k != 3 {
		t.Fatalf("zero Index design (%d, %d), want (4, 3)", x.c.d.blocks, x.c.d.k)
	}
}

func TestAppendQueryAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x := mustIndex(t, IndexOptions{})
	m := indexModel{}
	fillIndex(r, x, m, 10_000, 3, true)
	qs := queriesFor(r, m, 64, 3)
	dst := make([]Match, 0, 1024)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		var err error
		dst, err = x.AppendQuery(dst[:0], qs[i%len(qs)], 3)
		if err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Fatalf("AppendQuery allocates %v times per call, want 0", allocs)
	}
}

func TestIndexMemoryUsage(t *testing.T) {
	x := mustIndex(t, IndexOptions{})
	r := rand.New(rand.NewPCG(5, 5))
	const n = 200_000
	for i := range n {
		x.Add(uint64(i), r.Uint64())
	}
	// 16 bytes of slots, 4 tables of 8 bytes, id table and bucket headers, with slack.
	per := float64(x.MemoryUsage()) / n
	if per < 48 || per > 80 {
		t.Fatalf("MemoryUsage = %.1f bytes per fingerprint, want 48..80", per)
	}
	entries := func() (n int64) {
		for _, tab := range x.c.tabs {
			for _, seg := range tab.segs {
				n += int64(cap(seg)) * 8
			}
		}
		return n
	}
	if e := entries(); e < 4*8*n || e > 4*8*n*3/2 {
		t.Fatalf("bucket entries hold %d bytes for %d fingerprints in 4 tables", e, n)
	}
	for i := range n {
		x.Remove(uint64(i))
	}
	// Emptied buckets are released.
	if e := entries(); e != 0 {
		t.Fatalf("after removing everything bucket entries hold %d bytes", e)
	}
}

func ExampleIndex() {
	x, err := NewIndex(IndexOptions{MaxDistance: 3})
	if err != nil {
		panic(err)
	}
	x.Add(1, 0xf0f0_f0f0_f0f0_f0f0)
	x.Add(2, 0xf0f0_f0f0_f0f0_f0f1) // 1 bit from id 1
	x.Add(3, 0x0f0f_0f0f_0f0f_0f0f) // far from both
	x.Add(4, 0xf0f0_f0f0_f0f0_f0f7) // 3 bits from id 1
	x.Remove(3)

	matches, err := x.Query(0xf0f0_f0f0_f0f0_f0f0, 2)
	if err != nil {
		panic(err)
	}
	for _, m := range matches {
		fmt.Printf("id %d at distance %d\n", m.ID, m.Distance)
	}
	fmt.Println(x.Len(), "indexed")
	// Output:
	// id 1 at distance 0
	// id 2 at distance 1
	// 3 indexed
}

// benchSizes returns the index sizes benchmarks use: 1M always, 10M unless -short. CI
// runs every benchmark once with -short -benchtime 1x, which keeps this file under a
// minute; run without -short for the 10M figures.
func benchSizes() []int {
	if testing.Short() {
		return []int{1_000_000}
	}
	return []int{1_000_000, 10_000_000}
}

// benchIndex is a built index cached across benchmarks, with the memory it took.
type benchIndex struct {
	x         *Index
	fps       []uint64
	heapPerFP float64
}

var (
	benchMu      sync.Mutex
	benchIndexes = map[int]*benchIndex{}
)

// randomIndex returns a default-design index of n random fingerprints with ids 0..n-1,
// built once per size and process.
func randomIndex(b *testing.B, n int) *benchIndex {
	benchMu.Lock()
	defer benchMu.Unlock()
	if bi := benchIndexes[n]; bi != nil {
		return bi
	}
	r := rand.New(rand.NewPCG(uint64(n), 42))
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	x := mustIndex(b, IndexOptions{})
	for i, fp := range fps {
		x.Add(uint64(i), fp)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	bi := &benchIndex{x: x, fps: fps, heapPerFP: float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / float64(n)}
	benchIndexes[n] = bi
	return bi
}

// BenchmarkIndexQuery measures k=3 queries on the default design: half are 1-3 bit
// variants of indexed fingerprints, half random. It reports queries/s and the memory per
// fingerprint, from MemoryUsage (B/fp) and from the heap (heapB/fp).
func BenchmarkIndexQuery(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("n=%dM", n/1_000_000), func(b *testing.B) {
			bi := randomIndex(b, n)
			r := rand.New(rand.NewPCG(1, 1))
			qs := make([]uint64, 1<<16)
			for i := range qs {
				if i%2 == 0 {
					qs[i] = flipBits(r, bi.fps[r.IntN(n)], 1+r.IntN(3))
				} else {
					qs[i] = r.Uint64()
				}
			}
			dst := make([]Match, 0, 64)
			hits := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				dst, _ = bi.x.AppendQuery(dst[:0], qs[i&(len(qs)-1)], 3)
				hits += len(dst)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(float64(bi.x.MemoryUsage())/float64(n), "B/fp")
			b.ReportMetric(bi.heapPerFP, "heapB/fp")
			if hits < b.N/2 {
				b.Fatalf("%d matches in %d queries: the planted half should all hit", hits, b.N)
			}
		})
	}
}

// BenchmarkIndexAdd measures building a default-design index of n random fingerprints
// from empty, with ids 0..n-1, reporting adds/s and the memory per fingerprint: by Add
// without and with Capacity n, and by AddBatch in batches of 4096 and of all n, without and
// with Capacity.
func BenchmarkIndexAdd(b *testing.B) {
	for _, n := range benchSizes() {
		r := rand.New(rand.NewPCG(2, 2))
		ids, fps := make([]uint64, n), make([]uint64, n)
		for i := range fps {
			ids[i], fps[i] = uint64(i), r.Uint64()
		}
		for _, bc := range []struct {
			name            string
			capacity, batch int
		}{
			{"Add", 0, 0},
			{"Add/Capacity", n, 0},
			{"AddBatch=4096", 0, 4096},
			{"AddBatch=4096/Capacity", n, 4096},
			{"AddBatch=all", 0, n},
			{"AddBatch=all/Capacity", n, n},
		} {
			b.Run(fmt.Sprintf("n=%dM/%s", n/1_000_000, bc.name), func(b *testing.B) {
				b.ReportAllocs()
				var x *Index
				for b.Loop() {
					x = mustIndex(b, IndexOptions{Capacity: bc.capacity})
					if bc.batch == 0 {
						for i, fp := range fps {
							x.Add(ids[i], fp)
						}
						continue
					}
					for lo := 0; lo < n; lo += bc.batch {
						hi := min(lo+bc.batch, n)
						x.AddBatch(ids[lo:hi], fps[lo:hi])
					}
				}
				b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds(), "adds/s")
				b.ReportMetric(float64(x.MemoryUsage())/float64(n), "B/fp")
			})
		}
	}
}

// BenchmarkIndexRemoveAdd measures steady-state churn on a 1M index: remove one id and
// add it back with a new fingerprint.
func BenchmarkIndexRemoveAdd(b *testing.B) {
	bi := randomIndex(b, 1_000_000)
	r := rand.New(rand.NewPCG(3, 3))
	b.ReportAllocs()
	for b.Loop() {
		id := r.Uint64N(1_000_000)
		bi.x.Remove(id)
		fp := r.Uint64()
		bi.x.Add(id, fp)
		bi.fps[id] = fp
	}
}
