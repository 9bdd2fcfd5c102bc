package simhash

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Texts of simhash-py test/test.py TestFunctional.
const (
	jabberwocky = `
        Twas brillig, and the slithy toves
          Did gyre and gimble in the wabe:
        All mimsy were the borogoves,
          And the mome raths outgrabe.
        "Beware the Jabberwock, my son!
          The jaws that bite, the claws that catch!
        Beware the Jubjub bird, and shun
          The frumious Bandersnatch!"
        He took his vorpal sword in hand:
          Long time the manxome foe he sought --
        So rested he by the Tumtum tree,
          And stood awhile in thought.
        And, as in uffish thought he stood,
          The Jabberwock, with eyes of flame,
        Came whiffling through the tulgey wood,
          And burbled as it came!
        One, two! One, two! And through and through
          The vorpal blade went snicker-snack!
        He left it dead, and with its head
          He went galumphing back.
        "And, has thou slain the Jabberwock?
          Come to my arms, my beamish boy!
        O frabjous day! Callooh! Callay!'
          He chortled in his joy.
        ` + "`" + `Twas brillig, and the slithy toves
          Did gyre and gimble in the wabe;
        All mimsy were the borogoves,
          And the mome raths outgrabe.`
	pope = `There once was a man named 'Pope'
        Who loved an oscilloscope
          And the cyclical trace
          Of their carnal embrace
        Had a damned-near infinite slope!`
)

// TestPyFunctional is simhash-py's TestFunctional with MATCH_THRESHOLD 3.
func TestPyFunctional(t *testing.T) {
	a := PyFingerprint(jabberwocky)
	if d := Distance(a, PyFingerprint(jabberwocky+" - Lewis Carroll (Alice in Wonderland)")); d > 3 {
		t.Errorf("added text: distance %d, want <= 3", d)
	}
	if d := Distance(a, PyFingerprint(jabberwocky)); d != 0 {
		t.Errorf("identical text: distance %d, want 0", d)
	}
	if d := Distance(a, PyFingerprint(pope)); d <= 3 {
		t.Errorf("different text: distance %d, want > 3", d)
	}
}

func TestUnsignedHash(t *testing.T) {
	// First 8 bytes of well-known MD5 digests.
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"", 0xd41d8cd98f00b204},
		{"a", 0x0cc175b9c0f1b6a8},
		{"abcd", 0xe2fc714c4727ee93},
		{"The quick brown fox jumps over the lazy dog", 0x9e107d9d372bb682},
	} {
		if got := UnsignedHash([]byte(c.in)); got != c.want {
			t.Errorf("UnsignedHash(%q) = %#016x, want %#016x", c.in, got, c.want)
		}
	}
}

type pyGolden struct {
	Name          string `json:"name"`
	Text          string `json:"text"`
	Shingles      int    `json:"shingles"`
	PyFingerprint string `json:"pyfingerprint"`
	Neardup       string `json:"neardup"` // SchemeNeardup, written by TestSchemeNeardupGolden -update
}

// loadPyGolden reads testdata/pyfingerprint.jsonl: texts, the fingerprints that Python
// 3.11 computed for them with simhash-py's pipeline, and their frozen SchemeNeardup
// fingerprints.
func loadPyGolden(t testing.TB) []pyGolden {
	t.Helper()
	f, err := os.Open("testdata/pyfingerprint.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pyGolden
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var g pyGolden
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatalf("pyfingerprint.jsonl line %d: %v", len(out)+1, err)
		}
		out = append(out, g)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("pyfingerprint.jsonl: only %d records", len(out))
	}
	return out
}

