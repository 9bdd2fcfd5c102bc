package neardup_test

import (
	"fmt"
	"strings"

	"github.com/neardup/neardup"
)

// A crawler checks each page it fetches: the first copy is unique and stored, a page
// at a URL already seen with the same content is a URL duplicate, the same text at
// another URL an exact duplicate, and the text with a few words changed a near
// duplicate. The survivor is the copy the keep policy prefers: here the first seen.
func ExampleDetector_Check() {
	d, err := neardup.NewDetector(neardup.Options{}) // in memory, the default options
	if err != nil {
		panic(err)
	}
	article := strings.Repeat("The committee met on Tuesday to discuss the budget for the coming year. ", 8)
	edited := strings.Replace(article, "Tuesday", "Wednesday", 1)
	for _, doc := range []neardup.Document{
		{ID: "a", URL: "https://example.com/news/budget", Text: article},
		{ID: "b", URL: "https://www.example.com/news/budget/?utm_source=feed", Text: article},
		{ID: "c", URL: "https://mirror.example/budget.html", Text: article},
		{ID: "d", URL: "https://other.example/story", Text: edited},
		{ID: "e", URL: "https://other.example/weather", Text: "Rain is expected all week in the north."},
	} {
		v, err := d.Check(doc)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %v", doc.ID, v.Kind)
		if len(v.Matches) > 0 {
			fmt.Printf(" of %s, survivor %s", v.Matches[0].ID, v.Survivor)
		}
		fmt.Println()
	}
	fmt.Println(d.Len(), "stored")
	// Output:
	// a: unique
	// b: url-duplicate of a, survivor a
	// c: exact-duplicate of a, survivor a
	// d: near-duplicate of a, survivor a
	// e: unique
	// 4 stored
}
