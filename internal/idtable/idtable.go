// Package idtable holds the two operations the indexes' open-addressing id tables share:
// sizing and backward-shift deletion. A table is a []uint32 whose length is a power of
// two, 0 marks an empty position, and lookups probe linearly from an entry's home
// position; what an entry encodes (a slot, a tag) is the caller's.
package idtable

// MinSize is the smallest table.
const MinSize = 16

// Size returns the table size for n entries: a power of two, at least MinSize, at most
// 3/4 full.
func Size(n int) int {
	size := MinSize
	for n > size/4*3 {
		size *= 2
	}
	return size
}

// Delete empties position i of tab by backward shift, so no tombstones are needed: each
// later entry of the probe run moves back into the hole when the hole lies between its
// home position (home(e)) and it. It costs the length of the probe run.
func Delete(tab []uint32, i int, home func(e uint32) int) {
	mask := len(tab) - 1
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		e := tab[j]
		if e == 0 {
			break
		}
		if h := home(e); (j-h)&mask >= (j-i)&mask {
			tab[i] = e
			i = j
		}
	}
	tab[i] = 0
}
