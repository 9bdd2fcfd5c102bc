// Package urlnorm canonicalizes URLs into dedup keys: URLs that fetch the same document get
// the same string, so "have I seen this URL?" is a lookup of that string.
//
// It follows iipc/urlcanon (the Internet Archive's canonicalizer for crawlers and the
// Wayback Machine) step for step, because urlcanon's test data is the reference it is
// measured against, and urlcanon in turn follows the WHATWG URL Standard
// (https://url.spec.whatwg.org/), which is how browsers read URLs, and Google's Safe
// Browsing canonicalization for percent-encoding. RFC 3986 section 6 names the same
// normalizations (case, percent-encoding, dot segments, default ports).
//
// # Profiles
//
// Each profile merges more URLs than the one before it.
//
//   - WHATWG parses and serializes as the standard does: leading and trailing spaces and
//     controls and every tab and newline removed; scheme and host in lower case; default
//     ports (http 80, https 443, ws 80, wss 443, ftp 21, gopher 70) removed; the host of
//     http, https, ws, wss, ftp, gopher and file URLs percent-decoded, IPv4 forms such as
//     3279880203, 0xC3.0177.11 or 192.0x00A80001 written as a dotted quad and IPv6 in
//     compressed hex, and IDNA applied ("bücher.de" is "xn--bcher-kva.de"); backslashes
//     read as slashes; "." and ".." segments resolved; an empty path made "/"; bytes
//     outside printable ASCII percent-encoded with the standard's per-part sets. Input
//     without a scheme stays a relative reference.
//   - Safe (the default) is urlcanon's semantic canonicalizer: WHATWG, plus http for a
//     missing scheme ("example.com/a"), percent-encoding decoded to one form (every escape
//     decoded, repeatedly, then only the bytes that must be escaped are encoded again:
//     controls, space, non-ASCII, "%", "#" and "?" in the path, "&" and "=" in query names
//     and values), userinfo removed, leading, trailing and repeated dots of the host
//     removed, repeated slashes in the path collapsed, and query parameters sorted.
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
// Measured by TestEvalURLCanon on urlcanon's test data (../shared/eval/
// url-canonicalization-urlcanon; the share of inputs whose result is exactly the expected
// URL):
//
//	file                      profile                    cases  matching  share
//	semantic_precise.json     Safe, KeepFragment           280       280  100%
//	supplemental_whatwg.json  WHATWG, KeepFragment         118       118  100%
//	aggressive.json           Aggressive                    42        39  92.9%
//	path_dots.json            WHATWG (paths)               752       752  100%
//	funky_ipv4.json           WHATWG and Safe (hosts)       47        47  100%
//
// The three aggressive.json deviations are deliberate: urlcanon lower-cases the path and
// the query, which most servers treat as case-sensitive, and keeps index.html. They are
// listed with their reasons in testdata/deviations.txt, which the test checks exactly.
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
//     URL; it is a valid URL for http and https input, but it may be a relative reference
//     (WHATWG) or keep oddities that urlcanon keeps: "http://%20x.com/" is accepted, where
//     the standard would fail.
//   - Safe decodes every escape, even reserved ones such as %2F and %3D in the path and
//     %2561 (which becomes "a"), because browsers and most servers treat them alike; a
//     server that tells "/a%2Fb" from "/a/b" apart gets one key for both. Use WHATWG for
//     the strictest key.
//   - Sorting query parameters (Safe) merges URLs whose servers read parameters in order,
//     which is rare; Aggressive's lists drop parameters by name, whatever their value, so
//     a site whose "sid" is not a session id loses it.
//   - A host without a scheme is read as http only when it does not look like a scheme:
//     "localhost:8080/a" has the scheme "localhost", as browsers read it too. Give the
//     scheme.
//   - The port must be a number from 0 to 65535, and http, https, ws, wss, ftp and gopher
//     URLs need a host; other input is accepted as urlcanon accepts it, and Canonicalize
//     fails (ErrInvalid) only for those and for empty input.
//   - IDNA is UTS #46 non-transitional processing (x/net/idna's Lookup profile): "faß.de"
//     stays "xn--fa-hia.de", not "fass.de". A non-ASCII host that IDNA rejects is kept, in
//     lower case for its ASCII letters, and percent-encoded; so is a host that is not
//     UTF-8 ("a%FF.com"), whose bytes IDNA would all read as U+FFFD.
package urlnorm
