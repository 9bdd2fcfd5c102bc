package urlnorm_test

import (
	"errors"
	"fmt"

	"github.com/neardup/neardup/urlnorm"
)

func Example() {
	for _, raw := range []string{
		"HTTP://Example.COM:80/a/./b/../c?y=2&x=1#top",
		"example.com/a/c?x=1&y=2",
		"http://example.com/%61/c?%78=1&y=2",
	} {
		key, err := urlnorm.Canonicalize(raw, urlnorm.Safe)
		fmt.Println(key, err)
	}
	// Output:
	// http://example.com/a/c?x=1&y=2 <nil>
	// http://example.com/a/c?x=1&y=2 <nil>
	// http://example.com/a/c?x=1&y=2 <nil>
}

func ExampleCanonicalize() {
	const raw = "https://www.Example.com/news/index.html?utm_source=feed&id=7#comments"
	for _, p := range []urlnorm.Profile{urlnorm.WHATWG, urlnorm.Safe, urlnorm.Aggressive} {
		key, _ := urlnorm.Canonicalize(raw, p)
		fmt.Printf("%-10v %s\n", p, key)
	}
	_, err := urlnorm.Canonicalize("http://example.com:99999/", urlnorm.Safe)
	fmt.Println(errors.Is(err, urlnorm.ErrInvalid), err)
	// Output:
	// whatwg     https://www.example.com/news/index.html?utm_source=feed&id=7
	// safe       https://www.example.com/news/index.html?id=7&utm_source=feed
	// aggressive http://example.com/news?id=7
	// true urlnorm: invalid URL "http://example.com:99999/": the input's port is outside the range [0-65535]
}

func ExampleNew() {
	// Extend the default tracking parameters by "ref", and keep fragments.
	def, _ := urlnorm.New(urlnorm.Options{Profile: urlnorm.Aggressive})
	o := def.Options()
	o.TrackingParams = append(o.TrackingParams, "ref")
	o.KeepFragment = true
	c, err := urlnorm.New(o)
	if err != nil {
		panic(err)
	}
	key, _ := c.Canonicalize("https://shop.example/item/42/?ref=home&gclid=abc#reviews")
	fmt.Println(key)
	// Output:
	// http://shop.example/item/42#reviews
}
