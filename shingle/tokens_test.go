package shingle

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/words"
)

// tokens returns the units of text under opt.
func tokens(t testing.TB, opt Options, text string) []string {
	t.Helper()
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for tok := range s.Tokens(text) {
		got = append(got, string(tok))
	}
	return got
}

func TestNormalization(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  Options
		text string
		want string // the tokens, space-separated
	}{
		{"nfkc ligature", Options{}, "ﬁne ﬂow", "fine flow"},
		{"nfkc full-width", Options{}, "ＡＢＣ　１２３", "abc 123"},
		{"nfkc superscript", Options{}, "x² H₂O", "x2 h2o"},
		{"no nfkc", Options{NoNFKC: true}, "ＡＢＣ ① x²", "ａｂｃ ① x ²"},
		{"no nfkc, full case folding still splits ligatures", Options{NoNFKC: true}, "ﬁne", "fine"},
		{"no nfkc, keep case", Options{NoNFKC: true, KeepCase: true}, "ﬁne", "ﬁne"},
		{"accents", Options{}, "Café naïve Ångström", "cafe naive angstrom"},
		{"accents decomposed", Options{}, "Cafe\u0301 nai\u0308ve", "cafe naive"},
		{"keep accents", Options{KeepAccents: true}, "Café Cafe\u0301", "café café"},
		{"keep accents no nfkc", Options{KeepAccents: true, NoNFKC: true}, "Cafe\u0301", "cafe\u0301"},
		{"accents kept in Devanagari", Options{}, "हिन्दी", "हिन्दी"},
		{"kana voicing kept", Options{}, "がぱ", "が ぱ"},
		{"case folding", Options{}, "Hello WORLD", "hello world"},
		{"keep case", Options{KeepCase: true}, "Hello WORLD", "Hello WORLD"},
		{"sharp s", Options{}, "Straße STRASSE straße ẞ", "strasse strasse strasse ss"},
		{"turkish dotted I", Options{}, "İstanbul", "istanbul"},
		{"turkish dotted I keep accents", Options{KeepAccents: true}, "İstanbul", "i\u0307stanbul"},
		{"turkish dotless i", Options{}, "ılık", "ılık"},
		{"greek sigma", Options{}, "ΣΟΦΟΣ σοφός σοφοσ", "σοφοσ σοφοσ σοφοσ"},
		{"greek keep accents", Options{KeepAccents: true}, "ΣΟΦΌΣ", "σοφόσ"},
		{"cyrillic", Options{}, "ЁЛКА Йод", "елка иод"},
		{"kelvin and ohm", Options{}, "\u212A \u2126", "k ω"},
		{"punctuation", Options{}, "Hello, world! (yes) -- \"no\"...", "hello world yes no"},
		{"inner punctuation", Options{}, "don't don’t e.g. 3.14 1,000 snake_case", "dont dont eg 314 1000 snakecase"},
		{"keep punct", Options{KeepPunct: true}, "Hello, world! don't", "hello , world ! don't"},
		{"split punct", Options{SplitPunct: true}, "don't don’t scipy.special.jv e.g. 3.14 1,000 snake_case co\u00adop", "don t don t scipy special jv e g 3 14 1 000 snakecase co op"},
		{"split punct, keep punct wins", Options{SplitPunct: true, KeepPunct: true}, "don't a.b", "don't a.b"},
		{"symbols and emoji", Options{}, "a + b = 😀 c ©", "a b c"},
		{"symbols kept", Options{KeepPunct: true}, "a + 😀", "a + 😀"},
		// UAX #29 joins a mark, a format character or an emoji modifier to the space
		// before it; the space still separates.
		{"extending after a space", Options{KeepPunct: true}, "a 🏽 b\t\u0301c \u00a0\u200db", "a 🏽 b c b"},
		{"extending after a space, no punct", Options{}, "a 🏽 b\t\u0301c", "a b c"},
		{"soft hyphen and zero width", Options{}, "co\u00adop\u200dera\u2060tion", "cooperation"},
		{"whitespace", Options{}, " a \t\n\r\n b\u00a0\u2003c\u3000d ", "a b c d"},
		{"controls", Options{KeepPunct: true}, "a\x00b\x1bc", "a b c"},
		{"invalid utf-8 is U+FFFD, a symbol", Options{}, "a\xffb \xe4\xb8 c", "a b c"},
		{"invalid utf-8 kept as U+FFFD", Options{KeepPunct: true}, "a\xffb \xe4\xb8 c", "a \ufffd b \ufffd \ufffd c"},
		{"empty", Options{}, "", ""},
		{"only punctuation", Options{}, "... !!! ---", ""},
		{"numbers kept", Options{}, "Call 555-1234 in 2024", "call 555 1234 in 2024"},
		{"mask digits", Options{MaskNumbers: true}, "Call 555-1234, room 12b, 3rd floor, v2.0 costs $1,000.50", "call 0 0 room 0b 0rd floor v0 costs 0"},
		{"mask non-ASCII digits", Options{MaskNumbers: true}, "٣٤ ३४ １２", "0 0 0"},
		{"mask dates", Options{MaskNumbers: true}, "2024-01-31 2024/1/31 31/01/2024 01-31-24 31.01.2024 on 2024-01-31.", "0-0-0 0-0-0 0-0-0 0-0-0 0-0-0 on 0-0-0"},
		{"mask month dates", Options{MaskNumbers: true}, "Jan 31, 2024; January 31st 2024, 31 Jan 2024, 1st Sept. 2023, DEC 5 1999", "0-0-0 0-0-0 0-0-0 0-0-0 0-0-0"},
		{"mask times", Options{MaskNumbers: true}, "at 12:30, 9:05:59 or 12:30 pm or 7:15a.m. then", "at 0:0 0:0 or 0:0 or 0:0 then"},
		{"not dates", Options{MaskNumbers: true}, "2024-13-01 32/01/2024 24:00 12:60 may 2024 1:2", "0 0 0 0 0 0 0 0 0 0 may 0 0 0"},
		{"mask date then word", Options{MaskNumbers: true}, "2024-01-31T10:00", "0 0 0t0 0"},
		{"stop words", Options{RemoveStopWords: true}, "The cat sat on the mat and it's not ours", "cat sat mat"},
		{"own stop words", Options{RemoveStopWords: true, StopWords: []string{"Cat", "MAT"}}, "The cat sat on the mat", "the sat on the"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(tokens(t, c.opt, c.text), " ")
			if got != c.want {
				t.Errorf("tokens of %q = %q, want %q", c.text, got, c.want)
			}
		})
	}
}

