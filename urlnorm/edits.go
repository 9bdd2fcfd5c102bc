package urlnorm

import (
	"bytes"
	"net/netip"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// The edits of the semantic profiles, one function a rule; semantic (urlnorm.go) applies
// them in order.

// encodeHost percent-encodes the bytes of semHostSet in the host, unless it is an IPv6
// literal, so that no byte of a decoded host can end it early or make the standard
// reject it when parsed again.
func (u *url) encodeHost() {
	if h := u.host; len(h) > 2 && h[0] == '[' && h[len(h)-1] == ']' {
		if a, err := netip.ParseAddr(h[1 : len(h)-1]); err == nil && a.Is6() && a.Zone() == "" {
			return
		}
	}
	u.host = encode(u.host, semHostSet)
}

// toASCII returns a special URL's host as the WHATWG "domain to ASCII" does: lower case
// ASCII, and IDNA (UTS #46 mapping, Punycode) for a host with non-ASCII characters. A host
// that IDNA rejects keeps its characters, with ASCII letters in lower case. So does a host
// that is not UTF-8: IDNA would read each bad byte as U+FFFD without an error, and give
// hosts that differ only in those bytes one key.
func toASCII(host string) string {
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			if !utf8.ValidString(host) {
				break
			}
			if a, err := idna.Lookup.ToASCII(host); err == nil {
				return a
			}
			break
		}
	}
	return lowerASCII(host)
}

// fixHostDots removes leading and trailing dots and collapses runs of dots, as Google's
// Safe Browsing canonicalization does.
func fixHostDots(host string) string {
	host = strings.Trim(host, ".")
	for strings.Contains(host, "..") {
		host = strings.ReplaceAll(host, "..", ".")
	}
	return host
}

// stripWWW removes "www." and "wwwN." prefixes as long as a dot stays in the host and
// what stays is not an IPv4 address.
func stripWWW(host string) string {
	for strings.HasPrefix(host, "www") {
		i := 3
		for i < len(host) && '0' <= host[i] && host[i] <= '9' {
			i++
		}
		if i == len(host) || host[i] != '.' || !strings.Contains(host[i+1:], ".") {
			break
		}
		if _, ip := parseIPv4(host[i+1:]); ip {
			break // "www0.0.0" is a name, not the address 0.0.0.0
		}
		host = host[i+1:]
	}
	return host
}

// fixBackslashes turns backslashes in a special URL's path into slashes.
func (u *url) fixBackslashes() {
	if u.special && strings.Contains(u.path, "\\") {
		u.path = strings.ReplaceAll(u.path, "\\", "/")
	}
}

// leadingSlash starts a special URL's path with "/".
func (u *url) leadingSlash() {
	if u.special && !strings.HasPrefix(u.path, "/") {
		u.path = "/" + u.path
	}
}

// emptyPathToSlash makes the empty path of a special URL with an authority "/".
func (u *url) emptyPathToSlash() {
	if u.path == "" && u.special && u.hasAuthority() {
		u.path = "/"
	}
}

// isDots reports whether seg is "." or "..", either dot possibly written %2e or %2E, and
// which.
func isDots(seg string) (dot, dotdot bool) {
	n := 0
	for seg != "" {
		switch {
		case seg[0] == '.':
			seg = seg[1:]
		case len(seg) >= 3 && seg[0] == '%' && seg[1] == '2' && (seg[2] == 'e' || seg[2] == 'E'):
			seg = seg[3:]
		default:
			return false, false
		}
		n++
	}
	return n == 1, n == 2
}

// resolveDots removes the "." and ".." segments of a path that starts with "/", as
// urlcanon and the WHATWG parser do: "/a/./b/../c" is "/a/c", "/a/.." is "/a/", "/.." is
// "/" and "//.." is "/".
func resolveDots(path string) string {
	if !strings.HasPrefix(path, "/") || !strings.Contains(path, ".") && !strings.Contains(path, "%2") {
		return path
	}
	out := make([]byte, 0, len(path))
	skip := false // the "/" after a dot segment is not written
	for rest := path[1:]; ; {
		seg, tail, more := strings.Cut(rest, "/")
		if !skip {
			out = append(out, '/')
		}
		dot, dotdot := isDots(seg)
		skip = dot || dotdot
		switch {
		case dotdot:
			// Remove the "/" before ".." and the segment before that, unless only the
			// first "/" is left.
			if len(out) > 1 {
				out = out[:len(out)-1]
				out = out[:bytes.LastIndexByte(out, '/')+1]
			}
		case !dot:
			out = append(out, seg...)
		}
		if !more {
			return string(out)
		}
		rest = tail
	}
}

