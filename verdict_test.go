package neardup

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestVerdictJSON: a Verdict's JSON, the service's answer, reads back into a Verdict
// (the client unmarshals what the server marshals).
func TestVerdictJSON(t *testing.T) {
	d, _ := NewDetector(Options{})
	text := strings.Repeat("the same words again and again ", 20)
	var vs []Verdict
	for _, doc := range []Document{
		{ID: "a", URL: "http://example.com/a", Text: text},
		{ID: "b", Text: text},
		{ID: "c", URL: "http://example.com/a", Text: text + " and more"},
	} {
		v, err := d.Check(doc)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	b, err := json.Marshal(vs)
	if err != nil {
		t.Fatal(err)
	}
	var back []Verdict
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, vs) {
		t.Errorf("round trip:\n%+v\n%+v", back, vs)
	}
	if vs[1].Matches[0].Level != LevelRaw {
		t.Errorf("the exact copy's level is %v", vs[1].Matches[0].Level)
	}
	for _, l := range []Level{LevelNone, LevelRaw, LevelText, LevelMain} {
		var got Level
		txt, _ := l.MarshalText()
		if err := got.UnmarshalText(txt); err != nil || got != l {
			t.Errorf("level %v: %v %v", l, got, err)
		}
	}
	var l Level
	if err := l.UnmarshalText([]byte("bytes")); err == nil {
		t.Error("an unknown level was accepted")
	}
}
