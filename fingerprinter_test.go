package neardup

import (
	"crypto/sha256"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
)

func TestFingerprintMethods(t *testing.T) {
	page := []byte("<html><head><title>T</title></head><body><nav>Home | About</nav><article><p>" +
		strings.Repeat("A paragraph of the article, long enough to be its main content. ", 20) +
		"</p></article></body></html>")
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{}, extract.MethodMain},
		{Options{Pipeline: Pipeline{NoExtract: true}}, extract.MethodVisibleText},
		{Options{Pipeline: Pipeline{Extract: extract.Options{Timeout: time.Nanosecond}}}, extract.MethodVisibleText}, // over budget
	} {
		f, err := NewFingerprinter(c.opt)
		if err != nil {
			t.Fatal(err)
		}
		fp, err := f.Fingerprint(Document{ID: "p", HTML: page})
		if err != nil || fp.Method != c.want {
			t.Errorf("%+v: method %q, error %v; want %q", c.opt, fp.Method, err, c.want)
		}
		// MainText is the text the fingerprints are made of: as a text document it
		// fingerprints the same.
		main, err := f.MainText(Document{HTML: page})
		if err != nil {
			t.Fatal(err)
		}
		if c.want == extract.MethodMain && strings.Contains(main, "Home | About") || c.want == extract.MethodVisibleText && !strings.Contains(main, "Home | About") {
			t.Errorf("%+v: main text %q from method %s", c.opt, main, c.want)
		}
		fpText, _ := f.Fingerprint(Document{ID: "p", Text: main})
		if fpText.Main != fp.Main || fpText.SimHash != fp.SimHash || !slices.Equal(fpText.MinHash, fp.MinHash) {
			t.Errorf("%+v: the main text fingerprints otherwise than the page", c.opt)
		}
	}
	f, _ := NewFingerprinter(Options{Pipeline: Pipeline{Extract: extract.Options{MaxBytes: 100}}})
	if _, err := f.Fingerprint(Document{ID: "p", HTML: page}); !errors.Is(err, ErrDocument) || !errors.Is(err, extract.ErrTooLarge) {
		t.Errorf("over MaxBytes: %v", err)
	}
	if _, err := f.MainText(Document{HTML: page}); !errors.Is(err, ErrDocument) || !errors.Is(err, extract.ErrTooLarge) {
		t.Errorf("MainText over MaxBytes: %v", err)
	}
	if main, err := f.MainText(Document{Text: "just text"}); main != "just text" || err != nil {
		t.Errorf("MainText of a text: %q, %v", main, err)
	}
	// A PDF served as a page has no text to fingerprint, not mojibake.
	f, _ = NewFingerprinter(Options{})
	if _, err := f.Fingerprint(Document{ID: "p", HTML: []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")}); !errors.Is(err, ErrDocument) || !errors.Is(err, extract.ErrBinary) {
		t.Errorf("a PDF: %v", err)
	}
}

func TestFingerprintSkips(t *testing.T) {
	text := strings.Join(words(9, 400), " ")
	for _, o := range []Options{{Pipeline: Pipeline{Near: NearSimHash}, NoMinHash: true}, {Pipeline: Pipeline{Near: NearMinHash}, NoSimHash: true}} {
		f, err := NewFingerprinter(o)
		if err != nil {
			t.Fatal(err)
		}
		fp, _ := f.Fingerprint(Document{ID: "a", Text: text})
		if (fp.MinHash == nil) != o.NoMinHash || (fp.SimHash == 0) != o.NoSimHash {
			t.Errorf("%+v: SimHash %x, MinHash of %d values", o, fp.SimHash, len(fp.MinHash))
		}
		d := newDetector(t, o)
		check(t, d, Document{ID: "a", Text: text})
		if v := check(t, d, Document{ID: "b", Text: text + " more"}); v.Kind != NearDuplicate {
			t.Errorf("%+v: %+v", o, v)
		}
	}
}