// collapseSlashes replaces runs of slashes in path by one.
func collapseSlashes(path string) string {
	b := make([]byte, 0, len(path))
	for i := 0; i < len(path); i++ {
		if path[i] != '/' || len(b) == 0 || b[len(b)-1] != '/' {
			b = append(b, path[i])
		}
	}
	return string(b)
}

// recodeQuery decodes and re-encodes each name and value of query, drops the tracking and
// session parameters and the empty ones when aggressive is set, and sorts the parameters.
func (c *Canonicalizer) recodeQuery(query string, aggressive bool) string {
	if query == "" {
		return query
	}
	params := strings.Split(query, "&")
	kept := params[:0]
	for _, p := range params {
		name, value, eq := strings.Cut(p, "=")
		name = encode(decode(name), semQuerySet)
		if aggressive && (p == "" || c.tracking.has(name) || c.sessions.has(name)) {
			continue
		}
		if eq {
			p = name + "=" + encode(decode(value), semQuerySet)
		} else {
			p = name
		}
		kept = append(kept, p)
	}
	slices.Sort(kept)
	return strings.Join(kept, "&")
}

// dropPathParams removes ";name=value" path parameters whose name is a session parameter:
// "/a;jsessionid=1/b" becomes "/a/b".
func (c *Canonicalizer) dropPathParams(path string) string {
	if !strings.Contains(path, ";") {
		return path
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(path, ';')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		b.WriteString(path[:i])
		end := strings.IndexAny(path[i+1:], ";/")
		if end < 0 {
			end = len(path)
		} else {
			end += i + 1
		}
		if name, _, _ := strings.Cut(path[i+1:end], "="); !c.sessions.has(name) {
			b.WriteString(path[i:end])
		}
		path = path[end:]
	}
}

// dropASPNETSession removes the path segments in which ASP.NET keeps a cookieless
// session: "(S(id))", "(A(id)S(id)F(id))" and the older "(id)", where each id has at least
// 24 letters and digits.
func dropASPNETSession(path string) string {
	if !strings.Contains(path, "/(") {
		return path
	}
	var b strings.Builder
	for rest := path; rest != ""; {
		i := strings.Index(rest, "/(")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		seg, _, _ := strings.Cut(rest[1:], "/")
		if isASPNETSession(seg) {
			rest = rest[1+len(seg):]
			continue
		}
		b.WriteByte('/')
		rest = rest[1:]
	}
	return b.String()
}

// isASPNETSession reports whether seg is "(id)" or "(" followed by one or more "X(id)"
// and ")", where X is a letter and id has at least 24 letters and digits.
func isASPNETSession(seg string) bool {
	inner, ok := strings.CutPrefix(seg, "(")
	if ok {
		inner, ok = strings.CutSuffix(inner, ")")
	}
	if !ok || inner == "" {
		return false
	}
	if isSessionID(inner) {
		return true
	}
	for inner != "" {
		c := inner[0] | 0x20
		id, rest, ok := strings.Cut(inner[1:], ")")
		if c < 'a' || c > 'z' || !ok || !strings.HasPrefix(id, "(") || !isSessionID(id[1:]) {
			return false
		}
		inner = rest
	}
	return true
}

// isSessionID reports whether s has at least 24 bytes, all ASCII letters and digits.
func isSessionID(s string) bool {
	if len(s) < 24 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; !('a' <= c && c <= 'z' || '0' <= s[i] && s[i] <= '9') {
			return false
		}
	}
	return true
}

// dropIndexPage removes a trailing slash (but not the path "/") and a last segment that
// is an index page, until neither is left: "/a/index.html" and "/a/" become "/a".
func (c *Canonicalizer) dropIndexPage(path string) string {
	for {
		if len(path) > 1 && strings.HasSuffix(path, "/") {
			if path = strings.TrimRight(path, "/"); path == "" {
				path = "/"
			}
		}
		i := strings.LastIndexByte(path, '/')
		if i < 0 || !c.index.has(path[i+1:]) {
			return path
		}
		path = path[:i+1]
	}
}

// names is a set of names matched without regard to ASCII case, with prefixes for the
// entries that end in "*".
type names struct {
	exact    map[string]bool
	prefixes []string
}

func (n *names) add(e string) {
	e = lowerASCII(e)
	if p, ok := strings.CutSuffix(e, "*"); ok {
		n.prefixes = append(n.prefixes, p)
		return
	}
	if n.exact == nil {
		n.exact = make(map[string]bool)
	}
	n.exact[e] = true
}

// has reports whether name is in n.
func (n *names) has(name string) bool {
	var buf [64]byte
	lower := buf[:0]
	for i := range len(name) {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	if n.exact[string(lower)] {
		return true
	}
	for _, p := range n.prefixes {
		if len(lower) >= len(p) && string(lower[:len(p)]) == p {
			return true
		}
	}
	return false
}
