package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestVerdictJSON checks that a Verdict read back from its JSON equals it: the service's
// client unmarshals what the server marshals.
func TestVerdictJSON(t *testing.T) {
	v := Verdict{ID: "b", URL: "http://example.com/", Kind: Changed, Survivor: "b", Added: true, Matches: []Match{
		{ID: "a", URL: "http://example.com/", Kind: URLDuplicate, Distance: 9, Similarity: 0.25},
		{ID: "c", Kind: ExactDuplicate, Level: LevelText},
		{ID: "d", Kind: NearDuplicate, Distance: 2, Similarity: 0.75},
	}}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var got Verdict
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Errorf("read back %+v\nwant %+v", got, v)
	}
	var l Level
	if err := l.UnmarshalText([]byte("bogus")); err == nil {
		t.Error("Level.UnmarshalText(bogus): no error")
	}
}
