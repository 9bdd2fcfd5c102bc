package simhash

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/neardup/neardup/internal/evaldata"
)

// benchText returns about n bytes of English verse.
func benchText(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(jabberwocky)
		b.WriteString("\n")
		b.WriteString(pope)
		b.WriteString("\n")
	}
	return b.String()[:n]
}

// englishProse is the Clough-Stevenson answers of the shared evaluation sets (see
// internal/evaldata): 80 KB of English, 57 answers to three questions written by students
// or taken from Wikipedia, many rewriting the same sources; or "" when the sets are
// absent. Its first 64 KB have 5,508 distinct word 2-shingles in 10,696. benchText's
// repeated verse has a few hundred at any length, which makes SchemeNeardup's sort and
// Compute look cheaper than they are.
var englishProse = sync.OnceValue(func() string {
	root, err := evaldata.Root()
	if err != nil {
		return ""
	}
	answers, err := evaldata.Clough(root)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, a := range answers {
		b.WriteString(a.Text)
		b.WriteString("\n")
	}
	return b.String()
})

// proseText returns about n bytes of English prose (englishProse, repeated as needed and
// cut at a rune boundary), or benchText(n) when the evaluation sets are absent.
func proseText(tb testing.TB, n int) string {
	p := englishProse()
	if p == "" {
		tb.Logf("no evaluation sets in shared/eval: benchmarking repeated verse")
		return benchText(n)
	}
	t := strings.Repeat(p, n/len(p)+1)[:n]
	for !utf8.ValidString(t) {
		t = t[:len(t)-1]
	}
	return t
}

func BenchmarkCompute(b *testing.B) {
	for _, n := range []int{16, 256, 4096} {
		hs := randomHashes(rand.New(rand.NewPCG(1, uint64(n))), n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(8 * n))
			b.ReportAllocs()
			for b.Loop() {
				Compute(hs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/hash")
		})
	}
}

func BenchmarkComputeWeighted(b *testing.B) {
	const n = 4096
	hs := randomHashes(rand.New(rand.NewPCG(2, n)), n)
	fs := make([]float64, n)
	is := make([]int64, n)
	for i := range fs {
		fs[i], is[i] = 1.5, 3
	}
	b.Run("float64", func(b *testing.B) {
		b.SetBytes(8 * n)
		b.ReportAllocs()
		for b.Loop() {
			ComputeWeighted(hs, fs)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/hash")
	})
	b.Run("int64", func(b *testing.B) {
		b.SetBytes(8 * n)
		b.ReportAllocs()
		for b.Loop() {
			ComputeWeighted(hs, is)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/hash")
	})
}

func BenchmarkAccumulatorAdd(b *testing.B) {
	hs := randomHashes(rand.New(rand.NewPCG(3, 4)), 4096)
	b.SetBytes(8 * int64(len(hs)))
	b.ReportAllocs()
	var a Accumulator
	for b.Loop() {
		a.Reset()
		for _, h := range hs {
			a.Add(h)
		}
		a.Sum64()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(hs)), "ns/hash")
}

// BenchmarkScheme measures Scheme.Fingerprint of English prose, in bytes of text per
// second. SchemeNeardup's time is almost all package shingle's (normalization,
// segmentation, XXH64 per word and the sort of the features); Compute is about 1%.
func BenchmarkScheme(b *testing.B) {
	for _, s := range []Scheme{SchemeNeardup, SchemeSimhashPy} {
		for _, size := range []int{2 << 10, 64 << 10} {
			text := proseText(b, size)
			b.Run(fmt.Sprintf("%v/%dKB", s, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					s.Fingerprint(text)
				}
			})
		}
	}
}
