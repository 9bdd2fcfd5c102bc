package minhash

import (
	"bytes"
	"encoding"
	"errors"
	"os"
	"slices"
	"testing"
)

var (
	_ encoding.BinaryAppender    = Signature(nil)
	_ encoding.BinaryMarshaler   = Signature(nil)
	_ encoding.BinaryUnmarshaler = (*Signature)(nil)
)

const goldenEncoding = "testdata/signature-v1.golden"

// goldenSignature is the signature pinned in testdata/signature-v1.golden.
func goldenSignature() Signature {
	return Hasher{K: 16, Seed: 1}.Signature(goldenFeatures(100))
}

func TestEncodingGolden(t *testing.T) {
	got, err := goldenSignature().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if *updateGolden {
		if err := os.WriteFile(goldenEncoding, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenEncoding)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding changed; version 1 is frozen\ngot  %x\nwant %x", got, want)
	}
	if len(want) != 3+4*16 || want[0] != 1 || want[1] != 16 || want[2] != 0 {
		t.Fatalf("golden header %x is not version 1 with K=16", want[:3])
	}
}

func TestEncodingRoundTrip(t *testing.T) {
	for _, k := range []int{1, 16, 128, MaxK} {
		s := Hasher{K: k, Seed: uint64(k)}.Signature(goldenFeatures(2 * k))
		b, err := s.AppendBinary([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		if string(b[:6]) != "prefix" || len(b) != 6+3+4*k {
			t.Fatalf("K=%d: AppendBinary wrote %d bytes after the prefix", k, len(b)-6)
		}
		var got Signature
		if err := got.UnmarshalBinary(b[6:]); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, s) {
			t.Fatalf("K=%d: round trip changed the signature", k)
		}
		// Reuses the receiver's memory when it has room.
		buf := make(Signature, 0, k)
		p := &buf[:1][0]
		if err := buf.UnmarshalBinary(b[6:]); err != nil || &buf[0] != p || !slices.Equal(buf, s) {
			t.Fatalf("K=%d: UnmarshalBinary did not reuse the receiver", k)
		}
	}
}

func TestEncodingErrors(t *testing.T) {
	for _, s := range []Signature{nil, make(Signature, MaxK+1)} {
		if b, err := s.AppendBinary([]byte{7}); !errors.Is(err, ErrEncoding) || !bytes.Equal(b, []byte{7}) {
			t.Errorf("AppendBinary of %d values = %x, %v; want dst unchanged and ErrEncoding", len(s), b, err)
		}
	}
	good, _ := goldenSignature().MarshalBinary()
	bad := map[string][]byte{
		"empty":       {},
		"short":       good[:2],
		"version 0":   append([]byte{0}, good[1:]...),
		"version 2":   append([]byte{2}, good[1:]...),
		"K 0":         {1, 0, 0},
		"K too large": {1, 0xff, 0xff},
		"truncated":   good[:len(good)-1],
		"trailing":    append(slices.Clone(good), 0),
	}
	for name, b := range bad {
		s := Signature{42}
		if err := s.UnmarshalBinary(b); !errors.Is(err, ErrEncoding) {
			t.Errorf("%s: err = %v, want ErrEncoding", name, err)
		}
		if !slices.Equal(s, Signature{42}) {
			t.Errorf("%s: UnmarshalBinary changed the receiver on error", name)
		}
	}
}

func FuzzUnmarshalSignature(f *testing.F) {
	golden, err := os.ReadFile(goldenEncoding)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add(golden[:len(golden)-3])
	f.Add([]byte{})
	f.Add([]byte{1, 1, 0, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{1, 0, 0})
	e, _ := Hasher{}.Signature(nil).MarshalBinary()
	f.Add(e)
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Signature
		if err := s.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, ErrEncoding) || s != nil {
				t.Fatalf("UnmarshalBinary = %v with %v; want ErrEncoding and no change", err, s)
			}
			return
		}
		if len(s) == 0 || len(s) > MaxK {
			t.Fatalf("decoded %d values", len(s))
		}
		again, err := s.MarshalBinary()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("re-encoding gave %x, %v; want the input %x", again, err, b)
		}
	})
}
