package urlnorm

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	werrors "github.com/nlnwa/whatwg-url/errors"
	whatwg "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/net/idna"
)

// specialSchemes are the WHATWG special schemes (https://url.spec.whatwg.org/#special-scheme)
// with their default ports; semanticSchemes adds gopher, as urlcanon does, though the
// standard has since dropped it.
var (
	specialSchemes  = map[string]string{"ftp": "21", "file": "", "http": "80", "https": "443", "ws": "80", "wss": "443"}
	semanticSchemes = map[string]string{"ftp": "21", "file": "", "http": "80", "https": "443", "ws": "80", "wss": "443", "gopher": "70"}
)

// The parsers of the WHATWG URL Standard, immutable and safe for concurrent use: standard
// for the WHATWG profile; semantic, with gopher special, for Safe and Aggressive; and
// semanticLax, which parses again for those an input whose host is not UTF-8 once
// percent-decoded. The standard rejects such a host; Safe and Aggressive keep its bytes
// (checkRawHost checks the rest of it), as urlcanon does.
var (
	standard    = whatwg.NewParser(whatwg.WithSpecialSchemes(specialSchemes))
	semantic    = whatwg.NewParser(whatwg.WithSpecialSchemes(semanticSchemes))
	semanticLax = whatwg.NewParser(whatwg.WithSpecialSchemes(semanticSchemes), whatwg.WithLaxHostParsing())
)

// idnaProfile is the IDNA profile of whatwg-url's host parser (UTS #46 with the
// standard's options for "domain to ASCII" with beStrict false), so that the fast path
// converts a host as the library does; TestFastParse and FuzzFastParse check it.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.VerifyDNSLength(false),
	idna.StrictDomainName(true),
	idna.ValidateLabels(true),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.Transitional(false),
)

// parse parses s, resolved against base if base is not nil, with the standard's parser,
// or with the semantic one if sem is set. The standard reads Unicode text; a byte of s
// that is not part of UTF-8 is read as its percent-escape ("\xff" as "%FF") rather than
// as U+FFFD, so that inputs that differ only there do not share a key. The error says,
// in lower case, what the standard found wrong.
func parse(s string, base *whatwg.Url, sem bool) (*whatwg.Url, error) {
	s = escapeInvalidUTF8(s)
	p := standard
	if sem {
		p = semantic
	}
	u, err := p.BasicParser(s, base, nil, whatwg.NoState)
	if err == nil {
		return u, nil
	}
	if sem && werrors.Type(err) == werrors.DomainToASCII && werrors.Description(err) == "not a valid UTF-8 string" {
		// What else is wrong, if anything, is said by the lax parse or by checkRawHost.
		if u, err = semanticLax.BasicParser(s, base, nil, whatwg.NoState); err == nil {
			if err = checkRawHost(u); err == nil {
				return u, nil
			}
		}
	}
	return nil, errors.New(describe(err))
}

// parseBase parses base, which must be an absolute URL, as the standard does; the error
// wraps ErrInvalid. (Only a fragment resolves against a URL with an opaque path such as
// "mailto:x"; the standard rejects other references to it.)
func parseBase(base string) (*whatwg.Url, error) {
	b, err := parse(base, nil, false)
	if err != nil {
		return nil, fmt.Errorf("%w: base URL %q: %s", ErrInvalid, base, err)
	}
	// The parser clones the base for every reference, and the clone makes the base's
	// search parameters the first time: made now, a shared base is only read.
	b.SearchParams()
	return b, nil
}

// describe returns the message of an error of the parser without the URL it repeats:
// the standard's description of the error, in lower case, and the character or cause.
func describe(err error) string {
	t := string(werrors.Type(err))
	if t == "" {
		return err.Error()
	}
	msg := strings.ToLower(t[:1]) + t[1:]
	if d := werrors.Description(err); d != "" {
		msg += ": " + strconv.Quote(d)
	}
	if c := errors.Unwrap(err); c != nil {
		msg += " (" + describe(c) + ")"
	}
	return msg
}

// checkRawHost checks the host of u, parsed by a lax parser because it is not UTF-8 once
// percent-decoded, as the standard checks a domain apart from IDNA: no forbidden domain
// code point (Canonicalize rejects one that ends in a number). It then writes it as this
// package keeps such a host: its bytes, with ASCII letters in lower case,
// percent-encoded.
func checkRawHost(u *whatwg.Url) error {
	// The lax parser percent-encoded the raw host without "%", so one decoding gives the
	// bytes the standard would have read.
	h := percentDecodeOnce(u.Hostname())
	for i := 0; i < len(h); i++ {
		if h[i] < 0x80 && whatwg.ForbiddenDomainCodePoint.Test(uint(h[i])) {
			return fmt.Errorf("the host contains a forbidden domain code point: %q", h[i:i+1])
		}
	}
	u.SetHostname(encode(lowerASCII(h), hostSet))
	return nil
}

