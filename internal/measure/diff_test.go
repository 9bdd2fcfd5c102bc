package measure

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestWordDiff(t *testing.T) {
	for _, tc := range []struct {
		name, a, b        string
		left, right       []Segment
		deleted, inserted int
	}{
		{"equal", "the same text", "the same text",
			[]Segment{{"the same text", false}}, []Segment{{"the same text", false}}, 0, 0},
		{"both empty", "", "", nil, nil, 0, 0},
		{"left empty", "", "new words",
			nil, []Segment{{"new words", true}}, 0, 2},
		{"right empty", "old words", "",
			[]Segment{{"old words", true}}, nil, 2, 0},
		{"insertion", "a quick fox", "a quick brown fox",
			[]Segment{{"a quick fox", false}},
			[]Segment{{"a quick ", false}, {"brown", true}, {" fox", false}}, 0, 1},
		{"deletion", "version 15.18 of the manual", "version of the manual",
			[]Segment{{"version ", false}, {"15.18", true}, {" of the manual", false}},
			[]Segment{{"version of the manual", false}}, 1, 0},
		// The space between two replaced words joins them into one change.
		{"replacement", "see the old long text here", "see the new short text here",
			[]Segment{{"see the ", false}, {"old long", true}, {" text here", false}},
			[]Segment{{"see the ", false}, {"new short", true}, {" text here", false}}, 2, 2},
		{"punctuation", "Hello, world.", "Hello; world!",
			[]Segment{{"Hello", false}, {",", true}, {" world", false}, {".", true}},
			[]Segment{{"Hello", false}, {";", true}, {" world", false}, {"!", true}}, 0, 0},
		// The insertion slides down past the equal full stop; its leading space is
		// left unmarked.
		{"appended", "to users.", "to users. See also.",
			[]Segment{{"to users.", false}},
			[]Segment{{"to users. ", false}, {"See also.", true}}, 0, 2},
		{"changed spaces only", "a  b", "a b",
			[]Segment{{"a", false}, {"  ", true}, {"b", false}},
			[]Segment{{"a", false}, {" ", true}, {"b", false}}, 0, 0},
		// CJK text is diffed per character, as UAX #29 splits it.
		{"cjk", "東京は晴れ", "東京は雨",
			[]Segment{{"東京は", false}, {"晴れ", true}},
			[]Segment{{"東京は", false}, {"雨", true}}, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := WordDiff(tc.a, tc.b)
			if !reflect.DeepEqual(c.Left, tc.left) || !reflect.DeepEqual(c.Right, tc.right) {
				t.Errorf("compare(%q, %q)\nleft  %+v\nright %+v\nwant  %+v\n      %+v", tc.a, tc.b, c.Left, c.Right, tc.left, tc.right)
			}
			if c.Deleted != tc.deleted || c.Inserted != tc.inserted || c.Partial {
				t.Errorf("compare(%q, %q): %d deleted, %d inserted, partial %v; want %d, %d, false",
					tc.a, tc.b, c.Deleted, c.Inserted, c.Partial, tc.deleted, tc.inserted)
			}
		})
	}
}

// TestDiffTokensShortest checks diffTokens against the length of the longest common
// subsequence, computed by dynamic programming, on random token strings: the script must
// rebuild both inputs and keep exactly that many tokens.
func TestDiffTokensShortest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "c", " ", "d"}
	random := func() []string {
		ts := make([]string, rng.IntN(30))
		for i := range ts {
			ts[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return ts
	}
	for range 2000 {
		a, b := random(), random()
		script := diffTokens(a, b)
		var gotA, gotB []string
		equal := 0
		for _, e := range script {
			if e.op != opInsert {
				gotA = append(gotA, e.text)
			}
			if e.op != opDelete {
				gotB = append(gotB, e.text)
			}
			if e.op == opEqual {
				equal++
			}
		}
		if strings.Join(gotA, "|") != strings.Join(a, "|") || strings.Join(gotB, "|") != strings.Join(b, "|") {
			t.Fatalf("diffTokens(%q, %q) = %v does not rebuild its inputs", a, b, script)
		}
		if want := lcs(a, b); equal != want {
			t.Fatalf("diffTokens(%q, %q) keeps %d tokens, the longest common subsequence has %d", a, b, equal, want)
		}
	}
}

// lcs is the length of the longest common subsequence of a and b.
func lcs(a, b []string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// TestCompareBounds checks the two limits: past maxEdits edits the middle is marked
// changed as a whole, and past MaxDiffTokens tokens the tails are shown unmarked.
func TestWordDiffBounds(t *testing.T) {
	var a, b strings.Builder
	for range maxEdits {
		a.WriteString(" x")
		b.WriteString(" y")
	}
	c := WordDiff("head"+a.String()+" tail", "head"+b.String()+" tail")
	if len(c.Left) != 3 || c.Left[0].Text != "head " || !c.Left[1].Changed || c.Left[2].Text != " tail" {
		t.Errorf("past maxEdits: left has %d segments, want head, one change, tail", len(c.Left))
	}
	long := strings.Repeat("word ", MaxDiffTokens)
	c = WordDiff(long+"end", long+"finish")
	if !c.Partial || c.Deleted != 0 || c.Inserted != 0 {
		t.Errorf("past MaxDiffTokens: partial %v, %d deleted, %d inserted; want true, 0, 0", c.Partial, c.Deleted, c.Inserted)
	}
	if got := joinSegments(c.Left); got != long+"end" {
		t.Errorf("past MaxDiffTokens: left side lost text: %d bytes, want %d", len(got), len(long)+3)
	}
}

func joinSegments(segs []Segment) string {
	var s strings.Builder
	for _, g := range segs {
		s.WriteString(g.Text)
	}
	return s.String()
}

func BenchmarkCompare(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	vocabulary := strings.Fields("the of and to in a is that for it as was with be by on not he this are or his from at which but")
	var x, y strings.Builder
	for range 2000 {
		w := vocabulary[rng.IntN(len(vocabulary))]
		x.WriteString(w + " ")
		if rng.IntN(20) == 0 {
			y.WriteString("changed ")
		} else {
			y.WriteString(w + " ")
		}
	}
	b.SetBytes(int64(x.Len() + y.Len()))
	b.ReportAllocs()
	for b.Loop() {
		WordDiff(x.String(), y.String())
	}
}
