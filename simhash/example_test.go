package simhash_test

import (
	"fmt"

	"github.com/neardup/neardup/simhash"
)

func ExampleCompute() {
	// simhash-py's test_basic: each bit takes the majority of the three hashes.
	fmt.Printf("%#x\n", simhash.Compute([]uint64{0xABCD, 0xBCDE, 0xCDEF}))
	// Output: 0xadcf
}

func ExampleDistance() {
	fmt.Println(simhash.Distance(0xDEADBEEF, 0xDEADBEAD))
	// Output: 2
}

func ExampleComputeWeighted() {
	// One heavy feature outvotes two light ones.
	hashes := []uint64{0b1100, 0b0011, 0b0101}
	fmt.Printf("%04b\n", simhash.ComputeWeighted(hashes, []int{3, 1, 1}))
	// Output: 1100
}

func ExampleAccumulator() {
	var acc simhash.Accumulator
	for _, word := range []string{"near", "duplicate", "detection"} {
		acc.Add(simhash.UnsignedHash([]byte(word)))
	}
	acc.AddWeighted(simhash.UnsignedHash([]byte("simhash")), 2.5)
	fmt.Printf("%#016x\n", acc.Sum64())
	// Output: 0x2ff86c389cfe7002
}

func ExampleShingle() {
	shingles, err := simhash.Shingle([]string{"a", "rose", "is", "a", "rose"}, 3)
	if err != nil {
		panic(err)
	}
	fmt.Println(shingles)
	_, err = simhash.Shingle([]string{"a"}, 0)
	fmt.Println(err)
	// Output:
	// [[a rose is] [rose is a] [is a rose]]
	// simhash: shingle window must be positive: got 0; use 1 or more
}

func ExamplePyFingerprint() {
	// The value simhash-py's pipeline computes in Python; case and punctuation do not count.
	fmt.Printf("%#016x\n", simhash.PyFingerprint("Hello, World!"))
	fmt.Println(simhash.PyFingerprint("Hello, World!") == simhash.PyFingerprint("hello world"))
	// Output:
	// 0x4b8b0691bff82a44
	// true
}

func ExampleScheme() {
	s, err := simhash.ParseScheme("simhash-py")
	if err != nil {
		panic(err)
	}
	fmt.Println(s, s.Fingerprint("Straße") == s.Fingerprint("STRASSE"))
	_, err = simhash.ParseScheme("md5")
	fmt.Println(err)
	// Output:
	// simhash-py false
	// simhash: unknown fingerprint scheme "md5": use "neardup" or "simhash-py"
}
