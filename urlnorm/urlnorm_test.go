package urlnorm

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestCanonicalize(t *testing.T) {
	for _, tc := range []struct {
		profile Profile
		in      string
		want    string
	}{
		// Scheme, host and port.
		{Safe, "HTTP://Example.COM:80", "http://example.com/"},
		{Safe, "https://example.com:0443/a", "https://example.com/a"},
		{Safe, "http://example.com:8080/", "http://example.com:8080/"},
		{Safe, "http://example.com:/a", "http://example.com/a"},
		{Safe, "example.com/a b", "http://example.com/a%20b"},
		{Safe, "//example.com/a", "http://example.com/a"},
		{Safe, "http://example.com./", "http://example.com/"},
		{Safe, "http://user:pw@example.com/", "http://example.com/"},
		{Safe, "http://bücher.de/", "http://xn--bcher-kva.de/"},
		{Safe, "http://B%C3%BCcher.DE/", "http://xn--bcher-kva.de/"},
		{Safe, "http://0x7f.1/", "http://127.0.0.1/"},
		{Safe, "http://[0:0::1]:80/", "http://[::1]/"},
		{Safe, "http://[::ffff:1.2.3.4]/", "http://[::ffff:102:304]/"},
		// Bytes that are not UTF-8 stay themselves, escaped: they are not read as U+FFFD,
		// which would give every such host one key.
		{Safe, "http://a\xff.com/", "http://a%FF.com/"},
		{Safe, "http://a\xfe.com/", "http://a%FE.com/"},
		{Safe, "http://a%FF.com/", "http://a%FF.com/"},
		{Safe, "http://bücher\xff.de/", "http://b%C3%BCcher%FF.de/"},
		{Safe, "mailto:Joe@Example.COM", "mailto:Joe@Example.COM"},
		{Safe, "mailto:%2F%2Fx", "mailto:%2F/x"},
		{Safe, "file:///C%7C/a", "file:///C%7C/a"},
		// Path and query.
		{Safe, "http://example.com/a/./b/../c//d", "http://example.com/a/c/d"},
		{Safe, "http://example.com/%7Euser/%41", "http://example.com/~user/A"},
		{Safe, "http://example.com/a%3Fb%23c", "http://example.com/a%3Fb%23c"},
		{Safe, "http://example.com/?b=2&a=1&a=0", "http://example.com/?a=0&a=1&b=2"},
		{Safe, "http://example.com/?q=a%26b&r=%3d", "http://example.com/?q=a%26b&r=%3D"},
		{Safe, "http://example.com/a?", "http://example.com/a?"},
		{Safe, "http://example.com/a#top", "http://example.com/a"},
		// Aggressive.
		{Aggressive, "https://www.example.com/a/", "http://example.com/a"},
		{Aggressive, "https://www3.example.com:443/", "http://example.com/"},
		{Aggressive, "https://example.com:80/", "http://example.com/"},
		{Aggressive, "http://www.com/", "http://www.com/"},
		{Aggressive, "http://www.www.example.com/", "http://example.com/"},
		{Aggressive, "http://example.com/?utm_source=x&UTM_Medium=y&id=3&gclid=z&fbclid=w", "http://example.com/?id=3"},
		{Aggressive, "http://example.com/?utm_source=x", "http://example.com/"},
		{Aggressive, "http://example.com/a;jsessionid=0123/b;v=1?PHPSESSID=x&p=2", "http://example.com/a/b;v=1?p=2"},
		{Aggressive, "http://example.com/dir/index.html", "http://example.com/dir"},
		{Aggressive, "http://example.com/index.php/", "http://example.com/"},
		{Aggressive, "http://example.com/Index.HTML?x=1", "http://example.com/?x=1"},
		{Aggressive, "http://example.com/(S(abcdefghijklmnopqrstuvwx))/a.aspx", "http://example.com/a.aspx"},
		{Aggressive, "http://example.com/(x)/a", "http://example.com/(x)/a"},
		{Aggressive, "http://example.com/Path/?B=1&a=2", "http://example.com/Path?B=1&a=2"},
		{Aggressive, "mailto:a/", "mailto:a/"},
		// WHATWG: no decoding, no sorting, userinfo kept.
		{WHATWG, "HTTP://u:p@Example.com:80/%7e/a/../b?b=1&a=%41#f g", "http://u:p@example.com/%7e/b?b=1&a=%41"},
		{WHATWG, "http://example.com/a b<>", "http://example.com/a%20b%3C%3E"},
	} {
		got, err := Canonicalize(tc.in, tc.profile)
		if err != nil || got != tc.want {
			t.Errorf("Canonicalize(%q, %v) = %q, %v; want %q", tc.in, tc.profile, got, err, tc.want)
		}
	}
}

