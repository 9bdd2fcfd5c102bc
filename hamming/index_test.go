package hamming

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
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

// TestIndexConcurrent runs writers (adds, batches, removals, each on ids of its own),
// readers and snapshots at once; the index must then hold what the writers' models say,
// and every snapshot must be a consistent index.
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
		wg.Go(func() { concurrentWriter(t, x, models[w], w, writers, ops) })
	}
	for g := range readers {
		wg.Go(func() { concurrentReader(t, x, g, ops) })
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

// concurrentWriter is writer w of TestIndexConcurrent: it owns the ids congruent to w
// mod writers and keeps its model m of them.
func concurrentWriter(t *testing.T, x *Index, m indexModel, w, writers, ops int) {
	r := rand.New(rand.NewPCG(uint64(w), 1))
	for i := range ops {
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
}

// concurrentReader is reader g of TestIndexConcurrent: its answers must be sorted and
// within the distance asked, whatever the writers do meanwhile.
func concurrentReader(t *testing.T, x *Index, g, ops int) {
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
