package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// TestReopen checks that a closed Pebble store opens again with everything it held.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	p := openPebble(t, dir, Options{})
	m := newModel()
	var b Batch
	for id := range uint64(100) {
		b.Reset()
		b.PutRecord(id, fmt.Appendf(nil, "doc %d", id))
		b.Add(Namespace(id%3), binary.BigEndian.AppendUint64(nil, id%7), id)
		if id%10 == 0 {
			b.Remove(Namespace((id-10)%3), binary.BigEndian.AppendUint64(nil, (id-10)%7), id-10)
			b.DeleteRecord(id - 10)
		}
		apply(t, p, &b)
		m.apply(&b)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	check(t, openPebble(t, dir, Options{}), m, nil, []uint64{0, 99})
}

// TestFormat checks that Open refuses what this package did not write.
func TestFormat(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(db *pebble.DB) error
		opts  *pebble.Options
	}{
		{"another version", func(db *pebble.DB) error {
			return db.Set(metaFormatKey, binary.BigEndian.AppendUint32([]byte("neardup-store\x00"), formatVersion+1), nil)
		}, &pebble.Options{Comparer: comparer}},
		{"no format record", func(db *pebble.DB) error {
			return db.Set(recordKey(nil, 1), []byte("x"), nil)
		}, &pebble.Options{Comparer: comparer}},
		{"another application's pebble", func(db *pebble.DB) error {
			return db.Set([]byte("key"), []byte("value"), nil)
		}, &pebble.Options{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := pebble.Open(dir, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.write(db); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if p, err := Open(dir, Options{}); !errors.Is(err, ErrFormat) {
				if err == nil {
					p.Close()
				}
				t.Fatalf("Open = %v, want ErrFormat", err)
			}
		})
	}
}

// TestComparer checks the three properties pebble requires of Split (see its doc) on
// every pair of posting, record and meta keys and posting prefixes. pebble.CheckComparer
// does not fit: it assumes any suffix may follow any prefix, and that prefixes stay
// valid with leading bytes removed.
func TestComparer(t *testing.T) {
	var keys [][]byte
	for _, k := range []string{"", "a", "ab", "a\x00", "\xff\xff", string(make([]byte, 200))} {
		for _, ns := range []Namespace{0, 1, 0xffff} {
			keys = append(keys, postingPrefix(nil, ns, []byte(k)))
			for _, id := range []uint64{0, 1, 255, 256, 1 << 63} {
				keys = append(keys, postingKey(nil, ns, []byte(k), id))
			}
		}
	}
	keys = append(keys, recordKey(nil, 0), recordKey(nil, 1<<40), metaFormatKey)
	cmp := comparer.Compare
	for _, a := range keys {
		pa, sa := a[:split(a)], a[split(a):]
		if len(sa) > 0 && cmp(pa, a) >= 0 {
			t.Errorf("prefix %x does not sort before %x", pa, a)
		}
		for _, b := range keys {
			pb, sb := b[:split(b)], b[split(b):]
			c, pc := cmp(a, b), cmp(pa, pb)
			switch {
			case c <= 0 && pc > 0, pc < 0 && c >= 0:
				t.Errorf("keys %x, %x order against their prefixes", a, b)
			case pc == 0 && c != bytes.Compare(sa, sb):
				t.Errorf("keys %x, %x with one prefix order against their suffixes", a, b)
			}
		}
	}
}

// decodePosting is the inverse of postingKey: FuzzPostingKey checks with it that the
// encoding loses nothing.
func decodePosting(k []byte) (ns Namespace, key []byte, id uint64, ok bool) {
	p := split(k)
	if p == len(k) || k[0] != tagPosting {
		return 0, nil, 0, false
	}
	_, w := binary.Uvarint(k[3:])
	return Namespace(binary.BigEndian.Uint16(k[1:])), k[3+w : p], binary.BigEndian.Uint64(k[p:]), true
}

func FuzzPostingKey(f *testing.F) {
	f.Add(uint16(0), []byte(""), uint64(0), uint16(0), []byte("a"))
	f.Add(uint16(1), []byte("ab"), uint64(1<<63), uint16(1), []byte("a"))
	f.Add(uint16(7), bytes.Repeat([]byte{0xff}, 200), uint64(5), uint16(7), bytes.Repeat([]byte{0xff}, 128))
	f.Fuzz(func(t *testing.T, ns uint16, key []byte, id uint64, ns2 uint16, key2 []byte) {
		k := postingKey(nil, Namespace(ns), key, id)
		gotNS, gotKey, gotID, ok := decodePosting(k)
		if !ok || gotNS != Namespace(ns) || !bytes.Equal(gotKey, key) || gotID != id {
			t.Fatalf("decode(encode(%d, %q, %d)) = %d, %q, %d, %v", ns, key, id, gotNS, gotKey, gotID, ok)
		}
		a, b := postingPrefix(nil, Namespace(ns), key), postingPrefix(nil, Namespace(ns2), key2)
		if !bytes.Equal(a, b) && (bytes.HasPrefix(a, b) || bytes.HasPrefix(b, a)) {
			t.Fatalf("prefixes of (%d, %q) and (%d, %q) collide: %x, %x", ns, key, ns2, key2, a, b)
		}
		if r := recordKey(nil, id); split(r) != len(r) {
			t.Fatalf("split of record key %x = %d", r, split(r))
		}
	})
}
