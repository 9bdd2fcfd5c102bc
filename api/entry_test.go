package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/neardup/neardup/minhash"
)

func sameEntry(a, b Entry) bool {
	return a.ID == b.ID && a.Priority == b.Priority && a.FetchTime.Equal(b.FetchTime) && a.URL == b.URL &&
		a.Raw == b.Raw && a.Text == b.Text && a.Main == b.Main && a.SimHash == b.SimHash &&
		slices.Equal(a.MinHash, b.MinHash) && a.Words == b.Words && a.Title == b.Title && a.Method == b.Method && a.RawURL == b.RawURL &&
		slices.Equal(a.Sketch.Hashes, b.Sketch.Hashes) && a.Sketch.Sampled == b.Sketch.Sampled
}

func TestEntryBinary(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 50 {
		id := "doc/" + string(rune('a'+i%26))
		fp := Fingerprints{URL: "http://example.com/p?i=" + string(rune('0'+i%10)), SimHash: r.Uint64(), Words: r.IntN(1000), Title: "T" + id, Method: "main"}
		for _, h := range []*Hash{&fp.Raw, &fp.Text, &fp.Main} {
			for j := range h {
				h[j] = byte(r.Uint32())
			}
		}
		fp.MinHash = make(minhash.Signature, 1+r.IntN(256))
		for j := range fp.MinHash {
			fp.MinHash[j] = r.Uint32()
		}
		e := Entry{ID: id, Priority: r.NormFloat64(), Fingerprints: fp}
		if i%2 == 0 {
			e.FetchTime = time.Unix(int64(r.Uint32()), int64(r.IntN(1e9)))
		}
		if i%5 == 0 {
			e.MinHash = nil
		}
		if i%4 != 0 {
			// Sketches of every size the length prefix spans: 1 to 3 bytes.
			f := make([]uint64, r.IntN(1<<(4*(i%5))))
			for j := range f {
				f[j] = r.Uint64()
			}
			e.Sketch = minhash.NewSketch(nil, f, 1+r.IntN(8000))
		}
		if i%3 == 0 {
			e.RawURL = "HTTP://Example.COM/p?i=" + string(rune('0'+i%10)) + "#frag"
		}
		b, _ := e.MarshalBinary()
		if len(b) > maxEntrySize(&e) {
			t.Fatalf("%d bytes, above the bound %d", len(b), maxEntrySize(&e))
		}
		var got Entry
		if err := got.UnmarshalBinary(b); err != nil || !sameEntry(e, got) {
			t.Fatalf("round trip of %+v: %+v, %v", e, got, err)
		}
		// Every truncation and a trailing byte are errors that leave the entry alone.
		for n := range len(b) {
			keep := got
			if err := got.UnmarshalBinary(b[:n]); !errors.Is(err, ErrEncoding) || !sameEntry(keep, got) {
				t.Fatalf("truncated at %d of %d: %v", n, len(b), err)
			}
		}
		if err := got.UnmarshalBinary(append(bytes.Clone(b), 0)); !errors.Is(err, ErrEncoding) {
			t.Fatalf("trailing byte: %v", err)
		}
	}
	// A NaN priority, which no keep policy can order and the detector refuses to store,
	// is a corrupt entry.
	b, _ := Entry{ID: "n", Priority: math.NaN()}.MarshalBinary()
	if err := new(Entry).UnmarshalBinary(b); !errors.Is(err, ErrEncoding) {
		t.Errorf("NaN priority: %v", err)
	}
}

// entryV1Golden is the version 1 encoding of TestEntryBinaryGolden's entry.
const entryV1Golden = "010161000000000000f83f8a80d0e2c6bfce972f13687474703a2f2f6578616d706c652e636f6d2fd7439bee24773bcbfa2d0a97947ee36227b10d1022b1a55847e928965bb6bfde982d9e3eb996f559e633f4d194def3761d909f5a3b647d1a851fead67c32c9d10d6e4079e36703ebd37c00722f5891d28b0e2811dc114b129215123adcce3605efcdab8967452301030100000002000000ffffffffac0201540b74726166696c6174757261"

