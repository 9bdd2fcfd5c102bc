package urlnorm

import "errors"

var (
	// ErrInvalid reports input that has no canonical form: nothing but spaces and control
	// characters, a port that is not a number from 0 to 65535, or an http, https, ws, wss,
	// ftp or gopher URL without a host. The wrapping error quotes the input and says which.
	// Test for it with errors.Is.
	ErrInvalid = errors.New("urlnorm: invalid URL")

	// ErrOptions reports Options that New rejects (an undeclared Profile, an empty or
	// malformed list entry) and a profile name that ParseProfile does not know. Test for it
	// with errors.Is.
	ErrOptions = errors.New("urlnorm: invalid options")
)
