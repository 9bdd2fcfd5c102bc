package shingle

import (
	"errors"
	"flag"
	"io"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/neardup/neardup/internal/mix"
)

// feature is the frozen feature hash as the package documentation states it: refUnitHash
// of each unit, chained from the seed by XOR and multiplication by 0x9e3779b97f4a7c15,
// then splitmix64.
func feature(seed uint64, units ...string) uint64 {
	h := seed
	for _, u := range units {
		h = (h ^ refUnitHash(u)) * 0x9e3779b97f4a7c15
	}
	return mix.Splitmix64(h)
}

// refUnitHash is the unit hash as the documentation of unitHash states it, byte by byte.
func refUnitHash(u string) uint64 {
	le := func(i int) uint64 { // the 8 bytes at u[i:], or fewer, little-endian
		var x uint64
		for j := min(len(u), i+8) - 1; j >= i; j-- {
			x = x<<8 | uint64(u[j])
		}
		return x
	}
	n := len(u)
	if n < 8 {
		return mix.Splitmix64(le(0) | uint64(n)<<56)
	}
	mum := func(x, y uint64) uint64 {
		hi, lo := bits.Mul64(x, y)
		return hi ^ lo
	}
	h := uint64(n)
	i := 0
	for ; n-i > 16; i += 16 {
		h = mum(le(i)^0xa0761d6478bd642f, le(i+8)^0xe7037ed1a0b428db^h)
	}
	a := 0
	if n > 16 {
		a = n - 16
	}
	return mix.Splitmix64(mum(le(a)^0xa0761d6478bd642f, le(n-8)^0xe7037ed1a0b428db^h))
}

// oracle computes the features of text the slow, obvious way from its tokens: every
// run of k tokens (or all of them, if fewer), hashed with feature and the seed, then
// sampled.
func oracle(t testing.TB, opt Options, text string) []uint64 {
	t.Helper()
	toks := tokens(t, opt, text)
	k := opt.ShingleK()
	var shingles [][]string
	switch {
	case len(toks) == 0:
	case len(toks) < k:
		shingles = append(shingles, toks)
	default:
		for i := 0; i+k <= len(toks); i++ {
			shingles = append(shingles, toks[i:i+k])
		}
	}
	var hs []uint64
	for _, sh := range shingles {
		h := feature(opt.Seed, sh...)
		if opt.SampleMod > 1 && h%opt.SampleMod != 0 {
			continue
		}
		hs = append(hs, h)
	}
	if !opt.Bag {
		slices.Sort(hs)
		hs = slices.Compact(hs)
	}
	return hs
}

func hashes(t testing.TB, opt Options, text string) []uint64 {
	t.Helper()
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return s.AppendHashes(nil, text)
}

func TestAppendHashesMatchesOracle(t *testing.T) {
	texts := []string{
		"", "one", "two words", "a rose is a rose is a rose",
		"The quick brown fox jumps over the lazy dog. The quick brown fox!",
		"我爱北京天安门 hello world, ひらがな and 한국어",
		englishText(5000),
	}
	for _, opt := range []Options{
		{}, {Bag: true}, {K: 1}, {K: 2, Bag: true}, {K: 8}, {Seed: 42}, {Seed: 1 << 63, Bag: true},
		{SampleMod: 3}, {Unit: Chars}, {Unit: Chars, K: 3, Bag: true}, {Unit: Chars, Seed: 7},
		{MaskNumbers: true, RemoveStopWords: true, KeepPunct: true},
	} {
		for _, text := range texts {
			got, want := hashes(t, opt, text), oracle(t, opt, text)
			if !slices.Equal(got, want) {
				t.Errorf("%+v: AppendHashes(%.40q) gives %d hashes, not the %d of the oracle", opt, text, len(got), len(want))
			}
		}
	}
}

func TestShortTexts(t *testing.T) {
	if got := hashes(t, Options{}, "  ... "); len(got) != 0 {
		t.Errorf("a text without tokens has %d features, want 0", len(got))
	}
	got := hashes(t, Options{}, "Hello, world")
	if want := feature(0, "hello", "world"); !slices.Equal(got, []uint64{want}) {
		t.Errorf("two words with K=5: %x, want the one shingle %x", got, want)
	}
	got = hashes(t, Options{Unit: Chars}, "Hi!")
	if want := feature(0, "h", "i"); !slices.Equal(got, []uint64{want}) {
		t.Errorf("two chars with K=5: %x, want %x", got, want)
	}
}

