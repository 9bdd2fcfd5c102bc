package lsh

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/neardup/neardup/minhash"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

const goldenSnapshot = "testdata/index-v1.golden"

// goldenIndex is the small index pinned in testdata/index-v1.golden: K = 8 with 4 bands of
// 2 rows at threshold 0.5, ids added out of order, one replaced and one removed.
func goldenIndex(t testing.TB) *Index {
	x := mustNew(t, Options{K: 8, Threshold: 0.5, Bands: 4, Rows: 2})
	add := func(id uint64, sig ...uint32) {
		if err := x.Add(id, sig); err != nil {
			t.Fatal(err)
		}
	}
	add(42, 1, 2, 3, 4, 5, 6, 7, 8)
	add(7, 1, 2, 3, 4, 9, 9, 9, 9)
	add(0, 0, 0, 0, 0, 0, 0, 0, 0)
	add(1<<63, math.MaxUint32, 1, 2, 3, 4, 5, 6, 7)
	add(99, 8, 7, 6, 5, 4, 3, 2, 1)
	add(7, 1, 2, 3, 4, 5, 6, 0, 0) // replaces
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
		if err := os.WriteFile(goldenSnapshot, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenSnapshot)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("snapshot bytes changed; the v1 format is frozen.\ngot  %x\nwant %x", got, want)
	}
	// The layout, spelled out independently of WriteTo.
	le := binary.LittleEndian
	if string(want[:8]) != "NDLSHIDX" || le.Uint32(want[8:]) != 1 || le.Uint32(want[12:]) != 8 ||
		le.Uint32(want[16:]) != 4 || le.Uint32(want[20:]) != 2 || le.Uint64(want[24:]) != math.Float64bits(0.5) ||
		le.Uint64(want[32:]) != math.Float64bits(0.5) || le.Uint64(want[40:]) != math.Float64bits(0.5) ||
		le.Uint64(want[48:]) != 4 || len(want) != 56+4*(8+4*8)+4 {
		t.Fatalf("golden header %x is not version 1 of K=8, 4x2, threshold 0.5 with 4 records", want[:56])
	}
	wantIDs := []uint64{0, 7, 42, 1 << 63}
	wantSigs := [][]uint32{{0, 0, 0, 0, 0, 0, 0, 0}, {1, 2, 3, 4, 5, 6, 0, 0}, {1, 2, 3, 4, 5, 6, 7, 8}, {math.MaxUint32, 1, 2, 3, 4, 5, 6, 7}}
	for i := range wantIDs {
		rec := want[56+40*i:]
		if le.Uint64(rec) != wantIDs[i] {
			t.Fatalf("record %d id %d", i, le.Uint64(rec))
		}
		for j, v := range wantSigs[i] {
			if le.Uint32(rec[8+4*j:]) != v {
				t.Fatalf("record %d value %d = %d, want %d", i, j, le.Uint32(rec[8+4*j:]), v)
			}
		}
	}
	if sum := crc32.Checksum(want[:len(want)-4], crc32.MakeTable(crc32.Castagnoli)); le.Uint32(want[len(want)-4:]) != sum {
		t.Fatal("golden checksum is not the CRC-32C of the rest")
	}
	// The golden index answers as the original does.
	y, err := Read(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := y.Query(minhash.Signature{1, 2, 3, 4, 5, 6, 7, 8})
	if !slices.Equal(ms, []Match{{42, 1}, {7, 0.75}}) {
		t.Fatalf("golden index query = %v", ms)
	}
}

