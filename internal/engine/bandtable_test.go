package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBandTableOracle runs random adds, removes and lookups against a map of the same
// postings. The keys come from a small set, so that many documents share a key (copies
// share every band), and some pairs of keys share a shard and tag: a lookup must return
// every id posted under its key and, for such a pair, may return the other's too.
func TestBandTableOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := oracleKeys(r)
	table := newBandTable(1<<30, 0)
	model := map[uint64]map[uint64]bool{} // key -> ids
	posted := map[uint64][]uint64{}       // id -> keys
	for op := range 100_000 {
		switch x := r.IntN(10); {
		case x < 5:
			seq := uint64(r.IntN(5000) + 1)
			if posted[seq] != nil {
				continue
			}
			var ks []uint64
			for range r.IntN(5) + 1 {
				k := keys[r.IntN(len(keys))]
				if !slices.Contains(ks, k) {
					ks = append(ks, k)
				}
			}
			table.add(ks, seq)
			posted[seq] = ks
			for _, k := range ks {
				if model[k] == nil {
					model[k] = map[uint64]bool{}
				}
				model[k][seq] = true
			}
		case x < 8:
			seq := uint64(r.IntN(5000) + 1)
			table.remove(posted[seq], seq)
			for _, k := range posted[seq] {
				delete(model[k], seq)
			}
			delete(posted, seq)
		default:
			if op%1000 == 0 {
				checkBandOrder(t, table)
			}
			k := keys[r.IntN(len(keys))]
			got, ok := table.appendIDs(nil, []uint64{k})
			if !ok {
				t.Fatalf("op %d: the table gave up", op)
			}
			for seq := range model[k] {
				if !slices.Contains(got, seq) {
					t.Fatalf("op %d: key %x misses id %d: got %v", op, k, seq, got)
				}
			}
			twin := k ^ twinBits
			for _, seq := range got {
				if !model[k][seq] && !model[twin][seq] {
					t.Fatalf("op %d: key %x returned id %d, posted under neither it nor its twin", op, k, seq)
				}
			}
			if !slices.Contains(keys, twin) && len(got) != len(model[k]) {
				t.Fatalf("op %d: key %x returned %d ids, want %d", op, k, len(got), len(model[k]))
			}
		}
	}
	checkBandOrder(t, table)
	n := 0
	for i := range table.shards {
		n += table.shards[i].n
	}
	want := 0
	for _, ks := range posted {
		want += len(ks)
	}
	if n != want {
		t.Errorf("the table holds %d postings, the model %d", n, want)
	}
}

// twinBits turns a band key into another of the same shard and tag.
const twinBits = 0xffff_ffff &^ (bandShards - 1)

// oracleKeys returns TestBandTableOracle's keys: random ones, some twins of others
// (twinBits), and many of shard 0, whose runs grow long and wrap around its end.
func oracleKeys(r *rand.Rand) []uint64 {
	keys := make([]uint64, 300)
	for i := range keys {
		keys[i] = r.Uint64()
	}
	for i := 0; i < 20; i++ {
		keys = append(keys, keys[i]^twinBits)
	}
	for range 200 {
		keys = append(keys, r.Uint64()&^(bandShards-1))
	}
	return keys
}

// checkBandOrder fails the test unless every run of full slots in every shard is in the
// order of their homes, which lookups rely on to stop early: a full slot is at its home or
// one further from it than the slot before it is at most, and that slot is full.
func checkBandOrder(t *testing.T, table *bandTable) {
	t.Helper()
	for sh := range table.shards {
		s := &table.shards[sh]
		mask := len(s.slots) - 1
		for i := range s.slots {
			if s.slots[i].seq == 0 || s.dist(i) == 0 {
				continue
			}
			prev := (i - 1) & mask
			if s.slots[prev].seq == 0 || s.dist(i) > s.dist(prev)+1 {
				t.Fatalf("shard %d: slot %d is %d from its home after slot %d (%d from its home, seq %d)",
					sh, i, s.dist(i), prev, s.dist(prev), s.slots[prev].seq)
			}
		}
	}
}

