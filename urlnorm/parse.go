package urlnorm

import (
	"net/netip"
	"strconv"
	"strings"
)

// specialPorts are the WHATWG special schemes with their default ports ("" for file, which
// has none). gopher is kept, as urlcanon keeps it, though the standard has since dropped it.
var specialPorts = map[string]string{
	"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21", "gopher": "70", "file": "",
}

// url holds the parts of a URL as urlcanon's parser splits them: every delimiter that was
// present is remembered, so that serializing an unchanged url gives back its input.
type url struct {
	scheme  string // lower case; "" if there is none
	special bool   // scheme is a key of specialPorts
	slashes string // what separates "scheme:" from the authority: "", "/", "//", "\\\\", ...
	user    string
	pass    string
	colon   bool // ":" between user and pass
	at      bool // "@" after the userinfo
	host    string
	port    string
	hasPort bool // ":" before port
	path    string
	hasQ    bool // "?" before query
	query   string
	hasFrag bool // "#" before frag
	frag    string
}

// parse splits s, which has no tab, newline or carriage return and no leading or trailing
// space or C0 control, into u. A missing scheme becomes defaultScheme when that is not
// empty. Like urlcanon, parse accepts every input; the steps that follow reject what has
// no canonical form.
func (u *url) parse(s, defaultScheme string) {
	*u = url{}
	if i := schemeEnd(s); i > 0 {
		u.scheme, s = strings.ToLower(s[:i]), s[i+1:]
	} else {
		u.scheme = defaultScheme
	}
	_, u.special = specialPorts[u.scheme]
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		rest := s[i:]
		s = s[:i]
		if rest[0] == '?' {
			u.hasQ = true
			u.query, rest = rest[1:], ""
			if j := strings.IndexByte(u.query, '#'); j >= 0 {
				u.query, rest = u.query[:j], u.query[j:]
			}
		}
		if rest != "" {
			u.hasFrag, u.frag = true, rest[1:]
		}
	}
	// s is now what urlcanon calls "pathish": slashes, authority and path.
	isSlash := func(c byte) bool { return c == '/' || u.special && c == '\\' }
	switch {
	case u.scheme == "file":
		if len(s) >= 2 && isSlash(s[0]) && isSlash(s[1]) {
			u.slashes, s = s[:2], s[2:]
			i := 0
			for i < len(s) && !isSlash(s[i]) {
				i++
			}
			u.host, u.path = s[:i], s[i:]
			return
		}
	case u.special:
		i := 0
		for i < len(s) && isSlash(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isSlash(s[j]) {
			j++
		}
		u.slashes, u.path = s[:i], s[j:]
		u.authority(s[i:j])
		return
	case strings.HasPrefix(s, "//"):
		j := strings.IndexByte(s[2:], '/')
		if j < 0 {
			j = len(s) - 2
		}
		u.slashes, u.path = "//", s[2+j:]
		u.authority(s[2 : 2+j])
		return
	}
	u.path = s
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

// authority splits a into userinfo, host and port: the userinfo ends at the last "@", the
// user at its first ":"; the host is a bracketed IPv6 literal or runs to the first ":".
func (u *url) authority(a string) {
	if i := strings.LastIndexByte(a, '@'); i >= 0 {
		u.at = true
		u.user, a = a[:i], a[i+1:]
		if j := strings.IndexByte(u.user, ':'); j >= 0 {
			u.colon = true
			u.user, u.pass = u.user[:j], u.user[j+1:]
		}
	}
	end := strings.IndexByte(a, ':')
	if strings.HasPrefix(a, "[") {
		if j := strings.IndexByte(a, ']'); j >= 0 && (j+1 == len(a) || a[j+1] == ':') {
			end = j + 1
			if end == len(a) {
				end = -1
			}
		}
	}
	if end < 0 {
		u.host = a
		return
	}
	u.host, u.hasPort, u.port = a[:end], true, a[end+1:]
}

// String serializes u, writing each delimiter that u says is present.
func (u *url) String() string {
	var b strings.Builder
	b.Grow(len(u.scheme) + len(u.slashes) + len(u.user) + len(u.pass) + len(u.host) + len(u.port) +
		len(u.path) + len(u.query) + len(u.frag) + 8)
	if u.scheme != "" {
		b.WriteString(u.scheme)
		b.WriteByte(':')
	}
	b.WriteString(u.slashes)
	b.WriteString(u.user)
	if u.colon {
		b.WriteByte(':')
		b.WriteString(u.pass)
	}
	if u.at {
		b.WriteByte('@')
	}
	b.WriteString(u.host)
	if u.hasPort {
		b.WriteByte(':')
		b.WriteString(u.port)
	}
	if u.slashes == "" && strings.HasPrefix(u.path, "//") {
		// As the WHATWG serializer does: without "/." the path would read as an authority.
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

// The percent-encode sets. The WHATWG ones are those of the URL Standard as urlcanon
// implements it (its fragment set is only the C0 controls); the others are urlcanon's
// "less dumb" sets, which encode only what would otherwise change how the URL parses.
// hostDelims are added to both host sets so that a decoded host cannot re-parse as
// something else (encodeHost adds ":" and, for special URLs, the backslash).
const hostDelims = "/?#@"

var (
	c0Set       = newSet(false, "")
	pathSet     = newSet(true, "\"#<>?`{}")
	querySet    = newSet(true, "\"#<>")
	userinfoSet = newSet(true, "\"#<>?`{}/:;=@[\\]^|")
	hostSet     = newSet(true, hostDelims)

	semHostSet  = newSet(true, "%"+hostDelims)
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
