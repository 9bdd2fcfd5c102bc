package client

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrNotUTF8 is wrapped by the error for a document whose Text, ID, URL or ContentType
// is not valid UTF-8: the wire format carries them as JSON strings, which cannot hold
// other bytes without replacing them, and a replaced byte would change the document's
// fingerprints. HTML in any charset is sent unchanged (see the package documentation).
var ErrNotUTF8 = errors.New("client: document is not valid UTF-8")

// APIError is a response from the service, or from a proxy in front of it, with a
// status other than 2xx, or one document's error inside a batch answer. Callers test
// for it with errors.As.
type APIError struct {
	// Status is the HTTP status code; 0 for one document's error in a batch answer,
	// which carries no status of its own.
	Status int
	// Code is the service's error code ("invalid_document", "not_found", "overloaded",
	// ...), or "" when the body was not the service's JSON error (a proxy's page).
	Code string
	// Message is the service's message, or the start of a body that was not JSON.
	Message string
}

// Error returns "client: " followed by the status, the code and the message.
func (e *APIError) Error() string {
	status := ""
	if e.Status != 0 {
		status = fmt.Sprintf("%d ", e.Status)
	}
	code := e.Code
	if code == "" {
		code = http.StatusText(e.Status)
	}
	if e.Message == "" {
		return fmt.Sprintf("client: %s%s", status, code)
	}
	return fmt.Sprintf("client: %s%s: %s", status, code, e.Message)
}
