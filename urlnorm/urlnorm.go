package urlnorm

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/net/idna"
)

// Options configures a Canonicalizer. The zero value is the Safe profile with the
// fragment removed.
//
// The three lists matter only to the Aggressive profile. A nil list means the default
// one, given with each field; a non-nil empty list means none. Entries match without
// regard to ASCII case, and an entry ending in "*" matches every name that starts with
// what comes before the "*".
type Options struct {
	// Profile selects the steps; the zero value is Safe.
	Profile Profile

	// KeepFragment keeps the fragment ("#..."). By default it is removed: it never reaches
	// the server, so URLs that differ only there fetch the same document.
	KeepFragment bool

	// TrackingParams are the query parameters that Aggressive drops because they say where
	// a visitor came from, not what to show. Default: utm_*, gclid, gclsrc, dclid, gbraid,
	// wbraid, fbclid, msclkid, yclid, twclid, igshid, mc_cid, mc_eid, _ga, _gl, _hsenc,
	// _hsmi, mkt_tok.
	TrackingParams []string

	// SessionParams are the query parameters, and the ";name=value" path parameters, that
	// Aggressive drops because they carry a session id. Default: jsessionid, phpsessid,
	// sid, sessionid, aspsessionid*, cfid, cftoken.
	SessionParams []string

	// Base is the URL that relative references ("../a", "/a", "?q", "#f") are resolved
	// against, as a browser resolves the links of the page at Base; "" means none, and
	// then a relative reference is an error. CanonicalizeRef takes a base per call.
	Base string

	// IndexPages are the last path segments that Aggressive removes because servers map the
	// directory to them. Default: index.html, index.htm, index.shtml, index.php, index.asp,
	// index.aspx, index.jsp, index.cgi, default.htm, default.html, default.asp,
	// default.aspx.
	IndexPages []string
}

var (
	defaultTrackingParams = []string{"utm_*", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid",
		"msclkid", "yclid", "twclid", "igshid", "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok"}
	defaultSessionParams = []string{"jsessionid", "phpsessid", "sid", "sessionid", "aspsessionid*", "cfid", "cftoken"}
	defaultIndexPages    = []string{"index.html", "index.htm", "index.shtml", "index.php", "index.asp",
		"index.aspx", "index.jsp", "index.cgi", "default.htm", "default.html", "default.asp", "default.aspx"}
)

// Canonicalizer canonicalizes URLs with fixed Options. It is immutable once made by New and
// safe for concurrent use. Make one with New; a zero Canonicalizer canonicalizes as
// New(Options{}) does, but its Options method reports nil lists.
type Canonicalizer struct {
	opts               Options
	tracking, sessions names
	index              names
	base               *whatwg.Url // Options.Base parsed; nil for none
}

// New returns a Canonicalizer for o. It copies o's lists, so the caller may change them
// afterwards. It fails with an error wrapping ErrOptions for an undeclared Profile or a
// list entry that is empty, holds "&", "=", ";", "/" or a space, or has a "*" before its
// end, and for a Base that is not an absolute URL.
func New(o Options) (*Canonicalizer, error) {
	if !o.Profile.valid() {
		return nil, fmt.Errorf("%w: undeclared %v; use Safe, Aggressive or WHATWG", ErrOptions, o.Profile)
	}
	c := &Canonicalizer{opts: o}
	if o.Base != "" {
		b, err := parseBase(o.Base)
		if err != nil {
			return nil, fmt.Errorf("%w: Base: %w", ErrOptions, err)
		}
		c.base = b
	}
	for _, l := range []struct {
		field string
		list  *[]string
		def   []string
		set   *names
	}{
		{"TrackingParams", &c.opts.TrackingParams, defaultTrackingParams, &c.tracking},
		{"SessionParams", &c.opts.SessionParams, defaultSessionParams, &c.sessions},
		{"IndexPages", &c.opts.IndexPages, defaultIndexPages, &c.index},
	} {
		if *l.list == nil {
			*l.list = l.def
		}
		*l.list = slices.Clone(*l.list)
		for _, e := range *l.list {
			if e == "" || strings.ContainsAny(e, "&=;/ ") || strings.Contains(strings.TrimSuffix(e, "*"), "*") {
				return nil, fmt.Errorf("%w: %s entry %q: give a name without &, =, ;, / or spaces, with at most a final *", ErrOptions, l.field, e)
			}
			l.set.add(e)
		}
	}
	return c, nil
}

