package minhash

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenFeatures returns the n features of the golden cases: (i+1) times the 64-bit golden
// ratio, a sequence with structure (so weak mixing would show) but no repeats.
func goldenFeatures(n int) []uint64 {
	fs := make([]uint64, n)
	for i := range fs {
		fs[i] = uint64(i+1) * 0x9e3779b97f4a7c15
	}
	return fs
}

type goldenCase struct {
	K         int       `json:"k"`
	Seed      uint64    `json:"seed"`
	N         int       `json:"n"`
	Signature Signature `json:"signature"`
}

// goldenCases covers the default, an empty set, sets with many empty bins (densified), a
// K that is not a power of two, K = 1 and nonzero seeds.
var goldenCases = []goldenCase{
	{K: 0, Seed: 0, N: 0},
	{K: 0, Seed: 0, N: 1},
	{K: 0, Seed: 0, N: 10},
	{K: 0, Seed: 0, N: 1000},
	{K: 16, Seed: 1, N: 100},
	{K: 200, Seed: 0xdeadbeef, N: 50},
	{K: 1, Seed: 7, N: 3},
	{K: 64, Seed: math.MaxUint64, N: 5000},
}

const goldenSignatures = "testdata/signatures.json"

// TestSignatureGolden pins the scheme: signatures must never change, or every stored
// signature and index would silently stop matching new ones.
func TestSignatureGolden(t *testing.T) {
	got := make([]goldenCase, len(goldenCases))
	for i, c := range goldenCases {
		c.Signature = Hasher{K: c.K, Seed: c.Seed}.Signature(goldenFeatures(c.N))
		got[i] = c
	}
	if *updateGolden {
		b := []byte("[\n")
		for i, c := range got { // one case per line
			line, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, line...)
			if i < len(got)-1 {
				b = append(b, ',')
			}
			b = append(b, '\n')
		}
		b = append(b, "]\n"...)
		if err := os.WriteFile(goldenSignatures, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(goldenSignatures)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update to create it)", err)
	}
	var want []goldenCase
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("%d golden cases, want %d", len(want), len(got))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.K != g.K || w.Seed != g.Seed || w.N != g.N || !slices.Equal(w.Signature, g.Signature) {
			t.Errorf("case K=%d seed=%d n=%d: signature changed; the scheme is frozen\ngot  %v\nwant %v", g.K, g.Seed, g.N, g.Signature, w.Signature)
		}
	}
	// Spot checks that do not depend on the file.
	if s := got[0].Signature; len(s) != DefaultK || slices.ContainsFunc(s, func(v uint32) bool { return v != Empty }) {
		t.Errorf("empty set signature = %v, want %d copies of Empty", s, DefaultK)
	}
	if s := got[1].Signature; slices.ContainsFunc(s, func(v uint32) bool { return v != s[0] }) {
		t.Errorf("a one-feature set must densify to one repeated value: %v", s)
	}
}

func TestSignatureSetSemantics(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 100, 1000} {
		fs := make([]uint64, n)
		for i := range fs {
			fs[i] = r.Uint64()
		}
		want := Hasher{}.Signature(SortUnique(slices.Clone(fs)))
		shuffled := append(slices.Clone(fs), fs[:n/2+1]...) // with repeats
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := (Hasher{}).Signature(shuffled); !slices.Equal(got, want) {
			t.Fatalf("n=%d: order or repeats changed the signature", n)
		}
		if slices.Contains(want, Empty) {
			t.Fatalf("n=%d: a non-empty set's signature holds Empty", n)
		}
		if s := Similarity(want, want); s != 1 {
			t.Fatalf("self-similarity %v", s)
		}
	}
}