func TestSetAndBag(t *testing.T) {
	text := "a b c a b c a b c"
	set := hashes(t, Options{K: 3}, text)
	bag := hashes(t, Options{K: 3, Bag: true}, text)
	if len(set) != 3 || len(bag) != 7 {
		t.Fatalf("set has %d features (want 3), bag %d (want 7)", len(set), len(bag))
	}
	if !slices.IsSorted(set) {
		t.Errorf("set %x is not sorted", set)
	}
	if bag[0] != feature(0, "a", "b", "c") || bag[1] != feature(0, "b", "c", "a") || bag[3] != bag[0] {
		t.Errorf("bag %x is not in text order", bag)
	}
	// Appending keeps what dst had and only sorts what is appended.
	s, _ := New(Options{K: 3})
	dst := s.AppendHashes([]uint64{^uint64(0)}, text)
	if dst[0] != ^uint64(0) || !slices.Equal(dst[1:], set) {
		t.Errorf("AppendHashes to a non-empty dst = %x", dst)
	}
}

func TestSampleMod(t *testing.T) {
	text := englishText(20000)
	all := hashes(t, Options{}, text)
	for _, m := range []uint64{2, 7, 64} {
		got := hashes(t, Options{SampleMod: m}, text)
		var want []uint64
		for _, h := range all {
			if h%m == 0 {
				want = append(want, h)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("SampleMod %d kept %d of %d, want %d", m, len(got), len(all), len(want))
		}
	}
	if a, b := hashes(t, Options{SampleMod: 1}, text), all; !slices.Equal(a, b) {
		t.Error("SampleMod 1 sampled")
	}
}

// randomText returns text that exercises the windows, the fast paths and their seams:
// English, CJK, combining marks, jamo, invalid bytes, long words and long runs without
// ASCII.
func randomText(rng *rand.Rand, n int) string {
	pieces := []string{"the ", "Quick ", "brown, ", "fox’s ", "don't ", "3.14 ", "2024-01-31 ", "12:30 ",
		"我爱北京", "天安门 ", "カタカナ", "한국어 ", "e\u0301", "\u0301", "ﬁ", "İ", "ß", "ς ", "\xff", "\xe4\xb8",
		"\u1100\u1161\u11a8", "😀", "\u00a0", "\n", "Jan 31, 2024 ", strings.Repeat("x", 300), strings.Repeat("中", 50)}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// chunkReader returns its text in chunks of random sizes, cutting runes.
type chunkReader struct {
	s   string
	rng *rand.Rand
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+r.rng.IntN(100))], r.s)
	r.s = r.s[n:]
	return n, nil
}

func TestReaderEqualsString(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	opts := []Options{{}, {Bag: true}, {Unit: Chars, Bag: true}, {MaskNumbers: true, KeepPunct: true, Bag: true}, {NoCJK: true, KeepAccents: true}}
	for i := range 40 {
		n := rng.IntN(2000)
		if i%4 == 0 {
			n = window + rng.IntN(3*window) // several windows
		}
		text := randomText(rng, n)
		opt := opts[i%len(opts)]
		s, err := New(opt)
		if err != nil {
			t.Fatal(err)
		}
		want := s.AppendHashes(nil, text)
		for _, r := range []io.Reader{
			strings.NewReader(text),
			iotest.OneByteReader(strings.NewReader(text)),
			iotest.HalfReader(strings.NewReader(text)),
			iotest.DataErrReader(strings.NewReader(text)),
			&chunkReader{text, rng},
		} {
			got, err := s.AppendHashesReader(nil, r)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("%+v, text of %d bytes, %T: reader gives %d hashes, %v; string gives %d", opt, len(text), r, len(got), err, len(want))
			}
		}
	}
}

func TestReaderCompactsSets(t *testing.T) {
	// 2 MB of one repeated paragraph: far more shingles than distinct ones.
	text := strings.Repeat(englishText(3000)+" ", 700)
	s, _ := New(Options{})
	s.minCompact = 1 << 12
	got, err := s.AppendHashesReader(make([]uint64, 0, 16), strings.NewReader(text))
	if err != nil || !slices.Equal(got, s.AppendHashes(nil, text)) {
		t.Fatalf("reader and string differ (%v)", err)
	}
	if c := cap(got); c > 1<<15 {
		t.Errorf("reading %d bytes with %d distinct shingles grew dst to %d", len(text), len(got), c)
	}
}

