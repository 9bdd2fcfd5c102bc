package neardup

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
)

func sameEntry(a, b Entry) bool {
	return a.ID == b.ID && a.Priority == b.Priority && a.FetchTime.Equal(b.FetchTime) && a.URL == b.URL &&
		a.Raw == b.Raw && a.Text == b.Text && a.Main == b.Main && a.SimHash == b.SimHash &&
		slices.Equal(a.MinHash, b.MinHash) && a.Words == b.Words && a.Title == b.Title && a.Method == b.Method
}

func TestEntryBinary(t *testing.T) {
	f, _ := NewFingerprinter(Options{})
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 50 {
		doc := Document{ID: "doc/" + string(rune('a'+i%26)), URL: "http://example.com/p?i=" + string(rune('0'+i%10)), Text: "some words of text " + string(rune('a'+i))}
		fp, err := f.Fingerprint(doc)
		if err != nil {
			t.Fatal(err)
		}
		e := Entry{ID: doc.ID, Priority: r.NormFloat64(), Fingerprints: fp}
		if i%2 == 0 {
			e.FetchTime = time.Unix(int64(r.Uint32()), int64(r.IntN(1e9)))
		}
		if i%5 == 0 {
			e.MinHash = nil
		}
		b, _ := e.MarshalBinary()
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

// TestNaNPriority: a document or entry whose priority is NaN is refused, before any
// store sees it.
func TestNaNPriority(t *testing.T) {
	d := newDetector(t, Options{})
	doc := Document{ID: "n", Text: "some words of text", Priority: math.NaN()}
	if _, err := d.Check(doc); !errors.Is(err, ErrDocument) {
		t.Errorf("Check: %v", err)
	}
	if _, err := d.Fingerprinter().Fingerprint(doc); !errors.Is(err, ErrDocument) {
		t.Errorf("Fingerprint: %v", err)
	}
	if _, err := d.CheckEntry(Entry{ID: "n", Priority: math.NaN()}, true); !errors.Is(err, ErrDocument) {
		t.Errorf("CheckEntry: %v", err)
	}
	if d.Len() != 0 {
		t.Errorf("%d documents stored", d.Len())
	}
}

// TestEntryBinaryGolden pins the format: stores keep entries across versions.
func TestEntryBinaryGolden(t *testing.T) {
	e := Entry{ID: "a", Priority: 1.5, FetchTime: time.Unix(1700000000, 5), Fingerprints: Fingerprints{
		URL: "http://example.com/", Raw: sha256.Sum256([]byte("raw")), Text: sha256.Sum256([]byte("text")),
		Main: sha256.Sum256([]byte("main")), SimHash: 0x0123456789abcdef, MinHash: []uint32{1, 2, 0xffffffff},
		Words: 300, Title: "T", Method: "trafilatura",
	}}
	b, _ := e.AppendBinary([]byte("prefix"))
	sum := sha256.Sum256(b)
	const want = "79c6f47c9a3c57bf55e9cdc1caf874378cb0f63358ad383a80099fd041a7ddd5"
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("encoding sha256 %s, want %s (%d bytes)", got, want, len(b))
	}
	var v Entry
	if err := v.UnmarshalBinary([]byte{2}); !errors.Is(err, ErrEncoding) {
		t.Errorf("version 2: %v", err)
	}
}

func FuzzEntryBinary(f *testing.F) {
	e := Entry{ID: "x", Fingerprints: Fingerprints{URL: "u", MinHash: []uint32{7, 8}, Words: 3}}
	b, _ := e.MarshalBinary()
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
		var again Entry
		b, _ := e.MarshalBinary()
		if err := again.UnmarshalBinary(b); err != nil || !sameEntry(e, again) {
			t.Fatalf("an accepted entry does not round-trip: %v", err)
		}
	})
}
