package urlnorm

import "errors"

var (
	// ErrInvalid reports input that has no canonical form: nothing but spaces and control
	// characters, input that the WHATWG URL Standard rejects (a forbidden host code point,
	// a malformed IP address, a port that is not a number from 0 to 65535, an http URL
	// without a host, ...), a relative reference without a base URL, or a base URL given
	// to CanonicalizeRef that is not an absolute URL. The wrapping error quotes the input
	// and says which. Test for it with errors.Is.
	ErrInvalid = errors.New("urlnorm: invalid URL")

	// ErrOptions reports Options that New rejects (an undeclared Profile, an empty or
	// malformed list entry, a Base that is not an absolute URL, which wraps ErrInvalid too) and a profile name that ParseProfile does not know. Test for it
	// with errors.Is.
	ErrOptions = errors.New("urlnorm: invalid options")
)