func parseHex(t testing.TB, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPyFingerprintGolden(t *testing.T) {
	for _, g := range loadPyGolden(t) {
		want := parseHex(t, g.PyFingerprint)
		if got := PyFingerprint(g.Text); got != want {
			t.Errorf("%s: PyFingerprint = %#016x, python %#016x", g.Name, got, want)
		}
		if got := pyReference(g.Text); got != want {
			t.Errorf("%s: reference = %#016x, python %#016x", g.Name, got, want)
		}
		if got := SchemeSimhashPy.Fingerprint(g.Text); got != want {
			t.Errorf("%s: SchemeSimhashPy = %#016x, python %#016x", g.Name, got, want)
		}
		if n := len(pyWordRunes(g.Text)); max(n-3, 0) != g.Shingles {
			t.Errorf("%s: %d 4-grams, python %d", g.Name, max(n-3, 0), g.Shingles)
		}
	}
}

// TestPyChars checks the generated tables, through the functions that read them, against
// Python's own answers for a sample of code points that includes every boundary of every
// property (testdata/pychars.txt).
func TestPyChars(t *testing.T) {
	b, err := os.ReadFile("testdata/pychars.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ";")
		if len(f) != 4 {
			t.Fatalf("pychars.txt: bad line %q", line)
		}
		cp, err := strconv.ParseUint(f[0], 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		r := rune(cp)
		var want []rune
		for _, h := range strings.Fields(f[1]) {
			v, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, rune(v))
		}
		if got := pyLowerRunes(r); string(got) != string(want) {
			t.Errorf("U+%04X: lower %U, python %U", r, got, want)
		}
		if got := pyIsWord(r); got != (f[2] == "w") {
			t.Errorf("U+%04X: word %v, python %q", r, got, f[2])
		}
		class := "-"
		switch {
		case pyCaseIgnorableRune(r):
			class = "i"
		case pyCasedRune(r):
			class = "c"
		}
		if class != f[3] {
			t.Errorf("U+%04X: sigma class %q, python %q", r, class, f[3])
		}
		n++
	}
	if n < 5000 {
		t.Fatalf("pychars.txt: only %d code points", n)
	}
}

func TestPyTablesVersion(t *testing.T) {
	if pyUnicodeVersion != "14.0.0" {
		t.Errorf("tables generated from Unicode %s; the golden vectors are for 14.0.0", pyUnicodeVersion)
	}
}

// pyLowerRunes is pyLower as a slice, for code points other than U+03A3.
func pyLowerRunes(r rune) []rune {
	l, multi := pyLower(r)
	if multi != "" {
		return []rune(multi)
	}
	return []rune{l}
}

// pyWordRunes follows the definition of simhash-py's text pipeline step by step on a []rune,
// independently of PyFingerprint's single pass: str.lower() with CPython's final sigma
// rule, then deletion of the non-word characters.
func pyWordRunes(text string) []rune {
	src := []rune(text) // invalid bytes become U+FFFD, as in PyFingerprint
	var lowered []rune
	for i, r := range src {
		if r != 'Σ' {
			lowered = append(lowered, pyLowerRunes(r)...)
			continue
		}
		// CPython handle_capital_sigma.
		j := i - 1
		for j >= 0 && pyCaseIgnorableRune(src[j]) {
			j--
		}
		final := j >= 0 && pyCasedRune(src[j])
		if final && i+1 < len(src) {
			j = i + 1
			for j < len(src) && pyCaseIgnorableRune(src[j]) {
				j++
			}
			final = j == len(src) || !pyCasedRune(src[j])
		}
		if final {
			lowered = append(lowered, 'ς')
		} else {
			lowered = append(lowered, 'σ')
		}
	}
	var words []rune
	for _, r := range lowered {
		if pyIsWord(r) {
			words = append(words, r)
		}
	}
	return words
}

// pyReference is the slow reference: pyWordRunes, Shingle, UnsignedHash, naiveCompute.
func pyReference(text string) uint64 {
	shingles, err := Shingle(pyWordRunes(text), 4)
	if err != nil {
		panic(err)
	}
	var hashes []uint64
	for _, s := range shingles {
		hashes = append(hashes, UnsignedHash([]byte(string(s))))
	}
	return naiveCompute(hashes)
}

func TestPyFingerprintEdges(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		// Invalid UTF-8 acts as U+FFFD, which is deleted.
		{"ab\xffcd", "abcd"},
		{"ab\xe2\x82cd", "ab\ufffdcd"},
		// Case and non-word characters do not matter.
		{"Hello, World!", "helloworld"},
		{"İİİİ", "iiii"},
		{"ΑΣ ΑΣ", "ας ας"},
		{"ΑΣΑ", "ασα"},
	} {
		if a, b := PyFingerprint(c.a), PyFingerprint(c.b); a != b {
			t.Errorf("PyFingerprint(%q) = %#x, PyFingerprint(%q) = %#x; want equal", c.a, a, c.b, b)
		}
	}
	if PyFingerprint("ας ας") == PyFingerprint("ασ ασ") {
		t.Error("final sigma and sigma give the same fingerprint")
	}
}

func FuzzPyFingerprint(f *testing.F) {
	for _, s := range []string{
		"", "abcd", "Hello, World!", jabberwocky[:200], "ΟΔΥΣΣΕΥΣ", "ΑʰΣ Σʰ ΑΣ\u0301Α", "İstanbul",
		"a\xffΣ\xe2\x82", "ᏣᎳᎩ ꭰΣ", "x² ٣ ①", "ǅΣ", "\U00011F04Σ", "Α\u0345Σ",
	} {
		f.Add(s)
	}
	for _, g := range loadPyGolden(f)[:60] {
		f.Add(g.Text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := PyFingerprint(text), pyReference(text); got != want {
			t.Errorf("PyFingerprint(%q) = %#016x, reference %#016x", text, got, want)
		}
		if !utf8.ValidString(text) {
			// Invalid bytes act as U+FFFD, however many there are in a row.
			valid := strings.ToValidUTF8(text, "\ufffd")
			if got, want := PyFingerprint(text), PyFingerprint(valid); got != want {
				t.Errorf("PyFingerprint(%q) = %#016x, of %q %#016x", text, got, valid, want)
			}
		}
	})
}
