package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata from the output")

// compareJSON runs neardup compare --json with args and decodes its output.
func compareJSON(t *testing.T, stdin string, args ...string) compareResult {
	t.Helper()
	stdout, stderr, code := run(t, stdin, append([]string{"compare", "--json"}, args...)...)
	if code != ExitOK || stderr != "" {
		t.Fatalf("compare %q: exit code %d, stderr %q", args, code, stderr)
	}
	var res compareResult
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("compare %q: %v:\n%s", args, err, stdout)
	}
	return res
}

// directCompare computes what compare should report for texts a and b, by calling the
// packages directly.
func directCompare(t *testing.T, a, b string, opt shingle.Options, k int, scheme simhash.Scheme) compareResult {
	t.Helper()
	var feats [2][]uint64
	var weighted [2][]minhash.Weighted
	for i, text := range []string{a, b} {
		var err error
		if feats[i], err = shingle.Hashes(text, opt); err != nil {
			t.Fatal(err)
		}
		opt := opt
		opt.Weighting = shingle.TF
		s, err := shingle.New(opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range s.AppendWeighted(nil, text) {
			weighted[i] = append(weighted[i], minhash.Weighted(f))
		}
	}
	h := minhash.Hasher{K: k}
	res := compareResult{
		RawEqual:        a == b,
		Jaccard:         minhash.Jaccard(feats[0], feats[1]),
		ContainmentAInB: minhash.Containment(feats[0], feats[1]),
		ContainmentBInA: minhash.Containment(feats[1], feats[0]),
		MinHash:         minhash.Similarity(h.Signature(feats[0]), h.Signature(feats[1])),
		SimHashDistance: simhash.Distance(scheme.Fingerprint(a), scheme.Fingerprint(b)),
		CosineTF:        minhash.Cosine(weighted[0], weighted[1]),
	}
	res.A.Features, res.B.Features = len(feats[0]), len(feats[1])
	res.A.SimHash, res.B.SimHash = fmt.Sprintf("%016x", scheme.Fingerprint(a)), fmt.Sprintf("%016x", scheme.Fingerprint(b))
	res.A.Bytes, res.B.Bytes = len(a), len(b)
	sa, sb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	res.A.SHA256, res.B.SHA256 = hex.EncodeToString(sa[:]), hex.EncodeToString(sb[:])
	e := minhash.EditSimilarity(a, b)
	res.EditSimilarity = &e
	return res
}

// checkMeasures compares the measures of got with those of want.
func checkMeasures(t *testing.T, got, want compareResult) {
	t.Helper()
	type measure struct {
		name      string
		got, want any
	}
	for _, m := range []measure{
		{"raw_equal", got.RawEqual, want.RawEqual},
		{"jaccard", got.Jaccard, want.Jaccard},
		{"containment_a_in_b", got.ContainmentAInB, want.ContainmentAInB},
		{"containment_b_in_a", got.ContainmentBInA, want.ContainmentBInA},
		{"minhash_similarity", got.MinHash, want.MinHash},
		{"simhash_distance", got.SimHashDistance, want.SimHashDistance},
		{"cosine_tf", got.CosineTF, want.CosineTF},
		{"a.features", got.A.Features, want.A.Features},
		{"b.features", got.B.Features, want.B.Features},
		{"a.bytes", got.A.Bytes, want.A.Bytes},
		{"b.bytes", got.B.Bytes, want.B.Bytes},
		{"a.sha256", got.A.SHA256, want.A.SHA256},
		{"b.sha256", got.B.SHA256, want.B.SHA256},
		{"a.simhash", got.A.SimHash, want.A.SimHash},
		{"b.simhash", got.B.SimHash, want.B.SimHash},
	} {
		if m.got != m.want {
			t.Errorf("%s = %v, want %v", m.name, m.got, m.want)
		}
	}
	switch {
	case got.EditSimilarity == nil || want.EditSimilarity == nil:
		if got.EditSimilarity != want.EditSimilarity {
			t.Errorf("edit_similarity = %v, want %v", got.EditSimilarity, want.EditSimilarity)
		}
	case *got.EditSimilarity != *want.EditSimilarity:
		t.Errorf("edit_similarity = %v, want %v", *got.EditSimilarity, *want.EditSimilarity)
	}
	if got.Intersection+got.Union > 0 && float64(got.Intersection)/float64(got.Union) != got.Jaccard {
		t.Errorf("intersection %d / union %d is not the Jaccard %v", got.Intersection, got.Union, got.Jaccard)
	}
}

func TestCompareNearDuplicate(t *testing.T) {
	a, b := readSample(t, "para-a.txt"), readSample(t, "para-b.txt")
	pa, pb := filepath.Join(sampleDir, "para-a.txt"), filepath.Join(sampleDir, "para-b.txt")
	tests := []struct {
		flags  []string
		opt    shingle.Options
		k      int
		scheme simhash.Scheme
	}{
		{nil, shingle.Options{}, minhash.DefaultK, simhash.SchemeNeardup},
		{[]string{"--k", "256", "--scheme", "simhash-py"}, shingle.Options{}, 256, simhash.SchemeSimhashPy},
		{[]string{"--unit", "chars", "--k-shingle", "4"}, shingle.Options{Unit: shingle.Chars, K: 4}, minhash.DefaultK, simhash.SchemeNeardup},
		{[]string{"--k-shingle=2", "--k=1"}, shingle.Options{K: 2}, 1, simhash.SchemeNeardup},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.flags, " "), func(t *testing.T) {
			got := compareJSON(t, "", append(tt.flags, pa, pb)...)
			want := directCompare(t, a, b, tt.opt, tt.k, tt.scheme)
			checkMeasures(t, got, want)
			if got.A.Name != pa || got.B.Name != pb || got.MinHashK != tt.k || got.SimHashScheme != tt.scheme || got.Unit != tt.opt.Unit {
				t.Errorf("names or parameters: %+v", got)
			}
			if got.RawEqual || got.NormalizedEqual || got.Jaccard <= 0.5 || got.Jaccard >= 1 {
				t.Errorf("a near-duplicate pair should be neither equal nor disjoint: %+v", got)
			}
		})
	}
}

