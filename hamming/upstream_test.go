package hamming

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
)

// The vectors in testdata/permutations.json and testdata/findall.json were printed by
// simhash-cpp itself (built from upstream sources outside this repository with a
// throwaway driver); their "about" fields say exactly what was run. Neither the driver nor
// upstream code is part of this module.

// upstreamHex is a uint64 written in JSON as a hex string ("0x0123..."), so that no JSON
// tool rounds it through a float64.
type upstreamHex uint64

func (h *upstreamHex) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := strconv.ParseUint(s, 0, 64)
	*h = upstreamHex(v)
	return err
}

// upstreamPerm is one permutation: [search_mask, apply(inputs[0]), ..., apply(inputs[7])].
type upstreamPerm []upstreamHex

type upstreamDesign struct {
	Blocks int            `json:"blocks"`
	K      int            `json:"k"`
	Count  int            `json:"count"`
	SHA256 string         `json:"sha256"`
	Perms  []upstreamPerm `json:"permutations"` // every permutation, for small designs
	First  []upstreamPerm `json:"first"`        // the first ones, for large designs
	Last   []upstreamPerm `json:"last"`         // the last ones, for large designs
}

func upstreamLoad(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// upstreamCheckPerm compares one permutation with its upstream row.
func upstreamCheckPerm(t *testing.T, d upstreamDesign, i int, p Permutation, want upstreamPerm, inputs []upstreamHex) {
	t.Helper()
	if len(want) != 1+len(inputs) {
		t.Fatalf("(%d, %d) permutation %d: malformed row of %d values", d.Blocks, d.K, i, len(want))
	}
	if got := p.SearchMask(); got != uint64(want[0]) {
		t.Errorf("(%d, %d) permutation %d: SearchMask() = %#016x, upstream %#016x", d.Blocks, d.K, i, got, uint64(want[0]))
	}
	for j, x := range inputs {
		got := p.Apply(uint64(x))
		if got != uint64(want[1+j]) {
			t.Errorf("(%d, %d) permutation %d: Apply(%#016x) = %#016x, upstream %#016x", d.Blocks, d.K, i, uint64(x), got, uint64(want[1+j]))
		}
		if r := p.Reverse(got); r != uint64(x) {
			t.Errorf("(%d, %d) permutation %d: Reverse(Apply(%#016x)) = %#016x", d.Blocks, d.K, i, uint64(x), r)
		}
	}
}

func TestUpstreamPermutations(t *testing.T) {
	var file struct {
		Inputs  []upstreamHex    `json:"inputs"`
		Designs []upstreamDesign `json:"designs"`
	}
	upstreamLoad(t, "testdata/permutations.json", &file)
	if len(file.Inputs) != 8 || len(file.Designs) == 0 {
		t.Fatalf("testdata/permutations.json: %d inputs and %d designs", len(file.Inputs), len(file.Designs))
	}
	for _, d := range file.Designs {
		perms, err := Permutations(d.Blocks, d.K)
		if err != nil {
			t.Errorf("Permutations(%d, %d): %v", d.Blocks, d.K, err)
			continue
		}
		if len(perms) != d.Count {
			t.Errorf("Permutations(%d, %d) returned %d permutations, upstream %d", d.Blocks, d.K, len(perms), d.Count)
			continue
		}
		// The digest covers every permutation, in order, of the designs listed in part.
		sum := sha256.New()
		var buf [8]byte
		for _, p := range perms {
			sum.Write(binary.BigEndian.AppendUint64(buf[:0], p.SearchMask()))
			for _, x := range file.Inputs {
				sum.Write(binary.BigEndian.AppendUint64(buf[:0], p.Apply(uint64(x))))
			}
		}
		if got := hex.EncodeToString(sum.Sum(nil)); got != d.SHA256 {
			t.Errorf("Permutations(%d, %d): digest of masks and outputs %s, upstream %s", d.Blocks, d.K, got, d.SHA256)
		}
		switch {
		case d.Perms != nil:
			if len(d.Perms) != d.Count {
				t.Fatalf("(%d, %d): %d rows for %d permutations", d.Blocks, d.K, len(d.Perms), d.Count)
			}
			for i, want := range d.Perms {
				upstreamCheckPerm(t, d, i, perms[i], want, file.Inputs)
			}
		case d.First != nil && d.Last != nil:
			for i, want := range d.First {
				upstreamCheckPerm(t, d, i, perms[i], want, file.Inputs)
			}
			for i, want := range d.Last {
				j := len(perms) - len(d.Last) + i
				upstreamCheckPerm(t, d, j, perms[j], want, file.Inputs)
			}
		default:
			t.Fatalf("(%d, %d): no permutations listed", d.Blocks, d.K)
		}
	}
}

func TestUpstreamFindAll(t *testing.T) {
	var file struct {
		Sets []struct {
			Name   string        `json:"name"`
			Values []upstreamHex `json:"values"`
		} `json:"sets"`
		Cases []struct {
			Set    string           `json:"set"`
			Blocks int              `json:"blocks"`
			K      int              `json:"k"`
			Pairs  [][2]upstreamHex `json:"pairs"`
		} `json:"cases"`
	}
	upstreamLoad(t, "testdata/findall.json", &file)
	sets := make(map[string][]uint64)
	for _, s := range file.Sets {
		vals := make([]uint64, len(s.Values))
		for i, v := range s.Values {
			vals[i] = uint64(v)
		}
		sets[s.Name] = vals
	}
	if len(file.Cases) == 0 {
		t.Fatal("testdata/findall.json: no cases")
	}
	for _, c := range file.Cases {
		fps, ok := sets[c.Set]
		if !ok {
			t.Fatalf("case refers to unknown set %q", c.Set)
		}
		want := make([]Pair, len(c.Pairs))
		for i, p := range c.Pairs {
			want[i] = Pair{A: uint64(p[0]), B: uint64(p[1])}
		}
		in := slices.Clone(fps)
		got, err := FindAll(in, c.Blocks, c.K)
		if err != nil {
			t.Errorf("%s: FindAll(blocks %d, k %d): %v", c.Set, c.Blocks, c.K, err)
			continue
		}
		if !slices.Equal(in, fps) {
			t.Errorf("%s: FindAll(blocks %d, k %d) modified its input", c.Set, c.Blocks, c.K)
		}
		less := func(a, b Pair) int {
			if c := cmp.Compare(a.A, b.A); c != 0 {
				return c
			}
			return cmp.Compare(a.B, b.B)
		}
		if !slices.IsSortedFunc(got, less) {
			t.Errorf("%s: FindAll(blocks %d, k %d) is not sorted by (A, B)", c.Set, c.Blocks, c.K)
		}
		slices.SortFunc(got, less)
		slices.SortFunc(want, less)
		if !slices.Equal(got, want) {
			missing, extra := upstreamDiff(want, got)
			t.Errorf("%s: FindAll(blocks %d, k %d) returned %d pairs, upstream %d; missing %v, extra %v",
				c.Set, c.Blocks, c.K, len(got), len(want), upstreamFirst(missing), upstreamFirst(extra))
		}
	}
}

// upstreamDiff returns the pairs only in want and only in got.
func upstreamDiff(want, got []Pair) (missing, extra []Pair) {
	in := func(s []Pair, p Pair) bool { return slices.Contains(s, p) }
	for _, p := range want {
		if !in(got, p) {
			missing = append(missing, p)
		}
	}
	for _, p := range got {
		if !in(want, p) {
			extra = append(extra, p)
		}
	}
	return missing, extra
}

// upstreamFirst formats up to five pairs in hex, to keep error messages short.
func upstreamFirst(s []Pair) []string {
	var out []string
	for _, p := range s[:min(len(s), 5)] {
		out = append(out, fmt.Sprintf("(%#016x, %#016x)", p.A, p.B))
	}
	return out
}