// TestBandKeysGolden pins the band key function, which stores may persist.
func TestBandKeysGolden(t *testing.T) {
	sig := make(minhash.Signature, 128)
	for i := range sig {
		sig[i] = uint32(i) * 0x9e3779b9
	}
	cases := []struct {
		bands, rows int
		want        []uint64
	}{
		{9, 13, []uint64{0x7b576810da854b4b, 0xcfda8d08988d60c7, 0x336f287db7b32c44, 0x86f1c5ac4377a299, 0x6ac23444746f55fe, 0x086848b229faaed7, 0xc92bc8f0377aa690, 0xf58bde8a0e250940, 0x2cd24d64de2a5dbf}},
		{4, 2, []uint64{0xfd8985d5704d11f8, 0x677191a61cbd0031, 0x21f6a526dd728209, 0x34b05a2daa1ae5de}},
		{1, 1, []uint64{0x94974c8538541fe9}},
	}
	for _, c := range cases {
		got := AppendBandKeys(nil, sig, c.bands, c.rows)
		if !slices.Equal(got, c.want) {
			t.Errorf("AppendBandKeys(sig, %d, %d) = %#x, want %#x (the key function is frozen)", c.bands, c.rows, got, c.want)
		}
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, o := range testOptions {
		for _, n := range []int{0, 1, 3000} {
			r := rand.New(rand.NewPCG(uint64(n), uint64(o.K)))
			x := mustNew(t, o)
			m := model{}
			fill(r, x, m, n)
			for id := range m { // remove about a third
				if r.IntN(3) == 0 {
					x.Remove(id)
					delete(m, id)
				}
			}
			data := snapshotBytes(t, x)
			y, err := Read(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%+v n=%d: %v", o, n, err)
			}
			if y.Options() != x.Options() {
				t.Fatalf("read options %+v, want %+v", y.Options(), x.Options())
			}
			checkIndex(t, r, y, m, 50)
			if again := snapshotBytes(t, y); !bytes.Equal(again, data) {
				t.Fatal("a read index writes a different snapshot")
			}
			fill(r, y, m, 500) // the read index stays fully usable
			checkIndex(t, r, y, m, 20)
		}
	}
}

func TestSnapshotZeroIndex(t *testing.T) {
	var x Index
	y, err := Read(bytes.NewReader(snapshotBytes(t, &x)))
	if err != nil {
		t.Fatal(err)
	}
	if y.Len() != 0 || y.Options() != zeroOptions() {
		t.Fatalf("zero Index read back as %d signatures, %+v", y.Len(), y.Options())
	}
}

// TestSnapshotStreams checks that Read consumes exactly the snapshot, however r delivers
// it, so a snapshot can be followed by other data.
func TestSnapshotStreams(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	x := mustNew(t, Options{})
	fill(r, x, model{}, 700) // more than one 64 KiB read
	data := append(snapshotBytes(t, x), "trailer"...)
	rd := bytes.NewReader(data)
	if _, err := Read(io.MultiReader(oneByteReader{rd})); err != nil {
		t.Fatal(err)
	}
	if rest, _ := io.ReadAll(rd); string(rest) != "trailer" {
		t.Fatalf("Read left %q", rest)
	}
}

type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:min(1, len(p))]) }

