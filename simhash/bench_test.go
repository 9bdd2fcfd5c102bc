package simhash

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
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

func BenchmarkFingerprint(b *testing.B) {
	for _, s := range []Scheme{SchemeNeardup, SchemeSimhashPy} {
		for _, size := range []int{2 << 10, 64 << 10} {
			text := benchText(size)
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
