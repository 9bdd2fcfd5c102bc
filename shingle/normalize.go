package shingle

import (
	"encoding/binary"
	"slices"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// normalizer turns raw text into normalized text: valid UTF-8, then NFKC, full case
// folding and accent folding as configured. ASCII needs none of the Unicode machinery
// (NFKC leaves it alone, folding is a-z, there are no accents), so runs of ASCII take a
// byte loop and only the spans around other characters go through x/text.
type normalizer struct {
	fold   bool      // full case folding
	strip  bool      // accent folding
	first  norm.Form // the normalization applied first, if firstN
	firstN bool
	caser  transform.Transformer // cases.Fold, boxed once: boxing it per call allocates
	span   []byte                // the span being normalized
	a, b   []byte                // scratch for appendSpan
	blocks [0x300]*runeBlock     // U+0000-U+2FFFF: the BMP, emoji, CJK extension B
}

// The rune cache: the normal form of each rune up to U+2FFFF met so far, alone, and whether it is
// a starter: a rune that nothing before it combines with (it has a normalization
// boundary before it in NFC, NFKC, NFD and NFKD), that is not a mark (so accent
// folding of what follows does not depend on what precedes it) and is not a Hangul
// jamo (whose compatibility forms decompose to jamo that compose). A starter followed by
// a starter normalizes alone, so its cached form can be copied.
type runeBlock struct {
	ent [1 << 8]runeEnt
	out []byte // the normal forms that differ from the rune itself
}

type runeEnt struct {
	off   uint16 // of the normal form in out
	n     uint8  // its length
	flags uint8
}

const (
	eKnown    = 1 << iota // computed
	eStarter              // see runeBlock
	eIdentity             // the normal form is the rune itself
)

var notCached = runeEnt{flags: eKnown}

// entry returns the cache entry of r, computing it on first use.
func (z *normalizer) entry(r rune) *runeEnt {
	if int(r>>8) >= len(z.blocks) {
		return &notCached
	}
	blk := z.blocks[r>>8]
	if blk == nil {
		blk = new(runeBlock)
		z.blocks[r>>8] = blk
	}
	e := &blk.ent[r&0xFF]
	if e.flags&eKnown != 0 {
		return e
	}
	e.flags = eKnown
	var rb [utf8.UTFMax]byte
	src := utf8.AppendRune(rb[:0], r)
	if !unicode.IsMark(r) && !isJamo(r) &&
		norm.NFC.Properties(src).BoundaryBefore() && norm.NFKC.Properties(src).BoundaryBefore() &&
		norm.NFD.Properties(src).BoundaryBefore() && norm.NFKD.Properties(src).BoundaryBefore() {
		e.flags |= eStarter
	}
	off := len(blk.out)
	blk.out = z.appendSpan(blk.out, src)
	if string(blk.out[off:]) == string(src) {
		blk.out = blk.out[:off]
		e.flags |= eIdentity
	} else if len(blk.out)-off > 255 || len(blk.out) > 0xFFFF {
		blk.out = blk.out[:off]
		e.flags &^= eStarter // too long to cache: take the slow path
	}
	e.off, e.n = uint16(off), uint8(len(blk.out)-off)
	return e
}

// appendEntry appends the cached normal form of r to dst.
func (z *normalizer) appendEntry(dst []byte, r rune, e *runeEnt) []byte {
	if e.flags&eIdentity != 0 {
		return utf8.AppendRune(dst, r)
	}
	blk := z.blocks[r>>8]
	return append(dst, blk.out[e.off:int(e.off)+int(e.n)]...)
}

// isJamo reports whether r is a Hangul jamo, conjoining or compatibility.
func isJamo(r rune) bool {
	return 0x1100 <= r && r <= 0x11FF || 0x3130 <= r && r <= 0x318F || 0xA960 <= r && r <= 0xA97F ||
		0xD7B0 <= r && r <= 0xD7FF || 0xFFA0 <= r && r <= 0xFFDC
}

func (z *normalizer) init(o *Options) {
	z.fold = !o.KeepCase
	z.strip = !o.KeepAccents
	switch {
	case !o.NoNFKC && z.strip:
		z.first, z.firstN = norm.NFKD, true
	case !o.NoNFKC:
		z.first, z.firstN = norm.NFKC, true
	case z.strip:
		z.first, z.firstN = norm.NFD, true
	}
	if z.fold {
		z.caser = cases.Fold()
	}
}

// cut returns where a window of raw text that is not the end of the input may be split
// so that normalizing the two parts separately gives the same result as normalizing the
// whole: before its last starter (see normalizer.starter), which is usually its last
// ASCII byte. It returns a value in [1, len(w)] for a non-empty w, so that every window
// makes progress.
func cut[T ~string | ~[]byte](z *normalizer, w T) int {
	for i := len(w) - 1; i > 0; i-- {
		if w[i] < utf8.RuneSelf {
			return i
		}
	}
	last := 0
	for i := len(w) - 1; i > 0; i-- {
		if !utf8.RuneStart(w[i]) {
			continue
		}
		if last == 0 {
			last = i
		}
		var rb [utf8.UTFMax]byte
		if n := copy(rb[:], w[i:]); !utf8.FullRune(rb[:n]) {
			continue // cut short by the window: what it is shows in the next one
		}
		if starterAt(z, w, i) {
			return i
		}
	}
	if last == 0 {
		return len(w) // only continuation bytes: each is an invalid byte of its own
	}
	return last
}

// decodeAt decodes the rune at w[i:], giving U+FFFD and size 1 for an invalid byte.
func decodeAt[T ~string | ~[]byte](w T, i int) (rune, int) {
	var rb [utf8.UTFMax]byte
	n := copy(rb[:], w[i:])
	return utf8.DecodeRune(rb[:n])
}

// starterAt reports whether w[i] starts a starter: an ASCII character, an invalid byte
// (which becomes U+FFFD) or a rune whose entry says so. A continuation byte is not.
func starterAt[T ~string | ~[]byte](z *normalizer, w T, i int) bool {
	c := w[i]
	if c < utf8.RuneSelf {
		return true
	}
	if !utf8.RuneStart(c) {
		return false
	}
	r, _ := decodeAt(w, i)
	return z.entry(r).flags&eStarter != 0
}

// appendNormalized appends the normalized form of w to dst. Each ASCII character and
// each starter followed by a starter is a normalization segment of its own, whose
// normal form is known (ASCII) or cached (z.entry); the rest goes through x/text in
// spans that end before a starter.
func appendNormalized[T ~string | ~[]byte](z *normalizer, dst []byte, w T) []byte {
	n := len(w)
	for i := 0; i < n; {
		j := i
		for j+8 <= n && load64(w, j)&0x8080808080808080 == 0 {
			j += 8
		}
		for j < n && w[j] < utf8.RuneSelf {
			j++
		}
		end := j
		if j < n && j > i && !starterAt(z, w, j) {
			end = j - 1 // this ASCII character composes with what follows it
		}
		if z.fold {
			dst = appendLowerASCII(dst, w[i:end])
		} else {
			dst = append(dst, w[i:end]...)
		}
		if end == n {
			break
		}
		i = end
		k := i + 1
		if i == j {
			r, size := decodeAt(w, i)
			e := z.entry(r)
			if e.flags&eStarter != 0 && (i+size == n || starterAt(z, w, i+size)) {
				dst = z.appendEntry(dst, r, e)
				i += size
				continue
			}
			k = i + size
		}
		for k < n && !starterAt(z, w, k) {
			k++
		}
		z.span = append(z.span[:0], w[i:k]...)
		dst = z.appendSpan(dst, z.span)
		i = k
	}
	return dst
}

// load64 returns the eight bytes at w[i:] as a little-endian number (the compiler
// turns this into one load).
func load64[T ~string | ~[]byte](w T, i int) uint64 {
	w = w[i : i+8]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// appendLowerASCII appends the ASCII text w to dst with A-Z mapped to a-z, eight bytes
// at a time.
func appendLowerASCII[T ~string | ~[]byte](dst []byte, w T) []byte {
	i := len(dst)
	dst = append(dst, w...)
	b := dst[i:]
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, lower8(binary.LittleEndian.Uint64(b)))
		b = b[8:]
	}
	for j, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[j] = c + 'a' - 'A'
		}
	}
	return dst
}

