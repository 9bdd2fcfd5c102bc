package evaldata

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"strings"
	"sync"
)

// sampleTextGz is the main text of the Clang 16 manual's pages shipped in
// sample/clang-15-vs-16/b-16.0.6, one page a line, as extract.Extract gives it (its
// paragraphs joined by spaces), gzip-compressed. It is embedded so that the synthetic
// corpora of `neardup bench` need no file outside the binary; TestSampleText rebuilds it
// from the sample (go test ./internal/evaldata -run SampleText -update).
//
//go:embed sampletext.txt.gz
var sampleTextGz []byte

var sampleTexts = sync.OnceValue(func() []string {
	z, err := gzip.NewReader(bytes.NewReader(sampleTextGz))
	if err != nil {
		panic("evaldata: the embedded sample text is not gzip: " + err.Error())
	}
	b, err := io.ReadAll(z)
	if err != nil {
		panic("evaldata: the embedded sample text is corrupt: " + err.Error())
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
})

// SampleTexts returns the main text of each page of the Clang 16 manual in the
// repository's sample corpus (Apache-2.0 WITH LLVM-exception, see NOTICE), about 90
// pages of technical English, in the order of their paths. It is embedded in the binary,
// so it needs no file; the first call decompresses it (a few milliseconds), later calls
// return the same slice, which callers must not modify. It is safe for concurrent use.
func SampleTexts() []string {
	return sampleTexts()
}
