package client

import (
	"net/http/httptest"

	"github.com/neardup/neardup"
)

// NewFakeService starts the tests' fake of the service on a detector with default
// options, for the examples; the caller closes it.
func NewFakeService() *httptest.Server {
	f, err := startFake(neardup.Options{})
	if err != nil {
		panic(err)
	}
	return f.Server
}
