package server

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/neardup/neardup"
)

// TestNoContent refuses a document with neither text nor html: such documents would all
// be exact duplicates of each other.
func TestNoContent(t *testing.T) {
	_, ts := start(t, Config{})
	for _, path := range []string{"/v1/documents", "/v1/check"} {
		for _, b := range []string{`{"id":"a"}`, `{"id":"a","url":"http://example.com/","text":""}`, `{"id":"a","html":"","html_base64":null}`} {
			code, body, _ := call(t, ts, "POST", path, "", b)
			wantError(t, "POST "+path+" "+b, code, body, 400, "invalid_document")
		}
	}
	code, body, _ := call(t, ts, "POST", "/v1/documents:batch", "", `{"documents":[{"id":"a"},{"id":"b"}]}`)
	var res struct{ Results []batchResult }
	if code != 200 || json.Unmarshal(body, &res) != nil || len(res.Results) != 2 {
		t.Fatalf("batch: %d %s", code, body)
	}
	for i, r := range res.Results {
		if r.Error == nil || r.Error.Code != "invalid_document" {
			t.Errorf("batch item %d without content: %+v", i, r)
		}
	}
	// Content that normalizes to nothing is no exact duplicate of other such content.
	for i, text := range []string{"!!!", "???"} {
		code, body, _ := call(t, ts, "POST", "/v1/documents", "", docJSON(fmt.Sprint("p", i), "", text))
		if code != 200 || !strings.Contains(string(body), `"verdict":"unique"`) {
			t.Errorf("%q: %d %s, want unique", text, code, body)
		}
	}
}

// TestIDText refuses ids that escape lone UTF-16 surrogates ("a\ud800" and "a\udbff"
// both decoded to "a\uFFFD"), and ids in a path that are not UTF-8.
func TestIDText(t *testing.T) {
	_, ts := start(t, Config{})
	for _, id := range []string{`a\ud800`, `a\udbff`, `\udc00`, `a\ud800\ud800`, `a\ud800x`, `\ud800\\udc00`} {
		for _, b := range []string{`{"id":"` + id + `","text":"x"}`, `{"url":"http://e.com/` + id + `","ID":"ok","text":"x"}`} {
			code, body, _ := call(t, ts, "POST", "/v1/check", "", b)
			wantError(t, b, code, body, 400, "invalid_document")
		}
		code, body, _ := call(t, ts, "POST", "/v1/documents:batch", "", `{"documents":[{"id":"`+id+`","text":"x"}]}`)
		if code != 200 || !strings.Contains(string(body), `"code":"invalid_document"`) {
			t.Errorf("batch with id %s: %d %s", id, code, body)
		}
	}
	for _, id := range []string{`\ud83d\ude00`, `a\ufffd`, `\\ud800`} {
		code, body, _ := call(t, ts, "POST", "/v1/check", "", `{"id":"`+id+`","text":"x"}`)
		if code != 200 {
			t.Errorf("id %s: %d %s", id, code, body)
		}
	}
	code, body, _ := call(t, ts, "GET", "/v1/documents/a%FF", "", "")
	wantError(t, "GET of an id not UTF-8", code, body, 400, "invalid_document")
	code, body, _ = call(t, ts, "DELETE", "/v1/documents/a%FF", "", "")
	wantError(t, "DELETE of an id not UTF-8", code, body, 400, "invalid_document")
}

// TestBatchRepeatedID refuses the second document with an id in a batch, in its result.
func TestBatchRepeatedID(t *testing.T) {
	_, ts := start(t, Config{})
	body := `{"documents":[` + docJSON("a", "", article) + `,` + docJSON("b", "", "other words here") + `,` + docJSON("a", "", "another text") + `]}`
	code, b, _ := call(t, ts, "POST", "/v1/documents:batch", "", body)
	var res struct{ Results []batchResult }
	if code != 200 || json.Unmarshal(b, &res) != nil || len(res.Results) != 3 {
		t.Fatalf("%d %s", code, b)
	}
	if res.Results[0].Verdict == nil || res.Results[1].Verdict == nil {
		t.Errorf("the first two: %s", b)
	}
	if e := res.Results[2].Error; e == nil || e.Code != "duplicate_id" || !strings.Contains(e.Message, "document 1") {
		t.Errorf("the repeated id: %s", b)
	}
	code, b, _ = call(t, ts, "GET", "/v1/documents/a", "", "")
	var stored storedJSON
	if code != 200 || json.Unmarshal(b, &stored) != nil || stored.Words < 10 {
		t.Errorf("the first a is not the one stored: %d %s", code, b)
	}
}