// Options returns the options of c with the default lists filled in. The slices are
// copies that the caller may change, for instance to extend a default list for another
// New.
func (c *Canonicalizer) Options() Options {
	o := c.opts
	o.TrackingParams = slices.Clone(o.TrackingParams)
	o.SessionParams = slices.Clone(o.SessionParams)
	o.IndexPages = slices.Clone(o.IndexPages)
	return o
}

// Canonicalize returns the canonical form of raw under profile p with the default options
// (the fragment removed; see Options). It is New(Options{Profile: p}) followed by the
// method; keep a Canonicalizer to canonicalize many URLs. An undeclared p gives an error
// wrapping ErrOptions.
func Canonicalize(raw string, p Profile) (string, error) {
	c, err := New(Options{Profile: p})
	if err != nil {
		return "", err
	}
	return c.Canonicalize(raw)
}

// Canonicalize returns the canonical form of raw, an absolute URL, a reference that
// Options.Base resolves, or, except under WHATWG and when there is no base, a host and
// path without a scheme ("example.com/a" is read as "http://example.com/a"). raw is
// parsed as the WHATWG URL Standard says (by github.com/nlnwa/whatwg-url, or by a fast
// path that gives the same result for plain http and https URLs), so what the standard
// rejects is rejected here. Any bytes are accepted, valid UTF-8 or not, and the result is printable
// ASCII (with spaces only where WHATWG keeps them, in opaque paths such as "mailto:a b"
// and in fragments). Canonicalizing a result again returns it unchanged.
//
// It fails, with an error wrapping ErrInvalid that quotes raw and says what is wrong, for
// input that is empty once spaces and control characters are trimmed, input the standard
// rejects (a forbidden host code point, a malformed IP address, a port that is not a
// number from 0 to 65535, a special URL without a host, ...), and a relative reference
// without a base. It is safe for concurrent use. It costs one parse (the fast path's, or
// the library's, which costs some 15 times more and about 80 allocations), one pass over
// the parts per step, a few allocations, and an IDNA conversion for a host with
// non-ASCII characters.
func (c *Canonicalizer) Canonicalize(raw string) (string, error) {
	return c.canonicalize(raw, c.base)
}

// CanonicalizeRef is Canonicalize with base, an absolute URL, in place of Options.Base:
// ref, typically a link of the page at base, is resolved against base first. An empty
// base means no base. It fails as Canonicalize does, and with an error wrapping
// ErrInvalid that names base when base is not an absolute URL. It is safe for concurrent
// use and costs one more parse, of base.
func (c *Canonicalizer) CanonicalizeRef(ref, base string) (string, error) {
	var b *whatwg.Url
	if base != "" {
		var err error
		if b, err = parseBase(base); err != nil {
			return "", err
		}
	}
	return c.canonicalize(ref, b)
}

// canonicalize is Canonicalize with base, nil for none.
func (c *Canonicalizer) canonicalize(raw string, base *whatwg.Url) (string, error) {
	s := trimControls(raw)
	if s == "" && base == nil {
		return "", invalid(raw, "nothing but spaces and control characters")
	}
	if base == nil && schemeEnd(s) < 0 {
		if c.opts.Profile == WHATWG || !looksLikeHost(s) {
			return "", invalid(raw, "a relative reference and no base URL; give an absolute URL (with a scheme, as in http://example.com/) or a base URL")
		}
		s = "http://" + s
	}
	u, ok := fastParse(s)
	if !ok {
		w, err := parse(s, base, c.opts.Profile != WHATWG)
		if err != nil {
			return "", invalid(raw, err.Error())
		}
		u = fromWHATWG(w)
	}
	if c.opts.Profile != WHATWG {
		scheme := u.scheme // before Aggressive makes https http
		c.semantic(&u)
		if u.special && u.scheme != "file" && u.host == "" {
			return "", invalid(raw, "no host left once its dots are removed; "+scheme+" URLs need one, as in "+scheme+"://example.com/")
		}
		if u.special && endsInNumber(u.host) {
			if a, err := netip.ParseAddr(u.host); err != nil || !a.Is4() {
				return "", invalid(raw, fmt.Sprintf("the host becomes %q, which ends in a number but is not an IPv4 address; the standard rejects such hosts", u.host))
			}
		}
	}
	if !c.opts.KeepFragment && u.hasFrag {
		u.hasFrag, u.frag = false, ""
		if u.opaque && !u.hasQ {
			// An opaque path keeps its spaces, but not at the very end, where the next
			// parse would trim them: the standard strips them too when the fragment goes.
			u.path = strings.TrimRight(u.path, " ")
		}
	}
	return u.String(), nil
}