func TestReaderError(t *testing.T) {
	s, _ := New(Options{})
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader(englishText(100000)), iotest.ErrReader(boom))
	dst := []uint64{1, 2}
	got, err := s.AppendHashesReader(dst, r)
	if !errors.Is(err, boom) || !slices.Equal(got, []uint64{1, 2}) {
		t.Errorf("AppendHashesReader = %v, %v; want dst unchanged and the error", got, err)
	}
	// The Shingler is usable afterwards.
	if got := s.AppendHashes(nil, "a b c d e"); !slices.Equal(got, []uint64{feature(0, "a", "b", "c", "d", "e")}) {
		t.Errorf("after an error: %x", got)
	}
}

func TestAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumented build")
	}
	mixed := englishText(50000) + " Café naïve ﬁne „quotes“ — 我爱北京 한국어 😀 2024-01-31"
	for _, c := range []struct {
		name string
		opt  Options
		text string
	}{
		{"words", Options{}, englishText(50000)},
		{"words mixed", Options{}, mixed},
		{"bag", Options{Bag: true}, mixed},
		{"chars", Options{Unit: Chars}, mixed},
		{"everything", Options{MaskNumbers: true, RemoveStopWords: true, Seed: 9, SampleMod: 3}, mixed},
	} {
		s, err := New(c.opt)
		if err != nil {
			t.Fatal(err)
		}
		dst := s.AppendHashes(nil, c.text)
		if n := testing.AllocsPerRun(10, func() { dst = s.AppendHashes(dst[:0], c.text) }); n != 0 {
			t.Errorf("%s: AppendHashes allocates %v times per call", c.name, n)
		}
		dst = s.AppendDistinct(dst[:0], c.text)
		if n := testing.AllocsPerRun(10, func() { dst = s.AppendDistinct(dst[:0], c.text) }); n != 0 {
			t.Errorf("%s: AppendDistinct allocates %v times per call", c.name, n)
		}
		fs := s.AppendWeighted(nil, c.text)
		if n := testing.AllocsPerRun(10, func() { fs = s.AppendWeighted(fs[:0], c.text) }); n != 0 {
			t.Errorf("%s: AppendWeighted allocates %v times per call", c.name, n)
		}
		if n := testing.AllocsPerRun(10, func() {
			for range s.Tokens(c.text) {
			}
		}); n > 2 {
			t.Errorf("%s: Tokens allocates %v times per call", c.name, n)
		}
	}
}

func TestWeighted(t *testing.T) {
	text := "b a b a c b"
	ha, hb, hc := feature(0, "a"), feature(0, "b"), feature(0, "c")
	idf := IDFTable{Weights: map[uint64]float64{ha: 2, hb: 0.5}, Default: 10}
	sorted := func(fs []Feature) []Feature {
		slices.SortFunc(fs, func(x, y Feature) int {
			if x.Hash < y.Hash {
				return -1
			}
			return 1
		})
		return fs
	}
	for _, c := range []struct {
		opt  Options
		want []Feature
	}{
		{Options{K: 1}, sorted([]Feature{{ha, 1}, {hb, 1}, {hc, 1}})},
		{Options{K: 1, Weighting: TF}, sorted([]Feature{{ha, 2}, {hb, 3}, {hc, 1}})},
		{Options{K: 1, Weighting: IDF, IDF: idf}, sorted([]Feature{{ha, 2}, {hb, 0.5}, {hc, 10}})},
		{Options{K: 1, Weighting: TFIDF, IDF: idf}, sorted([]Feature{{ha, 4}, {hb, 1.5}, {hc, 10}})},
		{Options{K: 1, Bag: true, Weighting: IDF, IDF: idf}, []Feature{{hb, .5}, {ha, 2}, {hb, .5}, {ha, 2}, {hc, 10}, {hb, .5}}},
		{Options{K: 1, Bag: true}, []Feature{{hb, 1}, {ha, 1}, {hb, 1}, {ha, 1}, {hc, 1}, {hb, 1}}},
	} {
		s, err := New(c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.AppendWeighted(nil, text); !slices.Equal(got, c.want) {
			t.Errorf("%v: AppendWeighted = %v, want %v", c.opt.Weighting, got, c.want)
		}
	}
}

func TestLoadIDF(t *testing.T) {
	file := "# idf\nHello\t1.5\nnear duplicate\t4\n\nWORLD\t0.25\n"
	tab, err := LoadIDF(strings.NewReader(file), Options{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]float64{
		feature(0, "hello"): 1.5, feature(0, "near", "duplicate"): 4, feature(0, "world"): 0.25,
	}
	if len(tab.Weights) != len(want) || tab.Default != 4 {
		t.Fatalf("LoadIDF = %v", tab)
	}
	for h, w := range want {
		if tab.Weights[h] != w {
			t.Errorf("weight of %x = %v, want %v", h, tab.Weights[h], w)
		}
	}
	// Seeds and normalization apply to the keys.
	tab, err = LoadIDF(strings.NewReader("Café\t3\n"), Options{K: 1, Seed: 5})
	if err != nil || tab.Weights[feature(5, "cafe")] != 3 {
		t.Errorf("seeded, normalized key: %v, %v", tab, err)
	}
	for _, bad := range []string{"no tab here\n", "a\tx\n", "a\t-1\n", "a\tNaN\n", "a\t+Inf\n", "three words here\t1\n"} {
		if _, err := LoadIDF(strings.NewReader(bad), Options{K: 2}); !errors.Is(err, ErrIDF) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("LoadIDF(%q) error %v, want ErrIDF with the line", bad, err)
		}
	}
	if _, err := LoadIDF(strings.NewReader(""), Options{K: -1}); !errors.Is(err, ErrOptions) {
		t.Errorf("LoadIDF with bad options: %v", err)
	}
}

func TestOptionsErrors(t *testing.T) {
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{Unit: 2}, "Unit"},
		{Options{K: -1}, "K is -1"},
		{Options{K: MaxK + 1}, "at most"},
		{Options{StopWords: []string{"a"}}, "RemoveStopWords"},
		{Options{Weighting: 9}, "Weighting"},
		{Options{Weighting: IDF}, "LoadIDF"},
		{Options{Weighting: TF, Bag: true}, "Bag"},
		{Options{RemoveStopWords: true, StopWords: []string{"e-mail"}}, `"e-mail" is 2 words`},
	} {
		_, err := New(c.opt)
		if !errors.Is(err, ErrOptions) || !strings.HasPrefix(err.Error(), "shingle: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) error %v, want ErrOptions mentioning %q", c.opt, err, c.want)
		}
	}
}

