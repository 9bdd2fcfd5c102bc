package hamming

import (
	"math/bits"
	"slices"
)

// appendQuery appends the matches of fp within k bits, sorted, to dst.
//
// Buckets are scanned four at a time in lockstep: the four buckets are far apart in
// memory, and stepping through them together keeps four streams of cache misses in flight
// instead of one, which more than doubles the speed of large indexes.
func (c *core) appendQuery(dst []Match, fp uint64, k int) []Match {
	start := len(dst)
	// A pair within k bits is owned by the table of its first blocks-K agreeing blocks;
	// at most k blocks disagree below the highest of them, so tables whose highest chosen
	// block is above blocks-K-1+k own no such pair and are skipped.
	limit := c.d.blocks - c.d.k - 1 + k
	var ls lanes
	for i := range c.tabs {
		t := &c.tabs[i]
		if t.top > limit {
			continue
		}
		p := t.perm.Apply(fp)
		ls.bk[ls.n] = t.bucket(int(p >> ((64 - t.bits) & 63)))
		ls.sig[ls.n] = uint32(p << (t.bits & 63) >> 32)
		ls.tab[ls.n] = i
		if ls.n++; ls.n == 4 {
			dst = c.scan(dst, &ls, fp, k)
			ls.n = 0
		}
	}
	dst = c.scan(dst, &ls, fp, k)
	slices.SortFunc(dst[start:], compareMatches)
	return dst
}

// lanes are up to four buckets to scan together: bucket bk[i] of table tab[i], for the
// query signature sig[i].
type lanes struct {
	bk  [4][]uint64
	sig [4]uint32
	tab [4]int
	n   int
	// touch is a sum of words loaded ahead of use, stored so the loads stay.
	touch uint64
}

// scan appends the matches found in the first ls.n lanes to dst. Four lanes are first
// touched (see touchAll), then scanned in lockstep up to the shortest, by next3 when k
// is at most 3; the rest of each lane is scanned alone.
func (c *core) scan(dst []Match, ls *lanes, fp uint64, k int) []Match {
	m := 0 // entries scanned in lockstep
	if ls.n == 4 {
		ls.touchAll()
		m = min(len(ls.bk[0]), len(ls.bk[1]), len(ls.bk[2]), len(ls.bk[3]))
		if k <= 3 {
			for j := ls.next3(0, m); j < m; j = ls.next3(j+1, m) {
				dst = c.verify4(dst, ls, j, fp, k)
			}
		} else {
			b0, b1, b2, b3 := ls.bk[0][:m], ls.bk[1][:m], ls.bk[2][:m], ls.bk[3][:m]
			q0, q1, q2, q3 := ls.sig[0], ls.sig[1], ls.sig[2], ls.sig[3]
			for j := range m {
				if bits.OnesCount32(uint32(b0[j]>>32)^q0) <= k ||
					bits.OnesCount32(uint32(b1[j]>>32)^q1) <= k ||
					bits.OnesCount32(uint32(b2[j]>>32)^q2) <= k ||
					bits.OnesCount32(uint32(b3[j]>>32)^q3) <= k {
					dst = c.verify4(dst, ls, j, fp, k)
				}
			}
		}
	}
	for i := range ls.n {
		q := ls.sig[i]
		for _, e := range ls.bk[i][m:] {
			if bits.OnesCount32(uint32(e>>32)^q) <= k {
				dst = c.verify(dst, ls.tab[i], e, fp, k)
			}
		}
	}
	return dst
}

// touchAll loads one word of every cache line of the four lanes' buckets, in the order
// the scan reaches them, and keeps their sum in ls.touch. The loads are independent, so
// the CPU keeps many cache misses in flight (as many as it has miss buffers), where the
// scan alone, reading each bucket in order, waits for one line of each at a time.
func (ls *lanes) touchAll() {
	var t uint64
	b0, b1, b2, b3 := ls.bk[0], ls.bk[1], ls.bk[2], ls.bk[3]
	m := max(len(b0), len(b1), len(b2), len(b3))
	for j := 0; j < m; j += 8 {
		if j < len(b0) {
			t += b0[j]
		}
		if j < len(b1) {
			t += b1[j]
		}
		if j < len(b2) {
			t += b2[j]
		}
		if j < len(b3) {
			t += b3[j]
		}
	}
	ls.touch = t
}