// TestFingerprintDefinition checks the single-pass fingerprints against their definitions:
// Main is the SHA-256 of shingle's tokens joined by spaces, SimHash is
// simhash.SchemeNeardup's, MinHash the signature of the default shingle set, for every
// combination of NoSimHash and NoMinHash.
func TestFingerprintDefinition(t *testing.T) {
	sh, _ := shingle.New(shingle.Options{})
	for i, text := range []string{"", "word", "Héllo, “World” — 42 times!", strings.Join(words(3, 500), " "), "東京タワー and ünïcode"} {
		var toks []string
		for tok := range sh.Tokens(text) {
			toks = append(toks, string(tok))
		}
		main := Hash(sha256.Sum256([]byte(strings.Join(toks, " "))))
		sig := minhash.Hasher{}.Signature(sh.AppendHashes(nil, text))
		for _, o := range []Options{{}, {NoMinHash: true}, {NoSimHash: true}} {
			f, _ := NewFingerprinter(o)
			fp, err := f.Fingerprint(Document{ID: "x", Text: text})
			if err != nil {
				t.Fatal(err)
			}
			if fp.Main != main || fp.Text != main || fp.Words != len(toks) {
				t.Errorf("text %d %+v: Main/Text/Words differ from the tokens' hash", i, o)
			}
			if !o.NoSimHash && fp.SimHash != simhash.SchemeNeardup.Fingerprint(text) {
				t.Errorf("text %d %+v: SimHash %x, scheme %x", i, o, fp.SimHash, simhash.SchemeNeardup.Fingerprint(text))
			}
			if !o.NoMinHash && !slices.Equal(fp.MinHash, sig) {
				t.Errorf("text %d %+v: MinHash differs from the signature of the shingle set", i, o)
			}
			// FingerprintFeatures: the same fingerprints, and the features of the set
			// (appended after dst's), whatever NoMinHash says.
			fp2, feats, err := f.FingerprintFeatures(Document{ID: "x", Text: text}, []uint64{7})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fp2.MinHash, fp.MinHash) || fp2.Main != fp.Main || fp2.SimHash != fp.SimHash {
				t.Errorf("text %d %+v: FingerprintFeatures' fingerprints differ from Fingerprint's", i, o)
			}
			if feats[0] != 7 || !slices.Equal(minhash.SortUnique(feats[1:]), sh.AppendHashes(nil, text)) {
				t.Errorf("text %d %+v: FingerprintFeatures' features are not the shingle set", i, o)
			}
		}
	}
	f, _ := NewFingerprinter(Options{})
	if _, feats, err := f.FingerprintFeatures(Document{Text: "no id"}, []uint64{1}); err == nil || !slices.Equal(feats, []uint64{1}) {
		t.Errorf("FingerprintFeatures without an id: %v, features %v", err, feats)
	}
}

func TestFingerprintShingleOptions(t *testing.T) {
	text := "The Quick brown fox, the lazy dog and 42 other animals jumped over the fence again " + strings.Join(words(8, 100), " ")
	for _, so := range []shingle.Options{{K: 3, RemoveStopWords: true}, {Unit: shingle.Chars}, {MaskNumbers: true, KeepCase: true}} {
		f, err := NewFingerprinter(Options{Pipeline: Pipeline{Shingle: so}})
		if err != nil {
			t.Fatal(err)
		}
		fp, _ := f.Fingerprint(Document{ID: "x", Text: text})
		sh, _ := shingle.New(so)
		if sig := (minhash.Hasher{}).Signature(sh.AppendHashes(nil, text)); !slices.Equal(fp.MinHash, sig) {
			t.Errorf("%+v: MinHash is not the signature of the options' shingles", so)
		}
		simOpt := so
		if so.K == 0 && so.Unit == shingle.Words {
			simOpt.K = 2
		}
		ssh, _ := shingle.New(simOpt)
		if want := simhash.Compute(ssh.AppendDistinct(nil, text)); fp.SimHash != want {
			t.Errorf("%+v: SimHash %x, want %x", so, fp.SimHash, want)
		}
	}
	if _, err := NewFingerprinter(Options{Pipeline: Pipeline{Shingle: shingle.Options{K: -1}}}); !errors.Is(err, ErrOptions) {
		t.Errorf("bad shingle options: %v", err)
	}
}

func TestFingerprinterCanonicalURL(t *testing.T) {
	f, _ := NewFingerprinter(Options{})
	const raw = "HTTP://www.Example.com/a/?utm_source=x"
	fp, err := f.Fingerprint(Document{ID: "a", URL: raw, Text: "t"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.CanonicalURL(raw)
	if err != nil || got != fp.URL {
		t.Errorf("CanonicalURL(%q) = %q, %v; Fingerprint says %q", raw, got, err, fp.URL)
	}
	if _, err := f.CanonicalURL("http://[::1"); err == nil {
		t.Error("a URL that cannot be parsed was canonicalized")
	}
}
