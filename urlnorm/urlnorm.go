package urlnorm

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"
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
