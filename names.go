package neardup

import "strconv"

// names is the text form of an enumeration: the name of each value, by value. An empty
// name is a value without one.
type names []string

// of returns the name of v, or "typ(v)" for a value without one.
func (n names) of(v int, typ string) string {
	if v < 0 || v >= len(n) || n[v] == "" {
		return typ + "(" + strconv.Itoa(v) + ")"
	}
	return n[v]
}

// valid reports whether v has a name.
func (n names) valid(v int) bool { return v >= 0 && v < len(n) && n[v] != "" }

// parse returns the value named s.
func (n names) parse(s string) (int, bool) {
	for v, name := range n {
		if name != "" && name == s {
			return v, true
		}
	}
	return 0, false
}
