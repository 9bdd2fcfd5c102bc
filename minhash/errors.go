package minhash

import "errors"

// ErrEncoding reports bytes that are not a signature encoded by Signature.AppendBinary: a
// wrong length, an unknown version or a K outside [1, MaxK]. Test for it with errors.Is.
var ErrEncoding = errors.New("minhash: bad signature encoding")

// ErrSketchEncoding reports bytes that are not a sketch encoded by Sketch.AppendBinary.
// Test for it with errors.Is.
var ErrSketchEncoding = errors.New("minhash: bad sketch encoding")