func TestCanonicalizeErrors(t *testing.T) {
	for _, tc := range []struct {
		in, msg string
	}{
		{"", `urlnorm: invalid URL "": nothing but spaces and control characters`},
		{" \t\x00", `urlnorm: invalid URL " \t\x00": nothing but spaces and control characters`},
		{"http://example.com:x/", `urlnorm: invalid URL "http://example.com:x/": the input's port is not a number`},
		{"http://example.com:65536/", `the input's port is outside the range [0-65535]`},
		{"http://example.com:-1/", `port is not a number`},
		{"http://?a", `urlnorm: invalid URL "http://?a": the input has a special scheme, but does not contain a host`},
		{"http:", `does not contain a host`},
		{"https://user@/", `the input includes credentials`},
		{"http://" + strings.Repeat("a", 100) + ":2x/", `"http://` + strings.Repeat("a", 73) + `"...: the input's port is not a number`},
		// What the standard rejects and the old parser of this package accepted.
		{"http://example example.com", `the host contains a forbidden domain code point: " "`},
		{"http://a%25b.com/", `forbidden domain code point: "%"`},
		{"http://a%00b.com/", `forbidden domain code point`},
		{"http://[]", `IPv6`},
		{"http://[::1.2.3.]", `IPv4 address is found in an IPv6 address`},
		{"http://[1::2::3]", `multiple instances of '::'`},
		{"http://256.256.256.256", `greater than 255`},
		{"http://4294967296", `greater than 255`},
		{"sc://a b/", `opaque host`},
		{"http://a%2Fb.com/", `forbidden domain code point: "/"`},
		{"http://a%3A1/", `forbidden domain code point: ":"`},
		// Relative references without a base.
		{"?q", `a relative reference and no base URL`},
		{"i", `a relative reference and no base URL`},
		{"../i", `a relative reference and no base URL`},
		{"#", `a relative reference and no base URL`},
		{"/a/b", `a relative reference and no base URL`},
	} {
		for _, p := range []Profile{Safe, Aggressive, WHATWG} {
			_, err := Canonicalize(tc.in, p)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Canonicalize(%q, %v): error %v, want ErrInvalid with %q", tc.in, p, err, tc.msg)
			}
		}
	}
}

// TestSemanticHostErrors checks hosts that the standard takes and that Safe and
// Aggressive would turn into hosts it rejects: by removing dots, or, for a host that is
// not UTF-8, which Safe keeps, because it ends in a number.
func TestSemanticHostErrors(t *testing.T) {
	for in, msg := range map[string]string{
		"http://00000008../":   `the host becomes "00000008", which ends in a number but is not an IPv4 address`,
		"http://.0x1g.0xff../": `the host becomes "0x1g.0xff"`,
	} {
		if got, err := Canonicalize(in, WHATWG); err != nil {
			t.Errorf("WHATWG: %q: %v; the standard takes it", in, err)
		} else if _, err := Canonicalize(got, WHATWG); err != nil {
			t.Errorf("WHATWG: %q gives %q, which fails: %v", in, got, err)
		}
		for _, p := range []Profile{Safe, Aggressive} {
			if _, err := Canonicalize(in, p); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), msg) {
				t.Errorf("%v: %q: error %v, want ErrInvalid with %q", p, in, err, msg)
			}
		}
	}
	if _, err := Canonicalize("http://a%FF.1/", Safe); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `the host becomes "a%FF.1"`) {
		t.Errorf("Safe: http://a%%FF.1/: error %v, want the host named", err)
	}
	if got, err := Canonicalize("http://1.2.3.4../", Safe); got != "http://1.2.3.4/" || err != nil {
		t.Errorf("Safe: http://1.2.3.4../ gives %q, %v", got, err)
	}
}

func TestKeepFragment(t *testing.T) {
	for _, tc := range []struct {
		profile    Profile
		in         string
		keep, drop string
	}{
		{Safe, "http://example.com/a#b%2523c d", "http://example.com/a#b%23c%20d", "http://example.com/a"},
		{Safe, "http://example.com/#", "http://example.com/#", "http://example.com/"},
		{Aggressive, "http://example.com/a/#x", "http://example.com/a#x", "http://example.com/a"},
		{WHATWG, "http://example.com/#a%41 b", "http://example.com/#a%41%20b", "http://example.com/"},
	} {
		for keep, want := range map[bool]string{true: tc.keep, false: tc.drop} {
			c, err := New(Options{Profile: tc.profile, KeepFragment: keep})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := c.Canonicalize(tc.in); got != want || err != nil {
				t.Errorf("%v keep=%v: %q gives %q, %v; want %q", tc.profile, keep, tc.in, got, err, want)
			}
		}
	}
}

