package prescreen

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/urlnorm"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json")

// vectorsFile is read by the Python client's tests (clients/python/tests), which must give
// the same answers from the same filter bytes and URLs.
const vectorsFile = "testdata/vectors.json"

// Vectors are the cross-language test vectors: a real key filter's snapshot, the canonical
// URLs of crawl-like and standard test inputs under both profiles a Python client may
// meet, and the filter's answers for them.
type Vectors struct {
	// Filter is the snapshot as GET /v1/prescreen sends it.
	Filter []byte `json:"filter"`
	// Hashes are the first eight bit locations (before the modulo) of keys of every
	// length up to 50 in version 1 snapshots (bits-and-blooms' MurmurHash3 base hashes,
	// whose tail handling every length exercises), as decimal strings (JSON numbers lose
	// bits above 2^53).
	Hashes []hashVector `json:"hashes"`
	URLs   []urlVector  `json:"urls"`
	// Exact are main-text hashes, half of them added, and the filter's answers.
	Exact []exactVector `json:"exact"`
	// FilterV1 is a version 1 snapshot (MurmurHash3 positions, the root package's
	// testdata/keyfilter-v1.snap), which clients still read, and V1 its answers for the
	// Aggressive form of every URL input.
	FilterV1 []byte `json:"filter_v1"`
	V1       []bool `json:"v1"`
}

type hashVector struct {
	Key       []byte   `json:"key"`
	Locations []string `json:"locations"`
}

type urlVector struct {
	Input string `json:"input"`
	// Aggressive and Safe are the canonical URLs, "" when urlnorm rejects the input.
	Aggressive string `json:"aggressive"`
	Safe       string `json:"safe"`
	// InFilter is the filter's answer for the Aggressive form (false when rejected).
	InFilter bool `json:"in_filter"`
}

type exactVector struct {
	Hash     neardup.Hash `json:"hash"`
	InFilter bool         `json:"in_filter"`
}

// TestPythonVectors checks that testdata/vectors.json is what the Go code gives today;
// go test -run TestPythonVectors -update rewrites it after a deliberate change.
func TestPythonVectors(t *testing.T) {
	v := makeVectors(t)
	got, err := json.MarshalIndent(v, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(vectorsFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(vectorsFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatalf("%v; run go test ./client/prescreen -run TestPythonVectors -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what the Go code gives: the filter format, the hash or canonicalization changed; "+
			"if deliberately, run go test ./client/prescreen -run TestPythonVectors -update and make the Python client agree", vectorsFile)
	}
}

func makeVectors(t *testing.T) Vectors {
	t.Helper()
	agg, err := urlnorm.New(urlnorm.Options{Profile: urlnorm.Aggressive})
	if err != nil {
		t.Fatal(err)
	}
	safe, err := urlnorm.New(urlnorm.Options{Profile: urlnorm.Safe})
	if err != nil {
		t.Fatal(err)
	}
	// The one URL the version 1 snapshot holds comes first.
	inputs := append([]string{"http://example.com/"}, crawlURLs(rand.New(rand.NewPCG(30, 1)), 2000)...)
	inputs = append(inputs, standardInputs(t)...)
	f, err := neardup.NewKeyFilter(2000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	var v Vectors
	for i, in := range inputs {
		u := urlVector{Input: in}
		u.Aggressive, _ = agg.Canonicalize(in)
		u.Safe, _ = safe.Canonicalize(in)
		if i%3 == 0 && u.Aggressive != "" {
			f.AddURL(u.Aggressive)
		}
		v.URLs = append(v.URLs, u)
	}
	r := rand.New(rand.NewPCG(30, 2))
	for i := range 400 {
		var h neardup.Hash
		for j := range h {
			h[j] = byte(r.Uint32())
		}
		if i%2 == 0 {
			f.AddExact(h)
		}
		v.Exact = append(v.Exact, exactVector{Hash: h})
	}
	for i := range v.URLs {
		v.URLs[i].InFilter = v.URLs[i].Aggressive != "" && f.HasURL(v.URLs[i].Aggressive)
	}
	for i := range v.Exact {
		v.Exact[i].InFilter = f.HasExact(v.Exact[i].Hash)
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	v.Filter = buf.Bytes()
	if v.FilterV1, err = os.ReadFile("../../testdata/keyfilter-v1.snap"); err != nil {
		t.Fatal(err)
	}
	v1, err := neardup.ReadKeyFilter(bytes.NewReader(v.FilterV1))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range v.URLs {
		v.V1 = append(v.V1, u.Aggressive != "" && v1.HasURL(u.Aggressive))
	}
	for n := range 50 {
		key := make([]byte, n)
		for j := range key {
			key[j] = byte(r.Uint32())
		}
		var locs []string
		for _, l := range bloom.Locations(key, 8) {
			locs = append(locs, fmt.Sprint(l))
		}
		v.Hashes = append(v.Hashes, hashVector{Key: key, Locations: locs})
	}
	return v
}

// crawlURLs returns n URLs as a crawler meets them: scheme and host case, www., ports,
// dot segments, repeated and trailing slashes, index pages, percent escapes, path and
// query session ids, tracking parameters, unsorted and empty parameters, fragments, and
// now and then a byte the Python subset leaves to the service (non-ASCII, a space, an
// IP address, userinfo, a quote).
func crawlURLs(r *rand.Rand, n int) []string {
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	out := make([]string, 0, n)
	for range n {
		var b strings.Builder
		b.WriteString(pick("http://", "https://", "HTTP://", "Https://"))
		b.WriteString(pick("", "", "www.", "WWW.", "www2.", "user:pw@"))
		b.WriteString(pick("example.com", "Example.COM", "docs.example.org", "a-b.example.net.", "xn--bcher-kva.de", "bücher.de", "10.0.0.1", "www.com", "ex_ample.com"))
		b.WriteString(pick("", "", "", ":80", ":443", ":8080", ":0080", ":", ":99999"))
		for range r.IntN(4) {
			b.WriteString(pick("/", "/a", "/B", "/docs", "/./", "/../", "//", "/%7Euser", "/%2e%2E", "/a%20b", "/%41", "/%2561",
				"/x;jsessionid=ABC", "/(S(abcdefghijklmnopqrstuvwx))", "/é", "/a b", "/\"q\"", "/index.html", "/default.aspx", "/p;v=1"))
		}
		b.WriteString(pick("", "", "/", "/index.html", "/page-12.html"))
		if r.IntN(2) == 0 {
			b.WriteString("?")
			for k := range r.IntN(4) {
				if k > 0 {
					b.WriteString("&")
				}
				b.WriteString(pick("utm_source=news", "UTM_Medium=x", "b=2", "a=1", "a", "", "q=a=b", "sid=42", "gclid=x", "q=%26", "z=%zz", "k=v+w", "x=?"))
			}
		}
		b.WriteString(pick("", "", "#top", "#a?b", "#x y"))
		out = append(out, b.String())
	}
	return out
}

// standardInputs returns the absolute inputs of the URL Standard's test data.
func standardInputs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../urlnorm/testdata/urltestdata.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []json.RawMessage
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cases {
		var tc struct {
			Input string  `json:"input"`
			Base  *string `json:"base"`
		}
		if json.Unmarshal(c, &tc) != nil || tc.Base != nil && *tc.Base != "" && !strings.Contains(tc.Input, "://") {
			continue // a comment, or a relative reference
		}
		out = append(out, tc.Input)
	}
	return out
}