// TestBandTableGivesUp checks the two ways the table stops answering: growing past its
// budget and a record id past 32 bits. Either way it frees its slots and says so.
func TestBandTableGivesUp(t *testing.T) {
	if newBandTable(1000, 0) != nil {
		t.Error("a table over its budget from the start was made")
	}
	if newBandTable(-1, 0) != nil {
		t.Error("a table with a negative budget was made")
	}
	small := int64(bandShards * bandMinSlots * 8)
	table := newBandTable(small, 0)
	if !table.active() || table.size() != small {
		t.Fatalf("active %v, size %d: want a live table of %d bytes", table.active(), table.size(), small)
	}
	r := rand.New(rand.NewPCG(3, 4))
	seq := uint64(1)
	for ; table.active(); seq++ {
		table.add([]uint64{r.Uint64()}, seq)
		if seq > bandShards*bandMinSlots {
			t.Fatal("the table outgrew its budget")
		}
	}
	if _, ok := table.appendIDs(nil, []uint64{1}); ok || table.size() != 0 {
		t.Errorf("after giving up: lookup ok %v, size %d", ok, table.size())
	}
	// A shard can hold 70% of its slots: the first one to need more gives up.
	if min := uint64(bandMinSlots * 7 / 10); seq < min {
		t.Errorf("gave up after %d postings, before any shard was full (%d)", seq, min)
	}

	table = newBandTable(1<<20, 0)
	table.add([]uint64{7}, math.MaxUint32)
	if !table.active() {
		t.Fatal("an id of 32 bits made the table give up")
	}
	table.add([]uint64{7}, math.MaxUint32+1)
	if table.active() {
		t.Error("an id past 32 bits was taken")
	}
}

// TestBandTableKeeps checks a table that is the only copy of its postings: past its
// budget it keeps growing and answering, and says it is over; an id past 32 bits, which
// it cannot hold, makes it over too; stop frees it.
func TestBandTableKeeps(t *testing.T) {
	small := int64(bandShards * bandMinSlots * 8)
	table := newBandTable(small, 0)
	table.keep = true
	r := rand.New(rand.NewPCG(5, 6))
	var keys []uint64
	for seq := uint64(1); seq <= 4*bandShards*bandMinSlots; seq++ {
		keys = append(keys, r.Uint64())
		table.add(keys[len(keys)-1:], seq)
	}
	if !table.active() || !table.isOver() || table.size() <= small {
		t.Fatalf("past its budget: active %v, over %v, size %d (budget %d); want active, over, larger", table.active(), table.isOver(), table.size(), small)
	}
	for i, k := range keys {
		ids, ok := table.appendIDs(nil, []uint64{k})
		if !ok || !slices.Contains(ids, uint64(i+1)) {
			t.Fatalf("key %d: ids %v (ok %v), want %d among them", i, ids, ok, i+1)
		}
	}
	table.stop()
	if table.active() || table.size() != 0 {
		t.Errorf("after stop: active %v, size %d", table.active(), table.size())
	}

	table = newBandTable(1<<20, 0)
	table.keep = true
	table.add([]uint64{7}, math.MaxUint32+1)
	if !table.active() || !table.isOver() {
		t.Errorf("an id past 32 bits: active %v, over %v; want active and over", table.active(), table.isOver())
	}
}

// BenchmarkBandTable times a lookup of one band key (one with a posting, one without)
// and a post, in a table of the band postings of a million documents at the defaults
// (25 bands): 25 million postings, 70% to 85% full.
func BenchmarkBandTable(b *testing.B) {
	const docs, bands = 1_000_000, 25
	r := rand.New(rand.NewPCG(3, 4))
	table := newBandTable(1<<40, docs*bands)
	keys := make([]uint64, 0, docs*bands)
	for seq := uint64(1); seq <= docs; seq++ {
		for range bands {
			k := r.Uint64()
			keys = append(keys, k)
			table.post(k, seq)
		}
	}
	b.Run("hit", func(b *testing.B) {
		var dst []uint64
		for i := 0; b.Loop(); i++ {
			dst, _ = table.appendIDs(dst[:0], keys[(i*7919)%len(keys):][:1])
		}
	})
	b.Run("miss", func(b *testing.B) {
		var dst []uint64
		key := []uint64{0}
		for b.Loop() {
			key[0] = r.Uint64()
			dst, _ = table.appendIDs(dst[:0], key)
		}
	})
	b.Run("post", func(b *testing.B) {
		seq := uint64(docs + 1)
		for b.Loop() {
			table.post(r.Uint64(), seq)
		}
	})
}
