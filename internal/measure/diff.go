package measure

import (
	"strings"
	"unicode"

	"github.com/clipperhouse/uax29/v2/words"
)

// The bounds of one word diff. Texts arrive truncated by the caller; these keep a pair
// of long or unrelated texts from costing more than about a millisecond anyway.
const (
	// MaxDiffTokens is the most tokens (words, spaces, punctuation) of each side that are
	// diffed; the rest of a longer text is shown unmarked.
	MaxDiffTokens = 4000
	// maxEdits is the largest edit distance (deleted plus inserted tokens) searched
	// for. Past it the texts are not near copies, and everything between their common
	// head and tail is marked changed: Myers' search costs O((N+M)·D) time and
	// O(D²) memory for D edits, so this bounds both.
	maxEdits = 600
)

// Segment is a run of a text, marked if it is not in the other text.
type Segment struct {
	Text    string `json:"text"`
	Changed bool   `json:"changed,omitempty"`
}

// Diff is one text set against another: each side's segments, and how many
// words (tokens with a letter or digit) each side has that the other has not.
type Diff struct {
	Left     []Segment `json:"a"`
	Right    []Segment `json:"b"`
	Deleted  int       `json:"deleted"`
	Inserted int       `json:"inserted"`
	// Partial says the texts were longer than MaxDiffTokens tokens, so their tails are
	// shown without marks.
	Partial bool `json:"partial,omitempty"`
}

// WordDiff diffs a and b word by word (UAX #29 word boundaries, so spaces and
// punctuation are tokens of their own and CJK text is diffed per character), as the
// report shows its clusters and as the service's compare endpoint and web page show two
// documents. The segments are slices of a and b: building them copies no text. It is
// bounded: at most MaxDiffTokens tokens of each side are diffed (the rest is one unmarked
// segment, and Partial is set) and at most maxEdits edits are searched for (past that
// everything between the common head and tail is marked), so any pair of texts costs
// about a millisecond at most. It is safe for concurrent use.
func WordDiff(a, b string) Diff {
	var c Diff
	var left, right []span
	pa, pb := 0, 0 // the bytes of a and b covered so far
	for _, e := range diffTokens(tokens(a), tokens(b)) {
		n := len(e.text)
		switch e.op {
		case opEqual:
			left = appendSpan(left, pa, pa+n, false)
			right = appendSpan(right, pb, pb+n, false)
			pa, pb = pa+n, pb+n
		case opDelete:
			left = appendSpan(left, pa, pa+n, true)
			pa += n
			c.Deleted += isWord(e.text)
		case opInsert:
			right = appendSpan(right, pb, pb+n, true)
			pb += n
			c.Inserted += isWord(e.text)
		}
	}
	left, right = tidySpaces(a, left), tidySpaces(b, right)
	if pa < len(a) || pb < len(b) {
		c.Partial = true
		left = appendSpan(left, pa, len(a), false)
		right = appendSpan(right, pb, len(b), false)
	}
	c.Left, c.Right = segments(a, left), segments(b, right)
	return c
}

// tokens splits s into at most MaxDiffTokens word-boundary tokens, from its start.
func tokens(s string) []string {
	var ts []string
	it := words.FromString(s)
	for len(ts) < MaxDiffTokens && it.Next() {
		ts = append(ts, it.Value())
	}
	return ts
}

// span is the bytes [start, end) of a text, marked changed or not.
type span struct {
	start, end int
	changed    bool
}

// appendSpan appends [start, end) to spans, which must end at start, joining it to the
// last span if that has the same mark.
func appendSpan(spans []span, start, end int, changed bool) []span {
	if start == end {
		return spans
	}
	if n := len(spans); n > 0 && spans[n-1].changed == changed {
		spans[n-1].end = end
		return spans
	}
	return append(spans, span{start, end, changed})
}

// tidySpaces marks the unchanged runs of white space between two changes of text as
// changed, so "old words" replaced by "new text" reads as one change rather than two,
// then unmarks the white space at either end of a change that has more than white space.
func tidySpaces(text string, spans []span) []span {
	var joined []span
	for i, s := range spans {
		if !s.changed && i > 0 && i < len(spans)-1 && strings.TrimSpace(text[s.start:s.end]) == "" {
			s.changed = true
		}
		joined = appendSpan(joined, s.start, s.end, s.changed)
	}
	var out []span
	for _, s := range joined {
		t := text[s.start:s.end]
		lo := s.end - len(strings.TrimLeftFunc(t, unicode.IsSpace))
		hi := s.start + len(strings.TrimRightFunc(t, unicode.IsSpace))
		if !s.changed || lo >= hi {
			out = appendSpan(out, s.start, s.end, s.changed)
			continue
		}
		out = appendSpan(out, s.start, lo, false)
		out = appendSpan(out, lo, hi, true)
		out = appendSpan(out, hi, s.end, false)
	}
	return out
}

