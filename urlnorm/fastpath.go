package urlnorm

import (
	"strings"
	"unicode/utf8"
)

// fastParse parses the common crawled URL without the standard's parser, which costs
// several times more: an absolute http or https URL whose host is a plain domain name,
// maybe internationalized, and whose path, query and fragment are printable ASCII that
// needs no percent-encoding. For such input the standard's result is the input with the
// scheme in lower case, the host in lower case or through IDNA,
// a default or empty port removed, leading zeros of the port removed, "." and ".."
// segments resolved and an empty path made "/". ok is false for anything else, and the
// caller parses with the standard's parser; FuzzFastParse checks that both agree.
func fastParse(s string) (u url, ok bool) {
	var rest string
	switch {
	case len(s) > 7 && strings.EqualFold(s[:7], "http://"):
		u.scheme, rest = "http", s[7:]
	case len(s) > 8 && strings.EqualFold(s[:8], "https://"):
		u.scheme, rest = "https", s[8:]
	default:
		return u, false
	}
	u.special, u.authority = true, true
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host, port, hasPort := strings.Cut(rest[:end], ":")
	if u.host, ok = fastHost(host); !ok {
		return u, false
	}
	if hasPort {
		p, ok := fastPort(port)
		if !ok {
			return u, false
		}
		if p != "" && p != semanticSchemes[u.scheme] {
			u.port, u.hasPort = p, true
		}
	}
	rest = rest[end:]
	pathEnd := strings.IndexAny(rest, "?#")
	if pathEnd < 0 {
		pathEnd = len(rest)
	}
	u.path = rest[:pathEnd]
	if u.path == "" {
		u.path = "/"
	} else if !fastChars(u.path, pathOK) {
		return u, false
	}
	u.path = resolveDots(u.path)
	rest = rest[pathEnd:]
	if strings.HasPrefix(rest, "?") {
		q, _, _ := strings.Cut(rest[1:], "#")
		if !fastChars(q, queryOK) {
			return u, false
		}
		u.hasQ, u.query = true, q
		rest = rest[1+len(q):]
	}
	if strings.HasPrefix(rest, "#") {
		if !fastChars(rest[1:], queryOK) {
			return u, false
		}
		u.hasFrag, u.frag = true, rest[1:]
	}
	return u, true
}

// fastHost returns host as the standard's host parser gives it, if host is a domain name
// that it takes without percent-decoding and that is not an IP address: labels of ASCII
// letters, digits and inner hyphens, no empty label but a final one, and a last label
// that starts with a letter. Non-ASCII labels go through IDNA as the library's do
// (idnaProfile) and must give such labels; an ASCII Punycode ("xn--") label, which IDNA
// would check, is left to the library.
func fastHost(host string) (string, bool) {
	idn := false
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			idn = true
			break
		}
	}
	if idn {
		for i := 0; i < len(host); i++ {
			if c := host[i]; c < 0x80 && !('a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
				return "", false
			}
		}
		if !utf8.ValidString(host) {
			return "", false
		}
		a, err := idnaProfile.ToASCII(host)
		if err != nil {
			return "", false
		}
		host = a
	}
	labels := strings.TrimSuffix(host, ".")
	if labels == "" {
		return "", false
	}
	last := ""
	for label := range strings.SplitSeq(labels, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' ||
			!idn && len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
			return "", false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i] | 0x20; !('a' <= c && c <= 'z' || '0' <= label[i] && label[i] <= '9' || label[i] == '-') {
				return "", false
			}
		}
		last = label
	}
	if c := last[0] | 0x20; c < 'a' || c > 'z' {
		return "", false
	}
	return lowerASCII(host), true
}

// fastPort returns port without leading zeros ("" for an empty port), or ok false for a
// port that is not a number from 0 to 65535.
func fastPort(port string) (string, bool) {
	if port == "" {
		return "", true
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return "", false
		}
	}
	p := strings.TrimLeft(port, "0")
	if p == "" {
		p = "0"
	}
	if len(p) > 5 || len(p) == 5 && p > "65535" {
		return "", false
	}
	return p, true
}

// The bytes that the standard keeps as they are in the path, and in the query and the
// fragment, of a special URL: printable ASCII but for those that its percent-encode sets
// hold, the backslash (a slash in a special URL) and, conservatively, the bytes that some
// sets hold and others do not ("'", "`", "{", "}", "^", "|", "[", "]"), and "#" after the
// fragment starts.
var pathOK, queryOK = newOKSet(""), newOKSet("?")

// newOKSet returns the set of ASCII letters, digits and "-._~!$&()*+,;=:@/%", with the
// bytes of extra.
func newOKSet(extra string) *byteSet {
	var s byteSet
	for _, c := range []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&()*+,;=:@/%" + extra) {
		s[c>>6] |= 1 << (c & 63)
	}
	return &s
}

// fastChars reports whether every byte of s is in ok.
func fastChars(s string, ok *byteSet) bool {
	for i := 0; i < len(s); i++ {
		if !ok.has(s[i]) {
			return false
		}
	}
	return true
}
