package server

import (
	"bytes"
	"net/http"
)

// maxDepth is how deeply a request body's JSON may nest: no request needs more than
// three levels (a batch's array of documents), and the parsers behind the check, which
// recurse once a level, must never see what a hostile body can nest (two million "["
// overflowed the stack; twenty thousand unterminated ones took twenty seconds of CPU).
const maxDepth = 64

// errTooDeep answers a body that nests deeper than maxDepth.
var errTooDeep = errorf(http.StatusBadRequest, "too_deep", "the JSON nests deeper than %d levels; no request needs more than 3", maxDepth)

// tooDeep reports whether body's arrays and objects nest deeper than maxDepth, reading
// it once and skipping strings (a "[" inside one does not count). It does not validate:
// a body it passes may still be bad JSON, which the parser then refuses. It costs two
// vectorized counts over the body, and one more pass when the body has more than
// maxDepth brackets; it allocates nothing.
func tooDeep(body []byte) bool {
	if bytes.Count(body, []byte("[")) <= maxDepth-bytes.Count(body, []byte("{")) {
		// Too few brackets to nest that deep, whatever is in strings: the common case,
		// counted by vectorized code.
		return false
	}
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
			// The string ends at the next quote after an even run of backslashes. Each
			// run is counted once, so the scan stays linear, and IndexByte makes a long
			// string (a document's text) cost little next to its parsing.
			for {
				j := bytes.IndexByte(body[i+1:], '"')
				if j < 0 {
					return false
				}
				i += 1 + j
				n := 0
				for k := i - 1; body[k] == '\\'; k-- {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
		}
	}
	return false
}
