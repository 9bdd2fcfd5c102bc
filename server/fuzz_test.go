package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

// fuzzSeeds are request bodies, good and bad, for every decoder.
var fuzzSeeds = []string{
	`{"id":"a","url":"http://example.com/","text":"hello world","priority":1.5,"fetch_time":"2024-05-01T12:00:00Z"}`,
	`{"id":"a","html":"<p>hi</p>","content_type":"text/html; charset=utf-8"}`,
	`{"id":"a","html_base64":"PG1ldGEgY2hhcnNldD1zaGlmdF9qaXM+PHA+k/qWe4zqPC9wPg==","content_type":"text/html; charset=shift_jis"}`,
	`{"id":"a","html_base64":"PHA+eDwvcD4"}`, `{"id":"a","html_base64":"PHA+eDwvcD4=","text":"x"}`,
	`{"documents":[{"id":"a","text":"x"},{"id":""}],"add":false}`,
	`{"simhash":"0123456789abcdef","minhash":"0100000002000000"}`,
	`{"queries":[{"simhash":"0123456789abcdef"},{"minhash":"0100000002000000"},{"simhash":"xyz"},{},null,1]}`,
	`{"queries":[]}`, `{"queries":[{"simhash":"0123456789abcdef","bogus":1}]}`,
	`{"queries":[{"simhash":"0123456789abcdef"},{"minhash":"01000000"},{"simhash":"0123456789abcdef","minhash":"zz"}]}`,
	`{"a":"x","b":"y","html":true}`,
	`{"id":"a","fetch_time":"yesterday"}`, `{"id":"\ud800"}`, "{\"id\":\"a\xff\"}", `[`, `{"id":1}`, ``, `null`,
	`{"id":"a\ud800","text":"x"}`, `{"id":"a\udbff\udfff","url":"http://e.com/\udc00","text":"x"}`,
	`{"documents":[{"id":"a","text":"x"},{"id":"a","text":"y"}]}`,
	// Deep nesting (fastjson's validator recursed once a level) and large bodies.
	strings.Repeat("[", 100_000), strings.Repeat(`{"a":`, maxDepth+1), `{"id":"a","text":` + strings.Repeat("[", maxDepth),
	`{"documents":[` + strings.Repeat("[", 20_000), `{"queries":[{"simhash":` + strings.Repeat(`{"x":`, 1000),
	`{"id":"a","text":"` + strings.Repeat(`[{\"`, 20_000) + `"}`,
	`{"id":"a","text":"` + strings.Repeat("word ", 200_000) + `"}`,
	`{"documents":[` + strings.Repeat(`{"id":"a","text":"x"},`, 2000) + `{"id":"b","text":"y"}]}`,
}

// checkDecodeError fails the test unless err is nil or a client error.
func checkDecodeError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ae *apiError
	if !errors.As(err, &ae) || ae.status < 400 || ae.status >= 500 || ae.code == "" {
		t.Fatalf("decoder error %v is not a 4xx apiError", err)
	}
}

func FuzzDecodeDocument(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, err := decodeDocument(body)
		checkDecodeError(t, err)
		if err == nil && (doc.ID == "" || len(doc.ID) > maxIDBytes || (doc.HTML != nil && doc.Text != "") || (doc.HTML == nil && doc.Text == "")) {
			t.Fatalf("decoded an invalid document %+v", doc)
		}
	})
}

