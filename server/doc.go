// Package server is the HTTP API of the neardup dedup service: a crawler's check-and-add
// over one *neardup.Detector, with bearer-token scopes, limits that keep a bad client
// from hurting the others, Prometheus metrics, an OpenAPI document (/openapi.json) and a
// small web page to compare two documents and look one up. package client speaks to it.
//
// The endpoints (every request and answer is JSON unless said otherwise):
//
//	POST   /v1/documents            check and add a document -> neardup.Verdict (write)
//	POST   /v1/check                check without adding -> neardup.Verdict (read)
//	POST   /v1/documents:batch      many, in order -> one verdict or error each (write)
//	GET    /v1/documents/{id}       a stored document and its near-duplicates (read)
//	DELETE /v1/documents/{id}       delete one (write)
//	POST   /v1/fingerprints/query   documents near a raw SimHash / MinHash (read)
//	POST   /v1/fingerprints/query:batch  many queries -> their matches or an error each (read)
//	POST   /v1/compare              every measure of two texts and their word diff (read)
//	GET    /v1/stats                index statistics (read)
//	GET    /v1/prescreen            the key filter (neardup.KeyFilter), with an ETag (read)
//	GET    /healthz, /readyz, /metrics, /openapi.json   no token
//	GET    /                        the web page (read)
//
// A Server serves from the moment it is made, so a process can listen while it loads its
// index; /readyz and the /v1 endpoints answer 503 until SetDetector:
//
//	srv, err := server.New(server.Config{Tokens: tokens, Logger: log})
//	ln, err := net.Listen("tcp", "127.0.0.1:8080")
//	go srv.Serve(ln)
//	d, err := neardup.NewDetector(neardup.Options{}) // or open the store
//	srv.SetDetector(d)
//	<-sigterm
//	err = srv.Shutdown(ctx) // /readyz 503 stopping, in-flight requests finish
//	// now close d's store
//
// Every error answer is {"error":{"code":"snake_case","message":"..."}}: 400
// bad_request, invalid_json or invalid_document, 401 unauthorized, 403 forbidden, 404
// not_found, 405 method_not_allowed, 413 too_large, too_many_documents or
// too_many_queries, 415 unsupported_encoding, 429 overloaded, 503 not_ready or timeout,
// and 500 internal only when the store fails.
//
// A request body may be gzip-compressed (Content-Encoding: gzip), as pages compress
// about four times; Config.MaxBody bounds it both as sent and once gunzipped, so a
// compressed bomb is 413.
//
// # Caveats
//
//   - The detector does not take a context: a request past Config.Timeout is answered
//     503 timeout, but its work goes on in the background, holding its in-flight slot,
//     until it is done (Shutdown waits for it). A batch stops between documents or
//     queries.
//   - Request bodies are strict: not UTF-8, an unknown field or data after the JSON value
//     is 400 invalid_json, so that a misspelt field is never silently dropped. In a
//     batch, a malformed document or query is answered in its own result. A page that
//     is not UTF-8 goes as its bytes in base64, in html_base64 instead of html; binary
//     content (a PDF, an image) is 400 invalid_document.
//   - Tokens are compared in constant time, but sent in clear: put TLS in front (a
//     reverse proxy) when the network is not trusted. With no tokens Serve refuses a
//     non-loopback listener (ErrNoTokens).
//   - The web page has no script; a browser sends the token as the password of HTTP
//     Basic authentication, which the server accepts as well as Bearer.
//   - /v1/prescreen copies and hashes the whole filter (about 1.2 MB at the defaults)
//     each time it has changed since the last request, which on a store the service
//     alone writes is after every add; clients should send If-None-Match.
package server
