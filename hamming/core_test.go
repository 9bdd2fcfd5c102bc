package hamming

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// checkInvariants verifies x's structures: the id table finds every live slot exactly
// once, free slots are zeroed, and each table holds one entry per live slot, in its
// bucket, with its signature.
func checkInvariants(t *testing.T, x *Index) {
	t.Helper()
	c := &x.c
	if c.d == nil {
		return
	}
	live := checkIDTables(t, c)
	checkBuckets(t, c, live)
}

// checkIDTables verifies that the id tables (the old one too, during a growth) find
// every live slot exactly once and that the free slots are cleared; it returns which
// slots are live.
func checkIDTables(t *testing.T, c *core) []bool {
	t.Helper()
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
	return live
}

// checkBuckets verifies that each permuted table holds one entry per live slot, in its
// bucket, with its signature, and that its buckets and segments are laid out as counted.
func checkBuckets(t *testing.T, c *core, live []bool) {
	t.Helper()
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
		randomIDOp(t, r, x, m, &removed, &next)
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

// randomIDOp applies one random operation to x and its model m: a new id, a removed id
// added again, a removal (of an id moved by a growth or not), or a new fingerprint for
// an id present or absent.
func randomIDOp(t *testing.T, r *rand.Rand, x *Index, m indexModel, removed *[]uint64, next *uint64) {
	t.Helper()
	switch k := r.IntN(10); {
	case k < 6: // a new id
		fp := r.Uint64()
		x.Add(*next, fp)
		m[*next] = fp
		*next++
	case k < 7 && len(*removed) > 0: // a removed id again
		rm := *removed
		i := r.IntN(len(rm))
		id := rm[i]
		rm[i] = rm[len(rm)-1]
		*removed = rm[:len(rm)-1]
		fp := r.Uint64()
		x.Add(id, fp)
		m[id] = fp
	case k < 9 && *next > 0: // remove an id, moved or not
		id := r.Uint64N(*next)
		_, present := m[id]
		if x.Remove(id) != present {
			t.Fatalf("Remove(%d) = %v, want %v", id, !present, present)
		}
		if present {
			delete(m, id)
			*removed = append(*removed, id)
		}
	case *next > 0: // a new fingerprint for a present or absent id
		id := r.Uint64N(*next)
		fp := r.Uint64()
		x.Add(id, fp)
		m[id] = fp
	}
}
