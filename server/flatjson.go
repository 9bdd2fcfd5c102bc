package server

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// decodeFlat decodes the commonest document body, an object whose members are all
// strings under documentJSON's lower-case names ({"id":"...","url":"...","html":"..."}),
// into dj, in one pass: a crawler's page is a string of 10-100 KB, which fastjson
// validated, parsed and unescaped in three passes and decodeDocumentJSON's checks read
// three more times, a tenth of the service's CPU a page. It reports false, leaving dj
// partly set, for any other body, or one with an escaped UTF-16 surrogate, which the
// other decoders then read or refuse (FuzzDecodeDocumentJSON holds the three to the
// same results). A repeated name keeps its last value, as encoding/json does.
func decodeFlat(body []byte, dj *documentJSON) bool {
	if !utf8.Valid(body) {
		return false
	}
	i := skipSpace(body, 0)
	if i == len(body) || body[i] != '{' {
		return false
	}
	for i = skipSpace(body, i+1); ; i = skipSpace(body, i+1) {
		f, n := dj.flatName(body[i:])
		if f == nil {
			return false
		}
		if i = skipSpace(body, i+n); i == len(body) || body[i] != ':' {
			return false
		}
		i = skipSpace(body, i+1)
		v, n, ok := unquoteFlat(body[i:])
		if !ok {
			return false
		}
		*f = v
		if i = skipSpace(body, i+n); i == len(body) {
			return false
		}
		if body[i] == '}' {
			return skipSpace(body, i+1) == len(body)
		}
		if body[i] != ',' {
			return false
		}
	}
}

// flatName returns the field of dj whose name, exactly, is the JSON string b starts
// with, unescaped, and the string's length with its quotes; nil for anything else.
func (dj *documentJSON) flatName(b []byte) (*string, int) {
	if len(b) == 0 || b[0] != '"' {
		return nil, 0
	}
	end := 1
	for end < len(b) && b[end] != '"' && b[end] != '\\' {
		end++
	}
	if end == len(b) || b[end] != '"' {
		return nil, 0
	}
	name := b[1:end]
	if bytes.ContainsFunc(name, func(r rune) bool { return r >= 'A' && r <= 'Z' }) {
		return nil, 0 // field folds case; this decoder takes the lower-case names only
	}
	f := dj.field(name)
	return f, end + 1
}

// unquoteFlat returns the value of the JSON string b starts with and its length with
// its quotes; ok is false when b does not start with a valid JSON string, or escapes a
// UTF-16 surrogate. b is valid UTF-8.
func unquoteFlat(b []byte) (s string, n int, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", 0, false
	}
	i := stringStop(b, 1)
	if i < len(b) && b[i] == '"' {
		return string(b[1:i]), i + 1, true // no escape: the common id and url
	}
	var sb strings.Builder
	sb.Grow(len(b)) // at most the rest of the body: one allocation, not a doubling
	sb.Write(b[1:i])
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			return sb.String(), i + 1, true
		case c < ' ' || i+1 == len(b):
			return "", 0, false // a control character, or the body ends in an escape
		}
		// A backslash.
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			sb.WriteByte(e)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r, ok := hex4(b[i+2:])
			if !ok || utf16Surrogate(r) {
				return "", 0, false
			}
			sb.WriteRune(r)
			i += 4
		default:
			return "", 0, false
		}
		i += 2
		j := stringStop(b, i)
		sb.Write(b[i:j])
		i = j
	}
	return "", 0, false
}

// hex4 returns the rune the 4 hex digits b starts with write.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// utf16Surrogate reports whether r is a UTF-16 surrogate, which fastjson and
// encoding/json read differently.
func utf16Surrogate(r rune) bool { return r >= 0xD800 && r < 0xE000 }

// skipSpace returns the index of the first byte of b from i on that is not JSON white
// space, len(b) if none.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// stringStop returns the index of the first byte of b from i on that ends a run of a
// JSON string's plain bytes, a quote, a backslash or a control character, len(b) if
// none: 8 bytes at a time, as a page's text has long runs between escapes.
func stringStop(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		v := binary.LittleEndian.Uint64(b[i:])
		q, bs := v^(ones*'"'), v^(ones*'\\')
		// The high bit of a byte of found is set where that byte is a quote, a
		// backslash or below 0x20, first of all for the first one such (a borrow only
		// carries to the bytes after a match).
		found := ((q - ones) &^ q) | ((bs - ones) &^ bs) | ((v - ones*' ') &^ v)
		if found &= highs; found != 0 {
			return i + bits.TrailingZeros64(found)>>3
		}
	}
	for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= ' ' {
		i++
	}
	return i
}

// controlInString reports whether a string of the JSON text b holds a control character
// (below 0x20), which JSON does not allow unescaped; b may be invalid JSON otherwise.
func controlInString(b []byte) bool {
	for i := 0; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return false
		}
		// In a string: to its end, past its escapes.
		for i += q + 1; ; i += 2 {
			if i = stringStop(b, min(i, len(b))); i == len(b) {
				return false // the text ends in the string, or in an escape
			}
			if b[i] == '"' {
				i++
				break
			}
			if b[i] < ' ' {
				return true
			}
		}
	}
	return false
}