// TestCompareHTML compares two pages that carry one article in different templates: as
// text they differ, and with --html their main contents are equal while their bytes are
// not.
func TestCompareHTML(t *testing.T) {
	dir := t.TempDir()
	article := "<article><h1>Title</h1><p>" + strings.Repeat("The article's one paragraph says the same thing again and again. ", 15) + "</p></article>"
	pa := writeTemp(t, dir, "a.html", "<html><body><nav>Home | News | Sport | Weather | About us | Contact</nav>"+article+"<footer>Copyright the first site, all rights reserved</footer></body></html>")
	pb := writeTemp(t, dir, "b.html", "<html><body><nav>Start | Blog | Shop | Careers</nav>"+article+"<footer>Another footer entirely, with other words in it</footer></body></html>")
	asText := compareJSON(t, "", pa, pb)
	if asText.NormalizedEqual || asText.Jaccard == 1 {
		t.Errorf("as text the pages compare equal: %+v", asText)
	}
	html := compareJSON(t, "", "--html", pa, pb)
	if html.RawEqual || !html.NormalizedEqual || html.Jaccard != 1 || html.SimHashDistance != 0 || html.A.Bytes >= asText.A.Bytes {
		t.Errorf("--html: %+v", html)
	}
	stdout, _, code := run(t, "", "compare", "--html", pa, pb)
	if code != ExitOK || !strings.Contains(stdout, "; main contents, word 5-shingles") {
		t.Errorf("--html table: exit %d, %q", code, stdout)
	}
	// A page with no text to extract is an error naming it.
	pdf := writeTemp(t, dir, "c.html", "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	if _, stderr, code := run(t, "", "compare", "--html", pa, pdf); code != ExitError || !strings.Contains(stderr, pdf+": extract: binary content") {
		t.Errorf("--html with a PDF: exit %d, %q", code, stderr)
	}
}