// url holds the parts of a parsed URL that the Safe and Aggressive steps change, and
// serializes them as the standard does.
type url struct {
	scheme    string // lower case
	special   bool   // scheme is a special scheme
	authority bool   // the URL has a host, maybe empty, so "//" follows the scheme
	opaque    bool   // the path is opaque ("mailto:a"), not a list of segments
	user      string
	pass      string
	host      string
	port      string
	hasPort   bool // ":" before port
	path      string
	hasQ      bool // "?" before query
	query     string
	hasFrag   bool // "#" before frag
	frag      string
}

// fromWHATWG returns the parts of w. The standard's accessors do not tell an empty query or
// fragment from none, nor an empty host from none; its serialization does.
func fromWHATWG(w *whatwg.Url) url {
	u := url{
		scheme: w.Scheme(),
		user:   w.Username(),
		pass:   w.Password(),
		host:   w.Hostname(),
		port:   w.Port(),
		path:   w.Pathname(),
		opaque: w.OpaquePath(),
		query:  w.Query(),
		frag:   w.Fragment(),
	}
	u.special = w.IsSpecialScheme()
	u.hasPort = u.port != ""
	full, noFrag := w.Href(false), w.Href(true)
	u.hasFrag = len(full) > len(noFrag)
	u.hasQ = strings.HasSuffix(noFrag, "?") || u.query != ""
	u.authority = strings.HasPrefix(full[len(u.scheme)+1:], "//")
	return u
}

// String serializes u as the standard serializes a URL.
func (u *url) String() string {
	var b strings.Builder
	b.Grow(len(u.scheme) + len(u.user) + len(u.pass) + len(u.host) + len(u.port) +
		len(u.path) + len(u.query) + len(u.frag) + 10)
	b.WriteString(u.scheme)
	b.WriteByte(':')
	if u.authority {
		b.WriteString("//")
		if u.user != "" || u.pass != "" {
			b.WriteString(u.user)
			if u.pass != "" {
				b.WriteByte(':')
				b.WriteString(u.pass)
			}
			b.WriteByte('@')
		}
		b.WriteString(u.host)
		if u.hasPort {
			b.WriteByte(':')
			b.WriteString(u.port)
		}
	} else if !u.opaque && strings.HasPrefix(u.path, "//") {
		// Without "/." the path would read as an authority.
		b.WriteString("/.")
	}
	b.WriteString(u.path)
	if u.hasQ {
		b.WriteByte('?')
		b.WriteString(u.query)
	}
	if u.hasFrag {
		b.WriteByte('#')
		b.WriteString(u.frag)
	}
	return b.String()
}

// schemeEnd returns the index of the ":" that ends a scheme at the start of s
// (ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"), or -1.
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return i
		default:
			return -1
		}
	}
	return -1
}

// trimControls removes leading and trailing C0 controls and spaces, and every tab, newline
// and carriage return, as the WHATWG parser does first.
func trimControls(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	s = s[i:j]
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '\t' && c != '\n' && c != '\r' {
			b = append(b, c)
		}
	}
	return string(b)
}

// byteSet is a set of bytes: the bytes a step percent-encodes.
type byteSet [4]uint64

func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

// newSet returns the set of C0 controls, DEL and non-ASCII bytes, the space if space is
// set, and the bytes of extra.
func newSet(space bool, extra string) *byteSet {
	var s byteSet
	for c := 0; c < 256; c++ {
		if c < 0x20 || c >= 0x7f || space && c == ' ' || strings.IndexByte(extra, byte(c)) >= 0 {
			s[c>>6] |= 1 << (c & 63)
		}
	}
	return &s
}

// The percent-encode sets of the Safe and Aggressive steps, urlcanon's "less dumb" sets,
// which encode only what would otherwise change how the URL parses: in the host, the
// standard's forbidden host code points and "%", so that a decoded host parses again as
// itself; hostSet, for the bytes of a host that is not UTF-8, once the forbidden ones are
// rejected.
var (
	hostSet     = newSet(true, "")
	semHostSet  = newSet(true, "%/?#@:<>[\\]^|")
	semPathSet  = newSet(true, "#%?")
	semQuerySet = newSet(true, "#%&=")
	semFragSet  = newSet(true, "#%")
)

