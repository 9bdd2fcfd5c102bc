package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/simhash"
)

// sampleDir holds the repository's sample files, the ones README's examples use.
const sampleDir = "../../../../sample"

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	return readFile(t, filepath.Join("testdata", name))
}

func readSample(t *testing.T, name string) string {
	t.Helper()
	return readFile(t, filepath.Join(sampleDir, name))
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFindallUpstreamBasic runs findall on simhash-py's basic set and compares the output
// with the pairs simhash-cpp prints, in its format, for every block count it was run with.
func TestFindallUpstreamBasic(t *testing.T) {
	input := readTestdata(t, "basic.txt")
	want := readTestdata(t, "basic-k3.golden")
	if n := strings.Count(want, "\n"); n != 24 {
		t.Fatalf("golden file has %d pairs, want 24", n)
	}
	for blocks := 4; blocks <= 9; blocks++ {
		for _, threads := range []string{"1", "2"} {
			stdout, stderr, code := run(t, input, "findall", "--blocks", strconv.Itoa(blocks), "--distance", "3", "--threads", threads)
			if code != ExitOK || stderr != "" {
				t.Fatalf("blocks %d: exit code %d, stderr %q", blocks, code, stderr)
			}
			if stdout != want {
				t.Errorf("blocks %d threads %s: got\n%s\nwant\n%s", blocks, threads, stdout, want)
			}
		}
	}
	// The automatic design and a file argument give the same pairs.
	stdout, stderr, code := run(t, "", "findall", "--distance", "3", filepath.Join("testdata", "basic.txt"))
	if code != ExitOK || stdout != want {
		t.Errorf("automatic design from a file: exit code %d, stderr %q, output\n%s", code, stderr, stdout)
	}
}

func TestFindallHexInput(t *testing.T) {
	var hex strings.Builder
	for _, line := range strings.Fields(readTestdata(t, "basic.txt")) {
		v, _ := strconv.ParseUint(line, 10, 64)
		fmt.Fprintf(&hex, "  0x%X\r\n\n", v)
	}
	stdout, stderr, code := run(t, hex.String(), "findall", "--distance", "3", "-")
	if code != ExitOK {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	if want := readTestdata(t, "basic-k3.golden"); stdout != want {
		t.Errorf("got\n%s\nwant\n%s", stdout, want)
	}
}

func TestFindallFormats(t *testing.T) {
	// 0xce, 0xef, 0xff and 0xef00, 0xff00: two clusters at distance 2.
	input := "255\n239\n206\n65280\n61184\n51\n255\n"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--distance", "2"}, "[206, 239]\n[239, 255]\n[61184, 65280]\n"},
		{[]string{"--distance", "2", "--tsv"}, "206\t239\t2\n239\t255\t1\n61184\t65280\t1\n"},
		{[]string{"--distance", "2", "--clusters"}, "[206, 239, 255]\n[61184, 65280]\n"},
		{[]string{"--distance", "2", "--clusters", "--tsv"}, "206\t239\t255\n61184\t65280\n"},
		{[]string{"--distance", "3", "--tsv=true"}, "206\t239\t2\n206\t255\t3\n239\t255\t1\n61184\t65280\t1\n"},
		{[]string{"--distance", "0"}, ""},
		{[]string{"--distance", "0", "--clusters"}, ""},
	}
	for _, tt := range tests {
		stdout, stderr, code := run(t, input, append([]string{"findall"}, tt.args...)...)
		if code != ExitOK || stderr != "" {
			t.Errorf("%q: exit code %d, stderr %q", tt.args, code, stderr)
		}
		if stdout != tt.want {
			t.Errorf("%q: got\n%s\nwant\n%s", tt.args, stdout, tt.want)
		}
	}
}

func TestFindallErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.txt")
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		err   string
	}{
		{"bad line", "1\n2\n\n0x3\nabc\n", []string{"--distance", "3"}, ExitError,
			"neardup findall: stdin:5: \"abc\" is not a 64-bit unsigned integer (decimal or 0x-hex)\n"},
		{"bad line in file", "", []string{"--distance", "3", filepath.Join("testdata", "README.md")}, ExitError,
			"neardup findall: " + filepath.Join("testdata", "README.md") + ":1: \"# cli test data\" is not"},
		{"missing file", "", []string{"--distance", "3", missing}, ExitError, "neardup findall: open " + missing + ": no such file"},
		{"impossible design", "1\n", []string{"--blocks", "3", "--distance", "3"}, ExitUsage,
			"neardup findall: hamming: invalid table design: 3 blocks must be more than the distance 3; use at least 4\n"},
		{"too many blocks", "1\n", []string{"--blocks", "65", "--distance", "3"}, ExitUsage, "use at most 64"},
		{"too many tables", "1\n", []string{"--blocks", "64", "--distance", "8"}, ExitUsage, "use fewer blocks"},
		{"distance missing", "1\n", nil, ExitUsage, "--distance is required"},
		{"distance negative", "1\n", []string{"--distance", "-1"}, ExitUsage, "--distance -1 is negative; use 0 to 63"},
		{"distance too large", "1\n", []string{"--distance", "64"}, ExitUsage, "use 0 to 63"},
		{"blocks negative", "1\n", []string{"--distance", "3", "--blocks", "-2"}, ExitUsage, "use 0 (automatic) or 4 to 64"},
		{"threads negative", "1\n", []string{"--distance", "3", "--threads", "-1"}, ExitUsage, "--threads -1 is negative"},
		{"bad format", "1\n", []string{"--distance", "3", "--format", "csv"}, ExitUsage, `invalid value "csv" for flag --format: "csv" is not a format; use --tsv`},
		{"two files", "", []string{"--distance", "3", "a", "b"}, ExitUsage, "give one input file, not 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tt.stdin, append([]string{"findall"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
			if !strings.Contains(stderr, tt.err) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.err)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
}

