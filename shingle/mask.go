package shingle

import (
	"unicode"
	"unicode/utf8"
)

// Placeholders that MaskNumbers puts in place of dates and times (other numbers become
// "0" in Shingler.edit).
const (
	dateToken = "0-0-0"
	timeToken = "0:0"
)

// matchMask returns the length of the date or time that starts b, and its placeholder,
// or 0. Recognized, in ASCII digits and case-insensitive English month names:
//
//	dates  2024-01-31  2024/1/31  2024.01.31  31/01/2024  01-31-24  31.01.2024
//	       Jan 31, 2024  January 31st 2024  31 Jan 2024  1st January, 2024
//	times  12:30  9:05:59  12:30 pm  12:30a.m.
//
// Months must be 1-12, days 1-31, hours 0-23 (1-12 with am/pm), minutes and seconds
// 0-59. The match must end at a word boundary.
func matchMask(b []byte) (int, string) {
	if n := matchDate(b); n > 0 && boundaryAt(b, n) {
		return n, dateToken
	}
	if n := matchTime(b); n > 0 && boundaryAt(b, n) {
		return n, timeToken
	}
	return 0, ""
}

// number reads between lo and hi ASCII digits at b[i:], not followed by another digit,
// and returns their value and the index after them; ok is false if there are none or
// too many.
func number(b []byte, i, lo, hi int) (v, end int, ok bool) {
	j := i
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		if j-i == hi {
			return 0, i, false
		}
		v = v*10 + int(b[j]-'0')
		j++
	}
	return v, j, j-i >= lo
}

func matchDate(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	if '0' <= b[0] && b[0] <= '9' {
		// Year first: 2024-01-31.
		if _, i, ok := number(b, 0, 4, 4); ok && i < len(b) && isDateSep(b[i]) {
			sep := b[i]
			if m, j, ok := number(b, i+1, 1, 2); ok && j < len(b) && b[j] == sep && 1 <= m && m <= 12 {
				if d, k, ok := number(b, j+1, 1, 2); ok && 1 <= d && d <= 31 {
					return k
				}
			}
		}
		// Day or month first: 31/01/2024, 01-31-24.
		if a, i, ok := number(b, 0, 1, 2); ok {
			if i < len(b) && isDateSep(b[i]) {
				sep := b[i]
				if c, j, ok := number(b, i+1, 1, 2); ok && j < len(b) && b[j] == sep && validDM(a, c) {
					if _, k, ok := number(b, j+1, 4, 4); ok {
						return k
					}
					if _, k, ok := number(b, j+1, 2, 2); ok {
						return k
					}
				}
			}
			// 31 Jan 2024, 1st January, 2024.
			if 1 <= a && a <= 31 {
				j := ordinal(b, i)
				if k := spaces(b, j); k > j {
					if m := month(b, k); m > k {
						m = optional(b, m, ',')
						if n := spaces(b, m); n > m {
							if _, e, ok := number(b, n, 4, 4); ok {
								return e
							}
						}
					}
				}
			}
		}
		return 0
	}
	// Jan 31, 2024; January 31st 2024.
	m := month(b, 0)
	if m == 0 {
		return 0
	}
	i := spaces(b, m)
	if i == m {
		return 0
	}
	d, j, ok := number(b, i, 1, 2)
	if !ok || d < 1 || d > 31 {
		return 0
	}
	j = optional(b, ordinal(b, j), ',')
	k := spaces(b, j)
	if k == j {
		return 0
	}
	if _, e, ok := number(b, k, 4, 4); ok {
		return e
	}
	return 0
}

func matchTime(b []byte) int {
	h, i, ok := number(b, 0, 1, 2)
	if !ok || h > 23 || i+1 >= len(b) || b[i] != ':' {
		return 0
	}
	m, j, ok := number(b, i+1, 2, 2)
	if !ok || m > 59 {
		return 0
	}
	if j+1 < len(b) && b[j] == ':' {
		if sec, k, ok := number(b, j+1, 2, 2); ok && sec <= 59 {
			j = k
		}
	}
	if h <= 12 {
		k := j
		if k < len(b) && b[k] == ' ' {
			k++
		}
		for _, suffix := range [...]string{"a.m.", "p.m.", "am", "pm"} {
			if hasPrefixFold(b[k:], suffix) && boundaryAt(b, k+len(suffix)) {
				return k + len(suffix)
			}
		}
	}
	return j
}

func isDateSep(c byte) bool { return c == '-' || c == '/' || c == '.' }

// validDM reports whether a and c can be a day and a month in either order.
func validDM(a, c int) bool {
	return 1 <= a && a <= 31 && 1 <= c && c <= 31 && (a <= 12 || c <= 12)
}

// ordinal skips an English ordinal suffix at b[i:].
func ordinal(b []byte, i int) int {
	for _, s := range [...]string{"st", "nd", "rd", "th"} {
		if hasPrefixFold(b[i:], s) && !letterAt(b, i+2) {
			return i + 2
		}
	}
	return i
}

// spaces skips one to three ASCII spaces at b[i:].
func spaces(b []byte, i int) int {
	j := i
	for j < len(b) && j-i < 3 && b[j] == ' ' {
		j++
	}
	return j
}

func optional(b []byte, i int, c byte) int {
	if i < len(b) && b[i] == c {
		return i + 1
	}
	return i
}

var months = [...]string{
	"january", "february", "march", "april", "may", "june", "july", "august",
	"september", "october", "november", "december",
	"sept", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
}

// monthsByLetter lists, for each lower-case first letter, the indexes in months of the
// names that start with it, so that month tries two or three names instead of 24.
var monthsByLetter = func() (t [26][]int) {
	for i, m := range months {
		t[m[0]-'a'] = append(t[m[0]-'a'], i)
	}
	return t
}()

// month returns the index after an English month name or abbreviation (with an
// optional period after an abbreviation) at b[i:], or i.
func month(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	c := b[i] | 0x20
	if c < 'a' || c > 'z' {
		return i
	}
	for _, n := range monthsByLetter[c-'a'] {
		m := months[n]
		if hasPrefixFold(b[i:], m) && !letterAt(b, i+len(m)) {
			j := i + len(m)
			if n >= 12 {
				j = optional(b, j, '.')
			}
			return j
		}
	}
	return i
}

// hasPrefixFold reports whether b starts with the lower-case ASCII word w, ignoring
// ASCII case.
func hasPrefixFold(b []byte, w string) bool {
	if len(b) < len(w) {
		return false
	}
	for i := range len(w) {
		if b[i]|0x20 != w[i] {
			return false
		}
	}
	return true
}

// letterAt reports whether an ASCII letter is at b[i].
func letterAt(b []byte, i int) bool {
	return i < len(b) && asciiClass[b[i]&0x7f]&cLetter != 0 && b[i] < utf8.RuneSelf
}

// boundaryAt reports whether a word may end before b[i]: at the end, or before a
// character that is not a letter, a digit or an underscore and is not a separator
// followed by a digit.
func boundaryAt(b []byte, i int) bool {
	if i >= len(b) {
		return true
	}
	c := b[i]
	if c >= utf8.RuneSelf {
		r, _ := utf8.DecodeRune(b[i:])
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
	}
	if asciiClass[c]&cWord != 0 {
		return false
	}
	if asciiClass[c]&cMidNum != 0 && i+1 < len(b) && '0' <= b[i+1] && b[i+1] <= '9' {
		return false
	}
	return true
}
