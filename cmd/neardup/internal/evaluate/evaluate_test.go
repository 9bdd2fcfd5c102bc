package evaluate

import (
	"bytes"
	"maps"
	"strings"
	"testing"
)

func TestReadLabels(t *testing.T) {
	in := "id_a\tid_b\tscore\nb\ta\t0.9\na\tc\t0.5\nc,d\n" +
		`{"cluster":0,"representative":"x","size":3,"members":[{"id":"x"},{"id":"y"},{"id":"z"}]}` + "\n\nb\ta\t0.7\n"
	got, err := ReadLabels(strings.NewReader(in), "l", 0.8)
	if err != nil {
		t.Fatal(err)
	}
	want := map[Pair]float64{{"a", "b"}: 0.9, {"a", "c"}: 0.5, {"c", "d"}: 1, {"x", "y"}: 1, {"x", "z"}: 1, {"y", "z"}: 1}
	if !maps.Equal(got.Pairs, want) || got.Duplicates != 5 || !got.Unscored {
		t.Errorf("got %+v, want pairs %v, 5 duplicates, unscored", got, want)
	}
	for _, bad := range []string{"a\n", "a\tb\tx\nc\td\ty\n", "{not json\n"} {
		if _, err := ReadLabels(strings.NewReader(bad), "l", 0.8); err == nil || !strings.HasPrefix(err.Error(), "l:") {
			t.Errorf("%q: %v, want an error naming the line", bad, err)
		}
	}
}

// TestReadRunPairs: exact groups and SimHash distance 0 expand to every pair they imply,
// and a near pair between two groups to every pair between their members, against the
// pairs listed by hand.
func TestReadRunPairs(t *testing.T) {
	in := `{"a":"a","b":"b","method":"exact"}
{"a":"a","b":"c","method":"exact"}
{"a":"d","b":"e","method":"minhash","similarity":0.9}
{"a":"c","b":"d","method":"minhash","similarity":0.85,"estimate":0.8}
`
	found, bySim, err := ReadRunPairs(strings.NewReader(in), "p")
	if err != nil || !bySim {
		t.Fatal(err, bySim)
	}
	want := map[Pair]float64{
		{"a", "b"}: 1, {"a", "c"}: 1, {"b", "c"}: 1, {"d", "e"}: 0.9,
		{"a", "d"}: 0.85, {"b", "d"}: 0.85, {"c", "d"}: 0.85,
	}
	if !maps.Equal(found, want) {
		t.Errorf("got %v\nwant %v", found, want)
	}
	found, bySim, err = ReadRunPairs(strings.NewReader(`{"a":"x","b":"y","method":"simhash","distance":0}
{"a":"y","b":"z","method":"simhash","distance":2}
`), "p")
	if err != nil || bySim || !maps.Equal(found, map[Pair]float64{{"x", "y"}: 0, {"x", "z"}: 2, {"y", "z"}: 2}) {
		t.Errorf("distances: %v, %v, %v", found, bySim, err)
	}
	if _, _, err := ReadRunPairs(strings.NewReader("{\"a\":\"x\"}\n"), "p"); err == nil || !strings.HasPrefix(err.Error(), "p:1:") {
		t.Errorf("a pair without b: %v", err)
	}
}

func TestSweepAndBands(t *testing.T) {
	truth := Labels{Pairs: map[Pair]float64{{"a", "b"}: 0.95, {"a", "c"}: 0.85, {"c", "d"}: 0.6}, Duplicates: 2}
	found := map[Pair]float64{{"a", "b"}: 0.9, {"c", "d"}: 0.82, {"e", "f"}: 0.81}
	rows := Sweep(truth, found, true, 0.8)
	first, last := rows[0], rows[len(rows)-1]
	if first.Predicted != 3 || first.TP != 1 || first.FP != 2 || first.FN != 1 || last.Predicted != 0 {
		t.Errorf("sweep %+v", rows)
	}
	bands := Bands(truth, found, 0.8)
	all := bands[len(bands)-1]
	if all.Found != 3 || all.FalsePositives != 2 || all.Recall != 0.5 || bands[0].FalsePositives != 1 {
		t.Errorf("bands %+v", bands)
	}
	var b bytes.Buffer
	if err := WriteBands(&b, bands, 0.8, false); err != nil || !strings.Contains(b.String(), "precision 0.3333, recall 0.5000") {
		t.Errorf("%q %v", b.String(), err)
	}
}

func FuzzReadLabels(f *testing.F) {
	for _, s := range []string{"a\tb\t0.9\n", "id_a,id_b,score\nx,y,1\n", `{"members":[{"id":"a"},{"id":"b"}]}`, "a\tb\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		l, err := ReadLabels(strings.NewReader(in), "f", 0.8)
		if err != nil {
			return
		}
		dups := 0
		for p, s := range l.Pairs {
			if p.A > p.B {
				t.Fatalf("pair %v not ordered", p)
			}
			if s >= 0.8 {
				dups++
			}
		}
		if dups != l.Duplicates {
			t.Fatalf("%d duplicates counted, %d in the pairs", l.Duplicates, dups)
		}
	})
}

func FuzzReadRunPairs(f *testing.F) {
	for _, s := range []string{`{"a":"x","b":"y","method":"exact"}`, `{"a":"x","b":"y","method":"simhash","distance":1}`, `{"a":"x","b":"y","method":"minhash","similarity":0.9}`} {
		f.Add(s + "\n")
	}
	f.Fuzz(func(t *testing.T, in string) {
		found, _, err := ReadRunPairs(strings.NewReader(in), "f")
		if err != nil {
			return
		}
		for p := range found {
			if p.A >= p.B {
				t.Fatalf("pair %v not ordered or of one document", p)
			}
		}
	})
}