func TestTokenizers(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  Options
		text string
		want []string
	}{
		{"contractions and hyphens", Options{KeepPunct: true}, "It's a well-known rock'n'roll e-mail.",
			[]string{"it's", "a", "well", "-", "known", "rock'n'roll", "e", "-", "mail", "."}},
		{"numbers per UAX 29", Options{KeepPunct: true}, "3.14 1,000,000 12:30 v1.2",
			[]string{"3.14", "1,000,000", "12", ":", "30", "v1.2"}},
		{"Chinese and Latin", Options{}, "我爱北京天安门 hello world",
			[]string{"我", "爱", "北", "京", "天", "安", "门", "hello", "world"}},
		{"Japanese", Options{}, "東京タワーへ行きました",
			[]string{"東", "京", "タ", "ワ", "ー", "へ", "行", "き", "ま", "し", "た"}},
		{"Korean", Options{}, "한국어 텍스트",
			[]string{"한", "국", "어", "텍", "스", "트"}},
		{"Korean from jamo", Options{}, "\u1112\u1161\u11ab\u1100\u116e\u11a8",
			[]string{"한", "국"}},
		{"no CJK", Options{NoCJK: true}, "我爱 カタカナ 한국어 hello",
			[]string{"我", "爱", "カタカナ", "한국어", "hello"}},
		{"Thai (UAX 29 splits it per character)", Options{}, "ภาษาไทย",
			[]string{"ภ", "า", "ษ", "า", "ไ", "ท", "ย"}},
		{"Cyrillic and Greek words", Options{}, "Привет мир, γειά σου",
			[]string{"привет", "мир", "γεια", "σου"}},
		{"chars", Options{Unit: Chars}, "Hi,  you!", []string{"h", "i", " ", "y", "o", "u"}},
		{"chars CJK", Options{Unit: Chars}, "我爱 北京", []string{"我", "爱", " ", "北", "京"}},
		{"chars punctuation is a break", Options{Unit: Chars}, "e-mail", []string{"e", " ", "m", "a", "i", "l"}},
		{"chars keep punct", Options{Unit: Chars, KeepPunct: true}, "a, b", []string{"a", ",", " ", "b"}},
		{"chars stop words", Options{Unit: Chars, RemoveStopWords: true}, "the end of it", []string{"e", "n", "d"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := tokens(t, c.opt, c.text)
			if !slices.Equal(got, c.want) {
				t.Errorf("tokens of %q = %q, want %q", c.text, got, c.want)
			}
		})
	}
}