// segments returns the text of each span.
func segments(text string, spans []span) []Segment {
	var segs []Segment
	for _, s := range spans {
		segs = append(segs, Segment{text[s.start:s.end], s.changed})
	}
	return segs
}

// isWord returns 1 if the token holds a letter or a digit, and 0 if it is white space or
// punctuation.
func isWord(token string) int {
	if strings.IndexFunc(token, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0 {
		return 1
	}
	return 0
}

type editOp uint8

const (
	opEqual editOp = iota
	opDelete
	opInsert
)

// edit is one token of the edit script from a to b.
type edit struct {
	op   editOp
	text string
}

// diffTokens returns a shortest edit script from a to b (Myers, "An O(ND) difference
// algorithm and its variations", 1986) over their tokens, after their common head and
// tail. If more than maxEdits edits are needed, everything between the head and the
// tail is deleted and inserted. Of the shortest scripts it returns the one Myers'
// greedy search finds first, so the result depends only on a and b.
func diffTokens(a, b []string) []edit {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	script := make([]edit, 0, len(a)+len(b)-head-tail)
	for _, t := range a[:head] {
		script = append(script, edit{opEqual, t})
	}
	script = myers(script, a[head:len(a)-tail], b[head:len(b)-tail])
	for _, t := range a[len(a)-tail:] {
		script = append(script, edit{opEqual, t})
	}
	slide(script)
	return script
}

// slide moves each run of insertions alone or deletions alone as far down the text as it
// goes (as git diff does with lines), so that "users." becoming "users. See also." reads
// as " See also." inserted, not ". See also" before the old full stop. A run moves down
// one token when the equal token after it has the text of its first token: swapping
// their operations gives an edit script of the same length.
func slide(script []edit) {
	for i := 0; i < len(script); {
		op := script[i].op
		if op == opEqual || (i > 0 && script[i-1].op != opEqual) {
			i++
			continue
		}
		j := i
		for j < len(script) && script[j].op == op {
			j++
		}
		for j < len(script) && script[j].op == opEqual && script[j].text == script[i].text {
			script[i].op, script[j].op = opEqual, op
			i++
			j++
		}
		i = j
	}
}

// myers appends to script a shortest edit script from a to b, or, past maxEdits edits,
// the deletion of a and the insertion of b.
func myers(script []edit, a, b []string) []edit {
	n, m := len(a), len(b)
	limit := min(n+m, maxEdits)
	// v[off+k] is the furthest x reached on diagonal k = x - y; trace[d] keeps v's
	// diagonals -d..d after d edits, for the walk back.
	off := limit + 1
	v := make([]int32, 2*limit+3)
	var trace [][]int32
	for d := 0; d <= limit; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1]) // down: insert b[y-1]
			} else {
				x = int(v[off+k-1]) + 1 // right: delete a[x-1]
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				return walkBack(script, a, b, trace, d)
			}
		}
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
	}
	for _, t := range a {
		script = append(script, edit{opDelete, t})
	}
	for _, t := range b {
		script = append(script, edit{opInsert, t})
	}
	return script
}

// walkBack appends the script of d edits that myers found, reading trace from the end
// (len(a), len(b)) back to the start.
func walkBack(script []edit, a, b []string, trace [][]int32, d int) []edit {
	start := len(script)
	x, y := len(a), len(b)
	for ; d > 0; d-- {
		prev := trace[d-1] // diagonals -(d-1)..d-1 at prev[k+d-1]
		k := x - y
		var pk int
		if k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := int(prev[pk+d-1])
		py := px - pk
		// One edit led from (px, py) to x = ex, then equal tokens to (x, y).
		var e edit
		ex := px
		if pk == k+1 {
			e = edit{opInsert, b[py]}
		} else {
			e = edit{opDelete, a[px]}
			ex++
		}
		for x > ex {
			x--
			script = append(script, edit{opEqual, a[x]})
		}
		script = append(script, e)
		x, y = px, py
	}
	for x > 0 {
		x--
		script = append(script, edit{opEqual, a[x]})
	}
	// The walk went backwards.
	for i, j := start, len(script)-1; i < j; i, j = i+1, j-1 {
		script[i], script[j] = script[j], script[i]
	}
	return script
}
