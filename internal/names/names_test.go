package names

import "testing"

func TestNames(t *testing.T) {
	n := Names{0: "zero", 2: "two"}
	for v, want := range map[int]string{0: "zero", 1: "T(1)", 2: "two", 3: "T(3)", -1: "T(-1)"} {
		if got := n.Of(v, "T"); got != want {
			t.Errorf("Of(%d) = %q, want %q", v, got, want)
		}
		if n.Valid(v) != (v == 0 || v == 2) {
			t.Errorf("Valid(%d) = %v", v, n.Valid(v))
		}
	}
	if v, ok := n.Parse("two"); !ok || v != 2 {
		t.Errorf("Parse(two) = %d, %v", v, ok)
	}
	for _, s := range []string{"", "one", "T(1)"} {
		if _, ok := n.Parse(s); ok {
			t.Errorf("Parse(%q) found a value", s)
		}
	}
}