// lower8 maps A-Z to a-z in eight ASCII bytes: a byte's high bit is set after adding
// 0x80-'A' if it is at least 'A', and after adding 0x80-'Z'-1 if it is above 'Z'; no
// addition carries into the next byte since every byte is below 0x80.
func lower8(x uint64) uint64 {
	const ones = 0x0101010101010101
	geA := x + ones*(0x80-'A')
	gtZ := x + ones*(0x80-'Z'-1)
	upper := geA &^ gtZ & (ones * 0x80)
	return x | upper>>2
}

// appendSpan appends the normalized form of src to dst: the reference pipeline, used
// for the spans the fast paths cannot take and to fill the rune cache. It does not keep
// src.
func (z *normalizer) appendSpan(dst, src []byte) []byte {
	bufs := [2]*[]byte{&z.a, &z.b}
	k := 0
	// Each step writes into the buffer that does not hold src.
	out := func() []byte { return (*bufs[k])[:0] }
	done := func(b []byte) { *bufs[k], src, k = b, b, k^1 }
	if !utf8.Valid(src) {
		b := out()
		for i := 0; i < len(src); {
			r, size := utf8.DecodeRune(src[i:])
			b = utf8.AppendRune(b, r) // U+FFFD for each invalid byte
			i += size
		}
		done(b)
	}
	if z.firstN {
		done(z.appendForm(out(), z.first, src))
	}
	if z.fold {
		done(transformAll(z.caser, out(), src))
	}
	if z.strip {
		done(stripAccents(out(), src))
		return z.appendForm(dst, norm.NFC, src)
	}
	return append(dst, src...)
}

