package lsh

import "errors"

// Errors returned by this package; test for them with errors.Is.
var (
	// ErrOptions reports Options or Params arguments that cannot make an index: a
	// threshold outside (0, 1], K outside [1, minhash.MaxK], negative or non-finite weights,
	// a banding wider than K, or only one of Bands and Rows set.
	ErrOptions = errors.New("lsh: invalid options")
	// ErrSignature reports a signature whose length is not the index's K.
	ErrSignature = errors.New("lsh: signature length does not match the index")
	// ErrSnapshot reports a snapshot that is not one, is from an unknown version, is
	// truncated, is inconsistent or fails its checksum.
	ErrSnapshot = errors.New("lsh: bad index snapshot")
)
