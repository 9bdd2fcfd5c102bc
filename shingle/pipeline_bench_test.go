package shingle_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
)

// BenchmarkShingleSimHash measures the whole text-to-SimHash path with default options
// (word 5-shingles as a set, summed by a simhash.Accumulator) on about 1 MB of the
// Clough-Stevenson answers, or on a repeated built-in sentence without the data.
func BenchmarkShingleSimHash(b *testing.B) {
	if testing.Short() {
		b.Skip("1 MB input skipped with -short")
	}
	files, _ := filepath.Glob("../../shared/eval/clough-stevenson-tasks-abc/texts/*.txt")
	var sb strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil {
			sb.Write(data)
			sb.WriteByte('\n')
		}
	}
	if sb.Len() == 0 {
		sb.WriteString("The quick brown fox jumps over the lazy dog near the river bank. ")
	}
	text := strings.Repeat(sb.String(), 1<<20/sb.Len()+1)[:1<<20]
	s, err := shingle.New(shingle.Options{})
	if err != nil {
		b.Fatal(err)
	}
	hs := s.AppendHashes(nil, text)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		hs = s.AppendHashes(hs[:0], text)
		var acc simhash.Accumulator
		for _, h := range hs {
			acc.Add(h)
		}
		acc.Sum64()
	}
}
