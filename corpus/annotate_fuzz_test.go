package corpus

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/valyala/fastjson"
)

func TestAnnotateLine(t *testing.T) {
	a := Annotation{Cluster: 3, HasCluster: true, Method: "minhash", Score: 0.75}
	const fields = `"dup_cluster":3,"dup_kept":false,"dup_method":"minhash","dup_score":0.75`
	for _, tc := range []struct{ in, want string }{
		{"{}", "{" + fields + "}"},
		{"{ \t}\r\n", "{ \t" + fields + "}\r\n"},
		{`{"a":{}}` + "\n", `{"a":{},` + fields + "}\n"},
		{`{"a":"{"} ` + "\n", `{"a":"{",` + fields + "} \n"},
		{"\xef\xbb\xbf{\"a\":1}", "\xef\xbb\xbf{\"a\":1," + fields + "}"},
		{`{"a":1`, ""},
		{`[1]`, ""},
		{"\n", ""},
		{"", ""},
	} {
		got, err := annotateLine([]byte("prefix"), []byte(tc.in), a)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%q: no error", tc.in)
			}
			continue
		}
		if err != nil || string(got) != "prefix"+tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzAnnotateLine checks annotateLine against encoding/json: for every line that is a
// JSON object, the result is one too, with the four fields and the line's own members
// (a member of a field's name is overridden: the added one comes last), and the line end
// kept; for other lines, it must not panic. stripAnnotation is checked on the same lines.
// Seeds: those below.
func FuzzAnnotateLine(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}` + "\r\n", ` { "dup_kept" : [ {} ] } `, `{"a":"}"}`, `{"dup_kept":1,"a":2,"dup_kept":3}`, `{"a":{"b":{}}}` + "\n", `[]`, `"}"`} {
		f.Add([]byte(s), true, int64(-1), "simhash", 3.5)
	}
	f.Fuzz(func(t *testing.T, line []byte, kept bool, cluster int64, method string, score float64) {
		a := Annotation{Cluster: cluster, HasCluster: cluster >= 0, Kept: kept, Method: method, Score: score}
		got, err := annotateLine(nil, line, a)
		var orig map[string]json.RawMessage
		isObject := json.Unmarshal(line, &orig) == nil && orig != nil
		if a.check() != nil {
			if err == nil {
				t.Fatalf("annotation %+v: no error", a)
			}
			return
		}
		if !isObject {
			return // Copy annotates parsed objects only: this must just not panic
		}
		checkStrip(t, line, orig)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("%q gave %q: %v", line, got, err)
		}
		fields, _ := appendAnnotation([]byte("{\"_\":0"), a)
		var want map[string]json.RawMessage
		if err := json.Unmarshal(append(fields, '}'), &want); err != nil {
			t.Fatal(err)
		}
		delete(want, "_")
		for k, v := range want {
			orig[k] = v
		}
		if !reflect.DeepEqual(m, orig) {
			t.Fatalf("%q gave %q", line, got)
		}
		trimmed := bytes.TrimRight(line, " \t\r\n")
		if !bytes.HasSuffix(got, line[len(trimmed):]) {
			t.Fatalf("%q gave %q: line end changed", line, got)
		}
	})
}

// checkStrip checks that stripAnnotation removes the annotation fields of a JSON object
// line and keeps its other members (orig, as encoding/json reads the line).
func checkStrip(t *testing.T, line []byte, orig map[string]json.RawMessage) {
	var p fastjson.Parser
	v, err := p.ParseBytes(bytes.TrimRight(line, "\r\n"))
	if err != nil {
		return // encoding/json and fastjson differ on a few edge cases; Copy uses fastjson
	}
	b := stripAnnotation(v, line)
	if b == nil {
		for _, k := range annotationFields {
			if _, ok := orig[k]; ok {
				t.Fatalf("%q has %s, not stripped", line, k)
			}
		}
		return
	}
	var got, want map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%q stripped is %q: %v", line, b, err)
	}
	json.Unmarshal(line, &want)
	for _, k := range annotationFields {
		delete(want, k)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q stripped is %q", line, b)
	}
}
