package minhash_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
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
// and ns/feature is reported) and "kperm" is the K-independent-hashes baseline on the same
// features. BenchmarkSignatureFromText measures the whole pipeline from text.
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

// debianText returns the visible text of the debian-doc-versions pages (2,517 documents,
// about 17.6 MB), each with its runs of whitespace made single spaces: the text that
// comparison with datasketch in docs/performance.md gives both libraries, one document per
// line.
var debianText = sync.OnceValues(func() ([]string, error) {
	root, err := evaldata.Root()
	if err != nil {
		return nil, err
	}
	docs, _, err := evaldata.Debian(root)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = strings.Join(strings.Fields(d.Text), " ")
	}
	return texts, nil
})

// BenchmarkSignatureFromText measures the MinHash pipeline from text, document by
// document, on the debian-doc-versions visible text: package shingle's default
// normalization and word 5-shingles, as a bag (whose signature is the set's; see
// TestSignatureOfBag), and a K=128 signature. MB/s counts the text's bytes.
func BenchmarkSignatureFromText(b *testing.B) {
	texts, err := debianText()
	evaldata.Need(b, err)
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	s, err := shingle.New(shingle.Options{Bag: true})
	if err != nil {
		b.Fatal(err)
	}
	var fs []uint64
	sig := make(minhash.Signature, 0, minhash.DefaultK)
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			fs = s.AppendHashes(fs[:0], t)
			sig = minhash.Hasher{}.AppendSignature(sig[:0], fs)
		}
	}
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

// TestSignatureOfBag checks what BenchmarkSignatureFromText and the package
// documentation rely on: on every debian-doc-versions text, the signature of the bag of
// word 5-shingles equals the signature of their sorted set, at K = 128 and another seed.
func TestSignatureOfBag(t *testing.T) {
	texts, err := debianText()
	evaldata.Need(t, err)
	set, _ := shingle.New(shingle.Options{})
	bag, _ := shingle.New(shingle.Options{Bag: true})
	for _, h := range []minhash.Hasher{{}, {K: 64, Seed: 7}} {
		for i, text := range texts {
			want := h.Signature(set.AppendHashes(nil, text))
			if got := h.Signature(bag.AppendHashes(nil, text)); !slices.Equal(got, want) {
				t.Fatalf("%+v, text %d: the bag's signature differs from the set's", h, i)
			}
		}
	}
}