// encode returns s with the bytes of set percent-encoded with upper-case hex digits.
func encode(s string, set *byteSet) string {
	i := 0
	for i < len(s) && !set.has(s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		if c := s[i]; set.has(c) {
			b = append(b, '%', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

// escapeInvalidUTF8 returns s with each byte that is not part of valid UTF-8
// percent-encoded.
func escapeInvalidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, '%', hex[s[i]>>4], hex[s[i]&15])
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// percentDecodeOnce decodes each "%XX" escape of s once, as the standard's percent-decode
// does; a "%" without two hex digits after it stays.
func percentDecodeOnce(s string) string {
	if !hasEscape(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && unhex(s[i+1]) >= 0 && unhex(s[i+2]) >= 0 {
			b = append(b, byte(unhex(s[i+1])<<4|unhex(s[i+2])))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// unhex returns the value of the hex digit c, or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// decode percent-decodes s repeatedly until no "%XX" escape is left, as urlcanon does by
// decoding whole strings until they stop changing ("%2561" gives "a"). It does so in one
// pass, in time linear in len(s): a decoded byte may complete an escape only with the two
// bytes before it, so each byte is checked once as it is appended. A "%" without two hex
// digits after it stays as it is.
func decode(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 || !hasEscape(s[i:]) {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		b = append(b, s[i])
		for n := len(b); n >= 3 && b[n-3] == '%'; n = len(b) {
			hi, lo := unhex(b[n-2]), unhex(b[n-1])
			if hi < 0 || lo < 0 {
				break
			}
			b = append(b[:n-3], byte(hi<<4|lo))
		}
	}
	return string(b)
}

// hasEscape reports whether s contains a "%XX" escape.
func hasEscape(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0 && i+2 < len(s); {
		if unhex(s[i+1]) >= 0 && unhex(s[i+2]) >= 0 {
			return true
		}
		j := strings.IndexByte(s[i+1:], '%')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// lowerASCII returns s with ASCII letters in lower case.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// parseIPv4 parses host as the WHATWG and urlcanon IPv4 parsers do: one to four
// dot-separated numbers in decimal, octal (leading 0) or hex (0x), an optional trailing
// dot, the last number filling the remaining bytes. As in urlcanon, an empty number is 0,
// so "." and ".." are 0.0.0.0. ok is false when host is not such an address.
func parseIPv4(host string) (ip uint32, ok bool) {
	if host == "" || strings.Trim(host, "0123456789abcdefABCDEFxX.") != "" {
		return 0, false
	}
	host = strings.TrimSuffix(host, ".")
	var parts [4]uint64
	n := 0
	for part := range strings.SplitSeq(host, ".") {
		if n == 4 {
			return 0, false
		}
		v, ok := parseIPv4Number(part)
		if !ok {
			return 0, false
		}
		parts[n] = v
		n++
	}
	// The last number fills the bytes that the others leave; each of the others is a byte.
	last := parts[n-1]
	if last >= 1<<(8*(5-n)) {
		return 0, false
	}
	v := last
	for i := 0; i < n-1; i++ {
		if parts[i] > 255 {
			return 0, false
		}
		v += parts[i] << (8 * (3 - i))
	}
	return uint32(v), true
}

// endsInNumber reports whether the standard reads host as an IPv4 address, which it
// then must be: its last label, after one final dot, is all decimal digits or "0x" and
// hex digits.
func endsInNumber(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	return len(last) >= 2 && (last[:2] == "0x" || last[:2] == "0X") && strings.Trim(last[2:], "0123456789abcdefABCDEF") == ""
}

// parseIPv4Number parses one number of an IPv4 address; values above 2^32 fail.
func parseIPv4Number(s string) (uint64, bool) {
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true
	}
	v, err := strconv.ParseUint(s, base, 64)
	return v, err == nil && v <= 1<<32
}

// normalizeIP returns host written as the WHATWG standard writes IP addresses (dotted
// decimal, or compressed lower-case IPv6 in brackets), or host itself if it is not one.
func normalizeIP(host string) string {
	if v, ok := parseIPv4(host); ok {
		return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
	}
	if len(host) < 2 || host[0] != '[' || host[len(host)-1] != ']' {
		return host
	}
	a, err := netip.ParseAddr(host[1 : len(host)-1])
	if err != nil || !a.Is6() || a.Zone() != "" {
		return host
	}
	if a.Is4In6() {
		// netip writes ::ffff:1.2.3.4; the standard writes every IPv6 address in hex.
		b := a.As16()
		return "[::ffff:" + strconv.FormatUint(uint64(b[12])<<8|uint64(b[13]), 16) + ":" +
			strconv.FormatUint(uint64(b[14])<<8|uint64(b[15]), 16) + "]"
	}
	return "[" + a.String() + "]"
}