// entryV2Golden is the version 2 encoding of TestEntryBinaryGolden's entry with its RawURL.
const entryV2Golden = "020161000000000000f83f8a80d0e2c6bfce972f13687474703a2f2f6578616d706c652e636f6d2fd7439bee24773bcbfa2d0a97947ee36227b10d1022b1a55847e928965bb6bfde982d9e3eb996f559e633f4d194def3761d909f5a3b647d1a851fead67c32c9d10d6e4079e36703ebd37c00722f5891d28b0e2811dc114b129215123adcce3605efcdab8967452301030100000002000000ffffffffac0201540b74726166696c61747572611a485454503a2f2f4558414d504c452e636f6d3a38302f23746f70"

// TestEntryBinaryGolden pins the format: stores keep entries across versions.
func TestEntryBinaryGolden(t *testing.T) {
	e := Entry{ID: "a", Priority: 1.5, FetchTime: time.Unix(1700000000, 5), Fingerprints: Fingerprints{
		URL: "http://example.com/", Raw: sha256.Sum256([]byte("raw")), Text: sha256.Sum256([]byte("text")),
		Main: sha256.Sum256([]byte("main")), SimHash: 0x0123456789abcdef, MinHash: []uint32{1, 2, 0xffffffff},
		Words: 300, Title: "T", Method: "trafilatura",
	}}
	// Version 1, from before RawURL, as stores hold it: it decodes, with RawURL "".
	v1, _ := hex.DecodeString(entryV1Golden)
	var v Entry
	if err := v.UnmarshalBinary(v1); err != nil || !sameEntry(v, e) {
		t.Errorf("version 1: %+v, %v", v, err)
	}
	e.RawURL = "HTTP://EXAMPLE.com:80/#top"
	// Version 2, from before Sketch: it decodes, without a sketch.
	v2, _ := hex.DecodeString(entryV2Golden)
	if err := v.UnmarshalBinary(v2); err != nil || !sameEntry(v, e) {
		t.Errorf("version 2: %+v, %v", v, err)
	}
	e.Sketch = minhash.NewSketch(nil, []uint64{9, 1 << 33, 300, 0xffff_ffff}, 3)
	b, _ := e.AppendBinary([]byte("prefix"))
	if tail := hex.EncodeToString(b[len(b)-6:]); tail != "05070009a302" {
		t.Errorf("the sketch encoded as ...%s", tail)
	}
	sum := sha256.Sum256(b)
	const want = "863baa7eb99061bae68cb4e199408d489d5e277f367ea6f643754c13a84301bc"
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("encoding sha256 %s, want %s (%d bytes)", got, want, len(b))
	}
	if err := v.UnmarshalBinary(b[len("prefix"):]); err != nil || !sameEntry(v, e) {
		t.Errorf("version 3: %+v, %v", v, err)
	}
	if err := v.UnmarshalBinary([]byte{4}); !errors.Is(err, ErrEncoding) {
		t.Errorf("version 4: %v", err)
	}
	// A corrupt sketch is a corrupt entry.
	bad := bytes.Clone(b[len("prefix"):])
	bad[len(bad)-3] = 0 // the second hash (9) made a repeat of the first (0)
	if err := v.UnmarshalBinary(bad); !errors.Is(err, ErrEncoding) {
		t.Errorf("corrupt sketch: %v", err)
	}
}

func FuzzEntryBinary(f *testing.F) {
	e := Entry{ID: "x", Fingerprints: Fingerprints{URL: "u", MinHash: []uint32{7, 8}, Words: 3}}
	b, _ := e.MarshalBinary()
	f.Add(b)
	e.Sketch = minhash.Sketch{Hashes: []uint32{3, 90, 1 << 20}}
	b, _ = e.MarshalBinary()
	f.Add(b)
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Entry
		if err := e.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrEncoding) {
				t.Fatalf("error not ErrEncoding: %v", err)
			}
			return
		}
		var lean Entry
		if err := lean.UnmarshalWithoutSketch(data); err != nil || !lean.Sketch.Empty() {
			t.Fatalf("UnmarshalWithoutSketch of an accepted entry: %v, sketch %v", err, lean.Sketch)
		}
		lean.Sketch = e.Sketch
		if !sameEntry(e, lean) {
			t.Fatalf("UnmarshalWithoutSketch differs from UnmarshalBinary but for the sketch")
		}
		var again Entry
		b, _ := e.MarshalBinary()
		if err := again.UnmarshalBinary(b); err != nil || !sameEntry(e, again) {
			t.Fatalf("an accepted entry does not round-trip: %v", err)
		}
	})
}