func TestOptionsLists(t *testing.T) {
	const in = "http://example.com/a/default.asp;sid=1?utm_source=x&ref=y&sid=2"
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"defaults", Options{Profile: Aggressive}, "http://example.com/a?ref=y"},
		{"none", Options{Profile: Aggressive, TrackingParams: []string{}, SessionParams: []string{}, IndexPages: []string{}},
			"http://example.com/a/default.asp;sid=1?ref=y&sid=2&utm_source=x"},
		{"custom", Options{Profile: Aggressive, TrackingParams: []string{"REF", "utm*"}, SessionParams: []string{"x"}, IndexPages: []string{"default.ASP"}},
			"http://example.com/a/default.asp;sid=1?sid=2"},
		{"safe ignores them", Options{TrackingParams: []string{"ref"}}, "http://example.com/a/default.asp;sid=1?ref=y&sid=2&utm_source=x"},
	} {
		c, err := New(tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got, err := c.Canonicalize(in); got != tc.want || err != nil {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	for _, o := range []Options{
		{Profile: -1},
		{Profile: WHATWG + 1},
		{TrackingParams: []string{""}},
		{SessionParams: []string{"a=b"}},
		{IndexPages: []string{"a/index.html"}},
		{TrackingParams: []string{"utm_*_x"}},
		{TrackingParams: []string{"a b"}},
	} {
		if _, err := New(o); !errors.Is(err, ErrOptions) {
			t.Errorf("New(%+v): error %v, want ErrOptions", o, err)
		}
	}
	if _, err := Canonicalize("http://a/", Profile(7)); !errors.Is(err, ErrOptions) {
		t.Errorf("Canonicalize with Profile(7): error %v, want ErrOptions", err)
	}
}

func TestOptionsCopies(t *testing.T) {
	mine := []string{"ref"}
	c, err := New(Options{Profile: Aggressive, TrackingParams: mine})
	if err != nil {
		t.Fatal(err)
	}
	mine[0] = "id"
	o := c.Options()
	if !slices.Equal(o.TrackingParams, []string{"ref"}) || !slices.Equal(o.SessionParams, defaultSessionParams) ||
		!slices.Equal(o.IndexPages, defaultIndexPages) || o.Profile != Aggressive {
		t.Fatalf("Options() = %+v", o)
	}
	o.SessionParams[0] = "changed"
	if got, _ := c.Canonicalize("http://a/?id=1&ref=2&jsessionid=3"); got != "http://a/?id=1" {
		t.Errorf("after changing the caller's slices: %q", got)
	}
}

func TestProfileNames(t *testing.T) {
	for _, p := range []Profile{Safe, Aggressive, WHATWG} {
		b, err := p.MarshalText()
		if err != nil || string(b) != p.String() {
			t.Errorf("%v.MarshalText() = %q, %v", p, b, err)
		}
		var q Profile
		if err := q.UnmarshalText(b); err != nil || q != p {
			t.Errorf("UnmarshalText(%q) = %v, %v", b, q, err)
		}
	}
	if Profile(0) != Safe || Safe.String() != "safe" || WHATWG.String() != "whatwg" || Profile(9).String() != "Profile(9)" {
		t.Error("profile names")
	}
	if _, err := ParseProfile("Safe"); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), `"safe", "aggressive" or "whatwg"`) {
		t.Errorf("ParseProfile(\"Safe\"): %v", err)
	}
	if _, err := Profile(9).MarshalText(); !errors.Is(err, ErrOptions) {
		t.Errorf("Profile(9).MarshalText(): %v", err)
	}
}

func TestIsASPNETSession(t *testing.T) {
	const id = "abcdefghijklmnopqrstuvwx" // 24 letters
	for seg, want := range map[string]bool{
		"(" + id + ")":                 true,
		"(S(" + id + "))":              true,
		"(S(" + id + ")A(" + id + "))": true,
		id + ")":                       false, // no opening parenthesis
		"(" + id:                       false, // no closing one
		"()":                           false,
		"(" + id[1:] + ")":             false, // 23 characters
		"(S(" + id + ")":               false,
		"(1(" + id + "))":              false, // not a letter before the id
		"(S(" + id + ")A" + id + ")":   false,
	} {
		if got := isASPNETSession(seg); got != want {
			t.Errorf("isASPNETSession(%q) = %v, want %v", seg, got, want)
		}
	}
}

