package mirror_test

import (
	"fmt"

	"github.com/neardup/neardup/mirror"
)

// Four pages of a documentation site and their copies under another host and prefix,
// one of them edited a little (its SimHash two bits off), and a page of an unrelated
// site that shares one page's content by chance.
func ExampleFind() {
	pages := []mirror.Page{
		{URL: "https://docs.example.org/15/intro.html", SimHash: 0x1111},
		{URL: "https://docs.example.org/15/sql.html", SimHash: 0x2222},
		{URL: "https://docs.example.org/15/index.html", SimHash: 0x3333},
		{URL: "https://docs.example.org/15/faq.html", SimHash: 0x4444},
		{URL: "http://mirror.net/pg/15.4/intro.html", SimHash: 0x1111},
		{URL: "http://mirror.net/pg/15.4/sql.html", SimHash: 0x2222 ^ 0b101},
		{URL: "http://mirror.net/pg/15.4/index.html", SimHash: 0x3333},
		{URL: "http://mirror.net/pg/15.4/faq.html", SimHash: 0x4444},
		{URL: "http://blog.example/copied.html", SimHash: 0x1111},
	}
	mirrors, err := mirror.Find(pages, mirror.Options{})
	if err != nil {
		panic(err)
	}
	for _, m := range mirrors {
		fmt.Printf("%s%s = %s%s: %d of %d shared paths the same (score %.2f)\n",
			m.HostA, m.PrefixA, m.HostB, m.PrefixB, m.Same, m.Shared, m.Score)
	}
	// Output:
	// docs.example.org/15/ = mirror.net/pg/15.4/: 4 of 4 shared paths the same (score 1.00)
}
