package hamming

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Pair is a pair of distinct fingerprint values within the search distance, with A < B.
type Pair struct{ A, B uint64 }

// DocPair is a pair of documents, given as indices into the fingerprints passed to
// FindAllDocs, with A < B and the Hamming distance of their fingerprints (0 for identical
// fingerprints).
type DocPair struct {
	A, B     int
	Distance int
}

// Finder runs the batch search for all pairs of fingerprints within Distance bits. Its zero
// value finds exact matches only (FindAll then returns nothing, as upstream); set Distance.
// A Finder holds no state: it is safe for concurrent use.
type Finder struct {
	// Distance is the largest Hamming distance k of a reported pair (k >= 0).
	Distance int
	// Blocks is the number of blocks m of the table design (k < m <= 64); the search makes
	// one pass per combination of m-k blocks. 0 chooses the design from the input size
	// with AutoBlocks.
	Blocks int
	// Threads is the number of goroutines doing the work; 0 means runtime.GOMAXPROCS(0).
	Threads int
}

// FindAll returns every pair of distinct fingerprint values within k bits of each other,
// sorted by (A, B), each once: simhash-py's find_all(hashes, blocks, k) with a
// deterministic order. blocks 0 chooses the design with AutoBlocks. k = 0 returns nothing,
// as upstream does; identical values are never paired (see FindAllDocs for those). It
// returns an error wrapping ErrDesign when k < 0, blocks > 64 or 0 < blocks <= k. fps is
// not modified or kept.
func FindAll(fps []uint64, blocks, k int) ([]Pair, error) {
	return Finder{Distance: k, Blocks: blocks}.FindAll(fps)
}

// design returns the table design for n fingerprints.
func (f Finder) design(n int) (*design, error) {
	blocks := f.Blocks
	if blocks == 0 {
		if f.Distance < 0 {
			return nil, checkDesign(1, f.Distance)
		}
		blocks = AutoBlocks(n, f.Distance)
	}
	return newDesign(blocks, f.Distance)
}

func (f Finder) threads() int {
	if f.Threads > 0 {
		return f.Threads
	}
	return runtime.GOMAXPROCS(0)
}

// FindAll returns every pair of distinct fingerprint values within f.Distance bits, sorted
// by (A, B), each once. Its cost is about one counting-sort pass over fps per distinct
// leading block (k+1 passes) plus one hashing pass per table (m choose k), spread over
// f.Threads goroutines; it allocates a copy of fps and the result.
func (f Finder) FindAll(fps []uint64) ([]Pair, error) {
	d, err := f.design(len(fps))
	if err != nil {
		return nil, err
	}
	if d.k == 0 || len(fps) < 2 {
		return nil, nil
	}
	s := newSearch(d, f.threads())
	out := s.run(fps)
	slices.SortFunc(out, func(a, b Pair) int {
		if c := cmp.Compare(a.A, b.A); c != 0 {
			return c
		}
		return cmp.Compare(a.B, b.B)
	})
	return slices.Compact(out), nil
}

// FindAllDocs is the document-level form of FindAll: fps[i] is document i's fingerprint.
// Unlike FindAll it also reports documents whose fingerprints are identical (Distance 0),
// which upstream silently drops. To stay linear in the number of documents when many share
// a fingerprint, every document is paired with the first document carrying the same
// fingerprint, and near pairs are reported between those first documents; the connected
// components (see ClusterDocs) are the same as with every pair listed. Pairs are sorted by
// (A, B). With Distance 0 only identical fingerprints are reported.
func (f Finder) FindAllDocs(fps []uint64) ([]DocPair, error) {
	d, err := f.design(len(fps))
	if err != nil {
		return nil, err
	}
	type entry struct {
		fp  uint64
		doc int
	}
	sorted := make([]entry, len(fps))
	for i, fp := range fps {
		sorted[i] = entry{fp, i}
	}
	slices.SortFunc(sorted, func(a, b entry) int {
		if c := cmp.Compare(a.fp, b.fp); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	var out []DocPair
	distinct := make([]uint64, 0, len(fps))
	first := make([]int, 0, len(fps)) // first document of each distinct value
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].fp == sorted[i].fp {
			out = append(out, DocPair{A: sorted[i].doc, B: sorted[j].doc})
			j++
		}
		distinct = append(distinct, sorted[i].fp)
		first = append(first, sorted[i].doc)
		i = j
	}
	if d.k > 0 && len(distinct) > 1 {
		for _, p := range newSearch(d, f.threads()).run(distinct) {
			ia, _ := slices.BinarySearch(distinct, p.A)
			ib, _ := slices.BinarySearch(distinct, p.B)
			a, b := first[ia], first[ib]
			if a > b {
				a, b = b, a
			}
			out = append(out, DocPair{A: a, B: b, Distance: bits.OnesCount64(p.A ^ p.B)})
		}
	}
	slices.SortFunc(out, func(a, b DocPair) int {
		if c := cmp.Compare(a.A, b.A); c != 0 {
			return c
		}
		return cmp.Compare(a.B, b.B)
	})
	return out, nil
}

