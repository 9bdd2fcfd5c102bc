package hamming

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

const goldenSnapshot = "testdata/index-v1.golden"

// goldenIndex is the small index pinned in testdata/index-v1.golden: design (5, 2), ids
// added out of order, one replaced and one removed.
func goldenIndex(t testing.TB) *Index {
	x := mustIndex(t, IndexOptions{MaxDistance: 2, Blocks: 5})
	x.Add(42, 0x0123_4567_89ab_cdef)
	x.Add(7, 0xfedc_ba98_7654_3210)
	x.Add(0, 0)
	x.Add(1<<63, 0xffff_ffff_ffff_ffff)
	x.Add(99, 0x0123_4567_89ab_cdee)
	x.Add(7, 0xfedc_ba98_7654_3211) // replaces
	x.Remove(99)
	return x
}

func snapshotBytes(t testing.TB, x *Index) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := x.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo returned %d, wrote %d bytes", n, buf.Len())
	}
	return buf.Bytes()
}

func TestSnapshotGolden(t *testing.T) {
	got := snapshotBytes(t, goldenIndex(t))
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(goldenSnapshot), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenSnapshot, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenSnapshot)
	if err != nil {
		t.Fatalf("%v (run go test -run TestSnapshotGolden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("snapshot bytes changed; the v1 format is frozen.\ngot  %x\nwant %x", got, want)
	}
	// The layout, spelled out independently of WriteTo.
	le := binary.LittleEndian
	if string(want[:8]) != "NDHAMIDX" || le.Uint32(want[8:]) != 1 || le.Uint32(want[12:]) != 5 ||
		le.Uint32(want[16:]) != 2 || le.Uint64(want[20:]) != 4 || len(want) != 28+4*16+4 {
		t.Fatalf("golden header %x is not version 1 of (5, 2) with 4 records", want[:28])
	}
	wantIDs := []uint64{0, 7, 42, 1 << 63}
	wantFPs := []uint64{0, 0xfedc_ba98_7654_3211, 0x0123_4567_89ab_cdef, 0xffff_ffff_ffff_ffff}
	for i := range wantIDs {
		rec := want[28+16*i:]
		if le.Uint64(rec) != wantIDs[i] || le.Uint64(rec[8:]) != wantFPs[i] {
			t.Fatalf("record %d = %x", i, rec[:16])
		}
	}
	if sum := crc32.Checksum(want[:len(want)-4], crc32.MakeTable(crc32.Castagnoli)); le.Uint32(want[len(want)-4:]) != sum {
		t.Fatalf("golden checksum is not the CRC-32C of the rest")
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, dz := range indexDesigns {
		for _, n := range []int{0, 1, 5000, 30_000} {
			r := rand.New(rand.NewPCG(uint64(n), uint64(dz.blocks)))
			x := mustIndex(t, IndexOptions{MaxDistance: dz.k, Blocks: dz.blocks})
			m := indexModel{}
			fillIndex(r, x, m, n, dz.k, true)
			for id := range m { // remove about a third
				if r.IntN(3) == 0 {
					x.Remove(id)
					delete(m, id)
				}
			}
			data := snapshotBytes(t, x)
			y, err := ReadIndex(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("(%d, %d) n=%d: %v", dz.blocks, dz.k, n, err)
			}
			if y.c.d.blocks != dz.blocks || y.c.d.k != dz.k {
				t.Fatalf("read design (%d, %d), want (%d, %d)", y.c.d.blocks, y.c.d.k, dz.blocks, dz.k)
			}
			checkIndex(t, r, y, m, 50)
			if again := snapshotBytes(t, y); !bytes.Equal(again, data) {
				t.Fatal("a read index writes a different snapshot")
			}
			// The read index stays fully usable.
			fillIndex(r, y, m, 2000, dz.k, true)
			checkIndex(t, r, y, m, 20)
		}
	}
}

func TestSnapshotZeroIndex(t *testing.T) {
	var x Index
	y, err := ReadIndex(bytes.NewReader(snapshotBytes(t, &x)))
	if err != nil {
		t.Fatal(err)
	}
	if y.Len() != 0 || y.c.d.blocks != 4 || y.c.d.k != 3 {
		t.Fatalf("zero Index read back as %d fingerprints, design (%d, %d)", y.Len(), y.c.d.blocks, y.c.d.k)
	}
}

// TestReadIndexStopsAtEnd checks that ReadIndex consumes exactly the snapshot.
func TestReadIndexStopsAtEnd(t *testing.T) {
	data := snapshotBytes(t, goldenIndex(t))
	r := bytes.NewReader(append(append([]byte{}, data...), "trailing"...))
	if _, err := ReadIndex(r); err != nil {
		t.Fatal(err)
	}
	if rest, _ := io.ReadAll(r); string(rest) != "trailing" {
		t.Fatalf("after the snapshot the reader holds %q", rest)
	}
}

// resum recomputes the trailing checksum of a modified snapshot.
func resum(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func TestReadIndexErrors(t *testing.T) {
	golden := snapshotBytes(t, goldenIndex(t))
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, golden...)) }
	le := binary.LittleEndian
	for _, tc := range []struct {
		name, want string // want: a piece of the message
		data       []byte
		design     bool // the error wraps ErrDesign too
	}{
		{"empty", "truncated in the header", nil, false},
		{"short header", "truncated in the header", golden[:27], false},
		{"no records", "truncated in the record 1 of 4", golden[:28], false},
		{"mid record", "truncated in the record 1 of 4", golden[:28+9], false},
		{"no checksum", "truncated in the checksum", golden[:len(golden)-4], false},
		{"half checksum", "truncated in the checksum", golden[:len(golden)-2], false},
		{"bad magic", "not an index snapshot", edit(func(b []byte) []byte { b[0] = 'X'; return b }), false},
		{"text file", "not an index snapshot", []byte(strings.Repeat("hello, world\n", 4)), false},
		{"version 2", "version 2 is unknown", edit(func(b []byte) []byte { le.PutUint32(b[8:], 2); return resum(b) }), false},
		{"version 0", "version 0 is unknown", edit(func(b []byte) []byte { le.PutUint32(b[8:], 0); return resum(b) }), false},
		{"flipped record bit", "checksum", edit(func(b []byte) []byte { b[40] ^= 4; return b }), false},
		{"flipped checksum bit", "checksum", edit(func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }), false},
		{"blocks 65", "invalid table design", edit(func(b []byte) []byte { le.PutUint32(b[12:], 65); return resum(b) }), true},
		{"blocks huge", "invalid table design", edit(func(b []byte) []byte { le.PutUint32(b[12:], 1<<31); return resum(b) }), true},
		{"blocks <= k", "must be more than the distance", edit(func(b []byte) []byte { le.PutUint32(b[12:], 2); return resum(b) }), true},
		{"too many tables", "tables", edit(func(b []byte) []byte { le.PutUint32(b[12:], 64); le.PutUint32(b[16:], 20); return resum(b) }), true},
		{"count too big", "count 4294967296 is above", edit(func(b []byte) []byte { le.PutUint64(b[20:], 1<<32); return resum(b) }), false},
		{"count larger than data", "truncated in the record 5 of 5", edit(func(b []byte) []byte { le.PutUint64(b[20:], 5); return resum(b) }), false},
		{"count smaller than data", "checksum", edit(func(b []byte) []byte { le.PutUint64(b[20:], 3); return resum(b) }), false},
		{"repeated id", "is repeated", edit(func(b []byte) []byte { copy(b[28+16:], b[28:28+8]); return resum(b) }), false},
		{"ids out of order", "is out of order", edit(func(b []byte) []byte {
			var r0 [16]byte
			copy(r0[:], b[28:44])
			copy(b[28:44], b[44:60])
			copy(b[44:60], r0[:])
			return resum(b)
		}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := ReadIndex(bytes.NewReader(tc.data))
			if err == nil || x != nil {
				t.Fatalf("ReadIndex = %v, %v; want an error", x, err)
			}
			if !errors.Is(err, ErrSnapshot) {
				t.Errorf("error %q does not wrap ErrSnapshot", err)
			}
			if errors.Is(err, ErrDesign) != tc.design {
				t.Errorf("error %q: wraps ErrDesign = %v, want %v", err, !tc.design, tc.design)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "hamming: ") {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestReadIndexIOError checks that a failing reader's error is passed on, not disguised
// as a bad snapshot.
func TestReadIndexIOError(t *testing.T) {
	boom := errors.New("disk on fire")
	data := snapshotBytes(t, goldenIndex(t))
	_, err := ReadIndex(io.MultiReader(bytes.NewReader(data[:40]), iotestErrReader{boom}))
	if !errors.Is(err, boom) || errors.Is(err, ErrSnapshot) {
		t.Fatalf("err = %v; want the reader's error, not ErrSnapshot", err)
	}
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }

// TestReadIndexHugeCountAllocatesLittle checks that a header claiming billions of records
// costs memory in proportion to the bytes actually there.
func TestReadIndexHugeCountAllocatesLittle(t *testing.T) {
	data := snapshotBytes(t, goldenIndex(t))
	binary.LittleEndian.PutUint64(data[20:], maxSlots)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := ReadIndex(bytes.NewReader(data)); !errors.Is(err, ErrSnapshot) {
			t.Fatalf("err = %v, want ErrSnapshot", err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 10; per > 256<<10 {
		t.Fatalf("ReadIndex of a %d-byte input claiming 2^32-1 records allocated %d bytes", len(data), per)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func FuzzReadIndex(f *testing.F) {
	golden, err := os.ReadFile(goldenSnapshot)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add(golden[:len(golden)/2])
	flipped := append([]byte{}, golden...)
	flipped[50] ^= 1
	f.Add(flipped)
	f.Add([]byte{})
	f.Add(snapshotBytes(f, &Index{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkReadIndex(t, data)
		// The checksum stops almost every mutation at the end; also try the data with the
		// checksum its length implies made right, to reach the checks behind it.
		const header = 12 + snapshotHeader // magic, version, then the header fields
		if len(data) >= header+4 {
			n := binary.LittleEndian.Uint64(data[20:])
			if end := header + int64(min(n, 1<<20))*snapshotRecord + 4; int64(len(data)) >= end {
				checkReadIndex(t, resum(append([]byte{}, data[:end]...)))
			}
		}
	})
}

// checkReadIndex checks ReadIndex on data: it fails with ErrSnapshot, or reads an index
// that writes the bytes it read back and finds each of its fingerprints.
func checkReadIndex(t *testing.T, data []byte) {
	cr := &countingReader{r: bytes.NewReader(data)}
	x, err := ReadIndex(cr)
	if err != nil {
		if x != nil || !errors.Is(err, ErrSnapshot) {
			t.Fatalf("ReadIndex = %v, %v; want nil and an ErrSnapshot", x, err)
		}
		return
	}
	if again := snapshotBytes(t, x); !bytes.Equal(again, data[:cr.n]) {
		t.Fatalf("round trip changed the snapshot:\n in %x\nout %x", data[:cr.n], again)
	}
	checkInvariants(t, x)
	for s := range uint32(x.c.slots.Len()) {
		id := x.c.id(s)
		ms, err := x.Query(x.c.fp(s), 0)
		if err != nil || !slices.ContainsFunc(ms, func(m Match) bool { return m.ID == id }) {
			t.Fatalf("Query of id %d's fingerprint = %v, %v", id, ms, err)
		}
	}
}

// BenchmarkIndexSnapshot measures writing a snapshot of a default-design index of random
// fingerprints and reading it back (1M, and 10M without -short), in fingerprints/s.
func BenchmarkIndexSnapshot(b *testing.B) {
	for _, n := range benchSizes() {
		bi := randomIndex(b, n)
		var buf bytes.Buffer
		b.Run(fmt.Sprintf("write/n=%dM", n/1_000_000), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if _, err := bi.x.WriteTo(&buf); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(buf.Len()))
			b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds(), "fps/s")
		})
		b.Run(fmt.Sprintf("read/n=%dM", n/1_000_000), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				if _, err := ReadIndex(bytes.NewReader(buf.Bytes())); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds(), "fps/s")
		})
	}
}

func ExampleReadIndex() {
	x, err := NewIndex(IndexOptions{})
	if err != nil {
		panic(err)
	}
	x.Add(1, 0xdead_beef)
	x.Add(2, 0xdead_beee)

	// A service writes snapshots (to a temporary file it then renames) and restarts from
	// the last one without recomputing fingerprints.
	var file bytes.Buffer
	if _, err := x.WriteTo(&file); err != nil {
		panic(err)
	}
	y, err := ReadIndex(&file)
	if err != nil {
		panic(err)
	}
	ms, _ := y.Query(0xdead_beef, 1)
	fmt.Println(y.Len(), ms)
	// Output: 2 [{1 3735928559 0} {2 3735928558 1}]
}
