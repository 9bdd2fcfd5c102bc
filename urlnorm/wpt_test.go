package urlnorm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// wptCase is one test of the web-platform-tests URL data (testdata/urltestdata.json):
// input resolved against base (null for none) gives href, or fails.
type wptCase struct {
	Input   string  `json:"input"`
	Base    *string `json:"base"`
	Href    string  `json:"href"`
	Failure bool    `json:"failure"`
}

// loadWPT reads testdata/urltestdata.json, skipping its comment strings.
func loadWPT(t testing.TB) []wptCase {
	b, err := os.ReadFile(filepath.Join("testdata", "urltestdata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var cases []wptCase
	for _, r := range raw {
		if len(r) > 0 && r[0] == '"' {
			continue // a comment
		}
		var c wptCase
		if err := json.Unmarshal(r, &c); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		cases = append(cases, c)
	}
	if len(cases) < 500 {
		t.Fatalf("urltestdata.json has only %d cases", len(cases))
	}
	return cases
}

// TestWPTURLTestData runs the WHATWG URL Standard's own test data (web-platform-tests
// url/resources/urltestdata.json) under the WHATWG profile with the fragment kept: every
// success case must give its href exactly and every failure case must be rejected.
func TestWPTURLTestData(t *testing.T) {
	c, err := New(Options{Profile: WHATWG, KeepFragment: true})
	if err != nil {
		t.Fatal(err)
	}
	ok, succ, fails, rejected := 0, 0, 0, 0
	for _, tc := range loadWPT(t) {
		base := ""
		if tc.Base != nil {
			base = *tc.Base
		}
		got, err := c.CanonicalizeRef(tc.Input, base)
		if !tc.Failure {
			succ++
		}
		switch {
		case tc.Failure:
			fails++
			if err == nil {
				t.Errorf("%q against %q gives %q; the standard says it fails", tc.Input, base, got)
			} else {
				rejected++
			}
		case err != nil:
			t.Errorf("%q against %q: %v; want %q", tc.Input, base, err, tc.Href)
		case got != tc.Href:
			t.Errorf("%q against %q gives %q; want %q", tc.Input, base, got, tc.Href)
		default:
			ok++
		}
	}
	t.Logf("urltestdata.json: %d of %d success cases exact, %d of %d failure cases rejected", ok, succ, rejected, fails)
	if ok != succ || rejected != fails || succ < 400 || fails < 200 {
		t.Errorf("want every case of the standard right")
	}
}
