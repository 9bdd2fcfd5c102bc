// Package names gives enumerations a text form: the name of each value, by value. It is
// shared by the root package and package api, so that both spell and parse names alike.
package names

import "strconv"

// Names is the text form of an enumeration: the name of each value, by value. An empty
// name is a value without one.
type Names []string

// Of returns the name of v, or "typ(v)" for a value without one.
func (n Names) Of(v int, typ string) string {
	if v < 0 || v >= len(n) || n[v] == "" {
		return typ + "(" + strconv.Itoa(v) + ")"
	}
	return n[v]
}

// Valid reports whether v has a name.
func (n Names) Valid(v int) bool { return v >= 0 && v < len(n) && n[v] != "" }

// Parse returns the value named s.
func (n Names) Parse(s string) (int, bool) {
	for v, name := range n {
		if name != "" && name == s {
			return v, true
		}
	}
	return 0, false
}
