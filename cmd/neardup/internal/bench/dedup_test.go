package bench

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/dedup"
)

// TestDedupPlanted runs the engine on a small corpus: it finds most planted pairs (not
// all: a copy of a copy may land outside the threshold, and the engine's recall is the
// accuracy tests' business), and the counts agree with the corpus.
func TestDedupPlanted(t *testing.T) {
	const n = 400
	s := NewCorpus(5, 1500, 3, 0.2)
	res, err := Dedup(s, n, dedup.Options{Pipeline: neardup.Pipeline{Near: dedup.All}, Threads: 2, Expected: n})
	if err != nil {
		t.Fatal(err)
	}
	planted := 0
	for i := range n {
		if s.Original(i) >= 0 {
			planted++
		}
	}
	if res.Docs != n || res.PlantedPairs != planted || planted == 0 || res.Seed != 5 || res.Bytes < n*1000 {
		t.Fatalf("%+v, want %d planted pairs", res, planted)
	}
	if res.Recall < 0.5 || res.Recall != float64(res.PlantedRecovered)/float64(planted) || res.Dropped < res.PlantedRecovered/2 {
		t.Fatalf("recall %.3f (%d of %d), %d dropped", res.Recall, res.PlantedRecovered, res.PlantedPairs, res.Dropped)
	}
}

// TestWriteCorpusJSONL checks that the file holds the corpus's documents in order.
func TestWriteCorpusJSONL(t *testing.T) {
	s := NewCorpus(2, 300, 3, 0.3)
	var b bytes.Buffer
	if err := WriteCorpusJSONL(&b, s, 30); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 30 {
		t.Fatalf("%d lines, want 30", len(lines))
	}
	for i, l := range lines {
		var d struct{ ID, Text string }
		if err := json.Unmarshal([]byte(l), &d); err != nil || d.ID != strconv.Itoa(i) || d.Text != string(s.Text(nil, i)) {
			t.Fatalf("line %d: %v: %.80q", i, err, l)
		}
	}
}
