package dedup

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/neardup/neardup"
)

// testShard is a small shard with every field set, as RunShard would leave it.
func testShard(t testing.TB) *Shard {
	o, err := Options{Containment: true, Pipeline: neardup.Pipeline{MinHashK: 4, Threshold: 0.7,
		Keep: neardup.KeepPolicy{neardup.KeepLongest, neardup.KeepFirstSeen}}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	o.Threads = 0
	return &Shard{Run: "r", Index: 1, Count: 3, Options: o,
		Docs: []Doc{{ID: "a", URL: "http://x/", Main: neardup.Hash{1}, Words: 9, Bytes: 40, Priority: 2, Cluster: -1, Kept: true},
			{ID: "b", Main: neardup.Hash{2}, Words: 3, FetchTime: 77, Cluster: -1, Kept: true}},
		Pos:     []uint64{Position(1, 0), Position(4, 2)},
		sigs:    []uint32{1, 2, 3, 4, 5, 6, 7, 8},
		Pairs:   []ShardPair{{A: Position(0, 5), B: Position(4, 2), Similarity: 0.75}},
		Skipped: 1, Bad: []ShardBad{{Source: "f:3", ID: "c", Error: "too long"}}}
}

// TestShardFile checks that a shard file reads back as written, and that every
// truncation and every flipped byte of it is refused with ErrShardFile.
func TestShardFile(t *testing.T) {
	sh := testShard(t)
	var b bytes.Buffer
	n, err := sh.WriteTo(&b)
	if err != nil || n != int64(b.Len()) {
		t.Fatalf("WriteTo: %d, %v; wrote %d", n, err, b.Len())
	}
	file := b.Bytes()
	got, err := ReadShard(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	got.Options.Threads = 0
	if !reflect.DeepEqual(got, sh) {
		t.Errorf("read back\n%+v\nwrote\n%+v", got, sh)
	}
	for i := range len(file) {
		if _, err := ReadShard(bytes.NewReader(file[:i])); !errors.Is(err, ErrShardFile) {
			t.Fatalf("truncated to %d bytes: %v", i, err)
		}
	}
	for i := range file {
		bad := bytes.Clone(file)
		bad[i] ^= 0x10
		if _, err := ReadShard(bytes.NewReader(bad)); !errors.Is(err, ErrShardFile) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
}

// TestMergeChecks checks the shards Merge refuses: none, of two runs, with other
// options, overlapping positions.
func TestMergeChecks(t *testing.T) {
	mk := func(index int, edit func(*Shard)) *Shard {
		sh := testShard(t)
		sh.Index, sh.Pairs = index, nil
		sh.Pos = []uint64{Position(index, 0), Position(index, 1)}
		if edit != nil {
			edit(sh)
		}
		return sh
	}
	if _, err := Merge(nil); !errors.Is(err, ErrShardMissing) {
		t.Errorf("no shard: %v", err)
	}
	if _, err := Merge([]*Shard{mk(0, nil), mk(1, nil), mk(2, nil)}); err != nil {
		t.Errorf("three good shards: %v", err)
	}
	for name, shards := range map[string][]*Shard{
		"other run":     {mk(0, nil), mk(1, func(s *Shard) { s.Run = "q" }), mk(2, nil)},
		"other count":   {mk(0, nil), mk(1, func(s *Shard) { s.Count = 4 }), mk(2, nil)},
		"other options": {mk(0, nil), mk(1, func(s *Shard) { s.Options.Threshold = 0.9 }), mk(2, nil)},
		"overlap":       {mk(0, nil), mk(1, func(s *Shard) { s.Pos[0] = Position(0, 1) }), mk(2, nil)},
	} {
		if _, err := Merge(shards); !errors.Is(err, ErrShardMismatch) {
			t.Errorf("%s: %v, want ErrShardMismatch", name, err)
		}
	}
}

// FuzzReadShard checks that any input reads as a valid shard or fails with ErrShardFile.
func FuzzReadShard(f *testing.F) {
	var b bytes.Buffer
	if _, err := testShard(f).WriteTo(&b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte(shardMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		sh, err := ReadShard(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrShardFile) {
				t.Fatalf("error not ErrShardFile: %v", err)
			}
			return
		}
		if len(sh.Pos) != len(sh.Docs) {
			t.Fatalf("%d positions for %d documents", len(sh.Pos), len(sh.Docs))
		}
	})
}
