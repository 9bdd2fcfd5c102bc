package neardup

import (
	"bytes"
	"testing"
)

// FuzzFingerprint runs the whole document pipeline (URL canonicalization, extraction,
// normalization, SimHash, MinHash) over arbitrary bytes: it must never panic, and the
// result must not depend on whether it ran before.
func FuzzFingerprint(f *testing.F) {
	f.Add([]byte("<html><title>t</title><body><p>Some text here.</p></body></html>"), "http://example.com/a?utm_source=x#f")
	f.Add([]byte("<div><div><div><p>\xff\xfe bad bytes</div>"), "not a url")
	f.Add([]byte("\xef\xbb\xbfplain text with a BOM"), "")
	f.Add([]byte("<meta charset=windows-1252><p>caf\xe9</p>"), "HTTP://EXAMPLE.COM:80/./a/../b")
	fpr, err := NewFingerprinter(Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, page []byte, url string) {
		doc := Document{ID: "x", URL: url, HTML: page}
		a, errA := fpr.Fingerprint(doc)
		b, errB := fpr.Fingerprint(doc)
		if (errA == nil) != (errB == nil) || a.Main != b.Main || a.SimHash != b.SimHash || !bytes.Equal(u32bytes(a.MinHash), u32bytes(b.MinHash)) {
			t.Fatalf("two runs differ: %v %v", errA, errB)
		}
		text := Document{ID: "x", Text: string(page)}
		if _, err := fpr.Fingerprint(text); err != nil {
			t.Fatalf("text document: %v", err)
		}
	})
}

func u32bytes(s []uint32) []byte {
	out := make([]byte, 0, 4*len(s))
	for _, v := range s {
		out = append(out, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	return out
}

// FuzzParse checks the text forms: ParseKeepPolicy, ParseNear, Kind and Hash never panic,
// and what they accept prints back to what they read.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"priority,first,id", "longest", "any", "near-duplicate", "00ff", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, err := ParseKeepPolicy(s); err == nil {
			if q, err := ParseKeepPolicy(p.String()); err != nil || q.String() != p.String() {
				t.Fatalf("keep policy %q does not round-trip", s)
			}
		}
		if n, err := ParseNear(s); err == nil && n.String() != s {
			t.Fatalf("near %q prints %q", s, n)
		}
		var k Kind
		if k.UnmarshalText([]byte(s)) == nil && k.String() != s {
			t.Fatalf("kind %q prints %q", s, k)
		}
		var h Hash
		if h.UnmarshalText([]byte(s)) == nil {
			if txt, _ := h.MarshalText(); !bytes.EqualFold(txt, []byte(s)) {
				t.Fatalf("hash %q prints %q", s, txt)
			}
		}
	})
}