func TestFindallWriteError(t *testing.T) {
	var stderr bytes.Buffer
	code := Main([]string{"findall", "--distance", "3"}, strings.NewReader(readTestdata(t, "basic.txt")), failWriter{}, &stderr)
	if code != ExitError || !strings.Contains(stderr.String(), "neardup findall: writing output: io: read/write on closed pipe") {
		t.Errorf("exit code %d, stderr %q", code, stderr.String())
	}
}

func TestFindallVerbose(t *testing.T) {
	stdout, stderr, code := run(t, readTestdata(t, "basic.txt"), "findall", "--distance", "3", "--verbose", "--threads", "1")
	if code != ExitOK || stdout != readTestdata(t, "basic-k3.golden") {
		t.Fatalf("exit code %d, stdout %q", code, stdout)
	}
	for _, s := range []string{"20 fingerprints from stdin", "(automatic), distance 3", "1 threads", "24 pairs"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr %q does not contain %q", stderr, s)
		}
	}
	_, stderr, _ = run(t, "1\n", "findall", "--distance", "3", "--blocks", "6", "--verbose")
	if !strings.Contains(stderr, "6 blocks (given), distance 3, 20 tables") {
		t.Errorf("stderr %q does not describe the given design", stderr)
	}
}

// TestFindallFingerprints is the end-to-end path: fingerprint documents with the simhash
// package, then let findall pair the near-duplicates.
func TestFindallFingerprints(t *testing.T) {
	text := strings.Repeat("the quick brown fox jumps over the lazy dog and runs far away into the deep dark forest ", 3)
	docs := []string{
		text,
		strings.Replace(text, "lazy", "sleepy", 1),
		text + "!!!", // punctuation only: the same fingerprint
		"an entirely different sentence about near duplicate detection with simhash fingerprints",
	}
	var in strings.Builder
	fps := make([]uint64, len(docs))
	for i, d := range docs {
		fps[i] = simhash.SchemeNeardup.Fingerprint(d)
		fmt.Fprintf(&in, "%d\n", fps[i])
	}
	k := simhash.Distance(fps[0], fps[1])
	if k == 0 || k > 20 || fps[2] != fps[0] {
		t.Fatalf("unexpected fingerprints %x", fps)
	}
	var want strings.Builder
	a, b := min(fps[0], fps[1]), max(fps[0], fps[1])
	fmt.Fprintf(&want, "%d\t%d\t%d\n", a, b, k)
	if simhash.Distance(fps[0], fps[3]) <= k {
		t.Fatalf("the unrelated document is within %d bits", k)
	}
	stdout, stderr, code := run(t, in.String(), "findall", "--distance", strconv.Itoa(k), "--tsv")
	if code != ExitOK || stdout != want.String() {
		t.Errorf("exit code %d, stderr %q, got %q, want %q", code, stderr, stdout, want.String())
	}
}