// documentJSONSeeds are document bodies for the three document decoders' differences:
// names in other cases, repeated and null fields, numbers at and past float64's range,
// escapes (surrogates among them), names that fold to a field's outside ASCII.
var documentJSONSeeds = []string{
	`{"ID":"a","Text":"x","PRIORITY":2,"Content_Type":"t"}`, `{"id":"a","id":"b","text":"x","text":null}`,
	`{"id":"a","priority":1e400}`, `{"id":"a","priority":-0,"url":null}`, `{"id":"a","priority":"1"}`,
	`{"id":"a","priority":4.9e-324}`, `{"id":"a","priority":1.7976931348623157e308}`,
	`{"id":"\u00e9\n\t\"\\\/\b\f\r","text":"\ud83d\ude00 \ud83d x \\ud800"}`,
	"{\"\u212a\":1,\"id\":\"a\"}", `{"\u0069d":"a"}`, "{\"\u0131d\":\"a\"}", `{"id":"a","text":"x\u0000y"}`,
	`{"id":"a","html":{"x":1}}`, `{"HTML_Base64":"PHA+eDwvcD4=","id":"a"}`, `{"id":"a"} `, ` {"id":"a"}x`, "{\"id\":\"a\tb\"}", `{"id":"a","text":"` + "\x01" + `"}`,
	`{"id":"a","bogus":null}`, `[{"id":"a"}]`, `"id"`, `{"id":"a",}`, `{"id":"a","priority":01}`,
	// decodeFlat's: escapes at 8-byte boundaries, ends cut short, names escaped or
	// repeated, white space, members out of place.
	`{"id":"a","html":"<p>\"q\" \\ \/ \b\f\n\r\t \u00e9\u0041\u20AC</p>"}`, `{"id":"a","html":"x\u00"}`, `{"id":"a","html":"x\q"}`,
	` { "id" : "a" ,	"url":"u"` + "\n\r" + `} `, `{"id":"a","html":"\ud83d\ude00"}`, `{"id":"a","html":"abc`, `{"id":"a","html":"abc\`,
	`{"id":"a","html":"0123456789abcde` + "\x1f" + `"}`, `{"id":"a","html":"0123456789abcdef\"0123456789abcdef\\"}`,
	`{"id":"a","html":"é€😀 0123456789"}`, `{"id":"a","html":"x"}}`, `{}`, `{"id":"a" "url":"b"}`, `{"i\u0064":"a"}`,
	`{"id":"a","html":"x","id":"b"}`, `{"id":"a","text":"y","text":null}`, `{"id":"a","html":"x",`, `{"id":"a":"b"}`,
	// Control characters before a string's last escape, which fastjson.Validate misses.
	`{"ID":"a","text":"[` + "\x10" + `\"x"}`, `{"ID":"a","text":"x` + "\t" + `\\ y"}`, `{"ID":"a","text":"x\`,
}

// FuzzDecodeDocumentJSON holds decodeDocumentJSON, the fast path, to decodeStrict's
// results, with lone surrogate escapes in the id or url refused: the same error or
// none, and the same fields.
func FuzzDecodeDocumentJSON(f *testing.F) {
	for _, s := range append(fuzzSeeds, documentJSONSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var fast, strict documentJSON
		ferr, serr := decodeDocumentJSON(body, &fast), decodeStrict(body, &strict)
		if serr == nil && hasSurrogateEscape(body) {
			serr = checkKeyEscapes(body)
		}
		if fmt.Sprint(ferr) != fmt.Sprint(serr) || (serr == nil && fast != strict) {
			t.Fatalf("%q: fast path %+v, %v; encoding/json %+v, %v", body, fast, ferr, strict, serr)
		}
	})
}

// queryJSONSeeds are query bodies for the fast path's differences from encoding/json:
// names in other cases, repeated, null or folding to a field's outside ASCII, values of
// other types, a repeated or null "queries", items not objects, escapes.
var queryJSONSeeds = []string{
	`{"SimHash":"0123456789abcdef","MINHASH":"01000000"}`, `{"simhash":"a","simhash":null,"minhash":"b","minhash":"c"}`,
	`{"simhash":1}`, "{\"\u017fimhash\":\"0123456789abcdef\"}", `{"\u0073imhash":"0123456789abcdef"}`,
	`{"simhash":"\u0030123456789abcdef"}`, `{"minhash":"\ud800"}`, `{"simhash":"0123456789abcdef"} x`,
	`{"queries":null}`, `{"Queries":[{"simhash":"0123456789abcdef"}]}`, `{"queries":[{"simhash":"a"}],"queries":[{"minhash":"b"}]}`,
	`{"queries":[null]}`, `{"queries":[[]]}`, `{"queries":{}}`, `{"queries":[{"simhash":null}]}`, `{"queries":[{}],"x":1}`,
}

