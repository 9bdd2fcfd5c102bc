package simhash

import "errors"

// Errors returned by this package; test for them with errors.Is.
var (
	// ErrWindow reports a shingle window that is not positive.
	ErrWindow = errors.New("simhash: shingle window must be positive")
	// ErrScheme reports a scheme name that ParseScheme does not know.
	ErrScheme = errors.New("simhash: unknown fingerprint scheme")
)