func TestAppendSignature(t *testing.T) {
	fs := goldenFeatures(300)
	want := Hasher{K: 32, Seed: 3}.Signature(fs)
	prefix := Signature{1, 2, 3}
	got := Hasher{K: 32, Seed: 3}.AppendSignature(slices.Clone(prefix), fs)
	if !slices.Equal(got[:3], prefix) || !slices.Equal(got[3:], want) {
		t.Fatalf("AppendSignature did not append after the existing values")
	}
	// Appending into a slice with room must not disturb values beyond it.
	buf := make(Signature, 3, 3+32+1)
	buf = buf[:cap(buf)]
	buf[35] = 99
	got = Hasher{K: 32, Seed: 3}.AppendSignature(buf[:3], fs)
	if &got[0] != &buf[0] || buf[35] != 99 || !slices.Equal(got[3:], want) {
		t.Fatal("AppendSignature with room reallocated or wrote beyond K values")
	}
}

func TestAppendSignatureAllocs(t *testing.T) {
	for _, n := range []int{0, 5, 2000} { // empty, densified, full
		fs := goldenFeatures(n)
		dst := make(Signature, 0, DefaultK)
		if a := testing.AllocsPerRun(100, func() {
			dst = Hasher{Seed: 9}.AppendSignature(dst[:0], fs)
		}); a != 0 {
			t.Errorf("n=%d: AppendSignature allocates %v times per call, want 0", n, a)
		}
	}
	dst := make(Signature, 0, MaxK)
	fs := goldenFeatures(10)
	if a := testing.AllocsPerRun(10, func() {
		dst = Hasher{K: MaxK}.AppendSignature(dst[:0], fs)
	}); a != 0 {
		t.Errorf("K=MaxK: AppendSignature allocates %v times per call, want 0", a)
	}
}

func TestHasherKPanics(t *testing.T) {
	for _, k := range []int{-1, MaxK + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("K=%d did not panic", k)
				}
			}()
			Hasher{K: k}.Signature(nil)
		}()
	}
}

func TestSimilarityEmpty(t *testing.T) {
	e := Hasher{}.Signature(nil)
	f := Hasher{}.Signature([]uint64{1})
	if s := Similarity(e, Hasher{}.Signature([]uint64{})); s != 1 {
		t.Errorf("two empty sets: %v, want 1", s)
	}
	if s := Similarity(e, f); s != 0 {
		t.Errorf("empty and non-empty: %v, want 0", s)
	}
}

func TestSimilarityPanics(t *testing.T) {
	for _, c := range [][2]Signature{{{1, 2}, {1}}, {{}, {}}, {nil, {1}}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Similarity(%v, %v) did not panic", c[0], c[1])
				}
			}()
			Similarity(c[0], c[1])
		}()
	}
}

// pairWithJaccard returns two random sets of sizes with an intersection of size common.
func pairWithJaccard(r *rand.Rand, na, nb, common int) (a, b []uint64) {
	for range common {
		x := r.Uint64()
		a, b = append(a, x), append(b, x)
	}
	for range na - common {
		a = append(a, r.Uint64())
	}
	for range nb - common {
		b = append(b, r.Uint64())
	}
	return SortUnique(a), SortUnique(b)
}

// TestUnbiased checks the mean estimate over many seeds against the exact Jaccard,
// including small sets where most bins are filled by densification, and large sets.
func TestUnbiased(t *testing.T) {
	cases := []struct{ na, nb, common int }{
		{2, 2, 1},       // J = 1/3, 126 densified bins of 128
		{20, 30, 15},    // J = 3/7
		{60, 60, 50},    // J = 0.714
		{200, 180, 170}, // J = 0.81
		{3000, 3000, 2700},
	}
	const seeds = 2000
	for _, c := range cases {
		r := rand.New(rand.NewPCG(uint64(c.na), uint64(c.common)))
		a, b := pairWithJaccard(r, c.na, c.nb, c.common)
		j := Jaccard(a, b)
		var sum, sq float64
		sa, sb := make(Signature, 0, DefaultK), make(Signature, 0, DefaultK)
		for seed := range uint64(seeds) {
			sa = Hasher{Seed: seed}.AppendSignature(sa[:0], a)
			sb = Hasher{Seed: seed}.AppendSignature(sb[:0], b)
			e := Similarity(sa, sb)
			sum += e
			sq += (e - j) * (e - j)
		}
		mean := sum / seeds
		rmse := math.Sqrt(sq / seeds)
		se := rmse / math.Sqrt(seeds) // standard error of the mean
		t.Logf("|A|=%d |B|=%d J=%.4f: mean %.4f (bias %+.4f), RMSE %.4f, sqrt(J(1-J)/K) %.4f",
			c.na, c.nb, j, mean, mean-j, rmse, math.Sqrt(j*(1-j)/DefaultK))
		if math.Abs(mean-j) > 4*se+1e-9 {
			t.Errorf("J=%.4f: mean estimate %.4f is biased beyond 4 standard errors (%.4f)", j, mean, se)
		}
	}
}