// looksLikeHost reports whether s, which has no scheme, starts with what Safe and
// Aggressive read as a host: after any slashes, a letter, digit or non-ASCII byte, and a
// dot before the path ("example.com/a", "//example.com"). Anything else ("a", "../a",
// "/a", "?q") is a relative reference, which needs a base.
func looksLikeHost(s string) bool {
	s = strings.TrimLeft(s, "/\\")
	if s == "" {
		return false
	}
	if c := s[0]; !('a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c >= 0x80) {
		return false
	}
	if i := strings.IndexAny(s, "/\\?#"); i >= 0 {
		s = s[:i]
	}
	return strings.Contains(s, ".")
}

// invalid returns the ErrInvalid error for raw, quoted and shortened to 80 bytes.
func invalid(raw, why string) error {
	q := strconv.Quote(raw)
	if len(raw) > 80 {
		q = strconv.Quote(raw[:80]) + "..."
	}
	return fmt.Errorf("%w %s: %s", ErrInvalid, q, why)
}

// hasAuthority reports whether u has any of userinfo, host and port.
func (u *url) hasAuthority() bool {
	return u.user != "" || u.pass != "" || u.host != "" || u.hasPort
}

// semantic applies the steps of the Safe and Aggressive profiles after the common ones:
// urlcanon's semantic_precise order, with the Aggressive steps where they must come to
// keep the result stable.
func (c *Canonicalizer) semantic(u *url) {
	aggressive := c.opts.Profile == Aggressive
	// IP addresses first, as urlcanon does ("..." is 0.0.0.0), and again at the end, as
	// the standard does, after the steps that can leave one ("....0" and "0\u034f" are 0).
	h := fixHostDots(normalizeIP(decode(u.host)))
	if u.special {
		h = fixHostDots(toASCII(h))
	}
	u.host = normalizeIP(h)
	u.user, u.pass = "", ""
	u.encodeHost()
	if aggressive {
		if u.scheme == "https" {
			u.scheme = "http"
			if u.port == "80" {
				u.hasPort, u.port = false, ""
			}
		}
		if u.special {
			u.host = stripWWW(u.host)
		}
	}

	u.path = encode(decode(u.path), semPathSet)
	switch {
	case u.opaque && strings.HasPrefix(u.path, "/"):
		// Decoded from "%2F", a leading slash would make the opaque path ("mailto:%2Fx")
		// a hierarchical one when parsed again.
		u.path = "%2F" + u.path[1:]
	case u.scheme == "file":
		// Decoded from "%7C", "C|" would read as the drive letter "C:" when parsed again.
		u.path = strings.ReplaceAll(u.path, "|", "%7C")
	}
	u.fixBackslashes()
	u.leadingSlash()
	if aggressive && u.special {
		u.path = dropASPNETSession(c.dropPathParams(u.path))
	}
	u.path = resolveDots(u.path)
	if u.special && strings.Contains(u.path, "//") {
		u.path = collapseSlashes(u.path)
	}
	u.emptyPathToSlash()
	if aggressive && u.special {
		u.path = c.dropIndexPage(u.path)
	}

	u.query = c.recodeQuery(u.query, aggressive)
	if aggressive && u.query == "" {
		u.hasQ = false
	}
	u.frag = encode(decode(u.frag), semFragSet)
}

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
