package shingle

import "errors"

// Errors returned by this package; test for them with errors.Is.
var (
	// ErrOptions reports Options that New cannot use; the message names the field and
	// what to change.
	ErrOptions = errors.New("shingle: invalid options")
	// ErrIDF reports a malformed IDF table file given to LoadIDF.
	ErrIDF = errors.New("shingle: malformed IDF table")
)