func TestSortUnique(t *testing.T) {
	got := SortUnique([]uint64{5, 1, 5, 3, 1, math.MaxUint64, 0})
	if want := []uint64{0, 1, 3, 5, math.MaxUint64}; !slices.Equal(got, want) {
		t.Fatalf("SortUnique = %v, want %v", got, want)
	}
	if got := SortUnique[uint64](nil); len(got) != 0 {
		t.Fatalf("SortUnique(nil) = %v", got)
	}
	if got, want := SortUnique([]uint32{7, 2, 7, math.MaxUint32}), []uint32{2, 7, math.MaxUint32}; !slices.Equal(got, want) {
		t.Fatalf("SortUnique of 32-bit hashes = %v, want %v", got, want)
	}
}

func TestJaccardContainment(t *testing.T) {
	cases := []struct {
		a, b         []uint64
		jac, contain float64
	}{
		{nil, nil, 1, 1},
		{nil, []uint64{1}, 0, 1},
		{[]uint64{1}, nil, 0, 0},
		{[]uint64{1, 2, 3}, []uint64{1, 2, 3}, 1, 1},
		{[]uint64{1, 2, 3, 4}, []uint64{3, 4, 5, 6}, 2.0 / 6, 0.5},
		{[]uint64{1, 2}, []uint64{0, 1, 2, 3}, 0.5, 1},
		{[]uint64{0, math.MaxUint64}, []uint64{math.MaxUint64}, 0.5, 0.5},
	}
	for _, c := range cases {
		if j := Jaccard(c.a, c.b); j != c.jac {
			t.Errorf("Jaccard(%v, %v) = %v, want %v", c.a, c.b, j, c.jac)
		}
		if j := Jaccard(c.b, c.a); j != c.jac {
			t.Errorf("Jaccard is not symmetric on %v, %v", c.a, c.b)
		}
		if x := Containment(c.a, c.b); x != c.contain {
			t.Errorf("Containment(%v, %v) = %v, want %v", c.a, c.b, x, c.contain)
		}
	}
	// Against a map-based oracle.
	r := rand.New(rand.NewPCG(5, 5))
	for range 200 {
		a, b := pairWithJaccard(r, 1+r.IntN(50), 1+r.IntN(50), 0)
		b = SortUnique(append(b, a[:r.IntN(len(a))]...))
		in := map[uint64]bool{}
		for _, x := range b {
			in[x] = true
		}
		n := 0
		for _, x := range a {
			if in[x] {
				n++
			}
		}
		if j, want := Jaccard(a, b), float64(n)/float64(len(a)+len(b)-n); j != want {
			t.Fatalf("Jaccard = %v, want %v", j, want)
		}
		if c, want := Containment(a, b), float64(n)/float64(len(a)); c != want {
			t.Fatalf("Containment = %v, want %v", c, want)
		}
		// The low 32 bits of a few dozen random hashes do not collide (odds about 1e-6).
		low := func(s []uint64) []uint32 {
			out := make([]uint32, len(s))
			for i, x := range s {
				out[i] = uint32(x)
			}
			return SortUnique(out)
		}
		if j, want := Jaccard(low(a), low(b)), float64(n)/float64(len(a)+len(b)-n); j != want {
			t.Fatalf("Jaccard of 32-bit hashes = %v, want %v", j, want)
		}
	}
}

