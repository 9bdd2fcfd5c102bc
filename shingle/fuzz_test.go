package shingle

import (
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// FuzzShingler checks, for any text and option bits, that the Shingler does not panic,
// that the reader path (fed one byte at a time, so every rune is split) gives what the
// string path gives, that sets are sorted and distinct, that tokens are valid UTF-8 and
// never contain a space (Words), that a bag has one feature per shingle, and that the
// features made from the unit hashes (AppendUnitHashes, then AppendShingles or
// AppendDistinctShingles) are the text's, with the same units for another K, Bag and
// Seed.
func FuzzShingler(f *testing.F) {
	for _, s := range []string{
		"", "a", "The quick brown fox jumps over the lazy dog.", "don't e.g. 3.14 1,000 12:30 2024-01-31",
		"我爱北京天安门 hello world", "ひらがなカタカナ 한국어", "Café ﬁne Straße İ ΣΟΦΟΣ", "e\u0301\u0301\u0301",
		"\xff\xfe\xe4\xb8", "iㅏ\u0308ㅏ", "Jan 31, 2024 at 9:05 pm", strings.Repeat("ab", 200), "😀👍🏽 #tag @user",
	} {
		f.Add(s, uint16(0), uint8(0))
		f.Add(s, uint16(0xffff), uint8(3))
	}
	f.Fuzz(func(t *testing.T, text string, bits uint16, k uint8) {
		opt := Options{
			Unit: Unit(bits & 1), K: int(k % 8), KeepCase: bits&2 != 0, KeepPunct: bits&4 != 0,
			KeepAccents: bits&8 != 0, NoNFKC: bits&16 != 0, NoCJK: bits&32 != 0, MaskNumbers: bits&64 != 0,
			RemoveStopWords: bits&128 != 0, Bag: bits&256 != 0, SplitPunct: bits&512 != 0, Seed: uint64(bits >> 10),
		}
		s, err := New(opt)
		if err != nil {
			t.Fatal(err)
		}
		got := s.AppendHashes(nil, text)
		fromReader, err := s.AppendHashesReader(nil, iotest.OneByteReader(strings.NewReader(text)))
		if err != nil || !slices.Equal(got, fromReader) {
			t.Fatalf("reader path gives %d hashes (%v), string path %d", len(fromReader), err, len(got))
		}
		n := 0
		for tok := range s.Tokens(text) {
			n++
			if len(tok) == 0 || !utf8.Valid(tok) || opt.Unit == Words && strings.Contains(string(tok), " ") {
				t.Fatalf("bad token %q", tok)
			}
		}
		units := s.AppendUnitHashes(nil, text)
		if len(units) != n {
			t.Fatalf("%d unit hashes for %d tokens", len(units), n)
		}
		if fromUnits := s.AppendShingles(nil, units); !slices.Equal(fromUnits, got) {
			t.Fatalf("the unit hashes give %d features, the text %d", len(fromUnits), len(got))
		}
		if a, b := s.AppendDistinctShingles(nil, units), s.AppendDistinct(nil, text); !slices.Equal(a, b) {
			t.Fatalf("the unit hashes give %d distinct features, the text %d", len(a), len(b))
		}
		other := opt
		other.K, other.Bag, other.Seed = 1+int(k/8%8), !opt.Bag, opt.Seed^0x5bd1e995
		o, err := New(other)
		if err != nil {
			t.Fatal(err)
		}
		if ou := o.AppendUnitHashes(nil, text); !slices.Equal(ou, units) {
			t.Fatalf("K %d, Bag %v, Seed %d give other units than K %d, Bag %v, Seed %d", other.K, other.Bag, other.Seed, opt.K, opt.Bag, opt.Seed)
		}
		if opt.Bag {
			want := max(n-s.k+1, min(n, 1))
			if len(got) != want {
				t.Fatalf("%d tokens give %d shingles in a bag, want %d", n, len(got), want)
			}
		} else if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("set is not sorted and distinct: %x", got)
		}
	})
}
