package minhash_test

import (
	"fmt"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/minhash"
)

// words returns the hashes of the words of s: a toy feature set.
func words(s string) []uint64 {
	var fs []uint64
	for _, w := range strings.Fields(s) {
		fs = append(fs, xxhash.Sum64String(w))
	}
	return minhash.SortUnique(fs)
}

func ExampleHasher() {
	a := words("the quick brown fox jumps over the lazy dog")
	b := words("the quick brown fox jumped over the lazy dog")
	var h minhash.Hasher // K = 128, seed 0
	sa, sb := h.Signature(a), h.Signature(b)
	fmt.Printf("exact %.3f, estimate %.3f\n", minhash.Jaccard(a, b), minhash.Similarity(sa, sb))
	// Output: exact 0.778, estimate 0.750
}

func ExampleHasher_AppendSignature() {
	h := minhash.Hasher{K: 64, Seed: 42}
	// One slab for all signatures: AppendSignature allocates nothing while it has room.
	docs := []string{"a b c d e f g h", "a b c d e f g x", "s t u v w x y z"}
	slab := make(minhash.Signature, 0, 64*len(docs))
	for _, doc := range docs {
		slab = h.AppendSignature(slab, words(doc))
	}
	first := slab[:64]
	for i := range docs {
		fmt.Printf("%.2f\n", minhash.Similarity(first, slab[64*i:64*(i+1)]))
	}
	// Output:
	// 1.00
	// 0.75
	// 0.00
}

func ExampleContainment() {
	quote := words("to be or not to be")
	play := words("to be or not to be that is the question")
	fmt.Printf("%.2f %.2f\n", minhash.Containment(quote, play), minhash.Jaccard(quote, play))
	// Output: 1.00 0.50
}

func ExampleCosine() {
	a := []minhash.Weighted{{Hash: 1, Weight: 3}, {Hash: 2, Weight: 4}}
	b := []minhash.Weighted{{Hash: 2, Weight: 1}}
	fmt.Println(minhash.Cosine(a, b))
	// Output: 0.8
}

func ExampleEditSimilarity() {
	fmt.Printf("%.3f\n", minhash.EditSimilarity("kitten", "sitting"))
	// Output: 0.571
}

func ExampleSignature_AppendBinary() {
	sig := minhash.Hasher{K: 4}.Signature(words("near duplicate detection"))
	b, err := sig.AppendBinary(nil)
	if err != nil {
		panic(err)
	}
	var back minhash.Signature
	if err := back.UnmarshalBinary(b); err != nil {
		panic(err)
	}
	fmt.Println(len(b), minhash.Similarity(sig, back))
	// Output: 19 1
}

func ExampleSketch() {
	a := words("the quick brown fox jumps over the lazy dog")
	b := words("the quick brown fox jumped over the lazy dog")
	// A service keeps each document's sketch with its record, and verifies a candidate
	// pair by the two sketches when it cannot read the documents again.
	sa := minhash.NewSketch(nil, a, minhash.DefaultSketchCap)
	sb := minhash.NewSketch(nil, b, minhash.DefaultSketchCap)
	enc, _ := sa.MarshalBinary()
	var stored minhash.Sketch
	if err := stored.UnmarshalBinary(enc); err != nil {
		panic(err)
	}
	fmt.Printf("%.3f (%d bytes)\n", stored.Similarity(sb), len(enc))
	// A capacity below the set's size keeps the smallest hashes: an estimate.
	small := minhash.NewSketch(nil, a, 4)
	fmt.Println(small.Sampled, len(small.Hashes))
	// Output:
	// 0.778 (40 bytes)
	// true 4
}
