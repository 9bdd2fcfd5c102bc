package cli

import "testing"

func TestByteSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		out  string
	}{
		{"0", 0, "0"}, {"268435456", 256 << 20, "256MiB"}, {"256MiB", 256 << 20, "256MiB"},
		{"1.5GiB", 3 << 29, "1536MiB"}, {"2 GiB", 2 << 30, "2GiB"}, {"4KiB", 4096, "4KiB"},
		{"1000", 1000, "1000"}, {"-1", -1, "-1"}, {"1TiB", 1 << 40, "1TiB"},
	} {
		var b byteSize
		if err := b.Set(c.in); err != nil || int64(b) != c.want || b.String() != c.out {
			t.Errorf("Set(%q): %d %q %v; want %d %q", c.in, int64(b), b.String(), err, c.want, c.out)
		}
	}
	for _, in := range []string{"", "GiB", "2GB", "1.5", "x", "NaNGiB", "1e30GiB", "2 Gib"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, int64(b))
		}
	}
}