// appendForm appends src in normalization form f to dst. It allocates once per call
// (Form.Append's reorder buffer escapes); norm.Iter would not, but it panics on some
// inputs (a nil flush function in its reorder buffer), so the slow path pays the
// allocation.
func (z *normalizer) appendForm(dst []byte, f norm.Form, src []byte) []byte {
	return f.Append(dst, src...)
}

// transformAll appends t applied to all of src to dst.
func transformAll(t transform.Transformer, dst, src []byte) []byte {
	t.Reset()
	for {
		nDst, nSrc, err := t.Transform(dst[len(dst):cap(dst)], src, true)
		dst = dst[:len(dst)+nDst]
		src = src[nSrc:]
		if err != transform.ErrShortDst {
			return dst
		}
		dst = slices.Grow(dst, 2*len(src)+utf8.UTFMax*4)
	}
}

// stripAccents appends src to dst without the nonspacing marks (Mn) that follow a letter
// of a script whose marks are accents or optional vowel signs (Latin, Greek, Cyrillic,
// Hebrew, Arabic) or that follow no letter at all. Marks of other scripts are part of the
// spelling (Indic and Southeast Asian vowel signs, the kana voicing marks) and stay.
func stripAccents(dst, src []byte) []byte {
	drop := true
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			drop = true
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		switch {
		case unicode.Is(unicode.Mn, r):
			if drop {
				i += size
				continue
			}
		case !unicode.IsMark(r):
			drop = !unicode.IsLetter(r) || unicode.In(r, unicode.Latin, unicode.Greek, unicode.Cyrillic, unicode.Hebrew, unicode.Arabic)
		}
		dst = append(dst, src[i:i+size]...)
		i += size
	}
	return dst
}