// AutoBlocks returns the number of blocks FindAll uses for n fingerprints and distance k
// when none is given. It minimises a cost model of this implementation, in nanoseconds
// per fingerprint fitted to its benchmarks (BenchmarkFindAll):
//
//	cost(m) = (k+1)·n·P + T·n·H + T·n·min(1, n/2^b)·S + T·n²/2^(b+1)·V
//
// with T = C(m,k) tables, b the width of a table's prefix (m-k blocks of 64/m bits), P a
// partitioning pass, H hashing a fingerprint into a table, S sorting a fingerprint whose
// prefix is shared, and V verifying one candidate pair. Few blocks mean few tables but long
// runs of shared prefixes; more blocks mean more tables with nearly unique prefixes, so the
// best m grows with n. It panics if k < 0 (a programmer error: validate distances first).
func AutoBlocks(n, k int) int {
	if k < 0 {
		panic(fmt.Sprintf("hamming: AutoBlocks with negative distance %d", k))
	}
	const pass, hash, shared, verify = 3.0, 2.5, 12.0, 2.0
	nf := float64(n)
	best, bestCost := k+1, 0.0
	for m := k + 1; m <= Bits; m++ {
		t := float64(tables(m, k))
		space := float64(uint64(1) << min(prefixBits(m, k), 62))
		cost := float64(k+1)*nf*pass + t*nf*hash + t*nf*min(1, nf/space)*shared + t*nf*nf/space/2*verify
		if m == k+1 || cost < bestCost {
			best, bestCost = m, cost
		}
		if t > 1<<20 {
			break
		}
	}
	return best
}

// search is one batch run over a design.
type search struct {
	d       *design
	threads int
	byFirst [][]int // table indices grouped by the lowest chosen block
}

func newSearch(d *design, threads int) *search {
	s := &search{d: d, threads: threads, byFirst: make([][]int, d.blocks)}
	for t, p := range d.perms {
		c0 := bits.TrailingZeros64(p.Blocks())
		s.byFirst[c0] = append(s.byFirst[c0], t)
	}
	return s
}

// partitionTarget is the number of fingerprints a first-level partition aims for: a
// partition (8 KB) and its hash slots (16-32 KB) stay in the L2 cache. Partitions of 256,
// which fit the L1 cache, cost more than they saved: the scatter into four times as many
// of them (BenchmarkFindAll, 1M fingerprints and 4 to 6 blocks, and 100k: 5-15% more CPU).
const partitionTarget = 1024

// run returns the pairs in no particular order.
func (s *search) run(fps []uint64) []Pair {
	n := len(fps)
	buf := make([]uint64, n)
	results := make([][]Pair, s.threads)
	workers := make([]*grouper, s.threads)
	for i := range workers {
		workers[i] = &grouper{d: s.d}
	}
	for c0, group := range s.byFirst {
		if len(group) == 0 {
			continue
		}
		m := s.d.masks[c0]
		width := bits.OnesCount64(m)
		pb := 0
		for pb < width && n>>pb > partitionTarget {
			pb++
		}
		// Tables of one narrow block are grouped by the partition itself.
		if s.d.blocks-s.d.k == 1 && width <= 16 {
			pb = width
		}
		shift := Bits - bits.LeadingZeros64(m) - pb // the top pb bits of block c0
		offsets := partition(fps, buf, shift, pb, s.threads)
		parts := len(offsets) - 1
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := range s.threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g := workers[w]
				g.out = results[w]
				const chunk = 64
				for {
					lo := int(next.Add(chunk)) - chunk
					if lo >= parts {
						break
					}
					for p := lo; p < min(lo+chunk, parts); p++ {
						part := buf[offsets[p]:offsets[p+1]]
						for _, t := range group {
							g.table(part, t)
						}
					}
				}
				results[w] = g.out
			}()
		}
		wg.Wait()
	}
	var total int
	for _, r := range results {
		total += len(r)
	}
	out := make([]Pair, 0, total)
	for _, r := range results {
		out = append(out, r...)
	}
	return out
}

