package accuracy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/cmd/neardup/internal/cli"
	"github.com/neardup/neardup/internal/evaldata"
)

// neardupCmd runs the neardup command line in-process and fails the test on a non-zero
// exit.
func neardupCmd(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main(args, strings.NewReader(""), &out, &errb); code != cli.ExitOK {
		t.Fatalf("neardup %q: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}

type evalRow struct {
	Threshold             string
	Predicted, TP, FP, FN int
	Precision, Recall, F1 float64
}

// dedupEval runs neardup dedup on the inputs and neardup eval of its pairs against the
// labels (a duplicate: labelled Jaccard >= 0.8), and returns the rows of the sweep.
func dedupEval(t *testing.T, labels string, args ...string) []evalRow {
	out := t.TempDir()
	neardupCmd(t, append([]string{"dedup", "--quiet", "--no-corpus", "--out", out}, args...)...)
	var rows []evalRow
	for _, line := range strings.Split(strings.TrimSpace(neardupCmd(t, "eval", "--json", "--labels", labels, "--pairs", filepath.Join(out, "pairs.jsonl"))), "\n") {
		var r evalRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows
}

// TestDedupEval prints docs/accuracy.md's tables of neardup dedup against the labelled pairs of
// debian-doc-versions (each manual's pages, the whole page's visible text as the labels
// take it: --no-extract) and spamassassin-2003-subset (the message bodies, as the labels
// take them, written to JSONL), by method, with the sweep of neardup eval, and holds
// floors under the defaults' F1.
func TestDedupEval(t *testing.T) {
	root, err := evaldata.Root()
	evaldata.Need(t, err)
	// The spam bodies as JSONL.
	docs, _, err := evaldata.Spam(root)
	if err != nil {
		t.Fatal(err)
	}
	var jsonl bytes.Buffer
	for _, d := range docs {
		b, _ := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		jsonl.Write(append(b, '\n'))
	}
	spam := filepath.Join(t.TempDir(), "spam-bodies.jsonl")
	if err := os.WriteFile(spam, jsonl.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sets := []struct {
		name, labels string
		input        []string
	}{
		{"debian postgresql", filepath.Join(root, "debian-doc-versions/postgresql-15.18-vs-15.20/similar_pairs_ge0.5.tsv"),
			[]string{"--no-extract", filepath.Join(root, "debian-doc-versions/postgresql-15.18-vs-15.20")}},
		{"debian clang", filepath.Join(root, "debian-doc-versions/clang-15-vs-16/similar_pairs_ge0.5.tsv"),
			[]string{"--no-extract", filepath.Join(root, "debian-doc-versions/clang-15-vs-16")}},
		{"spam bodies", filepath.Join(root, "spamassassin-2003-subset/similar_body_pairs_ge0.5.tsv"), []string{spam}},
	}
	var b strings.Builder
	b.WriteString("| set | method | threshold | pairs found | precision | recall | F1 |\n|---|---|---|---|---|---|---|\n")
	for _, s := range sets {
		for _, m := range []struct {
			method string
			flags  []string
			floor  float64 // F1 at the run's own threshold
		}{
			{"all (exact + minhash 0.8)", []string{"--method", "all"}, 0.8},
			{"simhash 3 bits", []string{"--method", "simhash"}, 0.6},
			{"simhash 6 bits", []string{"--method", "simhash", "--distance", "6"}, 0.6},
			{"exact", []string{"--method", "exact"}, 0.3},
		} {
			rows := dedupEval(t, s.labels, append(m.flags, s.input...)...)
			for i, r := range rows {
				if i > 0 && (i > 3 || !strings.HasPrefix(m.method, "all")) {
					break // the run's own threshold, and the first steps of the MinHash sweep
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %d | %.3f | %.3f | %.3f |\n", s.name, m.method, r.Threshold, r.Predicted, r.Precision, r.Recall, r.F1)
			}
			if rows[0].F1 < m.floor {
				t.Errorf("%s, %s: F1 %.3f below its floor %.2f", s.name, m.method, rows[0].F1, m.floor)
			}
		}
	}
	t.Logf("neardup dedup + neardup eval against the labelled pairs with Jaccard >= 0.8:\n%s", b.String())
}
