package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag of a number of bytes, given plain ("268435456") or with a binary
// unit ("256MiB", "1.5GiB": KiB, MiB, GiB, TiB; a space before the unit is allowed).
type byteSize int64

var byteUnits = []struct {
	suffix string
	scale  float64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}}

func (b *byteSize) Set(s string) error {
	num, scale := strings.TrimSpace(s), 1.0
	for _, u := range byteUnits {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, scale = strings.TrimSpace(n), u.scale
			break
		}
	}
	if scale == 1 {
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return badByteSize(s)
		}
		*b = byteSize(v)
		return nil
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v != v || v*scale >= 1<<63 || v*scale <= -(1<<63) {
		return badByteSize(s)
	}
	*b = byteSize(v * scale)
	return nil
}

func badByteSize(s string) error {
	return fmt.Errorf("%q: give bytes, or a number with KiB, MiB, GiB or TiB", s)
}

// String gives the bytes, with the largest binary unit that divides them exactly.
func (b *byteSize) String() string {
	v := int64(*b)
	for i := len(byteUnits) - 1; i >= 0; i-- {
		if s := int64(byteUnits[i].scale); v != 0 && v%s == 0 {
			return strconv.FormatInt(v/s, 10) + byteUnits[i].suffix
		}
	}
	return strconv.FormatInt(v, 10)
}
