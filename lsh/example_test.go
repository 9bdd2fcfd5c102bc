package lsh_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
)

// shingles returns the hashes of the word 3-shingles of s: a toy feature set.
func shingles(s string) []uint64 {
	w := strings.Fields(s)
	var fs []uint64
	for i := 0; i+3 <= len(w); i++ {
		fs = append(fs, xxhash.Sum64String(strings.Join(w[i:i+3], " ")))
	}
	return minhash.SortUnique(fs)
}

func Example() {
	docs := []string{
		"the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat by the door",
		"the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat by the gate",
		"a completely different sentence about near duplicate detection at web scale with minhash",
	}
	x, err := lsh.New(lsh.Options{Threshold: 0.7})
	if err != nil {
		panic(err)
	}
	var h minhash.Hasher
	for id, d := range docs {
		if err := x.Add(uint64(id), h.Signature(shingles(d))); err != nil {
			panic(err)
		}
	}
	o := x.Options()
	fmt.Printf("%d bands of %d rows\n", o.Bands, o.Rows)
	ms, err := x.Query(h.Signature(shingles(docs[0])))
	if err != nil {
		panic(err)
	}
	for _, m := range ms {
		fmt.Printf("doc %d: estimate %.2f, exact %.2f\n", m.ID, m.Similarity,
			minhash.Jaccard(shingles(docs[0]), shingles(docs[m.ID])))
	}
	// Output:
	// 14 bands of 9 rows
	// doc 0: estimate 1.00, exact 1.00
	// doc 1: estimate 0.90, exact 0.89
}

func ExampleParams() {
	b, r := lsh.Params(0.8, 0.5, 0.5, 128)
	fmt.Printf("%d bands of %d rows: P(0.8) = %.2f, P(0.9) = %.2f, Recall = %.2f\n",
		b, r, lsh.Probability(0.8, b, r), lsh.Probability(0.9, b, r), lsh.Recall(0.8, b, r))
	b, r = lsh.Params(0.8, 0.1, 0.9, 128) // weigh misses more
	fmt.Printf("%d bands of %d rows: P(0.8) = %.2f, P(0.9) = %.2f, Recall = %.2f\n",
		b, r, lsh.Probability(0.8, b, r), lsh.Probability(0.9, b, r), lsh.Recall(0.8, b, r))
	// Output:
	// 9 bands of 13 rows: P(0.8) = 0.40, P(0.9) = 0.93, Recall = 0.83
	// 14 bands of 9 rows: P(0.8) = 0.87, P(0.9) = 1.00, Recall = 0.98
}

func ExampleIndex_WriteTo() {
	x, _ := lsh.New(lsh.Options{})
	sig := minhash.Hasher{}.Signature(shingles("one two three four five six"))
	if err := x.Add(1, sig); err != nil {
		panic(err)
	}
	var buf bytes.Buffer // a file in practice: write a temporary file, sync, rename
	if _, err := x.WriteTo(&buf); err != nil {
		panic(err)
	}
	y, err := lsh.Read(&buf)
	if err != nil {
		panic(err)
	}
	ms, _ := y.Query(sig)
	fmt.Println(y.Len(), ms)
	// Output: 1 [{1 1}]
}