// TestLongWords checks that words longer than maxSegment bytes are cut into pieces.
func TestLongWords(t *testing.T) {
	long := strings.Repeat("ab", 300)
	got := tokens(t, Options{}, "x "+long+" y")
	want := []string{"x", long[:256], long[256:512], long[512:], "y"}
	if !slices.Equal(got, want) {
		t.Errorf("tokens = %q, want %q", got, want)
	}
	longCJK := strings.Repeat("é", 200) // 400 bytes: cut at a rune boundary
	got = tokens(t, Options{KeepAccents: true}, longCJK)
	if len(got) != 2 || got[0]+got[1] != longCJK || len(got[0]) != 256 {
		t.Errorf("tokens of 200 é = %d pieces of %v bytes", len(got), len(got[0]))
	}
}

// rawOptions give tokens that are the UAX #29 segments themselves, without spaces.
var rawOptions = Options{KeepPunct: true, KeepCase: true, KeepAccents: true, NoNFKC: true, NoCJK: true}

// uaxTokens returns the UAX #29 segments of text that rawOptions keeps: those with a
// letter, number, punctuation or symbol.
func uaxTokens(text string) []string {
	var want []string
	it := words.FromString(text)
	for it.Next() {
		seg := it.Value()
		if strings.IndexFunc(seg, func(r rune) bool {
			return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsPunct(r) || unicode.IsSymbol(r)
		}) >= 0 {
			want = append(want, seg)
		}
	}
	return want
}

// TestASCIIFastPath checks the hand-written ASCII word boundaries against the uax29
// package on random ASCII text dense in the characters that matter, with and without
// non-ASCII characters nearby.
func TestASCIIFastPath(t *testing.T) {
	const alphabet = "aZ09_.':,;-\" \t\n\r/x"
	extra := []string{"é", "\u0301", "\u00ad", "\u200d", "\u3000", "‘", "’", "“", "”", "–", "—", "\u2024", "\u201a", "中", "😀"}
	opt := rawOptions
	opt.K, opt.Bag = 1, true
	bag1, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		var b strings.Builder
		for range rng.IntN(30) {
			if i%2 == 1 && rng.IntN(8) == 0 {
				b.WriteString(extra[rng.IntN(len(extra))])
				continue
			}
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		text := b.String()
		got, want := tokens(t, rawOptions, text), uaxTokens(text)
		if !slices.Equal(got, want) {
			t.Fatalf("tokens of %q = %q, UAX #29 gives %q", text, got, want)
		}
		// And the same through AppendHashes: the window, not just the tokens.
		var wantHashes []uint64
		for _, w := range want {
			wantHashes = append(wantHashes, feature(0, w))
		}
		if got := bag1.AppendHashes(nil, text); !slices.Equal(got, wantHashes) {
			t.Fatalf("AppendHashes(%q) = %x, want the hashes of %q", text, got, want)
		}
	}
}