// TestCheckAgreesWithAdd sends the same body to /v1/check and then /v1/documents under
// every keep rule: the verdicts agree on everything but Added. The check-only path left
// the fetch time unset, so "first" named the new document the survivor.
func TestCheckAgreesWithAdd(t *testing.T) {
	for _, keep := range []string{"priority", "first", "last", "longest", "shortest", "id", "first,id", "priority,last,id"} {
		t.Run(keep, func(t *testing.T) {
			policy, err := neardup.ParseKeepPolicy(keep)
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			d, err := neardup.NewDetector(neardup.Options{Pipeline: neardup.Pipeline{Keep: policy}})
			if err != nil {
				t.Fatal(err)
			}
			s.SetDetector(d)
			ts := httptest.NewServer(s)
			defer ts.Close()
			for _, b := range []string{docJSON("p1", "http://a.example/1", article), `{"id":"p2","text":` + quote(article+" More.") + `,"fetch_time":"2020-01-01T00:00:00Z","priority":2}`} {
				if code, body, _ := call(t, ts, "POST", "/v1/documents", "", b); code != 200 {
					t.Fatalf("%d %s", code, body)
				}
			}
			for _, b := range []string{docJSON("t9", "http://b.example/9", article), docJSON("t8", "http://a.example/1", article+" x"),
				`{"id":"t7","text":` + quote(article) + `,"fetch_time":"2010-01-01T00:00:00Z"}`} {
				_, checked, _ := call(t, ts, "POST", "/v1/check", "", b)
				_, added, _ := call(t, ts, "POST", "/v1/documents", "", b)
				var vc, va neardup.Verdict
				if json.Unmarshal(checked, &vc) != nil || json.Unmarshal(added, &va) != nil {
					t.Fatalf("check %s, add %s", checked, added)
				}
				va.Added = vc.Added
				if fmt.Sprint(vc) != fmt.Sprint(va) {
					t.Errorf("%s:\ncheck %s\nadd   %s", b, checked, added)
				}
			}
		})
	}
}

// TestNotFoundJSON: a path the mux cleans to no endpoint is a JSON 404 too.
func TestNotFoundJSON(t *testing.T) {
	_, ts := start(t, Config{})
	for _, p := range []string{"/v1/%2e%2e", "/%2e%2e/x", "/v1/%2e%2e/%2e%2e/nothing"} {
		code, body, h := call(t, ts, "GET", p, "", "")
		wantError(t, "GET "+p, code, body, 404, "not_found")
		if ct := h.Get("Content-Type"); ct != "application/json" {
			t.Errorf("GET %s: Content-Type %q", p, ct)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestRawURL: the verdict and GET give the URL as sent, next to the canonical one.
func TestRawURL(t *testing.T) {
	_, ts := start(t, Config{})
	const raw = "HTTP://Example.COM:80/a/../b?x=1#frag"
	_, body, _ := call(t, ts, "POST", "/v1/documents", "", docJSON("a", raw, article))
	var v neardup.Verdict
	if err := json.Unmarshal(body, &v); err != nil || v.RawURL != raw || v.URL != "http://example.com/b?x=1" {
		t.Errorf("verdict %s, %v", body, err)
	}
	_, body, _ = call(t, ts, "GET", "/v1/documents/a", "", "")
	var st storedJSON
	if err := json.Unmarshal(body, &st); err != nil || st.RawURL != raw || st.URL != v.URL {
		t.Errorf("GET %s, %v", body, err)
	}
	_, body, _ = call(t, ts, "POST", "/v1/check", "", docJSON("b", "http://example.com/c", article))
	if strings.Contains(string(body), "raw_url") {
		t.Errorf("a canonical URL is given twice: %s", body)
	}
}