// TestCompareTable checks the table against testdata/compare-para.golden; go test -update
// rewrites it. The golden file uses --scheme simhash-py, which is frozen, where the
// default scheme may be re-chosen by measurement.
func TestCompareTable(t *testing.T) {
	stdout, stderr, code := run(t, "", "compare", "--scheme", "simhash-py", "../../../../sample/para-a.txt", "../../../../sample/para-b.txt")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit code %d, stderr %q", code, stderr)
	}
	golden := filepath.Join("testdata", "compare-para.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := readTestdata(t, "compare-para.golden"); stdout != want {
		t.Errorf("got\n%s\nwant\n%s", stdout, want)
	}
}

func TestCompareIdenticalAndDisjoint(t *testing.T) {
	dir := t.TempDir()
	para := readSample(t, "para-a.txt")
	a := writeTemp(t, dir, "a.txt", para)
	same := writeTemp(t, dir, "same.txt", para)
	shouted := writeTemp(t, dir, "shouted.txt", strings.ToUpper(strings.NewReplacer(",", " ;", "\n", "  ", ".", "!").Replace(para)))
	const otherText = "Completely unrelated words about gardening: tomatoes need sun, water and patience every summer."
	other := writeTemp(t, dir, "other.txt", otherText)

	got := compareJSON(t, "", a, same)
	if !got.RawEqual || !got.NormalizedEqual || got.Jaccard != 1 || got.ContainmentAInB != 1 || got.ContainmentBInA != 1 ||
		got.MinHash != 1 || got.SimHashDistance != 0 || got.CosineTF != 1 || got.EditSimilarity == nil || *got.EditSimilarity != 1 ||
		got.Intersection != got.A.Features || got.Union != got.A.Features || got.MinHashAgree != minhash.DefaultK {
		t.Errorf("identical files: %+v", got)
	}

	// Case, punctuation and line breaks do not change the normalized text.
	got = compareJSON(t, "", a, shouted)
	if got.RawEqual || !got.NormalizedEqual || got.Jaccard != 1 || got.A.NormalizedSHA256 != got.B.NormalizedSHA256 || got.A.Tokens != got.B.Tokens {
		t.Errorf("normalized equal files: %+v", got)
	}

	got = compareJSON(t, "", a, other)
	if got.RawEqual || got.NormalizedEqual || got.Jaccard != 0 || got.ContainmentAInB != 0 || got.ContainmentBInA != 0 ||
		got.MinHash != 0 || got.CosineTF != 0 || got.Intersection != 0 || got.Union != got.A.Features+got.B.Features {
		t.Errorf("disjoint files: %+v", got)
	}
	checkMeasures(t, got, directCompare(t, para, otherText, shingle.Options{}, minhash.DefaultK, simhash.SchemeNeardup))

	// The table says the same.
	stdout, _, code := run(t, "", "compare", a, same)
	for _, s := range []string{
		"A = " + a + ", B = " + same + "; word 5-shingles, MinHash K=128, SimHash neardup\n",
		"\nraw bytes equal (SHA-256)   yes\n",
		"\nnormalized text equal       yes\n",
		"\nJaccard                     1.0000 (",
		"\nSimHash distance (neardup)  0 of 64 bits",
		"\nedit similarity             1.0000\n",
	} {
		if code != ExitOK || !strings.Contains(stdout, s) {
			t.Errorf("identical files: table does not contain %q:\n%s", s, stdout)
		}
	}
}

