package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// wantSignature computes the signature neardup minhash should write for text, by calling
// the packages directly.
func wantSignature(t *testing.T, text string, opt shingle.Options, h minhash.Hasher) minhash.Signature {
	t.Helper()
	features, err := shingle.Hashes(text, opt)
	if err != nil {
		t.Fatal(err)
	}
	return h.Signature(features)
}

// parseHexLine splits one hex output line into its signature and name.
func parseHexLine(t *testing.T, line string) (minhash.Signature, string) {
	t.Helper()
	digits, name, ok := strings.Cut(line, "  ")
	if !ok {
		t.Fatalf("line %q has no two spaces", line)
	}
	b, err := hex.DecodeString(digits)
	if err != nil || len(b)%4 != 0 || strings.ToLower(digits) != digits {
		t.Fatalf("line %q: %q is not lowercase hex of 32-bit values (%v)", line, digits, err)
	}
	sig := make(minhash.Signature, len(b)/4)
	for i := range sig {
		sig[i] = binary.BigEndian.Uint32(b[4*i:])
	}
	return sig, name
}

func writeTemp(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMinhashHex(t *testing.T) {
	dir := t.TempDir()
	texts := []string{
		readSample(t, "para-a.txt"),
		"Ünïcödé tëxt, İstanbul ΣΊΣΥΦΟΣ\xff\xfe invalid UTF-8 too",
		"",
	}
	var names []string
	for i, text := range texts {
		names = append(names, writeTemp(t, dir, fmt.Sprintf("%d.txt", i), text))
	}
	tests := []struct {
		flags []string
		opt   shingle.Options
		h     minhash.Hasher
	}{
		{nil, shingle.Options{}, minhash.Hasher{}},
		{[]string{"--k", "64"}, shingle.Options{}, minhash.Hasher{K: 64}},
		{[]string{"--k=1", "--seed", "18446744073709551615"}, shingle.Options{}, minhash.Hasher{K: 1, Seed: 1<<64 - 1}},
		{[]string{"--seed", "7", "--unit", "chars", "--k-shingle", "3"}, shingle.Options{Unit: shingle.Chars, K: 3}, minhash.Hasher{Seed: 7}},
		{[]string{"--k-shingle", "2", "--k", "4096"}, shingle.Options{K: 2}, minhash.Hasher{K: 4096}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.flags, " "), func(t *testing.T) {
			stdout, stderr, code := run(t, "", append(append([]string{"minhash"}, tt.flags...), names...)...)
			if code != ExitOK || stderr != "" {
				t.Fatalf("exit code %d, stderr %q", code, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if len(lines) != len(texts) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(texts), stdout)
			}
			k := tt.h.K
			if k == 0 {
				k = minhash.DefaultK
			}
			for i, line := range lines {
				sig, name := parseHexLine(t, line)
				if name != names[i] {
					t.Errorf("line %d: name %q, want %q", i+1, name, names[i])
				}
				if len(sig) != k {
					t.Errorf("line %d: %d values, want %d", i+1, len(sig), k)
				}
				if want := wantSignature(t, texts[i], tt.opt, tt.h); !slices.Equal(sig, want) {
					t.Errorf("line %d: signature differs from minhash.Hasher.Signature of the shingles", i+1)
				}
			}
		})
	}

	// The empty document's signature is all minhash.Empty.
	stdout, _, _ := run(t, "", "minhash", "--k", "2", names[2])
	if want := "ffffffffffffffff  " + names[2] + "\n"; stdout != want {
		t.Errorf("empty file: got %q, want %q", stdout, want)
	}

	// Standard input, by default and as "-", is named "-".
	for _, extra := range [][]string{nil, {"-"}} {
		stdout, _, code := run(t, texts[0], append([]string{"minhash", "--k", "8"}, extra...)...)
		sig, name := parseHexLine(t, strings.TrimSuffix(stdout, "\n"))
		if code != ExitOK || name != "-" || !slices.Equal(sig, wantSignature(t, texts[0], shingle.Options{}, minhash.Hasher{K: 8})) {
			t.Errorf("stdin %q: exit code %d, output %q", extra, code, stdout)
		}
	}
}

func TestMinhashLines(t *testing.T) {
	lines := []string{"first document, the quick brown fox jumps over the lazy dog", "", "third \xff document\r", "fourth without newline"}
	in := strings.Join(lines, "\n")
	file := writeTemp(t, t.TempDir(), "lines.txt", in)
	for _, name := range []string{"-", file} {
		stdout, stderr, code := run(t, in, "minhash", "--lines", "--k", "16", name)
		if code != ExitOK || stderr != "" {
			t.Fatalf("%s: exit code %d, stderr %q", name, code, stderr)
		}
		got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		if len(got) != len(lines) {
			t.Fatalf("%s: %d lines, want %d:\n%s", name, len(got), len(lines), stdout)
		}
		for i, line := range got {
			sig, gotName := parseHexLine(t, line)
			if want := fmt.Sprintf("%s:%d", name, i+1); gotName != want {
				t.Errorf("name %q, want %q", gotName, want)
			}
			want := wantSignature(t, strings.TrimSuffix(lines[i], "\r"), shingle.Options{}, minhash.Hasher{K: 16})
			if !slices.Equal(sig, want) {
				t.Errorf("%s line %d: wrong signature", name, i+1)
			}
		}
	}
}

