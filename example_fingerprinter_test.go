package neardup_test

import (
	"fmt"
	"log"
	"math/bits"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/minhash"
)

// A Fingerprinter turns each document into its keys: the canonical URL, the exact hashes
// of its content at three levels, and the SimHash and MinHash of its main text. Pages that
// differ only in markup share the Text and Main hashes; a page with a few words changed
// keeps a close SimHash and a high MinHash similarity.
func ExampleFingerprinter() {
	f, err := neardup.NewFingerprinter(neardup.Options{})
	if err != nil {
		log.Fatal(err)
	}
	text := "The quick brown fox jumps over the lazy dog while the farmer watches from the porch " +
		"and the dog sleeps on in the afternoon sun beside the old red barn near the river."
	a, err := f.Fingerprint(neardup.Document{ID: "a", URL: "HTTP://www.Example.com/story/?utm_source=feed", HTML: []byte("<p>" + text + "</p>")})
	if err != nil {
		log.Fatal(err)
	}
	b, err := f.Fingerprint(neardup.Document{ID: "b", HTML: []byte("<div><b>" + text + "</b></div>")})
	if err != nil {
		log.Fatal(err)
	}
	c, err := f.Fingerprint(neardup.Document{ID: "c", Text: text + " Then it rains."})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("canonical URL:", a.URL)
	fmt.Println("a, b: same bytes", a.Raw == b.Raw, "same text", a.Text == b.Text, "same main text", a.Main == b.Main)
	fmt.Println("a, c: same main text", a.Main == c.Main)
	fmt.Println("a, c: SimHash bits apart", bits.OnesCount64(a.SimHash^c.SimHash))
	fmt.Printf("a, c: MinHash similarity %.2f\n", minhash.Similarity(a.MinHash, c.MinHash))
	// Output:
	// canonical URL: http://example.com/story
	// a, b: same bytes false same text true same main text true
	// a, c: same main text false
	// a, c: SimHash bits apart 4
	// a, c: MinHash similarity 0.92
}