// TestCompareJSONKeys checks that --json writes every measure, and nothing else, under
// its documented snake_case key.
func TestCompareJSONKeys(t *testing.T) {
	stdout, _, code := run(t, "", "compare", "--json", "../../../../sample/para-a.txt", "../../../../sample/para-b.txt")
	if code != ExitOK || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("exit code %d, want one line:\n%s", code, stdout)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		slices.Sort(k)
		return k
	}
	want := []string{"a", "b", "containment_a_in_b", "containment_b_in_a", "cosine_tf", "edit_similarity", "intersection",
		"jaccard", "k_shingle", "minhash_agree", "minhash_k", "minhash_similarity", "normalized_equal", "raw_equal",
		"simhash_distance", "simhash_scheme", "union", "unit"}
	if got := keys(m); !slices.Equal(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
	docKeys := []string{"bytes", "features", "name", "normalized_sha256", "runes", "sha256", "simhash", "tokens"}
	for _, d := range []string{"a", "b"} {
		doc, ok := m[d].(map[string]any)
		if !ok {
			t.Fatalf("%q is %T, not an object", d, m[d])
		}
		if got := keys(doc); !slices.Equal(got, docKeys) {
			t.Errorf("keys of %q: %q, want %q", d, got, docKeys)
		}
	}
	for key, v := range map[string]any{"unit": "words", "k_shingle": 5.0, "minhash_k": 128.0, "simhash_scheme": "neardup"} {
		if m[key] != v {
			t.Errorf("%s = %v, want %v", key, m[key], v)
		}
	}
}

func TestCompareStdin(t *testing.T) {
	a, b := readSample(t, "para-a.txt"), readSample(t, "para-b.txt")
	pa, pb := filepath.Join(sampleDir, "para-a.txt"), filepath.Join(sampleDir, "para-b.txt")
	want := directCompare(t, a, b, shingle.Options{}, minhash.DefaultK, simhash.SchemeNeardup)
	got := compareJSON(t, a, "-", pb)
	checkMeasures(t, got, want)
	if got.A.Name != "-" || got.B.Name != pb {
		t.Errorf("names %q, %q", got.A.Name, got.B.Name)
	}
	checkMeasures(t, compareJSON(t, b, pa, "-"), want)

	stdout, _, _ := run(t, b, "compare", pa, "-")
	if !strings.HasPrefix(stdout, "A = "+pa+", B = stdin; ") {
		t.Errorf("header does not name stdin:\n%s", stdout)
	}
}

func TestCompareLongAndInvalidText(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x ", minhash.MaxEditRunes/2) // exactly MaxEditRunes runes
	a := writeTemp(t, dir, "a.txt", long)
	b := writeTemp(t, dir, "b.txt", long+"y")
	got := compareJSON(t, "", a, a)
	if got.EditSimilarity == nil || *got.EditSimilarity != 1 || got.A.Runes != minhash.MaxEditRunes {
		t.Errorf("texts of %d runes: edit_similarity %v, runes %d", minhash.MaxEditRunes, got.EditSimilarity, got.A.Runes)
	}
	if got = compareJSON(t, "", a, b); got.EditSimilarity != nil {
		t.Errorf("a text of %d runes: edit_similarity %v, want null", got.B.Runes, *got.EditSimilarity)
	}
	stdout, _, _ := run(t, "", "compare", b, a)
	if !strings.Contains(stdout, "\nedit similarity             n/a (longer than 10000 characters)\n") {
		t.Errorf("table:\n%s", stdout)
	}

	// Invalid UTF-8 goes through the pipeline (as U+FFFD).
	bad := "caf\xc3 ol\xe9 \xff\xfe the quick brown fox jumps over the lazy dog"
	c := writeTemp(t, dir, "bad.txt", bad)
	checkMeasures(t, compareJSON(t, bad, c, "-"), directCompare(t, bad, bad, shingle.Options{}, minhash.DefaultK, simhash.SchemeNeardup))
}

