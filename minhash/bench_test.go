package minhash_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/minhash"
)

// benchText returns about n bytes of English prose: runs of 5 to 20 consecutive words of
// testdata/english.txt from random places, so that texts longer than the file still have
// mostly distinct 5-shingles and English word lengths.
func benchText(tb testing.TB, n int) string {
	b, err := os.ReadFile("testdata/english.txt")
	if err != nil {
		tb.Fatal(err)
	}
	words := strings.Fields(string(b))
	r := rand.New(rand.NewPCG(1, uint64(n)))
	var sb strings.Builder
	for sb.Len() < n {
		i := r.IntN(len(words))
		for _, w := range words[i:min(len(words), i+5+r.IntN(16))] {
			sb.WriteString(w)
			sb.WriteByte(' ')
		}
	}
	return sb.String()[:n]
}

// BenchmarkSignature measures AppendSignature at K=128 on the word 5-shingles of English
// text: "features" hashes the features alone (MB/s counts the source text they came from,
// and ns/feature is reported), "text" adds a fast stand-in tokenizer and shingler
// (fastFeatures), and "kperm" is the K-independent-hashes baseline on the same features.
func BenchmarkSignature(b *testing.B) {
	for _, size := range []int{2 << 10, 64 << 10} {
		text := benchText(b, size)
		fs := evaldata.RefShingles(text)
		sig := make(minhash.Signature, 0, minhash.DefaultK)
		b.Run(fmt.Sprintf("features/%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				sig = minhash.Hasher{}.AppendSignature(sig[:0], fs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(fs)), "ns/feature")
		})
		b.Run(fmt.Sprintf("text/%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			var buf []uint64
			for b.Loop() {
				buf = fastFeatures(buf[:0], text)
				sig = minhash.Hasher{}.AppendSignature(sig[:0], buf)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(buf)), "ns/feature")
		})
		b.Run(fmt.Sprintf("kperm/%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			as, bs := kPermCoefficients(minhash.DefaultK, 0)
			for b.Loop() {
				sig = appendKPerm(sig[:0], fs, 0, as, bs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(fs)), "ns/feature")
		})
	}
}

// fastFeatures appends the word 5-shingle hashes of text to dst, unsorted and with repeats
// (AppendSignature needs neither order nor uniqueness): words are runs of ASCII letters,
// digits and '_' or of non-ASCII bytes, lower-cased ASCII, hashed with xxhash; a shingle's
// hash combines its five word hashes. It is a sketch of how fast a shingler can feed
// AppendSignature, not the shingle package.
func fastFeatures(dst []uint64, text string) []uint64 {
	var win [5]uint64
	var word [64]byte
	n, wl := 0, 0
	flush := func() {
		if wl == 0 {
			return
		}
		copy(win[:], win[1:])
		win[4] = xxhash.Sum64(word[:min(wl, len(word))])
		wl = 0
		if n++; n >= 5 {
			h := win[0]
			for _, w := range win[1:] {
				h = (h ^ w) * 0x9e3779b97f4a7c15
			}
			dst = append(dst, h)
		}
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_', c >= 0x80:
		default:
			flush()
			continue
		}
		if wl < len(word) {
			word[wl] = c
		}
		wl++
	}
	flush()
	return dst
}

// BenchmarkSignatureSmall measures sets much smaller than K, where densification fills
// most bins.
func BenchmarkSignatureSmall(b *testing.B) {
	for _, n := range []int{1, 10, 50} {
		fs := evaldata.RefShingles(benchText(b, 6*(n+4)))[:n]
		sig := make(minhash.Signature, 0, minhash.DefaultK)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sig = minhash.Hasher{}.AppendSignature(sig[:0], fs)
			}
		})
	}
}

func BenchmarkSimilarity(b *testing.B) {
	fs := evaldata.RefShingles(benchText(b, 2<<10))
	x := minhash.Hasher{}.Signature(fs)
	y := minhash.Hasher{}.Signature(fs[1:])
	for b.Loop() {
		minhash.Similarity(x, y)
	}
}

func BenchmarkJaccard(b *testing.B) {
	fs := evaldata.RefShingles(benchText(b, 64<<10))
	gs := fs[10:]
	b.SetBytes(int64(8 * (len(fs) + len(gs))))
	for b.Loop() {
		minhash.Jaccard(fs, gs)
	}
}

func BenchmarkEditSimilarity(b *testing.B) {
	for _, n := range []int{100, 1000, minhash.MaxEditRunes} {
		x := benchText(b, n)
		y := strings.ReplaceAll(x, "e", "a")
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(x)))
			for b.Loop() {
				minhash.EditSimilarity(x, y)
			}
		})
	}
}
