package neardup

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
)

func TestKeyFilter(t *testing.T) {
	f, err := NewKeyFilter(10_000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10_000 {
		f.AddURL(fmt.Sprintf("http://example.com/%d", i))
	}
	h := Hash(sha256.Sum256([]byte("text")))
	f.AddExact(h)
	for i := range 10_000 {
		if !f.HasURL(fmt.Sprintf("http://example.com/%d", i)) {
			t.Fatalf("added URL %d missing", i)
		}
	}
	if !f.HasExact(h) || f.HasURL(string(h[:])) {
		t.Fatal("exact key missing, or mistaken for a URL")
	}
	// The measured false-positive rate is near the one the filter was sized for.
	fp := 0
	const probes = 100_000
	for i := range probes {
		if f.HasURL(fmt.Sprintf("http://other.org/%d", i)) {
			fp++
		}
	}
	if rate := float64(fp) / probes; rate > 0.015 {
		t.Errorf("false-positive rate %.4f, sized for 0.01 (estimate %.4f)", rate, f.FalsePositiveRate())
	}
	if f.Len() != 10_001 || f.Capacity() != 10_000 {
		t.Errorf("Len %d Capacity %d", f.Len(), f.Capacity())
	}
	for _, c := range []struct {
		n  int
		fp float64
	}{{0, 0.01}, {10, 0}, {10, 1}} {
		if _, err := NewKeyFilter(c.n, c.fp); !errors.Is(err, ErrOptions) {
			t.Errorf("NewKeyFilter(%d, %g): %v", c.n, c.fp, err)
		}
	}
}

// TestKeyFilterGolden pins the bit positions (SHA-256 base hashes, bits-and-blooms'
// double hashing) and the snapshot format: clients keep filters written by earlier
// versions. client/prescreen's TestPythonVectors pins them for other languages.
func TestKeyFilterGolden(t *testing.T) {
	f, _ := NewKeyFilter(100, 0.01)
	f.AddURL("http://example.com/")
	f.AddExact(Hash(sha256.Sum256(nil)))
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	const want = "f8c394b8ff2cc8021ff86aab2139dbaaa6b5cdf68106939f84015726e17abb9c"
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("snapshot sha256 %s, want %s (%d bytes)", got, want, buf.Len())
	}
	g, err := ReadKeyFilter(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !g.HasURL("http://example.com/") || !g.HasExact(Hash(sha256.Sum256(nil))) || g.Len() != 2 || g.Capacity() != 100 {
		t.Fatal("round trip lost keys")
	}
	if g.HasURL("http://example.com/x") {
		t.Error("round trip: false positive on a 2-key filter")
	}
}

// TestKeyFilterVersion1 reads a version 1 snapshot (MurmurHash3 positions), as the
// service wrote them before version 2, and writes it back unchanged.
func TestKeyFilterVersion1(t *testing.T) {
	v1, err := os.ReadFile("testdata/keyfilter-v1.snap")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ReadKeyFilter(bytes.NewReader(v1))
	if err != nil {
		t.Fatal(err)
	}
	if !f.HasURL("http://example.com/") || !f.HasExact(Hash(sha256.Sum256(nil))) || f.Len() != 2 {
		t.Error("version 1 snapshot: lost keys")
	}
	if f.HasURL("http://example.com/x") {
		t.Error("version 1 snapshot: false positive on a 2-key filter")
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), v1) {
		t.Error("version 1 snapshot written back differs")
	}
}

func TestReadKeyFilterErrors(t *testing.T) {
	f, _ := NewKeyFilter(100, 0.01)
	f.AddURL("u")
	var buf bytes.Buffer
	f.WriteTo(&buf)
	good := buf.Bytes()
	for i := 0; i < len(good); i++ {
		if _, err := ReadKeyFilter(bytes.NewReader(good[:i])); !errors.Is(err, ErrFilter) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
		bad := bytes.Clone(good)
		bad[i] ^= 0x40
		if _, err := ReadKeyFilter(bytes.NewReader(bad)); !errors.Is(err, ErrFilter) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
}

func FuzzReadKeyFilter(f *testing.F) {
	kf, _ := NewKeyFilter(10, 0.1)
	kf.AddURL("http://a/")
	var buf bytes.Buffer
	kf.WriteTo(&buf)
	f.Add(buf.Bytes())
	if v1, err := os.ReadFile("testdata/keyfilter-v1.snap"); err == nil {
		f.Add(v1) // a version 1 snapshot, read by the MurmurHash3 positions
	}
	f.Add([]byte("NDKEYFLT\x01\x00\x00\x00"))
	f.Add([]byte("NDKEYFLT\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ReadKeyFilter(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrFilter) {
				t.Fatalf("error not ErrFilter: %v", err)
			}
			return
		}
		g.HasURL("http://a/")
		var out bytes.Buffer
		if _, err := g.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), data[:out.Len()]) {
			t.Fatal("a snapshot read does not write back the same bytes")
		}
	})
}

// TestKeyFilterConcurrentReads backs the promise that a filter nobody adds to may be
// read from many goroutines (the client's pre-screen shares one snapshot); -race checks it.
func TestKeyFilterConcurrentReads(t *testing.T) {
	f, _ := NewKeyFilter(1000, 0.01)
	for i := range 500 {
		f.AddURL(fmt.Sprint("http://example.com/", i))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				if !f.HasURL(fmt.Sprint("http://example.com/", i)) {
					t.Errorf("goroutine %d: URL %d missing", g, i)
					return
				}
				f.HasExact(Hash{byte(i)})
				f.FalsePositiveRate()
			}
			f.WriteTo(io.Discard)
		})
	}
	wg.Wait()
}
