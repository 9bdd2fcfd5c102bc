package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/store"
)

// jsonNotFound answers the mux's own 404 (for a path that cleans to no endpoint, as
// /v1/%2e%2e does) as a JSON error, and passes its redirects on.
type jsonNotFound struct {
	http.ResponseWriter
	s       *Server
	r       *http.Request
	written bool // the JSON 404 is written: drop the mux's plain text
}

func (j *jsonNotFound) WriteHeader(code int) {
	if code != http.StatusNotFound {
		j.ResponseWriter.WriteHeader(code)
		return
	}
	j.written = true
	j.s.writeError(j.ResponseWriter, j.r, errorf(http.StatusNotFound, "not_found", "no endpoint %s; see /openapi.json", j.r.URL.Path))
}

func (j *jsonNotFound) Write(b []byte) (int, error) {
	if j.written {
		return len(b), nil
	}
	return j.ResponseWriter.Write(b)
}

// recorder keeps the status and size of a response.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// writeJSON answers v with the status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"encoding the answer failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// clientError returns the *apiError that answers err when the request is at fault: err
// itself, or 400 for an invalid document (neardup.ErrDocument) or query
// (neardup.ErrOptions). It returns nil for anything else, which can only be the store's
// failure.
func clientError(err error) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, neardup.ErrDocument):
		return errorf(http.StatusBadRequest, "invalid_document", "%v", err)
	case errors.Is(err, neardup.ErrOptions):
		return errorf(http.StatusBadRequest, "bad_request", "%v", err)
	}
	return nil
}

// storeError returns the *apiError that answers a store's refusal: 507 while its disk
// is below the free-space watermark (or a Redis master is at its maxmemory), 503 once
// writing its log failed (the instance takes no writes until it restarts), 503 as well
// while a shared store cannot be reached (a failover under way: the client retries);
// nil for any other error.
func storeError(err error) *apiError {
	switch {
	case errors.Is(err, store.ErrNoSpace):
		return errorf(http.StatusInsufficientStorage, "insufficient_storage", "%v", err)
	case errors.Is(err, store.ErrFailed):
		return errorf(http.StatusServiceUnavailable, "store_failed", "%v", err)
	case errors.Is(err, store.ErrUnavailable):
		return errorf(http.StatusServiceUnavailable, "store_unavailable", "%v", err)
	}
	return nil
}

// writeError answers err: as clientError or storeError say, or 500 for the store's
// failure.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := clientError(err)
	if ae == nil {
		if ae = storeError(err); ae != nil && ae.code == "store_unavailable" {
			s.cfg.Logger.Warn("store unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		}
	}
	if ae == nil {
		s.cfg.Logger.Error("store failure", "method", r.Method, "path", r.URL.Path, "err", err)
		ae = errorf(http.StatusInternalServerError, "internal", "%v", err)
	}
	switch ae.status {
	case http.StatusUnauthorized:
		w.Header().Add("WWW-Authenticate", `Bearer realm="neardup"`)
		w.Header().Add("WWW-Authenticate", `Basic realm="neardup"`)
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
	case http.StatusInsufficientStorage:
		w.Header().Set("Retry-After", "60")
	}
	writeJSON(w, ae.status, errorBody{errorDetail{ae.code, ae.message}})
}
