package shingle

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// cloughDir holds the short answers of Clough and Stevenson's plagiarism corpus (see its
// SOURCE.md), real English written by students and Wikipedia, beside the repository.
const cloughDir = "../../shared/eval/clough-stevenson-tasks-abc/texts"

// englishCorpus returns the concatenated answers, decoded as UTF-8 or, for the files that
// are not valid UTF-8, as Windows-1252; or a built-in paragraph when the data is absent.
var englishCorpus = sync.OnceValue(func() string {
	files, _ := filepath.Glob(filepath.Join(cloughDir, "*.txt"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if !utf8.Valid(data) {
			if d, err := charmap.Windows1252.NewDecoder().Bytes(data); err == nil {
				data = d
			}
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		return fallbackEnglish
	}
	return b.String()
})

const fallbackEnglish = `Inheritance is a basic concept of Object-Oriented Programming where the basic idea is to
create new classes that add extra detail to existing classes. This is done by allowing the new
classes to reuse the methods and variables of the existing classes and new methods and classes
are added to specialise the new class. Inheritance models the "is-kind-of" relationship between
entities (or objects), for example, postgraduates and undergraduates are both kinds of student.
`

// englishText returns n bytes of English (repeating the corpus as needed), cut at a rune
// boundary.
func englishText(n int) string {
	c := englishCorpus()
	t := strings.Repeat(c, n/len(c)+1)[:n]
	for !utf8.ValidString(t) {
		t = t[:len(t)-1]
	}
	return t
}

var benchSizes = []struct {
	name  string
	size  int
	short bool // run under -short
}{{"2KB", 2 << 10, true}, {"1MB", 1 << 20, false}}

func BenchmarkShingle(b *testing.B) {
	for _, c := range []struct {
		name string
		opt  Options
	}{
		{"words5", Options{}},
		{"words5-bag", Options{Bag: true}},
		{"chars5", Options{Unit: Chars}},
		{"words5-all", Options{MaskNumbers: true, RemoveStopWords: true}},
	} {
		for _, sz := range benchSizes {
			b.Run(c.name+"/"+sz.name, func(b *testing.B) {
				if testing.Short() && !sz.short {
					b.Skip("large size skipped with -short")
				}
				text := englishText(sz.size)
				s, err := New(c.opt)
				if err != nil {
					b.Fatal(err)
				}
				dst := s.AppendHashes(nil, text)
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					dst = s.AppendHashes(dst[:0], text)
				}
			})
		}
	}
}

func BenchmarkShingleReader(b *testing.B) {
	text := englishText(1 << 20)
	s, _ := New(Options{})
	dst := s.AppendHashes(nil, text)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = s.AppendHashesReader(dst[:0], strings.NewReader(text))
	}
}

func BenchmarkSort(b *testing.B) {
	for _, n := range []int{300, 170000} {
		s, _ := New(Options{Bag: true})
		hs := s.AppendHashes(nil, englishText(n*6))
		work := make([]uint64, len(hs))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var so sorter
			for b.Loop() {
				copy(work, hs)
				so.sortUnique(work)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(hs)), "ns/hash")
		})
	}
}

// BenchmarkHashOnly is the floor under BenchmarkShingle/words5-bag/1MB: the frozen
// feature hash of every word 5-shingle of the same text (the unit hash of each word, then
// the chain of each run of five), its words prepared beforehand, as if normalization and
// segmentation were free. Compare the two on the same machine at the same time.
func BenchmarkHashOnly(b *testing.B) {
	if testing.Short() {
		b.Skip("1 MB input skipped with -short")
	}
	text := englishText(1 << 20)
	s, _ := New(Options{})
	var buf []byte
	offs := []int{0}
	for t := range s.Tokens(text) {
		buf = append(buf, t...)
		offs = append(offs, len(buf))
	}
	uh := make([]uint64, len(offs)-1)
	b.SetBytes(int64(len(text)))
	var sum uint64
	for b.Loop() {
		for i := range uh {
			uh[i] = unitHash(buf[offs[i]:offs[i+1]])
		}
		for i := 0; i+DefaultWordK <= len(uh); i++ {
			sum += s.hash(uh[i : i+DefaultWordK])
		}
	}
	if sum == 1 {
		b.Log(sum)
	}
}