// partition writes fps into dst grouped by the pb bits at shift (a stable counting sort,
// parallel over threads) and returns the 2^pb+1 group offsets.
func partition(fps, dst []uint64, shift, pb, threads int) []int {
	nb := 1 << pb
	mask := uint64(nb - 1)
	threads = max(1, min(threads, len(fps)/(1<<16)))
	counts := make([][]int, threads)
	chunk := (len(fps) + threads - 1) / threads
	var wg sync.WaitGroup
	for w := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := make([]int, nb)
			for _, v := range fps[min(w*chunk, len(fps)):min((w+1)*chunk, len(fps))] {
				c[(v>>shift)&mask]++
			}
			counts[w] = c
		}()
	}
	wg.Wait()
	offsets := make([]int, nb+1)
	pos := 0
	for b := range nb {
		offsets[b] = pos
		for w := range threads {
			c := counts[w][b]
			counts[w][b] = pos
			pos += c
		}
	}
	offsets[nb] = pos
	for w := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := counts[w]
			for _, v := range fps[min(w*chunk, len(fps)):min((w+1)*chunk, len(fps))] {
				b := (v >> shift) & mask
				dst[next[b]] = v
				next[b]++
			}
		}()
	}
	wg.Wait()
	return offsets
}

// grouper finds, within one partition and one table, the fingerprints that agree on the
// table's chosen blocks, and reports the pairs the table owns. One per goroutine.
type grouper struct {
	d *design
	// head maps a hash slot to stamp + 1 + the index of the last fingerprint hashed there;
	// next holds, for each fingerprint, the head value it replaced. A value at most stamp
	// ends a chain: it is empty, or left by an earlier table. So a table starts by raising
	// stamp past its predecessor's values instead of clearing head.
	head, next []uint32
	stamp      uint32
	out        []Pair
}

// table reports the pairs within part that table t owns: a chained hash of each
// fingerprint's key (the bits of the table's chosen blocks), sized to stay in the L1 cache,
// pairs the fingerprints that share a key.
func (g *grouper) table(part []uint64, t int) {
	if len(part) < 2 {
		return
	}
	chosen := g.d.perms[t].Blocks()
	var key uint64 // the bits of the chosen blocks
	for c := chosen; c != 0; c &= c - 1 {
		key |= g.d.masks[bits.TrailingZeros64(c)]
	}
	if len(part) <= 32 {
		g.compareAll(part, key, chosen)
		return
	}
	hb := bits.Len(uint(len(part))) + 2 // 4 to 8 slots per fingerprint
	hs := uint(Bits - hb)
	if len(g.head) < 1<<hb {
		g.head = make([]uint32, 1<<hb)
	}
	if len(g.next) < len(part) {
		g.next = make([]uint32, len(part))
	}
	if uint64(g.stamp)+uint64(len(part)) > math.MaxUint32 {
		clear(g.head)
		g.stamp = 0
	}
	head, next, base := g.head[:1<<hb], g.next[:len(part)], g.stamp
	const mul = 0x9E3779B97F4A7C15
	for i, v := range part {
		h := ((v & key) * mul) >> hs
		repeat := false
		for j := head[h]; j > base; j = next[j-base-1] {
			if u := part[j-base-1]; (u^v)&key == 0 {
				if u == v { // pairs with v are pairs with u: keep chains free of repeats
					repeat = true
					break
				}
				if bits.OnesCount64(u^v) <= g.d.k {
					g.verify(u, v, chosen)
				}
			}
		}
		if !repeat {
			next[i] = head[h]
			head[h] = base + uint32(i+1)
		}
	}
	g.stamp = base + uint32(len(part))
}

// compareAll compares every pair in a tiny partition.
func (g *grouper) compareAll(part []uint64, key, chosen uint64) {
	k := g.d.k
	for i, a := range part {
		for _, b := range part[i+1:] {
			if x := a ^ b; x&key == 0 && bits.OnesCount64(x) <= k {
				g.verify(a, b, chosen)
			}
		}
	}
}

// verify reports a and b when they are distinct, within k bits, and owned by the table
// whose chosen blocks are chosen.
func (g *grouper) verify(a, b, chosen uint64) {
	x := a ^ b
	if x == 0 || bits.OnesCount64(x) > g.d.k || g.d.owner(x) != chosen {
		return
	}
	if a > b {
		a, b = b, a
	}
	g.out = append(g.out, Pair{a, b})
}
