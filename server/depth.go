package server

import "net/http"

// maxDepth is how deeply a request body's JSON may nest: no request needs more than
// three levels (a batch's array of documents), and the parsers behind the check, which
// recurse once a level, must never see what a hostile body can nest (two million "["
// overflowed the stack; twenty thousand unterminated ones took twenty seconds of CPU).
const maxDepth = 64

// errTooDeep answers a body that nests deeper than maxDepth.
var errTooDeep = errorf(http.StatusBadRequest, "too_deep", "the JSON nests deeper than %d levels; no request needs more than 3", maxDepth)

// tooDeep reports whether body's arrays and objects nest deeper than maxDepth, reading
// it once and skipping strings (a "[" inside one does not count). It does not validate:
// a body it passes may still be bad JSON, which the parser then refuses. It costs one
// pass over the body and no allocation.
func tooDeep(body []byte) bool {
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '[', '{':
			if depth++; depth > maxDepth {
				return true
			}
		case ']', '}':
			depth--
		case '"':
			for i++; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' {
					i++
				}
			}
		}
	}
	return false
}
