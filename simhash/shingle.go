package simhash

import "fmt"

// Shingle returns every run of window consecutive tokens, in order, with stride 1: tokens
// [0, window), [1, window+1), and so on. It returns no shingles when there are fewer than
// window tokens, and an error wrapping ErrWindow when window <= 0. It behaves like
// simhash-py's shingle(tokens, window), except that it returns a slice instead of a
// generator.
//
// The shingles are subslices of tokens, not copies: they share its memory, so changing an
// element of tokens changes the shingles that contain it. Each has its capacity cut to
// window, so appending to a shingle copies it instead of overwriting tokens. Shingle
// allocates only the outer slice.
func Shingle[T any](tokens []T, window int) ([][]T, error) {
	if window <= 0 {
		return nil, fmt.Errorf("%w: got %d; use 1 or more", ErrWindow, window)
	}
	if len(tokens) < window {
		return nil, nil
	}
	out := make([][]T, 0, len(tokens)-window+1)
	for i := 0; i+window <= len(tokens); i++ {
		out = append(out, tokens[i:i+window:i+window])
	}
	return out, nil
}
