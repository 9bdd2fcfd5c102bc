package extract_test

import (
	"fmt"

	"github.com/neardup/neardup/extract"
)

// Extract keeps the article and its metadata and drops the navigation, the cookie banner,
// the comments and the footer around it.
func ExampleExtract() {
	r, err := extract.Extract([]byte(article), extract.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Title, "|", r.Author, "|", r.Date, "|", r.Method)
	fmt.Println(r.Text)
	// Output:
	// Rivers of Lyon | Ada Lovelace | 2024-03-05 | main
	// Lyon stands where the Rhône meets the Saône, two rivers with very different tempers that have shaped the city for two thousand years.
	// The Romans built Lugdunum on the hill above the confluence, and for centuries the city grew along the narrow peninsula between the two rivers.
	// Today the confluence district is a quarter of museums, offices and flats, built on land that was railway yards and warehouses only a generation ago.
}

// VisibleText keeps all the text a reader sees, boilerplate included, one block per line.
func ExampleVisibleText() {
	page := []byte(`<html><head><title>Menu</title><style>p { margin: 0 }</style></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<p>Caf&eacute; prices rose <b>again</b>.</p><!-- ad slot --><footer>&copy; 2024</footer></body></html>`)
	text, err := extract.VisibleText(page, extract.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(text)
	// Output:
	// Home | About
	// Café prices rose again.
	// © 2024
}

// A legacy character set is read from the HTTP header when the caller has it, or else
// from the page's <meta> tag.
func ExampleExtract_charset() {
	page := []byte("<p>Stra\xdfe, caf\xe9 et cr\xe8me br\xfbl\xe9e.</p>") // ISO-8859-1 bytes
	r, err := extract.Extract(page, extract.Options{ContentType: "text/html; charset=iso-8859-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Text, "|", r.Charset, "|", r.Method)
	// Output:
	// Straße, café et crème brûlée. | windows-1252 | visible-text
}