// FuzzDecodeQueryJSON holds the query decoders' fast paths to decodeStrict's results: a
// body a fast path takes is one encoding/json decodes alike.
func FuzzDecodeQueryJSON(f *testing.F) {
	for _, s := range append(fuzzSeeds, queryJSONSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var fast queryJSON
		if withObject(body, fast.setFast) {
			var strict queryJSON
			if err := decodeStrict(body, &strict); err != nil || strict != fast {
				t.Fatalf("%q: fast path %+v; encoding/json %+v, %v", body, fast, strict, err)
			}
		}
		var qs []queryJSON
		if withObject(body, func(o *fastjson.Object) bool { return setQueriesFast(o, &qs) }) {
			var typed struct {
				Queries []queryJSON `json:"queries"`
			}
			if err := decodeStrict(body, &typed); err != nil || !reflect.DeepEqual(typed.Queries, qs) {
				t.Fatalf("%q: fast path %+v; encoding/json %+v, %v", body, qs, typed.Queries, err)
			}
		}
	})
}

func FuzzDecodeBatch(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		docs, errs, _, err := decodeBatch(body, 10)
		checkDecodeError(t, err)
		if err != nil {
			return
		}
		if len(docs) != len(errs) || len(docs) > 10 {
			t.Fatalf("%d documents and %d errors", len(docs), len(errs))
		}
		for _, e := range errs {
			checkDecodeError(t, e)
		}
	})
}

func FuzzDecodeQuery(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		q, err := decodeQuery(body)
		checkDecodeError(t, err)
		if err == nil {
			if !q.HasSimHash && len(q.MinHash) == 0 {
				t.Fatal("decoded an empty query")
			}
			if q.HasSimHash {
				if v, err := parseSimHash(formatSimHash(q.SimHash)); err != nil || v != q.SimHash {
					t.Fatalf("simhash %x does not round-trip", q.SimHash)
				}
			}
		}
	})
}

func FuzzDecodeQueryBatch(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		qs, errs, err := decodeQueryBatch(body, 10)
		checkDecodeError(t, err)
		if err != nil {
			return
		}
		if len(qs) != len(errs) || len(qs) < 1 || len(qs) > 10 {
			t.Fatalf("%d queries and %d errors", len(qs), len(errs))
		}
		// The whole-body decode must answer as decoding each query alone does.
		var raw queryBatchJSON
		if err := decodeStrict(body, &raw); err != nil || len(raw.Queries) != len(qs) {
			t.Fatalf("the batch decoded to %d queries; as raw queries: %d, %v", len(qs), len(raw.Queries), err)
		}
		for i, e := range errs {
			checkDecodeError(t, e)
			if e == nil && !qs[i].HasSimHash && len(qs[i].MinHash) == 0 {
				t.Fatalf("query %d decoded empty", i)
			}
			q, qe := decodeQuery(raw.Queries[i])
			if !reflect.DeepEqual(q, qs[i]) || fmt.Sprint(qe) != fmt.Sprint(e) {
				t.Fatalf("query %d: %+v, %v; decoded alone: %+v, %v", i, qs[i], e, q, qe)
			}
		}
	})
}

func FuzzDecodeCompare(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, err := decodeCompare(body)
		checkDecodeError(t, err)
	})
}

// FuzzGunzip feeds arbitrary bytes to gunzip, the decoder of gzip request bodies: no
// panic, at most max bytes out, and every error a 4xx.
func FuzzGunzip(f *testing.F) {
	z := gzipBytes([]byte(fuzzSeeds[0]))
	f.Add(z)
	f.Add(z[:20])
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, z []byte) {
		const max = 1 << 12
		out, err := gunzip(z, max, nil)
		checkDecodeError(t, err)
		if len(out) > max {
			t.Fatalf("%d bytes out, more than %d", len(out), max)
		}
	})
}

// FuzzTooDeep holds tooDeep to the depth of what encoding/json decodes: for a valid JSON
// body, it refuses exactly those nesting deeper than maxDepth.
func FuzzTooDeep(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)))
	f.Add([]byte(strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)))
	f.Add([]byte(`["\\\"[",[{"]":[]}]]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		deep := tooDeep(body)
		var v any
		if json.Unmarshal(body, &v) != nil {
			return // not JSON (or deeper than encoding/json's own limit)
		}
		if want := jsonDepth(v) > maxDepth; deep != want {
			t.Fatalf("%.100q: tooDeep %v, depth %d", body, deep, jsonDepth(v))
		}
	})
}

// jsonDepth is how deep a decoded JSON value nests its arrays and objects.
func jsonDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			d = max(d, jsonDepth(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range v {
			d = max(d, jsonDepth(e))
		}
		return d + 1
	}
	return 0
}
