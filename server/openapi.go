package server

import (
	_ "embed"
	"net/http"
)

// openapiJSON is the OpenAPI 3.0 document of the API; TestOpenAPI checks it against the
// routes and some of the handlers' answers.
//
//go:embed openapi.json
var openapiJSON []byte

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openapiJSON)
	return nil
}