// next3 returns the first j in [from, m) at which an entry of one of the four lanes has
// a signature within 3 bits of its lane's, or m if there is none; m is at most the
// length of every lane.
//
// Clearing the lowest set bit three times leaves 0 exactly when at most three bits are
// set: a test in plain ALU operations. bits.OnesCount32 would branch on the CPU's POPCNT
// support at every entry, and the call in its fallback, like a call to verify in the
// loop, would make the compiler keep the loop's values on the stack; as a leaf function,
// next3 keeps them all in registers.
//
//go:noinline
func (ls *lanes) next3(from, m int) int {
	b0, b1, b2, b3 := ls.bk[0][from:m], ls.bk[1][from:m], ls.bk[2][from:m], ls.bk[3][from:m]
	q0, q1, q2, q3 := ls.sig[0], ls.sig[1], ls.sig[2], ls.sig[3]
	// One lane after the other, so that each needs two registers: the CPU overlaps them.
	for j := range b0 {
		x := uint32(b0[j]>>32) ^ q0
		x &= x - 1
		x &= x - 1
		if x&(x-1) == 0 {
			return from + j
		}
		x = uint32(b1[j]>>32) ^ q1
		x &= x - 1
		x &= x - 1
		if x&(x-1) == 0 {
			return from + j
		}
		x = uint32(b2[j]>>32) ^ q2
		x &= x - 1
		x &= x - 1
		if x&(x-1) == 0 {
			return from + j
		}
		x = uint32(b3[j]>>32) ^ q3
		x &= x - 1
		x &= x - 1
		if x&(x-1) == 0 {
			return from + j
		}
	}
	return m
}

// verify4 calls verify for the entry j of each of the four lanes whose signature is
// within k bits of the query's.
//
//go:noinline
func (c *core) verify4(dst []Match, ls *lanes, j int, fp uint64, k int) []Match {
	for i := range 4 {
		if e := ls.bk[i][j]; bits.OnesCount32(uint32(e>>32)^ls.sig[i]) <= k {
			dst = c.verify(dst, ls.tab[i], e, fp, k)
		}
	}
	return dst
}

// verify appends the match of entry e of table ti to dst if its fingerprint is within k
// bits of fp and the table owns the pair, so that each match is reported once. It is kept
// out of the scan loops, which it would otherwise crowd out of registers.
//
//go:noinline
func (c *core) verify(dst []Match, ti int, e, fp uint64, k int) []Match {
	slot := uint32(e)
	cand := c.fp(slot)
	// Loaded before the test, so that its cache miss overlaps the fingerprint's: an entry
	// that passes the signature test is almost always a match.
	id := c.id(slot)
	x := cand ^ fp
	d := bits.OnesCount64(x)
	if d > k || c.d.owner(x) != c.tabs[ti].chosen {
		return dst
	}
	return append(dst, Match{ID: id, Fingerprint: cand, Distance: d})
}

// compareMatches orders matches by distance, then id.
func compareMatches(a, b Match) int {
	if a.Distance != b.Distance {
		return a.Distance - b.Distance
	}
	switch {
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// index returns the position of es[i] in bucket ls.bk[i] for each of the first ls.n
// lanes, searching four lanes in lockstep.
func (ls *lanes) index(es *[4]uint64) [4]int {
	js := [4]int{-1, -1, -1, -1}
	m := 0
	if ls.n == 4 {
		b0, b1, b2, b3 := ls.bk[0], ls.bk[1], ls.bk[2], ls.bk[3]
		m = min(len(b0), len(b1), len(b2), len(b3))
		b0, b1, b2, b3 = b0[:m], b1[:m], b2[:m], b3[:m]
		for j := range m {
			if b0[j] == es[0] {
				js[0] = j
			}
			if b1[j] == es[1] {
				js[1] = j
			}
			if b2[j] == es[2] {
				js[2] = j
			}
			if b3[j] == es[3] {
				js[3] = j
			}
			if j&7 == 7 && min(js[0], js[1], js[2], js[3]) >= 0 {
				return js
			}
		}
	}
	for l := range ls.n {
		if js[l] < 0 {
			if j := slices.Index(ls.bk[l][m:], es[l]); j >= 0 {
				js[l] = m + j
			}
		}
	}
	return js
}
