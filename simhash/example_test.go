package simhash_test

import (
	"fmt"
	"strings"

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

func ExampleScheme_Fingerprint() {
	// SchemeNeardup folds case, accents, compatibility forms and punctuation away.
	a := simhash.SchemeNeardup.Fingerprint("Café—NAÏVE, ﬁne!")
	b := simhash.SchemeNeardup.Fingerprint("cafe naive fine")
	fmt.Println(a == b)

	// One word changed in a paragraph of 74 words replaces 2 of its 69 distinct word pairs,
	// too few to tip any of the 64 bit votes here.
	v1 := `Inheritance is a basic concept of object-oriented programming where the basic idea
	is to create new classes that add extra detail to existing classes. This is done by
	allowing the new classes to reuse the methods and variables of the existing classes, and
	new methods and classes are added to specialise the new class. Inheritance models the
	"is-kind-of" relationship between entities, for example, postgraduates and undergraduates
	are both kinds of student.`
	v2 := strings.Replace(v1, "specialise", "specialize", 1)
	fmt.Println(simhash.Distance(simhash.SchemeNeardup.Fingerprint(v1), simhash.SchemeNeardup.Fingerprint(v2)))
	// Output:
	// true
	// 0
}
