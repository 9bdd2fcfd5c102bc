package hamming

import "errors"

// Errors returned by this package; test for them with errors.Is.
var (
	// ErrDesign reports an impossible table design: blocks > 64, blocks <= k, or k < 0.
	ErrDesign = errors.New("hamming: invalid table design")
	// ErrSnapshot reports a snapshot that is not one, is from an unknown version, is
	// truncated or fails its checksum.
	ErrSnapshot = errors.New("hamming: bad index snapshot")
)
