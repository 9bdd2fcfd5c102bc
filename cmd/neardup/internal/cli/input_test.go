package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParseFingerprint(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		err  string // substring of the error, "" for none
	}{
		{in: "0", want: 0},
		{in: "42", want: 42},
		{in: "007", want: 7},
		{in: "18446744073709551615", want: 1<<64 - 1},
		{in: "0xff", want: 255},
		{in: "0XFF", want: 255},
		{in: "0xDeadBeef", want: 0xdeadbeef},
		{in: "0xffffffffffffffff", want: 1<<64 - 1},
		{in: "0x0000ffffffffffffffff", want: 1<<64 - 1},
		{in: "9999999999999999999", want: 9999999999999999999},
		{in: "12345678901234567890", want: 12345678901234567890},
		{in: "0000000000000000000000042", want: 42},
		{in: "18446744073709551616", err: "out of range"},
		{in: "20000000000000000000", err: "out of range"},
		{in: "1234567890123456789x", err: "not a 64-bit unsigned integer"},
		{in: "99999999999999999999999", err: "out of range"},
		{in: "0x10000000000000000", err: "out of range"},
		{in: "-1", err: `"-1" is negative`},
		{in: "-9223372036854775808", err: "add 2^64"},
		{in: "abc", err: `"abc" is not a 64-bit unsigned integer (decimal or 0x-hex)`},
		{in: "0x", err: "not a 64-bit unsigned integer"},
		{in: "0xg1", err: "not a 64-bit unsigned integer"},
		{in: "ff", err: "not a 64-bit unsigned integer"},
		{in: "+5", err: "not a 64-bit unsigned integer"},
		{in: "1_000", err: "not a 64-bit unsigned integer"},
		{in: "1 2", err: "not a 64-bit unsigned integer"},
		{in: "1.5", err: "not a 64-bit unsigned integer"},
		{in: "-", err: "not a 64-bit unsigned integer"},
		{in: "1e3", err: "not a 64-bit unsigned integer"},
		{in: "\xff", err: `"\xff" is not`},
		{in: strings.Repeat("9", 50) + "x", err: `"` + strings.Repeat("9", 40) + `"...`},
	}
	for _, tt := range tests {
		got, err := parseFingerprint([]byte(tt.in))
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("parseFingerprint(%q): %v", tt.in, err)
		case tt.err == "" && got != tt.want:
			t.Errorf("parseFingerprint(%q) = %d, want %d", tt.in, got, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("parseFingerprint(%q) = %d, %v; want an error containing %q", tt.in, got, err, tt.err)
		}
	}
}

// FuzzParseFingerprint checks parseFingerprint against strconv.ParseUint: decimal, or hex
// after a 0x prefix, with nothing else accepted.
func FuzzParseFingerprint(f *testing.F) {
	for _, s := range []string{"0", "18446744073709551615", "18446744073709551616", "0xff", "0X", "-1", "1_0", "0x_1", "+1", " 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseFingerprint([]byte(s))
		hex, isHex := strings.CutPrefix(s, "0x")
		if !isHex {
			hex, isHex = strings.CutPrefix(s, "0X")
		}
		var want uint64
		var werr error
		switch {
		case isHex && strings.ContainsAny(hex, "_+-"):
			werr = strconv.ErrSyntax
		case isHex:
			want, werr = strconv.ParseUint(hex, 16, 64)
		case strings.ContainsAny(s, "_+-"):
			werr = strconv.ErrSyntax
		default:
			want, werr = strconv.ParseUint(s, 10, 64)
		}
		if (err == nil) != (werr == nil) || got != want && err == nil {
			t.Fatalf("parseFingerprint(%q) = %d, %v; strconv gives %d, %v", s, got, err, want, werr)
		}
	})
}

