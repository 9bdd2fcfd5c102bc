package bench

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/evaldata"
)

// TestDenseWriters checks the dense cloud's files against the cloud: one JSON line a
// document, one TSV line a pair whose similarity reads back exactly, and bands that add
// up to the pairs and agree with a count of their own.
func TestDenseWriters(t *testing.T) {
	docs, pairs := evaldata.DenseCloud(3, 60, 0.5)
	var jb bytes.Buffer
	if err := WriteDenseDocs(&jb, docs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(jb.String(), "\n"), "\n")
	if len(lines) != len(docs) {
		t.Fatalf("%d JSON lines for %d documents", len(lines), len(docs))
	}
	for i, l := range lines {
		var d struct{ ID, Text string }
		if err := json.Unmarshal([]byte(l), &d); err != nil || d.ID != docs[i].ID || d.Text != docs[i].Text {
			t.Fatalf("line %d: %v: %.80q", i, err, l)
		}
	}
	var lb bytes.Buffer
	bands, err := WriteDenseLabels(&lb, pairs)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(lb.String(), "\n"), "\n")
	if rows[0] != "doc_1\tdoc_2\tjaccard_w5" || len(rows) != len(pairs)+1 {
		t.Fatalf("header %q and %d rows for %d pairs", rows[0], len(rows)-1, len(pairs))
	}
	var want DenseBands
	for i, p := range pairs {
		f := strings.Split(rows[i+1], "\t")
		j, err := strconv.ParseFloat(f[2], 64)
		if f[0] != p.A || f[1] != p.B || err != nil || j != p.Jaccard {
			t.Fatalf("row %d %q, want %v", i, rows[i+1], p)
		}
		want[min(3, max(0, int(p.Jaccard*10)-6))]++
	}
	if bands != want || len(pairs) == 0 {
		t.Fatalf("bands %v, want %v (%d pairs)", bands, want, len(pairs))
	}
}
