package extract

import (
	"strings"
	"testing"
	"unicode"
)

// normalizeRef is normalize's definition, a rune at a time: the oracle of the byte-wise
// fast path.
func normalizeRef(s string) string {
	var b strings.Builder
	var space, line bool
	for _, r := range s {
		switch {
		case isLineBreak(r):
			line = b.Len() > 0
		case unicode.IsSpace(r):
			space = b.Len() > 0
		case r == '\u00ad' || r == '\ufeff' || unicode.IsControl(r):
		default:
			if line {
				b.WriteByte('\n')
			} else if space {
				b.WriteByte(' ')
			}
			line, space = false, false
			b.WriteRune(r)
		}
	}
	return b.String()
}

var normalizeSeeds = []string{
	"", " ", "\n", "a", " a ", "a  b", "a \n b", "a\r\nb", "a\tb\vc\fd",
	"\x00a\x01b\x7fc", "a\u00a0b", "a\u0085b", "a\u2028b\u2029c", "soft\u00adhyphen",
	"\ufeffbom", "caf\u00e9 na\u00efve", "\xff\xfe invalid \xc3", "日本語 の\u3000テキスト",
	"tab\t\tand  spaces \n\n\n lines ", "\u200b zero width", "x\u180ey",
}

// TestNormalize checks the fast path against the definition on the seeds.
func TestNormalize(t *testing.T) {
	for _, s := range normalizeSeeds {
		if got, want := normalize(s), normalizeRef(s); got != want {
			t.Errorf("normalize(%q) = %q, want %q", s, got, want)
		}
	}
	if got := normalize(" a \u00a0 b\n\n c "); got != "a b\nc" {
		t.Errorf("normalize = %q, want %q", got, "a b\nc")
	}
}

// FuzzNormalize holds normalize to normalizeRef on any input.
func FuzzNormalize(f *testing.F) {
	for _, s := range normalizeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := normalize(s), normalizeRef(s); got != want {
			t.Errorf("normalize(%q) = %q, want %q", s, got, want)
		}
	})
}

// BenchmarkNormalize normalizes the visible text of a page of English prose.
func BenchmarkNormalize(b *testing.B) {
	s := strings.Repeat("The quick  brown fox\njumps over the lazy dog, caf\u00e9.\n\n  ", 300)
	for _, bc := range []struct {
		name string
		fn   func(string) string
	}{{"fast", normalize}, {"ref", normalizeRef}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				bc.fn(s)
			}
		})
	}
}

// TestCountText holds countText to a rune-by-rune count: letters and digits of any
// script, and Latin and CJK commas.
func TestCountText(t *testing.T) {
	ref := func(s string) (n, commas int32) {
		for _, r := range s {
			switch {
			case r == ',' || r == '，' || r == '、':
				commas++
			case unicode.IsLetter(r) || unicode.IsNumber(r):
				n++
			}
		}
		return n, commas
	}
	for _, s := range []string{
		"", "a", ",", "Hello, world: 42 times!", "\x00\x7f~`@[]{}|\\^_", "café, naïve, Straße",
		"东京，大阪、京都", "٣ ٤ five", "\xff\xfeab,", strings.Repeat("word, ", 100),
	} {
		gn, gc := countText(s)
		if wn, wc := ref(strings.ToValidUTF8(s, "\uFFFD")); gn != wn || gc != wc {
			t.Errorf("countText(%q) = %d, %d; want %d, %d", s, gn, gc, wn, wc)
		}
	}
}

// FuzzDecode holds decode's shortcut for valid UTF-8 to determine, which asks
// charset.DetermineEncoding: the same text and encoding for every page.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"<p>plain ascii</p>", "<meta charset=windows-1252><p>café</p>", "<meta charset=iso-2022-jp><p>hello</p>",
		"<meta charset=csISO2022JP><p>x</p>", "<meta charset='iso-&#50;022-jp'><p>x</p>", "\xef\xbb\xbf<p>bom</p>",
		"\xff\xfe<\x00p\x00>\x00", "\xfe\xff\x00<\x00p", "<meta http-equiv=content-type content='text/html;charset=iso-2022-jp'>",
		"<p>caf\xe9</p>", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		s, name := decode(page, "")
		ws, wname := determine(page, "")
		if s != ws || name != wname {
			t.Fatalf("decode(%q) = %q in %s; DetermineEncoding's way: %q in %s", page, s, name, ws, wname)
		}
	})
}
