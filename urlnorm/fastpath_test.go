package urlnorm

import (
	"testing"
)

// checkFastParse fails t if fastParse takes s and the standard's parser (both of this
// package's configurations) does not give the same parts. It reports whether fastParse
// took s.
func checkFastParse(t *testing.T, s string) bool {
	fast, ok := fastParse(s)
	if !ok {
		return false
	}
	for _, sem := range []bool{false, true} {
		w, err := parse(s, nil, sem)
		if err != nil {
			t.Fatalf("fastParse takes %q, which the standard's parser rejects: %v", s, err)
		}
		if lib := fromWHATWG(w); lib != fast {
			t.Fatalf("%q: fastParse gives %+v, the standard's parser %+v", s, fast, lib)
		}
	}
	return true
}

// TestFastParse checks fastParse against the standard's parser on the inputs of the WPT
// data, the benchmark and cases at its edges, and that it takes the common URLs.
func TestFastParse(t *testing.T) {
	inputs := append([]string(nil), benchURLs...)
	for _, tc := range loadWPT(t) {
		inputs = append(inputs, tc.Input)
	}
	inputs = append(inputs,
		"http://a.com", "HTTPS://A.COM:0443", "http://a.com:", "http://a.com:80", "https://a.com:80/",
		"http://a.com:065535", "http://a.com:65536", "http://a.com:1x", "http://a.com./", "http://a..com/",
		"http://.a.com/", "http://a-.com/", "http://-a.com/", "http://xn--a.com/", "http://XN--nxasmq6b.com/",
		"http://a.1/", "http://1.2.3.4/", "http://a.0x1/", "http://a/b/./c", "http://a/b/%2E%2e/c",
		"http://a/b/.c", "http://a/%zz%", "http://a/?q='x'#'f'", "http://a/p'", "http://a/#a#b",
		"http://a/\\b", "http://a/b c", "http://u@a/", "http://[::1]/", "http://a%41.com/", "http://a/{}",
		"http://a?b", "http://a#b", "https://www.example.com/a;b=c/d?e=f&g=h#i",
		"http://faß.DE/", "http://ÄÖÜ.com/", "http://bücher.xn--de/", "http://xn--bcher-kva.bücher.de/",
		"http://a\u200cb.com/", "http://\u0661\u0662.com/", "http://a.\u0661/", "http://\u2260.com/",
		"http://ü-.com/", "http://-ü.com/", "http://ü..com/", "http://ü.1/", "http://ü.com./", "http://\uff21.com/",
		"http://\u3002.com/", "http://a\u3002b/", "http://ü\xff.com/", "http://ü%41.com/", "http://ü_.com/",
	)
	took := 0
	for _, s := range inputs {
		if checkFastParse(t, trimControls(s)) {
			took++
		}
	}
	t.Logf("fastParse took %d of %d inputs", took, len(inputs))
	for _, s := range benchURLs {
		if _, ok := fastParse(s); !ok {
			t.Errorf("fastParse does not take %q", s)
		}
	}
}

// FuzzFastParse is a differential fuzz target: whatever fastParse takes, the standard's
// parser must accept and split into the same parts.
func FuzzFastParse(f *testing.F) {
	for _, s := range append(benchURLs, "http://a.com:0080/x?y#z", "https://A.b-c.D./%41?'#", "http://a/.%2e/",
		"http://faß.DE/", "http://a\u200cb.com/", "http://\u0661\u0662.com/", "http://\uff21.com/") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkFastParse(t, s)
	})
}