func TestSnapshotErrors(t *testing.T) {
	good := snapshotBytes(t, goldenIndex(t))
	le := binary.LittleEndian
	patch := func(off int, v uint64, size int) []byte {
		b := slices.Clone(good)
		if size == 4 {
			le.PutUint32(b[off:], uint32(v))
		} else {
			le.PutUint64(b[off:], v)
		}
		return b
	}
	cases := map[string][]byte{
		"empty":            {},
		"magic":            append([]byte("NDHAMIDX"), good[8:]...),
		"version":          patch(8, 2, 4),
		"K 0":              patch(12, 0, 4),
		"K huge":           patch(12, 1<<31, 4),
		"bands 0":          patch(16, 0, 4),
		"rows beyond K":    patch(20, 3, 4),
		"threshold 0":      patch(24, 0, 8),
		"threshold 2":      patch(24, math.Float64bits(2), 8),
		"threshold NaN":    patch(24, math.Float64bits(math.NaN()), 8),
		"weights 0":        patch(40, 0, 8),
		"negative weight":  patch(32, math.Float64bits(-1), 8),
		"count huge":       patch(48, 1<<40, 8),
		"count above data": patch(48, 5, 8),
		"ids out of order": patch(56, 8, 8),
		"ids repeated":     patch(56+40, 0, 8),
		"truncated":        good[:len(good)-1],
		"checksum":         patch(len(good)-4, 0, 4),
		"flipped bit":      func() []byte { b := slices.Clone(good); b[70] ^= 1; return b }(),
	}
	for name, b := range cases {
		x, err := Read(bytes.NewReader(b))
		if x != nil || !errors.Is(err, ErrSnapshot) {
			t.Errorf("%s: Read = %v, %v; want ErrSnapshot", name, x, err)
		}
	}
	if _, err := Read(bytes.NewReader(patch(12, 0, 4))); !errors.Is(err, ErrOptions) {
		t.Errorf("bad options do not wrap ErrOptions: %v", err)
	}
	// I/O errors other than EOF pass through.
	boom := errors.New("boom")
	if _, err := Read(io.MultiReader(bytes.NewReader(good[:60]), errReader{boom})); !errors.Is(err, boom) || errors.Is(err, ErrSnapshot) {
		t.Errorf("I/O error: %v", err)
	}
	if _, err := goldenIndex(t).WriteTo(errWriter{boom}); !errors.Is(err, boom) {
		t.Errorf("write error: %v", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

type errWriter struct{ err error }

func (e errWriter) Write([]byte) (int, error) { return 0, e.err }

// TestReadDoesNotTrustCount checks that a huge count with no records behind it allocates
// little before failing.
func TestReadDoesNotTrustCount(t *testing.T) {
	good := snapshotBytes(t, goldenIndex(t))
	b := slices.Clone(good[:56])
	binary.LittleEndian.PutUint64(b[48:], 1<<32-1)
	b[12] = 255 // K = 255, 4 bands of 2 rows are still valid
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := Read(bytes.NewReader(b)); !errors.Is(err, ErrSnapshot) {
			t.Fatal(err)
		}
	})
	if allocs > 20 {
		t.Fatalf("Read of a truncated huge snapshot made %v allocations", allocs)
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

func FuzzRead(f *testing.F) {
	golden, err := os.ReadFile(goldenSnapshot)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add(golden[:len(golden)/2])
	flipped := slices.Clone(golden)
	flipped[60] ^= 1
	f.Add(flipped)
	f.Add([]byte{})
	f.Add(snapshotBytes(f, &Index{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, data)
		// The same bytes with a correct checksum, so that the fuzzer reaches the checks
		// behind it instead of failing them all on the CRC.
		if n := len(data); n >= 4 {
			fixed := slices.Clone(data)
			binary.LittleEndian.PutUint32(fixed[n-4:], crc32.Checksum(fixed[:n-4], crc32.MakeTable(crc32.Castagnoli)))
			checkRead(t, fixed)
		}
	})
}

// checkRead reads data as a snapshot: it must fail with ErrSnapshot, or give an index
// that writes the bytes it read and finds every signature it holds.
func checkRead(t *testing.T, data []byte) {
	cr := &countingReader{r: bytes.NewReader(data)}
	x, err := Read(cr)
	if err != nil {
		if x != nil || !errors.Is(err, ErrSnapshot) {
			t.Fatalf("Read = %v, %v; want nil and an ErrSnapshot", x, err)
		}
		return
	}
	if again := snapshotBytes(t, x); !bytes.Equal(again, data[:cr.n]) {
		t.Fatalf("round trip changed the snapshot:\n in %x\nout %x", data[:cr.n], again)
	}
	for s := range uint32(x.c.slots.Len()) {
		ms, err := x.Query(x.c.sig(s))
		if err != nil || !slices.ContainsFunc(ms, func(m Match) bool { return m.ID == x.c.id(s) && m.Similarity == 1 }) {
			t.Fatalf("slot %d (id %d) not found by its own signature: %v, %v", s, x.c.id(s), ms, err)
		}
	}
}
