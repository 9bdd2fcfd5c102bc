package shingle_test

import (
	"fmt"
	"strings"

	"github.com/neardup/neardup/shingle"
)

func Example() {
	s, err := shingle.New(shingle.Options{K: 3})
	if err != nil {
		panic(err)
	}
	a := s.AppendHashes(nil, "The quick brown fox jumps over the lazy dog.")
	b := s.AppendHashes(nil, "THE QUICK BROWN FOX jumped over the lazy dog!")
	// Sets are sorted, so their Jaccard similarity is a merge.
	shared := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			shared, i, j = shared+1, i+1, j+1
		}
	}
	fmt.Printf("%d and %d shingles, %d shared\n", len(a), len(b), shared)
	// Output: 7 and 7 shingles, 4 shared
}

func ExampleShingler_Tokens() {
	s, _ := shingle.New(shingle.Options{})
	var toks []string
	for tok := range s.Tokens("Ｃafé’s ﬁne STRASSE — 我爱北京 hello!") {
		toks = append(toks, string(tok))
	}
	fmt.Println(strings.Join(toks, " | "))
	// Output: cafes | fine | strasse | 我 | 爱 | 北 | 京 | hello
}

func ExampleShingler_Tokens_chars() {
	s, _ := shingle.New(shingle.Options{Unit: shingle.Chars, MaskNumbers: true})
	var b strings.Builder
	for tok := range s.Tokens("Seen 3 times, last on 2024-01-31 at 12:30!") {
		b.Write(tok)
	}
	fmt.Printf("%q\n", b.String())
	// Output: "seen 0 times last on 0-0-0 at 0:0"
}

func ExampleShingler_AppendHashes() {
	s, _ := shingle.New(shingle.Options{K: 2, Bag: true})
	hs := s.AppendHashes(nil, "A rose is a rose.")
	for _, h := range hs {
		fmt.Printf("%016x\n", h)
	}
	// A bag keeps the shingles in text order: "a rose" comes again at the end.
	fmt.Println(hs[0] == hs[3])
	// Output:
	// 9c1ebb04019ce8c5
	// ec8ba8c9aadc687d
	// 9cfa16209418672e
	// 9c1ebb04019ce8c5
	// true
}

func ExampleShingler_AppendWeighted() {
	s, _ := shingle.New(shingle.Options{K: 1, Weighting: shingle.TF})
	// Name the features by hashing each word alone.
	name := map[uint64]string{}
	for _, w := range []string{"to", "be", "or", "not"} {
		name[s.AppendHashes(nil, w)[0]] = w
	}
	// One feature per distinct shingle, sorted by hash, weighted by its count.
	for _, f := range s.AppendWeighted(nil, "To be, or not to be") {
		fmt.Println(name[f.Hash], f.Weight)
	}
	// Output:
	// not 1
	// be 2
	// to 2
	// or 1
}

func ExampleLoadIDF() {
	// Keys are normalized like documents: "The" and "the" are one feature.
	table, err := shingle.LoadIDF(strings.NewReader("The\t0.1\nfox\t3.5\n"), shingle.Options{K: 1})
	if err != nil {
		panic(err)
	}
	s, _ := shingle.New(shingle.Options{K: 1, Bag: true, Weighting: shingle.IDF, IDF: table})
	for _, f := range s.AppendWeighted(nil, "the quick fox") {
		fmt.Println(f.Weight) // "quick" is not in the table: the largest weight, 3.5
	}
	// Output:
	// 0.1
	// 3.5
	// 3.5
}
