// Package urlnorm canonicalizes URLs into dedup keys: URLs that fetch the same document get
// the same string, so "have I seen this URL?" is a lookup of that string.
//
// Parsing is the WHATWG URL Standard's (https://url.spec.whatwg.org/), which is how
// browsers read URLs, through github.com/nlnwa/whatwg-url: what the standard rejects
// (a host with a space, "%" or another forbidden code point, a malformed IPv6 or
// out-of-range IPv4 address, a bad port, an http URL without a host) is rejected here, and
// relative references are resolved against a base URL (Options.Base, CanonicalizeRef) as
// a browser resolves links. The standard's own test data (testdata/urltestdata.json, from
// web-platform-tests) passes in full under the WHATWG profile. A fast path takes the plain
// absolute http and https URLs, which most crawled URLs are, without the library; it is
// checked against it on that data and by a differential fuzz target.
//
// The Safe and Aggressive steps after parsing follow iipc/urlcanon (the Internet
// Archive's canonicalizer for crawlers and the Wayback Machine) step for step, because
// urlcanon's test data is the reference they are measured against, and Google's Safe
// Browsing canonicalization for percent-encoding. RFC 3986 section 6 names the same
// normalizations (case, percent-encoding, dot segments, default ports).
//
// # Profiles
//
// Each profile merges more URLs than the one before it.
//
//   - WHATWG parses and serializes as the standard does: leading and trailing spaces and
//     controls and every tab and newline removed; scheme and host in lower case; default
//     ports (http 80, https 443, ws 80, wss 443, ftp 21) removed; the host of http, https,
//     ws, wss, ftp and file URLs percent-decoded, IPv4 forms such as 3279880203,
//     0xC3.0177.11 or 192.0x00A80001 written as a dotted quad and IPv6 in compressed hex,
//     IDNA applied ("bücher.de" is "xn--bcher-kva.de") and "localhost" of a file URL
//     removed; backslashes read as slashes; "." and ".." segments resolved; an empty path
//     made "/"; bytes outside printable ASCII percent-encoded with the standard's per-part
//     sets. A relative reference is resolved against the base URL; without one it is an
//     error.
//   - Safe (the default) is urlcanon's semantic canonicalizer: WHATWG (with gopher a
//     special scheme, default port 70, as urlcanon has it), plus http for a missing scheme
//     when no base URL is given and the input starts with a host ("example.com/a"),
//     percent-encoding decoded to one form (every escape decoded, repeatedly, then only
//     the bytes that must be escaped are encoded again: controls, space, non-ASCII, "%",
//     "#" and "?" in the path, "&" and "=" in query names and values), userinfo removed,
//     leading, trailing and repeated dots of the host removed, repeated slashes in the
//     path collapsed, and query parameters sorted.
//   - Aggressive is Safe plus https read as http, a leading "www." or "wwwN." removed (while
//     a dot remains), tracking parameters (utm_*, gclid, fbclid and others) and session ids
//     (jsessionid, phpsessid, sid, ...; in the query, as ";name=value" path parameters, and
//     ASP.NET's "(S(...))" path segments) dropped, index pages (index.html, default.aspx,
//     ...) and trailing slashes removed, and empty query parameters and an empty query
//     dropped. Options sets the three lists.
//
// Every profile removes the fragment unless Options.KeepFragment is set: it never reaches
// the server. (urlcanon's semantic_precise keeps it and its semantic removes it; Safe with
// KeepFragment is semantic_precise.) An empty query ("?") stays in WHATWG and Safe, as
// RFC 3986 section 6.2.3 asks; Aggressive drops it.
//
// Canonicalization is idempotent: a result canonicalizes to itself under the same options
// (tested over every input of the test data, and fuzzed).
//
// # Accuracy
//
// TestWPTURLTestData runs the standard's test data (testdata/urltestdata.json) under
// WHATWG: all 548 success cases give their href exactly and all 272 failure cases are
// rejected. TestEvalURLCanon measures the profiles on urlcanon's test data (../shared/eval/
// url-canonicalization-urlcanon; the share of inputs whose result is exactly the expected
// URL):
//
//	file                      profile                    cases  matching  share
//	semantic_precise.json     Safe, KeepFragment           280       267  95.4%
//	supplemental_whatwg.json  WHATWG, KeepFragment         118        92  78.0%
//	aggressive.json           Aggressive                    42        39  92.9%
//	path_dots.json            WHATWG (paths)               752       752  100%
//	funky_ipv4.json           WHATWG and Safe (hosts)       47        47  100%
//
// Every other case is listed with its reason in testdata/deviations.txt, which the test
// checks exactly. Most are where the standard has changed since urlcanon's data was
// written: it now rejects hosts with forbidden code points ("http://%20x.com/",
// "http://%/") and hosts that end in a number but are not IPv4 ("http://09/"), reads a
// host of dots as a domain rather than 0.0.0.0, and encodes spaces in fragments; and
// "www.google.com" is a relative reference, an error without a base URL. The three
// aggressive.json deviations are deliberate: urlcanon lower-cases the path and the query,
// which most servers treat as case-sensitive, and keeps index.html.
//
// # Example
//
//	key, err := urlnorm.Canonicalize("HTTP://Example.COM:80/a/./b/../c?y=2&x=1#top", urlnorm.Safe)
//	// key == "http://example.com/a/c?x=1&y=2"
//
//	c, err := urlnorm.New(urlnorm.Options{Profile: urlnorm.Aggressive})
//	for _, page := range pages {
//		key, err := c.Canonicalize(page.URL) // safe for concurrent use
//		...
//	}
//
// # Caveats
//
//   - Keys are only comparable under the same Options. A key is a string, not a parsed
//     URL; under WHATWG it is the standard's serialization, under Safe and Aggressive a
//     URL that parses to itself.
//   - Safe decodes every escape, even reserved ones such as %2F and %3D in the path and
//     %2561 (which becomes "a"), because browsers and most servers treat them alike; a
//     server that tells "/a%2Fb" from "/a/b" apart gets one key for both. Use WHATWG for
//     the strictest key.
//   - Sorting query parameters (Safe) merges URLs whose servers read parameters in order,
//     which is rare; Aggressive's lists drop parameters by name, whatever their value, so
//     a site whose "sid" is not a session id loses it.
//   - Without a base URL, Safe and Aggressive read input without a scheme as http only
//     when it starts with a host with a dot ("example.com/a", "//example.com"); "a",
//     "../a", "/a" and "?q" are relative references and errors. "localhost:8080/a" has
//     the scheme "localhost", as browsers read it too, and "index.html" is read as a
//     host. Give the scheme, or a base URL.
//   - IDNA is UTS #46 non-transitional processing: "faß.de" is "xn--fa-hia.de", not
//     "fass.de".
//   - A byte that is not UTF-8 is read as its percent-escape ("\xff" as "%FF"), not as
//     U+FFFD, so that URLs that differ only there keep different keys. In a host, which
//     the standard then rejects, WHATWG rejects it too; Safe and Aggressive keep its
//     bytes, escaped ("a%FF.com"), as urlcanon does, once the rest of the host passes the
//     standard's checks.
//   - The standard's parser (whatwg-url) costs several times the old hand-written one and
//     about 75 allocations per URL; the fast path keeps plain http and https URLs near
//     the old speed.
package urlnorm