func TestCompareMaxBytes(t *testing.T) {
	dir := t.TempDir()
	a := writeTemp(t, dir, "a.txt", "0123456789")
	tests := []struct {
		args  []string
		stdin string
		code  int
		msg   string
	}{
		{[]string{"--max-bytes", "10", a, a}, "", ExitOK, ""},
		{[]string{"--max-bytes", "9", a, a}, "", ExitError, "neardup compare: " + a + " is larger than --max-bytes 9 (counted after decompression); raise --max-bytes to read it\n"},
		{[]string{"--max-bytes", "10", a, "-"}, "0123456789", ExitOK, ""},
		{[]string{"--max-bytes", "10", a, "-"}, "0123456789x", ExitError, "neardup compare: stdin is larger than --max-bytes 10 (counted after decompression)"},
		{[]string{"--max-bytes", "9223372036854775807", "-", a}, "0123456789", ExitOK, ""},
	}
	for _, tt := range tests {
		stdout, stderr, code := run(t, tt.stdin, append([]string{"compare"}, tt.args...)...)
		if code != tt.code || !strings.Contains(stderr, tt.msg) || (code == ExitOK) != (stdout != "") {
			t.Errorf("%q: exit code %d, stderr %q, stdout %q; want exit %d and %q", tt.args, code, stderr, stdout, tt.code, tt.msg)
		}
	}

	// A file over the default limit fails before it is read: a sparse file costs nothing.
	big := filepath.Join(dir, "big.txt")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64<<20 + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, stderr, code := run(t, "", "compare", a, big)
	if code != ExitError || !strings.Contains(stderr, big+" is larger than --max-bytes 67108864 (counted") {
		t.Errorf("64 MiB + 1: exit code %d, stderr %q", code, stderr)
	}
}

func TestCompareErrors(t *testing.T) {
	dir := t.TempDir()
	a := writeTemp(t, dir, "a.txt", "some text")
	missing := filepath.Join(dir, "missing.txt")
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, ExitUsage, "give two files to compare, A and B, not 0"},
		{[]string{a}, ExitUsage, "give two files to compare, A and B, not 1"},
		{[]string{a, a, a}, ExitUsage, "not 3"},
		{[]string{"-", "-"}, ExitUsage, "only one of A and B can be standard input (-)"},
		{[]string{"--k", "0", a, a}, ExitUsage, "--k 0 is out of range; use 1 to 4096"},
		{[]string{"--k", "4097", a, a}, ExitUsage, "--k 4097 is out of range"},
		{[]string{"--k-shingle", "-2", a, a}, ExitUsage, "--k-shingle -2 is negative"},
		{[]string{"--unit", "bytes", a, a}, ExitUsage, `invalid value "bytes" for flag --unit`},
		{[]string{"--scheme", "md5", a, a}, ExitUsage, `invalid value "md5" for flag --scheme`},
		{[]string{"--max-bytes", "0", a, a}, ExitUsage, "--max-bytes 0: use 1 or more"},
		{[]string{"--format", "json", a, a}, ExitUsage, "flag provided but not defined: --format"},
		{[]string{a, missing}, ExitError, "open " + missing + ": no such file"},
		{[]string{dir, a}, ExitError, dir + " is a directory"},
	}
	for _, tt := range tests {
		stdout, stderr, code := run(t, "", append([]string{"compare"}, tt.args...)...)
		if code != tt.code || stdout != "" || !strings.HasPrefix(stderr, "neardup compare: ") || !strings.Contains(stderr, tt.msg) {
			t.Errorf("%q: exit code %d, stdout %q, stderr %q; want exit %d and %q", tt.args, code, stdout, stderr, tt.code, tt.msg)
		}
		if strings.Contains(stderr, "--help' for usage") != (tt.code == ExitUsage) {
			t.Errorf("%q: stderr %q: usage errors, and only they, point at the help", tt.args, stderr)
		}
	}

	for _, format := range [][]string{nil, {"--json"}} {
		var errOut bytes.Buffer
		code := Main(append([]string{"compare", a, a}, format...), nil, failWriter{}, &errOut)
		if code != ExitError || !strings.Contains(errOut.String(), "neardup compare: writing output") {
			t.Errorf("%q write error: exit code %d, stderr %q", format, code, errOut.String())
		}
	}
}

func TestRatio(t *testing.T) {
	for v, want := range map[float64]string{0: "0.0000", 1: "1.0000", 0.5: "0.5000", 0.99996: ">0.9999", 0.00004: "<0.0001", 0.12346: "0.1235"} {
		if got := ratio(v); got != want {
			t.Errorf("ratio(%v) = %q, want %q", v, got, want)
		}
	}
}