// TestNormalizeFastPath checks the ASCII and rune-cache fast paths and the window cuts
// against the reference pipeline (appendSpan on the whole text) on random text from an
// alphabet of troublemakers: combining marks after ASCII and non-ASCII letters, Hangul
// jamo and syllables, compatibility characters, case pairs and invalid bytes.
func TestNormalizeFastPath(t *testing.T) {
	alphabet := []string{"a", "E", "i", " ", ".", "é", "É", "\u0301", "\u0308", "\u0327",
		"\u1100", "\u1161", "\u11a8", "가", "\u3131", "\u314f", "ﬁ", "Ａ", "İ", "ß", "ẞ",
		"Σ", "ς", "ͅ", "ᾈ", "が", "か", "\u3099", "\uff76", "\uff9e", "ि", "क", "\ufdfa", "\xff", "\xe4\xb8",
		"\u00a0", "…", "’", "中", "😀", "\u212b", "Å", "\u0345"}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, opt := range []Options{{}, {KeepAccents: true}, {NoNFKC: true}, {KeepCase: true}, {NoNFKC: true, KeepAccents: true}} {
		for range 3000 {
			var b strings.Builder
			for range rng.IntN(20) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			text := b.String()
			var ref, fast normalizer
			ref.init(&opt)
			fast.init(&opt)
			want := string(ref.appendSpan(nil, []byte(text)))
			var got []byte
			forced := false // a window without a starter had to be cut elsewhere
			// Cut the text where cut would, at random window sizes large enough to hold
			// a rune start after the first byte (real windows are 32 KiB).
			for rest := text; len(rest) > 0; {
				w := rest[:min(len(rest), 5+rng.IntN(12))]
				n := len(w)
				if n < len(rest) {
					n = cut(&fast, w)
					forced = forced || !starterAt(&fast, rest, n)
				}
				got = appendNormalized(&fast, got, w[:n])
				rest = rest[n:]
			}
			if string(got) != want && !forced {
				t.Fatalf("%+v: normalized %q = %q, want %q", opt, text, got, want)
			}
			if !utf8.Valid(got) {
				t.Fatalf("normalized %q is not valid UTF-8: %q", text, got)
			}
		}
	}
}

func TestLower8(t *testing.T) {
	for c := range 128 {
		for pos := range 8 {
			var b [8]byte
			for i := range b {
				b[i] = byte((c + 13*i) % 128)
			}
			b[pos] = byte(c)
			want := []byte(strings.Map(func(r rune) rune {
				if 'A' <= r && r <= 'Z' {
					return r + 'a' - 'A'
				}
				return r
			}, string(b[:])))
			if got := appendLowerASCII(nil, b[:]); string(got) != string(want) {
				t.Fatalf("appendLowerASCII(%q) = %q, want %q", b, got, want)
			}
		}
	}
}

func TestNonLetters(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 100000 {
		var b [8]byte
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				b[i] = "azAZ@[`{"[rng.IntN(8)]
			}
		}
		var want uint64
		for i, c := range b {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				want |= 0x80 << (8 * i)
			}
		}
		if got := nonLetters(binary.LittleEndian.Uint64(b[:])); got != want {
			t.Fatalf("nonLetters(%q) = %x, want %x", b, got, want)
		}
	}
}

// TestEditFastPath checks dropPunct, edit's path without MaskNumbers, against the
// general one on random words dense in punctuation, digits and non-ASCII characters.
func TestEditFastPath(t *testing.T) {
	alphabet := []string{"a", "Z", "0", "9", "_", ".", "'", ",", ";", ":", "-", "é", "’", "\u00ad", "\u200d", "—", "中", "😀", "\u0301"}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, opt := range []Options{{}, {KeepPunct: true}} {
		s, err := New(opt)
		if err != nil {
			t.Fatal(err)
		}
		for range 20000 {
			var b strings.Builder
			for range rng.IntN(12) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			seg := []byte(b.String())
			want := string(s.editGeneral(seg))
			if got := string(s.dropPunct(seg)); got != want {
				t.Fatalf("%+v: dropPunct(%q) = %q, editGeneral %q", opt, seg, got, want)
			}
		}
	}
}
