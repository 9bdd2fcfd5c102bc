package urlnorm

import (
	"errors"
	"testing"
)

// FuzzCanonicalize checks, for every profile with and without the fragment, and without
// and with a base URL, that Canonicalize never panics, fails only with ErrInvalid, returns
// printable ASCII (a space at most where WHATWG keeps one), and returns a result that
// canonicalizes to itself without the base. Seeds: a few urlcanon and WPT inputs here and
// in testdata/fuzz/FuzzCanonicalize.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		"  http://www.google.com/  ",
		"h\tt\nt\rp://h\to\ns\rt:9\t0\n0\r0/p\ta\nt\rh?q\tu\ne\rry#f\tr\na\rg",
		"http://%31%36%38%2e%31%38%38%2e%39%39%2e%32%36/%2E%73%65%63%75%72%65/",
		"http://host/%%%25%32%35asd%%",
		"http://@:@@host/a/b",
		"https://fa\xc3\x9f.ExAmPlE/",
		"http://192.0x00A80001",
		"non-special://[1:2:0:0:5:0:0:0]/",
		"file:%2e%2e%2e/a/b",
		"foo.com///goo/",
		"http://legislature.mi.gov/(S(4hqa0555fwsecu455xqckv45))/mileg.aspx",
		"http://example.com/?a=1&CFID=3304324&CFTOKEN=57491900&jsessionid=a63098d96360$B0$D9$A&foo=bar",
		"http://example example.com", "http://[::1.2.3.]", "http://256.256.256.256", "../i", "#",
		"file://localhost/x", "sc://\u00e4/x", "mailto:%2F%2Fx", "file:///C%7C/", "http://a\xff.com/",
		"//example.com/a", "?q=1", "non-spec:/.//p",
	} {
		f.Add(s)
	}
	var cs, again []*Canonicalizer
	for _, p := range []Profile{Safe, Aggressive, WHATWG} {
		for _, keep := range []bool{false, true} {
			for _, base := range []string{"", "https://u:p@example.com/a/b?c#d"} {
				c, err := New(Options{Profile: p, KeepFragment: keep, Base: base})
				if err != nil {
					f.Fatal(err)
				}
				cs = append(cs, c)
				if base == "" {
					again = append(again, c)
				} else {
					again = append(again, again[len(again)-1])
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for i, c := range cs {
			o := c.Options()
			got, err := c.Canonicalize(raw)
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("%v: %q: error %v does not wrap ErrInvalid", o.Profile, raw, err)
				}
				continue
			}
			for i := 0; i < len(got); i++ {
				if got[i] < ' ' || got[i] > '~' || got[i] == ' ' && o.Profile != WHATWG {
					t.Fatalf("%v: %q gives %q, with byte %#x", o.Profile, raw, got, got[i])
				}
			}
			twice, err := again[i].Canonicalize(got)
			if twice != got || err != nil {
				t.Fatalf("%v keep=%v base=%q: %q gives %q, which gives %q, %v", o.Profile, o.KeepFragment, o.Base, raw, got, twice, err)
			}
		}
	})
}