func TestParseIPv4(t *testing.T) {
	for _, tc := range []struct {
		host string
		ip   uint32
		ok   bool
	}{
		{"1.2.3.4", 0x01020304, true},
		{"0x7f.1", 0x7f000001, true},
		{"017.0.0.1", 0x0f000001, true},
		{"4294967295", 0xffffffff, true},
		{"4294967296", 0, false},
		{"1.2.3.4.5", 0, false},
		{"1.2.3.256", 0, false},
		{"1.65536.1", 0, false},
		{"0x" + strings.Repeat("0", 50) + "1", 1, true},
		{"99999999999999999999999", 0, false},
		{"example.com", 0, false},
		{"", 0, false},
	} {
		if ip, ok := parseIPv4(tc.host); ip != tc.ip || ok != tc.ok {
			t.Errorf("parseIPv4(%q) = %#x, %v; want %#x, %v", tc.host, ip, ok, tc.ip, tc.ok)
		}
	}
}

func TestDecode(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"abc":               "abc",
		"%41%":              "A%",
		"%%300":             "\x00",
		"%2525252541":       "A",
		"%2":                "%2",
		"%%%25%32%35asd%%":  "%%%asd%%",
		"%zz%4":             "%zz%4",
		"100%25%2541%g":     "100%A%g",
		"%e2%98%83.%4E%45T": "\u2603.NET",
	} {
		if got := decode(in); got != want {
			t.Errorf("decode(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConcurrent canonicalizes with one Canonicalizer from several goroutines; run it with
// -race, with a base URL that every goroutine resolves against.
func TestConcurrent(t *testing.T) {
	c, err := New(Options{Profile: Aggressive, Base: "https://www.example.com/a/b"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				in := "index.html?utm_source=" + strings.Repeat("x", g+i%7) + "&b=1"
				if i%2 == 0 {
					in = "https://www.example.com/a/" + in
				}
				if got, err := c.Canonicalize(in); got != "http://example.com/a?b=1" || err != nil {
					t.Errorf("%q gives %q, %v", in, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestBase(t *testing.T) {
	const base = "https://Example.com/dir/page.html?x=1#top"
	for _, tc := range []struct {
		profile   Profile
		ref, want string
	}{
		{WHATWG, "i", "https://example.com/dir/i"},
		{WHATWG, "../i", "https://example.com/i"},
		{WHATWG, "/a/./b", "https://example.com/a/b"},
		{WHATWG, "?q", "https://example.com/dir/page.html?q"},
		{WHATWG, "#f", "https://example.com/dir/page.html?x=1"},
		{WHATWG, "", "https://example.com/dir/page.html?x=1"},
		{WHATWG, "//other.org/a", "https://other.org/a"},
		{WHATWG, "http://abs.org", "http://abs.org/"},
		{Safe, "example.com/a", "https://example.com/dir/example.com/a"},
		{Safe, "b?z=2&a=1", "https://example.com/dir/b?a=1&z=2"},
		{Aggressive, "../index.html?utm_source=x", "http://example.com/"},
	} {
		c, err := New(Options{Profile: tc.profile, Base: base})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := c.Canonicalize(tc.ref); got != tc.want || err != nil {
			t.Errorf("%v: %q against %q gives %q, %v; want %q", tc.profile, tc.ref, base, got, err, tc.want)
		}
		plain, _ := New(Options{Profile: tc.profile})
		if got, err := plain.CanonicalizeRef(tc.ref, base); got != tc.want || err != nil {
			t.Errorf("%v: CanonicalizeRef(%q, %q) = %q, %v; want %q", tc.profile, tc.ref, base, got, err, tc.want)
		}
	}
	for _, b := range []string{"dir/", "http://a b/", "http://[::1"} {
		if _, err := New(Options{Base: b}); !errors.Is(err, ErrOptions) || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "base URL") {
			t.Errorf("New with Base %q: error %v, want ErrOptions naming the base URL", b, err)
		}
		if _, err := Canonicalize("x", Safe); err == nil {
			t.Error("x without a base canonicalized")
		}
		c, _ := New(Options{})
		if _, err := c.CanonicalizeRef("x", b); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "base URL") {
			t.Errorf("CanonicalizeRef with base %q: error %v, want ErrInvalid naming the base URL", b, err)
		}
	}
	// A reference the standard rejects against any base stays an error.
	c, _ := New(Options{Profile: WHATWG, Base: base})
	if got, err := c.Canonicalize("http://a b/"); !errors.Is(err, ErrInvalid) {
		t.Errorf("http://a b/ against a base gives %q, %v", got, err)
	}
}

func TestFileLocalhost(t *testing.T) {
	for _, p := range []Profile{WHATWG, Safe, Aggressive} {
		if got, err := Canonicalize("file://localhost/x", p); got != "file:///x" || err != nil {
			t.Errorf("%v: file://localhost/x gives %q, %v; want file:///x", p, got, err)
		}
	}
}