func TestReadFingerprints(t *testing.T) {
	tests := []struct {
		name, in string
		want     []uint64
		err      string
	}{
		{name: "empty", in: "", want: nil},
		{name: "plain", in: "1\n2\n3\n", want: []uint64{1, 2, 3}},
		{name: "no final newline", in: "1\n2", want: []uint64{1, 2}},
		{name: "crlf and spaces", in: " 1 \r\n\t0x2\r\n", want: []uint64{1, 2}},
		{name: "blank lines", in: "\n1\n\n  \n2\n\n", want: []uint64{1, 2}},
		{name: "bad line number", in: "1\n\n2\nabc\n", err: `in:4: "abc" is not a 64-bit unsigned integer (decimal or 0x-hex)`},
		{name: "overflow", in: "1\n18446744073709551616\n", err: "in:2: \"18446744073709551616\" is out of range"},
		{name: "negative", in: "-5\n", err: `in:1: "-5" is negative`},
		{name: "long line", in: "1\n" + strings.Repeat("1", 2000) + "\n", err: "in:2: line longer than 1024 bytes"},
		{name: "long line at limit", in: "1\n2\n" + strings.Repeat(" ", 1020) + "3\n", want: []uint64{1, 2, 3}},
		{name: "long line just over", in: strings.Repeat(" ", 1024) + "3\n", err: "in:1: line longer than 1024 bytes"},
		{name: "long last line", in: "1\n" + strings.Repeat("0", 5000), err: "in:2: line longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readFingerprints(strings.NewReader(tt.in), "in")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, %v; want an error containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// readFingerprintsOracle is readFingerprints' specification, one line at a time.
func readFingerprintsOracle(in, name string) ([]uint64, error) {
	var fps []uint64
	lines := strings.Split(in, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if len(l) > maxLine {
			return nil, lineTooLong(name, i+1)
		}
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		v, err := parseFingerprint([]byte(l))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		fps = append(fps, v)
	}
	return fps, nil
}

// TestReadFingerprintBlocks checks the parallel reader against the oracle on random
// files cut into the smallest blocks (many lines across block ends), with 1 to 4
// goroutines, read in one go or a byte at a time, with and without bad lines.
func TestReadFingerprintBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 26))
	for trial := range 300 {
		var in strings.Builder
		for range r.IntN(2000) {
			switch k := r.IntN(20); {
			case k == 0:
				in.WriteString("\n")
			case k == 1:
				in.WriteString(strings.Repeat(" ", r.IntN(maxLine)) + "0x" + strconv.FormatUint(r.Uint64(), 16) + "\r\n")
			case k == 2 && trial%3 == 0:
				in.WriteString([]string{"bad", "-4", "18446744073709551616", strings.Repeat("7", maxLine+1)}[r.IntN(4)] + "\n")
			default:
				in.WriteString(strconv.FormatUint(r.Uint64()>>r.IntN(64), 10) + "\n")
			}
		}
		if trial%2 == 1 {
			in.WriteString(strconv.FormatUint(r.Uint64(), 10)) // no final newline
		}
		want, werr := readFingerprintsOracle(in.String(), "in")
		workers := 1 + trial%4
		var src io.Reader = strings.NewReader(in.String())
		if trial%5 == 0 {
			src = iotest.OneByteReader(src)
		}
		got, err := readFingerprintBlocks(src, "in", maxLine+2, workers)
		if fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("trial %d: error %v, want %v", trial, err, werr)
		}
		if werr == nil && !slices.Equal(got, want) {
			t.Fatalf("trial %d: %d fingerprints, want %d", trial, len(got), len(want))
		}
	}
}

// TestReadFingerprintsReadError checks that a failing reader's error is returned, and
// that a bad line before it wins.
func TestReadFingerprintsReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := readFingerprintBlocks(io.MultiReader(strings.NewReader("1\n2\n"), iotest.ErrReader(boom)), "in", maxLine+2, 2)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "reading in") {
		t.Errorf("got %v, want reading in: boom", err)
	}
	bad := strings.Repeat("1\n", 2000) + "x\n"
	_, err = readFingerprintBlocks(io.MultiReader(strings.NewReader(bad), iotest.ErrReader(boom)), "in", maxLine+2, 2)
	if err == nil || !strings.HasPrefix(err.Error(), "in:2001:") {
		t.Errorf("got %v, want the error of line 2001", err)
	}
}

func BenchmarkReadFingerprints(b *testing.B) {
	var in strings.Builder
	for i := range 100000 {
		v := uint64(i) * 0x9E3779B97F4A7C15
		if i%2 == 0 {
			in.WriteString(strconv.FormatUint(v, 10) + "\n")
		} else {
			in.WriteString("0x" + strconv.FormatUint(v, 16) + "\n")
		}
	}
	s := in.String()
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		fps, err := readFingerprints(strings.NewReader(s), "bench")
		if err != nil || len(fps) != 100000 {
			b.Fatal(len(fps), err)
		}
	}
}

// TestDecimalLine checks the fast path on the lines simhash-cpp writes, which it must
// take, and on those it must leave to the general path.
func TestDecimalLine(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for range 20000 {
		v := r.Uint64() >> r.IntN(64)
		for _, end := range []string{"\n", "", "\n7\n"} {
			s := strconv.FormatUint(v, 10)
			got, n := decimalLine([]byte(s + end))
			if want := len(s) + min(len(end), 1); got != v || n != want {
				t.Fatalf("%q: %d, %d; want %d, %d", s+end, got, n, v, want)
			}
		}
	}
	for in, want := range map[string]uint64{
		"18446744073709551615\n": math.MaxUint64, "00000000000000000001": 1, "0\n": 0,
		"12345678\n": 12345678, "1234567812345678\n": 1234567812345678,
	} {
		if got, n := decimalLine([]byte(in)); got != want || n != len(strings.TrimSuffix(in, "\n"))+strings.Count(in, "\n") {
			t.Errorf("%q: %d, %d; want %d", in, got, n, want)
		}
	}
	for _, in := range []string{
		"", "\n", "18446744073709551616\n", "99999999999999999999", "000000000000000000001\n",
		"123\r\n", " 1\n", "1 \n", "0x10\n", "12345678a\n", "1234567:\n", "12345678/\n", "-1\n",
		"1234567\xfa\n", "\xff\xff\xff\xff\xff\xff\xff\xff\n",
	} {
		if v, n := decimalLine([]byte(in)); n != 0 {
			t.Errorf("%q: took %d bytes as %d; want it left to the general path", in, n, v)
		}
	}
}

// FuzzParseLines checks parseLines, with its fast path, against the line-by-line oracle.
func FuzzParseLines(f *testing.F) {
	for _, s := range []string{"1\n2\n", "18446744073709551615\n18446744073709551616\n", " 12\r\n\n0x1f\n",
		"123456789012345678\n", "1234567890123456789a\n", "12345678\xfa\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want, werr := readFingerprintsOracle(in, "in")
		got, err := parseLines([]byte(in), "in", 0)
		if fmt.Sprint(err) != fmt.Sprint(werr) || (werr == nil && !slices.Equal(got, want)) {
			t.Fatalf("%q: %v, %v; want %v, %v", in, got, err, want, werr)
		}
	})
}
