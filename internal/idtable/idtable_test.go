package idtable

import (
	"math/rand/v2"
	"testing"
)

// TestDeleteKeepsEveryEntryFindable inserts and deletes entries in a small table whose
// home positions collide often, and checks after each step that every remaining entry is
// found by probing from its home and no deleted one is.
func TestDeleteKeepsEveryEntryFindable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tab := make([]uint32, Size(40))
	homes := map[uint32]int{} // entry -> home position
	home := func(e uint32) int { return homes[e] }
	find := func(e uint32) int {
		for i := homes[e]; ; i = (i + 1) & (len(tab) - 1) {
			switch tab[i] {
			case e:
				return i
			case 0:
				return -1
			}
		}
	}
	next := uint32(1)
	for step := range 5000 {
		if len(homes) < 40 && (len(homes) == 0 || r.IntN(2) == 0) {
			e := next
			next++
			homes[e] = r.IntN(8) // few homes: long, overlapping probe runs
			i := homes[e]
			for tab[i] != 0 {
				i = (i + 1) & (len(tab) - 1)
			}
			tab[i] = e
		} else {
			for e := range homes {
				Delete(tab, find(e), home)
				if find(e) >= 0 {
					t.Fatalf("step %d: deleted %d still found", step, e)
				}
				delete(homes, e)
				break
			}
		}
		for e := range homes {
			if find(e) < 0 {
				t.Fatalf("step %d: entry %d lost", step, e)
			}
		}
	}
}

func TestSize(t *testing.T) {
	for _, c := range []struct{ n, want int }{{0, 16}, {12, 16}, {13, 32}, {24, 32}, {25, 64}, {3 << 20, 1 << 22}} {
		if got := Size(c.n); got != c.want {
			t.Errorf("Size(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