func TestCosine(t *testing.T) {
	w := func(hw ...float64) []Weighted {
		var out []Weighted
		for i := 0; i < len(hw); i += 2 {
			out = append(out, Weighted{uint64(hw[i]), hw[i+1]})
		}
		return out
	}
	cases := []struct {
		a, b []Weighted
		want float64
	}{
		{nil, nil, 1},
		{w(1, 0), nil, 1}, // zero norm on both sides
		{w(1, 2), nil, 0},
		{w(1, 2, 3, 4), w(1, 2, 3, 4), 1},
		{w(1, 1), w(2, 1), 0},
		{w(1, 1, 2, 1), w(2, 1, 3, 1), 0.5},
		{w(1, 3, 2, 4), w(1, 4, 2, -3), 0},
		{w(1, 1), w(1, -2), -1},
		{w(1, 3, 2, 4), w(2, 1), 0.8},
	}
	for _, c := range cases {
		if got := Cosine(c.a, c.b); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Cosine(c.b, c.a); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("Cosine is not symmetric on %v, %v", c.a, c.b)
		}
	}
	for _, bad := range [][]Weighted{w(1, math.NaN()), w(1, math.Inf(1)), w(2, 1e200)} {
		if got := Cosine(bad, w(1, 1, 2, 1)); !math.IsNaN(got) {
			t.Errorf("Cosine(%v, ...) = %v, want NaN", bad, got)
		}
	}
}

func TestEditSimilarity(t *testing.T) {
	cases := []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"", "abc", 0},
		{"abc", "abc", 1},
		{"kitten", "sitting", 1 - 3.0/7},
		{"flaw", "lawn", 0.5},
		{"héllo", "hello", 0.8}, // runes, not bytes
		{"日本語", "日本", 1 - 1.0/3},
		{"abcdef", "azcdxf", 1 - 2.0/6},
		{"prefix-middle-suffix", "prefix-muddle-suffix", 1 - 1.0/20},
		{"ab", "ba", 0},
		{"\xff", "\xfe", 1}, // both decode to U+FFFD
	}
	for _, c := range cases {
		if got := EditSimilarity(c.a, c.b); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("EditSimilarity(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := EditSimilarity(c.b, c.a); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("EditSimilarity is not symmetric on %q, %q", c.a, c.b)
		}
	}
	// Against a plain full-matrix Levenshtein.
	r := rand.New(rand.NewPCG(7, 7))
	for range 500 {
		a, b := randomString(r, r.IntN(30)), randomString(r, r.IntN(30))
		want := naiveLevenshtein([]rune(a), []rune(b))
		if got := levenshtein([]rune(a), []rune(b)); got != want {
			t.Fatalf("levenshtein(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
}

func TestEditSimilarityCap(t *testing.T) {
	long := bytes.Repeat([]byte("ab"), MaxEditRunes) // 2*MaxEditRunes runes
	a := string(long)
	b := a[:MaxEditRunes] + "zzzz" // differs only beyond the cap
	if got := EditSimilarity(a, b); got != 1 {
		t.Errorf("strings equal in their first MaxEditRunes runes: %v, want 1", got)
	}
	c := "x" + a[1:]
	if got, want := EditSimilarity(a, c), 1-1.0/MaxEditRunes; got != want {
		t.Errorf("one substitution within the cap: %v, want %v", got, want)
	}
}

func randomString(r *rand.Rand, n int) string {
	const alphabet = "aabcé日"
	rs := []rune(alphabet)
	out := make([]rune, n)
	for i := range out {
		out[i] = rs[r.IntN(len(rs))]
	}
	return string(out)
}

func naiveLevenshtein(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
		}
	}
	return d[len(a)][len(b)]
}
