package server

import (
	"encoding/json"
	"maps"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// openapiDoc is the part of the OpenAPI document the test reads.
type openapiDoc struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"schemas"`
	} `json:"components"`
}

// operation is one documented operation's request body and responses.
type operation struct {
	RequestBody json.RawMessage            `json:"requestBody"`
	Responses   map[string]json.RawMessage `json:"responses"`
}

// TestOpenAPI checks the embedded document against the routes: every documented
// operation is routed to a handler of its own pattern, every route is documented, and a
// few documented answers are what the handlers give.
func TestOpenAPI(t *testing.T) {
	var doc openapiDoc
	if err := json.Unmarshal(openapiJSON, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0") {
		t.Errorf("openapi %q, want 3.0.x", doc.OpenAPI)
	}
	s, ts := start(t, Config{})
	documented := documentedRoutes(t, s, doc)
	var routed []string
	for _, r := range s.routes {
		routed = append(routed, r.pattern)
	}
	sort.Strings(documented)
	sort.Strings(routed)
	if !slices.Equal(documented, routed) {
		t.Errorf("documented operations\n%q\nroutes\n%q", documented, routed)
	}

	// Some documented status codes, as the handlers give them.
	responses := func(path, method string) map[string]json.RawMessage {
		var op operation
		json.Unmarshal(doc.Paths[path][method], &op)
		return op.Responses
	}
	for _, tc := range []struct {
		method, path, docPath, body, code string
	}{
		{"GET", "/v1/documents/nope", "/v1/documents/{id}", "", "404"},
		{"DELETE", "/v1/documents/nope", "/v1/documents/{id}", "", "404"},
		{"POST", "/v1/documents", "/v1/documents", `{"text":"no id"}`, "400"},
		{"POST", "/v1/documents", "/v1/documents", docJSON("a", "", "x"), "200"},
		{"POST", "/v1/documents:batch", "/v1/documents:batch", `{"documents":[]}`, "200"},
		{"POST", "/v1/fingerprints/query", "/v1/fingerprints/query", `{}`, "400"},
		{"POST", "/v1/fingerprints/query:batch", "/v1/fingerprints/query:batch", `{"queries":[{}]}`, "200"},
		{"POST", "/v1/fingerprints/query:batch", "/v1/fingerprints/query:batch", `{"queries":[]}`, "400"},
		{"POST", "/v1/compare", "/v1/compare", `{"a":"x","b":"y"}`, "200"},
		{"GET", "/v1/stats", "/v1/stats", "", "200"},
		{"GET", "/readyz", "/readyz", "", "200"},
		{"GET", "/healthz", "/healthz", "", "200"},
		{"POST", "/v1/check", "/v1/check", strings.Repeat("[", 100_000), "400"},
		{"POST", "/v1/check", "/v1/check", `{"id":"a"}`, "400"},
		{"GET", "/v1/documents/a%FF", "/v1/documents/{id}", "", "400"},
	} {
		if _, ok := responses(tc.docPath, strings.ToLower(tc.method))[tc.code]; !ok {
			t.Errorf("%s %s: %s is not documented", tc.method, tc.docPath, tc.code)
		}
		if code, body, _ := call(t, ts, tc.method, tc.path, "", tc.body); code != atoi(tc.code) {
			t.Errorf("%s %s: %d %s, documented %s", tc.method, tc.path, code, body, tc.code)
		}
	}
	checkSchemaFields(t, doc)
	if code, _, h := call(t, ts, "GET", "/openapi.json", "", ""); code != 200 || h.Get("Content-Type") != "application/json" {
		t.Errorf("GET /openapi.json: %d %s", code, h.Get("Content-Type"))
	}
}

// documentedRoutes returns the operations doc documents, as mux patterns, checking that
// s routes each to its pattern and that each documents its responses.
func documentedRoutes(t *testing.T, s *Server, doc openapiDoc) []string {
	t.Helper()
	var documented []string
	for path, item := range doc.Paths {
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			m := strings.ToUpper(method)
			pattern := m + " " + path
			if path == "/" {
				pattern += "{$}"
			}
			documented = append(documented, pattern)
			r := httptest.NewRequest(m, strings.ReplaceAll(path, "{id}", "some-id"), nil)
			if _, p := s.mux.Handler(r); p != pattern {
				t.Errorf("documented %s %s is routed to %q", m, path, p)
			}
			var op operation
			if err := json.Unmarshal(raw, &op); err != nil || len(op.Responses) == 0 {
				t.Errorf("%s %s: no responses (%v)", m, path, err)
			}
			// Every body goes through grantBody and readBody, which answer 413, 415 and 429.
			if _, ok := op.Responses["415"]; op.RequestBody != nil && (!ok || op.Responses["413"] == nil || op.Responses["429"] == nil) {
				t.Errorf("%s %s takes a body but does not document 413, 415 and 429", m, path)
			}
		}
	}
	return documented
}

// checkSchemaFields checks that the request bodies' schemas of doc name the fields the
// decoders take.
func checkSchemaFields(t *testing.T, doc openapiDoc) {
	t.Helper()
	for name, v := range map[string]any{"Document": documentJSON{}, "FingerprintQuery": queryJSON{}, "CompareRequest": compareJSON{}} {
		var fields []string
		for f := range reflect.TypeOf(v).Fields() {
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields = append(fields, tag)
		}
		documented := slices.Sorted(maps.Keys(doc.Components.Schemas[name].Properties))
		if slices.Sort(fields); !slices.Equal(documented, fields) {
			t.Errorf("schema %s documents %q; the decoder takes %q", name, documented, fields)
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = 10*n + int(c-'0')
	}
	return n
}