func TestMinhashJSON(t *testing.T) {
	dir := t.TempDir()
	a := writeTemp(t, dir, "a.txt", readSample(t, "para-a.txt"))
	b := writeTemp(t, dir, `b "<&>".txt`, readSample(t, "para-b.txt"))
	stdout, stderr, code := run(t, "", "minhash", "--json", "--k", "32", "--seed", "9", "--unit", "chars", a, b)
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit code %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines:\n%s", stdout)
	}
	for i, name := range []string{a, b} {
		var rec struct {
			Name      string   `json:"name"`
			K         int      `json:"k"`
			Seed      uint64   `json:"seed"`
			Unit      string   `json:"unit"`
			KShingle  int      `json:"k_shingle"`
			Signature []uint32 `json:"signature"`
		}
		dec := json.NewDecoder(strings.NewReader(lines[i]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, lines[i])
		}
		if rec.Name != name || rec.K != 32 || rec.Seed != 9 || rec.Unit != "chars" || rec.KShingle != shingle.DefaultCharK {
			t.Errorf("line %d: %+v", i+1, rec)
		}
		text := readSample(t, "para-"+string(rune('a'+i))+".txt")
		if want := wantSignature(t, text, shingle.Options{Unit: shingle.Chars}, minhash.Hasher{K: 32, Seed: 9}); !slices.Equal(rec.Signature, want) {
			t.Errorf("line %d: wrong signature", i+1)
		}
	}
	if strings.Contains(stdout, `\u003c`) {
		t.Errorf("names are HTML-escaped: %s", lines[1])
	}

	// With --lines the name is NAME:LINE.
	stdout, _, _ = run(t, "one two\nthree\n", "minhash", "--format=json", "--lines", "--k", "1")
	want := `{"name":"-:1","k":1,"seed":0,"unit":"words","k_shingle":5,"signature":[` + fmt.Sprint(wantSignature(t, "one two", shingle.Options{}, minhash.Hasher{K: 1})[0]) + "]}\n"
	if !strings.HasPrefix(stdout, want) || !strings.Contains(stdout, `"name":"-:2"`) {
		t.Errorf("got\n%s\nwant first line\n%s", stdout, want)
	}
}

func TestMinhashErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeTemp(t, dir, "good.txt", "some text")
	missing := filepath.Join(dir, "missing.txt")

	// A missing file is reported and skipped; the others are still processed.
	stdout, stderr, code := run(t, "", "minhash", "--k", "4", missing, good, dir)
	if code != ExitError {
		t.Errorf("exit code %d, want %d", code, ExitError)
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}  ` + regexp.QuoteMeta(good) + "\n$").MatchString(stdout) {
		t.Errorf("stdout %q has not just the good file's signature", stdout)
	}
	for _, s := range []string{"neardup minhash: open " + missing + ": no such file", "neardup minhash: " + dir + " is a directory"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr %q does not contain %q", stderr, s)
		}
	}

	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--k", "0"}, "--k 0 is out of range; use 1 to 4096"},
		{[]string{"--k", "-1"}, "--k -1 is out of range"},
		{[]string{"--k", fmt.Sprint(minhash.MaxK + 1)}, "--k 4097 is out of range"},
		{[]string{"--k", "x"}, `invalid value "x" for flag --k`},
		{[]string{"--seed", "-1"}, `invalid value "-1" for flag --seed`},
		{[]string{"--format", "csv"}, `invalid value "csv" for flag --format: "csv" is not a format; use --json, or nothing for hex`},
		{[]string{"--k-shingle", "-1"}, "--k-shingle -1 is negative"},
		{[]string{"--k-shingle", "1025"}, "--k-shingle 1025 is too large; use at most 1024"},
		{[]string{"--unit", "lines"}, `invalid value "lines" for flag --unit`},
	} {
		stdout, stderr, code := run(t, "text", append([]string{"minhash"}, append(tt.args, good)...)...)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "neardup minhash: "+tt.msg) {
			t.Errorf("%q: exit code %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, stdout, stderr, tt.msg)
		}
	}

	var errOut bytes.Buffer
	for _, format := range []string{"hex", "json"} {
		errOut.Reset()
		code = Main([]string{"minhash", "--format", format, good, good}, nil, failWriter{}, &errOut)
		if code != ExitError || strings.Count(errOut.String(), "writing output") != 1 {
			t.Errorf("%s write error: exit code %d, stderr %q", format, code, errOut.String())
		}
	}
}

func TestMinhashNameEscaping(t *testing.T) {
	name := writeTemp(t, t.TempDir(), "a\\b\nc", "text")
	stdout, _, code := run(t, "", "minhash", "--k", "1", name)
	sig := wantSignature(t, "text", shingle.Options{}, minhash.Hasher{K: 1})
	want := fmt.Sprintf(`\%08x  %s`+"\n", sig[0], strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(name))
	if code != ExitOK || stdout != want {
		t.Errorf("got %q, want %q", stdout, want)
	}
}

// TestMinhashHelpExample keeps the example in the help true.
func TestMinhashHelpExample(t *testing.T) {
	stdout, _, code := run(t, "The quick brown fox jumps over the lazy dog\n", "minhash", "--k", "4")
	if code != ExitOK || len(stdout) != 4*8+4 {
		t.Fatalf("exit code %d, output %q", code, stdout)
	}
	help, _, _ := run(t, "", "minhash", "--help")
	if !strings.Contains(help, "  "+stdout) {
		t.Errorf("help does not show %q", stdout)
	}
}