func TestShippedStopWords(t *testing.T) {
	list := englishStopWords()
	if len(list) < 100 {
		t.Fatalf("%d stop words", len(list))
	}
	for _, opt := range []Options{
		{RemoveStopWords: true}, {RemoveStopWords: true, KeepPunct: true, KeepCase: true},
		{RemoveStopWords: true, Unit: Chars, MaskNumbers: true}, {RemoveStopWords: true, NoNFKC: true, KeepAccents: true},
	} {
		s, err := New(opt)
		if err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		for _, w := range list {
			for tok := range s.Tokens("x " + w + " y") {
				if string(tok) != "x" && string(tok) != "y" && string(tok) != " " {
					t.Errorf("%+v: stop word %q gives token %q", opt, w, tok)
				}
			}
		}
	}
}

func TestUnitAndWeightingText(t *testing.T) {
	var u Unit
	var w Weighting
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.TextVar(&u, "unit", Words, "")
	fs.TextVar(&w, "weighting", Uniform, "")
	if err := fs.Parse([]string{"-unit", "chars", "-weighting", "tfidf"}); err != nil || u != Chars || w != TFIDF {
		t.Errorf("flags: %v %v %v", u, w, err)
	}
	if err := u.UnmarshalText([]byte("lines")); !errors.Is(err, ErrOptions) || u != Chars {
		t.Errorf("UnmarshalText(lines) = %v, left %v", err, u)
	}
	if err := w.UnmarshalText([]byte("bm25")); !errors.Is(err, ErrOptions) {
		t.Errorf("UnmarshalText(bm25) = %v", err)
	}
	if Unit(5).String() != "Unit(5)" || Weighting(-1).String() != "Weighting(-1)" {
		t.Error("String of undeclared values")
	}
	if _, err := Unit(5).MarshalText(); !errors.Is(err, ErrOptions) {
		t.Error("MarshalText of an undeclared Unit")
	}
	if b, err := IDF.MarshalText(); string(b) != "idf" || err != nil {
		t.Errorf("IDF.MarshalText = %s, %v", b, err)
	}
}

func TestTokensStops(t *testing.T) {
	s, _ := New(Options{})
	n := 0
	for range s.Tokens("one two three four") {
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("Tokens went on after break: %d", n)
	}
	if got := s.AppendHashes(nil, "a b c d e"); !slices.Equal(got, []uint64{feature(0, "a", "b", "c", "d", "e")}) {
		t.Errorf("after a broken iteration: %x", got)
	}
}

func TestSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var so sorter
	for _, n := range []int{0, 1, 255, 256, 257, 1000, 100000} {
		for _, dup := range []uint64{0, 3, 1 << 50} { // random, few values, many in one bucket
			a := make([]uint64, n)
			for i := range a {
				a[i] = rng.Uint64()
				if dup != 0 {
					a[i] %= dup
				}
			}
			want := slices.Clone(a)
			slices.Sort(want)
			so.sort(a)
			if !slices.Equal(a, want) {
				t.Fatalf("sort of %d values (mod %d) is wrong", n, dup)
			}
		}
	}
}

// TestObserveUnits checks that the units an observer sees are Tokens' units, whatever
// method makes the features, and that observing changes no feature.
func TestObserveUnits(t *testing.T) {
	text := "Café “déjà vu”: the QUICK brown fox, 42 times — ünïcode and 東京タワー too."
	for _, opt := range []Options{{}, {K: 2}, {Bag: true}, {Unit: Chars}, {RemoveStopWords: true, MaskNumbers: true}} {
		s, err := New(opt)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for tok := range s.Tokens(text) {
			want = append(want, string(tok))
		}
		plain := s.AppendHashes(nil, text)
		var got []string
		s.ObserveUnits(func(u []byte) { got = append(got, string(u)) })
		for name, run := range map[string]func() []uint64{
			"AppendHashes":   func() []uint64 { return s.AppendHashes(nil, text) },
			"AppendDistinct": func() []uint64 { return s.AppendDistinct(nil, text) },
			"AppendHashesReader": func() []uint64 {
				h, _ := s.AppendHashesReader(nil, strings.NewReader(text))
				return h
			},
		} {
			got = got[:0]
			h := run()
			if !slices.Equal(got, want) {
				t.Errorf("%+v %s: observed %q, Tokens %q", opt, name, got, want)
			}
			if name == "AppendHashes" && !slices.Equal(h, plain) {
				t.Errorf("%+v: observing changed the features", opt)
			}
		}
		s.ObserveUnits(nil)
		got = got[:0]
		s.AppendHashes(nil, text)
		if len(got) != 0 {
			t.Errorf("%+v: ObserveUnits(nil) still observes", opt)
		}
	}
}

// TestObserveText checks that ObserveText shows an observer Tokens' units, over several
// windows of text too, and leaves nothing behind: the features made after it are the
// text's.
func TestObserveText(t *testing.T) {
	for _, text := range []string{englishText(64 << 10), "Café “déjà vu”: 42 times — 東京タワー.", "", "one"} {
		for _, opt := range []Options{{}, {Unit: Chars}, {RemoveStopWords: true, MaskNumbers: true}} {
			s, err := New(opt)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for tok := range s.Tokens(text) {
				want = append(want, string(tok))
			}
			plain := s.AppendHashes(nil, text)
			s.ObserveUnits(func(u []byte) { got = append(got, string(u)) })
			s.ObserveText(text)
			s.ObserveUnits(nil)
			if !slices.Equal(got, want) {
				t.Errorf("%+v, %d bytes: ObserveText showed %d units, Tokens %d", opt, len(text), len(got), len(want))
			}
			if h := s.AppendHashes(nil, text); !slices.Equal(h, plain) {
				t.Errorf("%+v, %d bytes: the features after ObserveText differ", opt, len(text))
			}
		}
	}
}

// TestUnitHashes checks that the features made from a text's unit hashes are the text's,
// on 64 KB of English (several windows) and on texts shorter than a shingle, for sets,
// bags, sampling, stop words and characters, appended after what dst holds.
func TestUnitHashes(t *testing.T) {
	texts := []string{englishText(64 << 10), "", "one", "two words", "a b c d"}
	for _, opt := range []Options{
		{},
		{K: 5, Bag: true},
		{K: 3, SampleMod: 4, Seed: 9},
		{RemoveStopWords: true, MaskNumbers: true},
		{Unit: Chars, K: 7},
	} {
		s, err := New(opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			prefix := []uint64{42}
			units := s.AppendUnitHashes(prefix, text)
			if units[0] != 42 {
				t.Fatalf("%+v: AppendUnitHashes overwrote dst", opt)
			}
			units = units[1:]
			want := s.AppendHashes(slices.Clone(prefix), text)
			if got := s.AppendShingles(slices.Clone(prefix), units); !slices.Equal(got, want) {
				t.Errorf("%+v, %d bytes: %d features from the units, %d from the text", opt, len(text), len(got), len(want))
			}
			want = s.AppendDistinct(slices.Clone(prefix), text)
			if got := s.AppendDistinctShingles(slices.Clone(prefix), units); !slices.Equal(got, want) {
				t.Errorf("%+v, %d bytes: %d distinct features from the units, %d from the text", opt, len(text), len(got), len(want))
			}
		}
	}
}
