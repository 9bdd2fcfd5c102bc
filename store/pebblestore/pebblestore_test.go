package pebblestore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openDB(t, t.TempDir(), Options{}) })
}

func openDB(t testing.TB, dir string, o Options) *DB {
	t.Helper()
	d, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func apply(t testing.TB, s store.Store, b *store.Batch) {
	t.Helper()
	if err := s.Apply(b); err != nil {
		t.Fatal(err)
	}
}

// contents is what a store holds: its records, and the postings of the keys asked for.
type contents struct {
	records  map[uint64]string
	postings map[string][]uint64 // by namespace and key, "ns/key"
}

func read(t testing.TB, s store.Store, keys map[store.Namespace][][]byte) contents {
	t.Helper()
	c := contents{map[uint64]string{}, map[string][]uint64{}}
	if err := s.Records(func(id uint64, rec []byte) bool { c.records[id] = string(rec); return true }); err != nil {
		t.Fatal(err)
	}
	for ns, keys := range keys {
		for _, k := range keys {
			if got := storetest.IDs(t, s, ns, k); got != nil {
				c.postings[fmt.Sprintf("%d/%x", ns, k)] = got
			}
		}
	}
	return c
}

// TestReopen checks that a closed DB opens again with everything it held.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	d := openDB(t, dir, Options{})
	keys := map[store.Namespace][][]byte{}
	for ns := range store.Namespace(3) {
		for k := range uint64(7) {
			keys[ns] = append(keys[ns], binary.BigEndian.AppendUint64(nil, k))
		}
	}
	var b store.Batch
	for id := range uint64(100) {
		b.Reset()
		b.PutRecord(id, fmt.Appendf(nil, "doc %d", id))
		b.Add(store.Namespace(id%3), binary.BigEndian.AppendUint64(nil, id%7), id)
		if id%10 == 0 {
			b.Remove(store.Namespace((id-10)%3), binary.BigEndian.AppendUint64(nil, (id-10)%7), id-10)
			b.DeleteRecord(id - 10)
		}
		apply(t, d, &b)
	}
	before := read(t, d, keys)
	if len(before.records) != 91 || len(before.postings) != 21 {
		t.Fatalf("before Close: %d records, %d keys with postings; want 91 and 21", len(before.records), len(before.postings))
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openDB(t, dir, Options{})
	after := read(t, d, keys)
	if !maps.Equal(before.records, after.records) || !maps.EqualFunc(before.postings, after.postings, slices.Equal) {
		t.Errorf("reopened store holds %v, want %v", after, before)
	}
	if id, err := d.NextID(); id != 100 || err != nil {
		t.Errorf("NextID after reopening = %d, %v; want 100, one above the largest record", id, err)
	}
}

// TestUpgrade checks that a store written in the format pinned before value separation
// opens with everything it held, is upgraded, and that records written then go to blob
// files.
func TestUpgrade(t *testing.T) {
	dir := t.TempDir()
	rec := func(id uint64) []byte { return bytes.Repeat(binary.BigEndian.AppendUint64(nil, id), 90) } // 720 bytes
	const ns store.Namespace = 2
	key := []byte("key")
	db, err := pebble.Open(dir, &pebble.Options{Comparer: comparer, FormatMajorVersion: pebble.FormatTableFormatV6})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2][]byte{
		{metaFormatKey, formatValue},
		{recordKey(nil, 1), rec(1)},
		{postingKey(nil, ns, key, 1), nil},
	} {
		if err := db.Set(kv[0], kv[1], pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	d := openDB(t, dir, Options{})
	if v := d.db.FormatMajorVersion(); v != pebble.FormatValueSeparation {
		t.Errorf("format major version after Open = %v, want %v", v, pebble.FormatValueSeparation)
	}
	var b store.Batch
	for id := uint64(2); id <= 100; id++ {
		b.Reset()
		b.PutRecord(id, rec(id))
		b.Add(ns, key, id)
		apply(t, d, &b)
	}
	if err := d.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := d.db.Metrics().BlobFiles.LiveCount; n == 0 {
		t.Error("no blob file after flushing 99 records of 720 bytes: values are not separated")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openDB(t, dir, Options{})
	got := read(t, d, map[store.Namespace][][]byte{ns: {key}})
	postings := got.postings[fmt.Sprintf("%d/%x", ns, key)] // read's naming
	if len(got.records) != 100 || len(postings) != 100 {
		t.Fatalf("reopened store holds %d records and %d postings, want 100 of each", len(got.records), len(postings))
	}
	for id, r := range got.records {
		if r != string(rec(id)) {
			t.Errorf("record %d reads back %d bytes %.16x..., want %.16x...", id, len(r), r, rec(id))
		}
	}
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
	for _, k := range []string{"", "a", "ab", "a\x00", "\xff\xff", string(make([]byte, 127)), string(make([]byte, 128)), string(make([]byte, 200)), string(make([]byte, 256)), string(make([]byte, 1<<14))} {
		for _, ns := range []store.Namespace{0, 1, 0xffff} {
			keys = append(keys, postingPrefix(nil, ns, []byte(k)))
			for _, id := range []uint64{0, 1, 255, 256, 1 << 63} {
				keys = append(keys, postingKey(nil, ns, []byte(k), id))
			}
		}
	}
	keys = append(keys, recordKey(nil, 0), recordKey(nil, 1<<40), metaFormatKey)
	compare := comparer.Compare
	for _, a := range keys {
		pa, sa := a[:split(a)], a[split(a):]
		if len(sa) > 0 && compare(pa, a) >= 0 {
			t.Errorf("prefix %x does not sort before %x", pa, a)
		}
		for _, b := range keys {
			pb, sb := b[:split(b)], b[split(b):]
			c, pc := compare(a, b), compare(pa, pb)
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
func decodePosting(k []byte) (ns store.Namespace, key []byte, id uint64, ok bool) {
	p := split(k)
	if p == len(k) || k[0] != tagPosting {
		return 0, nil, 0, false
	}
	_, w := readLen(k[3:])
	return store.Namespace(binary.BigEndian.Uint16(k[1:])), k[3+w : p], binary.BigEndian.Uint64(k[p:]), true
}

func FuzzPostingKey(f *testing.F) {
	f.Add(uint16(0), []byte(""), uint64(0), uint16(0), []byte("a"), uint64(0))
	f.Add(uint16(1), []byte("ab"), uint64(1<<63), uint16(1), []byte("a"), uint64(1))
	f.Add(uint16(7), bytes.Repeat([]byte{0xff}, 200), uint64(5), uint16(7), bytes.Repeat([]byte{0xff}, 128), uint64(5))
	f.Add(uint16(7), bytes.Repeat([]byte{0}, 256), uint64(5), uint16(7), bytes.Repeat([]byte{0xff}, 200), uint64(5))
	f.Add(uint16(7), bytes.Repeat([]byte{0}, 1<<14), uint64(5), uint16(7), bytes.Repeat([]byte{0xff}, 1<<14-1), uint64(5))
	f.Fuzz(func(t *testing.T, ns uint16, key []byte, id uint64, ns2 uint16, key2 []byte, id2 uint64) {
		k := postingKey(nil, store.Namespace(ns), key, id)
		gotNS, gotKey, gotID, ok := decodePosting(k)
		if !ok || gotNS != store.Namespace(ns) || !bytes.Equal(gotKey, key) || gotID != id {
			t.Fatalf("decode(encode(%d, %q, %d)) = %d, %q, %d, %v", ns, key, id, gotNS, gotKey, gotID, ok)
		}
		a, b := postingPrefix(nil, store.Namespace(ns), key), postingPrefix(nil, store.Namespace(ns2), key2)
		if !bytes.Equal(a, b) && (bytes.HasPrefix(a, b) || bytes.HasPrefix(b, a)) {
			t.Fatalf("prefixes of (%d, %q) and (%d, %q) collide: %x, %x", ns, key, ns2, key2, a, b)
		}
		// Bytewise order of keys is the order Postings promises: namespace, key length,
		// key bytes, id.
		k2 := postingKey(nil, store.Namespace(ns2), key2, id2)
		want := cmp.Or(cmp.Compare(ns, ns2), cmp.Compare(len(key), len(key2)), bytes.Compare(key, key2), cmp.Compare(id, id2))
		if got := bytes.Compare(k, k2); got != want {
			t.Fatalf("keys of (%d, %q, %d) and (%d, %q, %d) compare %d, want %d", ns, key, id, ns2, key2, id2, got, want)
		}
		if r := recordKey(nil, id); split(r) != len(r) {
			t.Fatalf("split of record key %x = %d", r, split(r))
		}
	})
}
