package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEval(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// a, b, c are identical (two exact pairs to a); d is near a at 0.9, e near d at 0.82.
	pairs := write("pairs.jsonl", `{"a":"a","b":"b","method":"exact"}
{"a":"a","b":"c","method":"exact"}
{"a":"a","b":"d","method":"minhash","similarity":0.9}
{"a":"d","b":"e","method":"minhash","similarity":0.82}
`)
	// Labels: b-c, a-d, c-d (implied through the exact group), x-y (missed); d-e is labelled
	// below the threshold, so it is a false positive.
	labels := write("labels.tsv", "doc_1\tdoc_2\tjaccard\nb\tc\t1.0\na\td\t0.91\nc\td\t0.9\nx\ty\t0.95\nd\te\t0.7\n")
	stdout, stderr, code := run(t, "", "eval", "--json", "--labels", labels, "--pairs", pairs)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []evalRow
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r evalRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	// All pairs: a-b a-c b-c (exact), a-d b-d c-d (0.9), d-e (0.82) = 7 predicted; true
	// b-c a-d c-d; labels 4 (d-e is below 0.8).
	first := rows[0]
	if first.Threshold != "all pairs (similarity >= 0.8200)" || first.Predicted != 7 || first.TP != 3 || first.FP != 4 || first.FN != 1 {
		t.Fatalf("loosest row %+v", first)
	}
	last := rows[len(rows)-1]
	if last.Threshold != "similarity >= 1.0000" || last.Predicted != 3 || last.TP != 1 {
		t.Fatalf("strictest row %+v", last)
	}
	// Cluster labels, and the table output.
	clusters := write("clusters.jsonl", `{"cluster":0,"representative":"a","size":4,"members":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"}]}`+"\n")
	stdout, _, code = run(t, "", "eval", "--labels", clusters, "--pairs", pairs)
	if code != ExitOK || !strings.Contains(stdout, "6 labelled duplicate pairs; 7 pairs found") || !strings.Contains(stdout, "0.8571") {
		t.Fatalf("cluster labels: exit %d\n%s", code, stdout)
	}
	for _, bad := range [][]string{{"eval"}, {"eval", "--labels", labels}, {"eval", "--pairs", pairs}} {
		if _, _, code := run(t, "", bad...); code != ExitUsage {
			t.Errorf("%q: exit %d", bad, code)
		}
	}
	broken := write("broken.jsonl", "{not json\n")
	if _, stderr, code := run(t, "", "eval", "--labels", labels, "--pairs", broken); code != ExitError || !strings.Contains(stderr, "broken.jsonl:1:") {
		t.Errorf("broken pairs: exit %d %q", code, stderr)
	}
}

// TestEvalCorpus scores a corpus directly: the dedup corpus of TestDedup against labels
// that name its exact and near copies.
func TestEvalCorpus(t *testing.T) {
	dir := t.TempDir()
	input, _ := dedupCorpus(t, dir)
	var labels strings.Builder
	for i := range 10 {
		fmt.Fprintf(&labels, "doc%02d\tdoc%02d\t1.0\ndoc%02d\tdoc%02d\t0.95\n", i, 60+i, i, 70+i)
	}
	lp := filepath.Join(dir, "labels.tsv")
	os.WriteFile(lp, []byte(labels.String()), 0o644)
	stdout, stderr, code := run(t, "", "eval", "--json", "--labels", lp, input)
	if code != ExitOK || !strings.Contains(stderr, "1 bad records skipped") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r evalRow
	json.Unmarshal([]byte(strings.SplitN(stdout, "\n", 2)[0]), &r)
	// 10 clusters of 3: 30 pairs found; the 20 labelled all among them.
	if r.Predicted != 30 || r.TP != 20 || r.FN != 0 {
		t.Fatalf("first row %+v", r)
	}
	if _, _, code := run(t, "", "eval", "--labels", lp, "--pairs", lp, input); code != ExitUsage {
		t.Errorf("--pairs and inputs: exit %d", code)
	}
}

// TestEvalCorpusBadRecords counts bad records from the reader and from fingerprinting
// together (run it with -race).
func TestEvalCorpusBadRecords(t *testing.T) {
	dir := t.TempDir()
	input := badRecordsCorpus(t, dir)
	labels := filepath.Join(dir, "labels.tsv")
	os.WriteFile(labels, []byte("g2\tg5\n"), 0o644)
	if _, stderr, code := run(t, "", "eval", "--labels", labels, input); code != ExitOK || !strings.Contains(stderr, "2000 bad records skipped") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
