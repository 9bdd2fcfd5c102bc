package server

import "errors"

// Errors of this package, tested with errors.Is; the messages wrapping them say what to
// change.
var (
	// ErrTokens: a token file or NEARDUP_TOKENS value is malformed.
	ErrTokens = errors.New("server: bad tokens")
	// ErrNoTokens: Serve was given a listener on a non-loopback address and no tokens
	// are configured, which would open the index to the network.
	ErrNoTokens = errors.New("server: no tokens configured for a non-loopback address")
)
