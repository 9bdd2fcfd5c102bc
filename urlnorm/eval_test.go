package urlnorm

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/evaldata"
)

// The urlcanon test data (../shared/eval/url-canonicalization-urlcanon) and the options
// each file is measured with. urlcanon keeps fragments in its semantic_precise and whatwg
// canonicalizers, so those files are measured with KeepFragment; its aggressive one
// removes them, as the default does.
var evalFiles = []struct {
	name string
	opts Options
	goal float64 // the least share of cases that must match; 0 for none
}{
	{"semantic_precise.json", Options{Profile: Safe, KeepFragment: true}, 0.95},
	{"supplemental_whatwg.json", Options{Profile: WHATWG, KeepFragment: true}, 0.77},
	{"aggressive.json", Options{Profile: Aggressive}, 0},
}

// evalDir returns the folder of the urlcanon data, or skips the test without it.
func evalDir(t testing.TB) string {
	root, err := evaldata.Root()
	evaldata.Need(t, err)
	return filepath.Join(root, "url-canonicalization-urlcanon")
}

// loadJSON reads a urlcanon test file into v. urlcanon reads its JSON as Latin-1 and turns
// every string back into bytes, so "\u00e2\u0098\u0083" in a file is the three bytes of
// the UTF-8 snowman and "\u0080" is the lone byte 0x80; fromLatin1 does the same.
func loadJSON(t testing.TB, name string, v any) {
	b, err := os.ReadFile(filepath.Join(evalDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	runes := make([]rune, len(b))
	for i, c := range b {
		runes[i] = rune(c)
	}
	if err := json.Unmarshal([]byte(string(runes)), v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// fromLatin1 returns the bytes that the code points of s, all below 256, stand for.
func fromLatin1(t testing.TB, s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 255 {
			t.Fatalf("%q: code point %U is not a byte", s, r)
		}
		b = append(b, byte(r))
	}
	return string(b)
}

// loadCases reads a urlcanon file of input -> expected URL.
func loadCases(t testing.TB, name string) map[string]string {
	var m map[string]string
	loadJSON(t, name, &m)
	cases := make(map[string]string, len(m))
	for in, want := range m {
		cases[fromLatin1(t, in)] = fromLatin1(t, want)
	}
	return cases
}

// result returns what c gives for in, or "error: " and the message.
func result(c *Canonicalizer, in string) string {
	got, err := c.Canonicalize(in)
	if err != nil {
		return "error: " + err.Error()
	}
	return got
}

// deviation is one line of testdata/deviations.txt: a case of a urlcanon file where this
// package gives another result, and why.
type deviation struct {
	file, input, got, reason string
}

// loadDeviations reads testdata/deviations.txt: after "#" comments, one deviation per
// line, four fields separated by tabs: the file, the input and our result as Go quoted
// strings, and the reason.
func loadDeviations(t *testing.T) map[[2]string]deviation {
	f, err := os.Open(filepath.Join("testdata", "deviations.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	devs := make(map[[2]string]deviation)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 4 || fields[3] == "" {
			t.Fatalf("deviations.txt:%d: want file, input, result and reason separated by tabs", n)
		}
		d := deviation{file: fields[0], reason: fields[3]}
		for i, p := range []*string{&d.input, &d.got} {
			if *p, err = strconv.Unquote(fields[1+i]); err != nil {
				t.Fatalf("deviations.txt:%d: field %d: %v", n, 2+i, err)
			}
		}
		key := [2]string{d.file, d.input}
		if _, dup := devs[key]; dup {
			t.Fatalf("deviations.txt:%d: %s %q listed twice", n, d.file, d.input)
		}
		devs[key] = d
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return devs
}

// TestEvalURLCanon measures each profile against the urlcanon file it matches: the share
// of inputs whose result is exactly the expected URL. Every other case must be listed in
// testdata/deviations.txt with the result we give and a reason, and every listed case
// must still deviate so: a fix and a regression both fail until the list is updated.
// It also checks the equivalences the data implies: inputs with the same expected URL
// must get the same key (and it reports keys shared by inputs the data keeps apart).
func TestEvalURLCanon(t *testing.T) {
	devs := loadDeviations(t)
	seen := make(map[[2]string]bool)
	for _, f := range evalFiles {
		c, err := New(f.opts)
		if err != nil {
			t.Fatal(err)
		}
		cases := loadCases(t, f.name)
		inputs := slices.Sorted(maps.Keys(cases))
		match := 0
		byWant := make(map[string]map[string]bool) // expected URL -> our results
		for _, in := range inputs {
			want, got := cases[in], result(c, in)
			key := [2]string{f.name, in}
			d, listed := devs[key]
			seen[key] = true
			if !listed {
				// A listed case does not aim at the expected URL, so it says nothing of
				// which inputs should share a key.
				if byWant[want] == nil {
					byWant[want] = make(map[string]bool)
				}
				byWant[want][got] = true
			}
			switch {
			case got == want:
				match++
				if listed {
					t.Errorf("%s: %q now gives the expected %q; remove it from testdata/deviations.txt", f.name, in, want)
				}
			case !listed:
				t.Errorf("%s: %q gives %q, want %q; fix it, or list it in testdata/deviations.txt with a reason:\n%s\t%s\t%s\tREASON",
					f.name, in, got, want, f.name, strconv.Quote(in), strconv.Quote(got))
			case d.got != got:
				t.Errorf("%s: %q gives %q, deviations.txt says %q (want %q); update the list", f.name, in, got, d.got, want)
			}
		}
		// split: expected URLs whose inputs got different keys; merged: keys given to
		// inputs with different expected URLs.
		split, merged := 0, 0
		byGot := make(map[string]map[string]bool)
		for want, gots := range byWant {
			if len(gots) > 1 {
				split++
				t.Errorf("%s: the inputs expected to give %q get %d different keys", f.name, want, len(gots))
			}
			for got := range gots {
				if byGot[got] == nil {
					byGot[got] = make(map[string]bool)
				}
				byGot[got][want] = true
			}
		}
		for _, wants := range byGot {
			if len(wants) > 1 {
				merged++
			}
		}
		share := float64(match) / float64(len(inputs))
		t.Logf("%-26s %-10s cases %4d  matching %4d  share %6.2f%%  expected URLs %3d, split %d, merged %d",
			f.name, f.opts.Profile, len(inputs), match, 100*share, len(byWant), split, merged)
		if share < f.goal {
			t.Errorf("%s: share %.4f is below the goal %.2f", f.name, share, f.goal)
		}
	}
	for key := range devs {
		if !seen[key] {
			t.Errorf("deviations.txt lists %s %q, which is not a case of that file", key[0], key[1])
		}
	}
}

// TestEvalPathDots checks dot-segment removal against path_dots.json, which urlcanon
// made in a browser: each path after "http://h" (special: a backslash is a slash) and after
// "foo://h" (not special; or "foo:" for a path that starts with a backslash, which after a
// host would be part of it), under the WHATWG profile.
func TestEvalPathDots(t *testing.T) {
	var files map[string]map[string]string
	loadJSON(t, "path_dots.json", &files)
	c, _ := New(Options{Profile: WHATWG, KeepFragment: true})
	for kind, prefix := range map[string]string{"special": "http://h", "nonspecial": "foo://h"} {
		paths := files[kind]
		if len(paths) == 0 {
			t.Fatalf("path_dots.json has no %q cases", kind)
		}
		match := 0
		for p, want := range paths {
			pre := prefix
			if kind == "special" {
				want = strings.ReplaceAll(want, "\\", "/")
			} else if strings.HasPrefix(p, "\\") {
				pre = "foo:"
			}
			if got := result(c, pre+p); got == pre+want {
				match++
			} else {
				t.Errorf("%s %q: got %q, want %q", kind, pre+p, got, pre+want)
			}
		}
		t.Logf("path_dots.json %-10s whatwg  cases %4d  matching %4d", kind, len(paths), match)
	}
}

// TestEvalFunkyIPv4 checks the IPv4 forms of funky_ipv4.json: a host that is an address
// becomes dotted decimal. One that is not (null in the file) is kept as written if it is a
// domain; if it ends in a number, the current standard rejects it, where urlcanon keeps it.
func TestEvalFunkyIPv4(t *testing.T) {
	var hosts map[string]*string
	loadJSON(t, "funky_ipv4.json", &hosts)
	for _, p := range []Profile{WHATWG, Safe} {
		c, _ := New(Options{Profile: p})
		match := 0
		for host, ip := range hosts {
			got, err := c.Canonicalize("http://" + host)
			switch {
			case ip == nil && err == nil && got != "http://"+host+"/":
				t.Errorf("%v: host %q: got %q; want it rejected or kept as written", p, host, got)
			case ip != nil && (err != nil || got != "http://"+*ip+"/"):
				t.Errorf("%v: host %q: got %q, %v; want %q", p, host, got, err, "http://"+*ip+"/")
			default:
				match++
			}
		}
		t.Logf("funky_ipv4.json %-10v cases %4d  matching %4d", p, len(hosts), match)
	}
}

// TestIdempotent canonicalizes every input of the urlcanon files, and its result again,
// under every profile, with and without the fragment: the second result must be the
// first.
func TestIdempotent(t *testing.T) {
	var inputs []string
	var list []string
	loadJSON(t, "idempotence.json", &list)
	for _, s := range list {
		inputs = append(inputs, fromLatin1(t, s))
	}
	for _, f := range evalFiles {
		for in := range loadCases(t, f.name) {
			inputs = append(inputs, in)
		}
	}
	checked, total := 0, 0
	for _, p := range []Profile{Safe, Aggressive, WHATWG} {
		for _, keep := range []bool{false, true} {
			c, _ := New(Options{Profile: p, KeepFragment: keep})
			for _, in := range inputs {
				total++
				once, err := c.Canonicalize(in)
				if err != nil {
					continue
				}
				checked++
				if twice := result(c, once); twice != once {
					t.Errorf("%v keep=%v: %q -> %q -> %q", p, keep, in, once, twice)
				}
			}
		}
	}
	if checked < total*9/10 {
		t.Errorf("only %d of %d inputs canonicalized without error", checked, total)
	}
}
