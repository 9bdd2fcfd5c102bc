package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/cmd/neardup/internal/evaluate"
	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/minhash"
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
	var rows []evaluate.Row
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r evaluate.Row
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
	var r evaluate.Row
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

// TestEvalBands scores a run by band of labelled similarity: recall in the bands at or
// above the threshold, false positives below it and among the unlabelled pairs.
func TestEvalBands(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pairs := write("pairs.jsonl", `{"a":"a","b":"b","method":"minhash","similarity":0.95}
{"a":"c","b":"d","method":"minhash","similarity":0.85}
{"a":"e","b":"f","method":"minhash","similarity":0.81}
{"a":"g","b":"h","method":"minhash","similarity":0.82}
`)
	// a-b at 0.93, c-d at 0.85 found; x-y at 0.82 missed; e-f at 0.75 a false positive,
	// g-h unlabelled another; u-v at 0.6 rightly not found.
	labels := write("labels.tsv", "doc_1\tdoc_2\tjaccard\na\tb\t0.93\nc\td\t0.85\nx\ty\t0.82\ne\tf\t0.75\nu\tv\t0.6\n")
	stdout, stderr, code := run(t, "", "eval", "--bands", "--json", "--labels", labels, "--pairs", pairs)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []evaluate.BandRow
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r evaluate.BandRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	want := []evaluate.BandRow{
		{Band: "< 0.5 or unlabelled", Found: 1, FalsePositives: 1, ShareOfFound: 0.25},
		{Band: "0.5-0.7", Labelled: 1},
		{Band: "0.7-0.8", Labelled: 1, Found: 1, FalsePositives: 1, ShareOfFound: 0.25},
		{Band: "0.8-0.9", Duplicates: true, Labelled: 2, Found: 1, Recall: 0.5},
		{Band: ">= 0.9", Duplicates: true, Labelled: 1, Found: 1, Recall: 1},
		{Band: "all", Duplicates: true, Labelled: 3, Found: 4, Recall: 2.0 / 3, FalsePositives: 2, ShareOfFound: 0.5, Precision: 0.5},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, rows[i], want[i])
		}
	}
	// A threshold between the edges becomes one; labels without scores are refused.
	stdout, _, code = run(t, "", "eval", "--bands", "--label-threshold", "0.85", "--labels", labels, "--pairs", pairs)
	if code != ExitOK || !strings.Contains(stdout, "0.8-0.85") || !strings.Contains(stdout, "0.85-0.9") {
		t.Errorf("--label-threshold 0.85: exit %d\n%s", code, stdout)
	}
	unscored := write("unscored.tsv", "a\tb\n")
	if _, _, code := run(t, "", "eval", "--bands", "--labels", unscored, "--pairs", pairs); code != ExitUsage {
		t.Errorf("unscored labels: exit %d", code)
	}
}

// TestBenchDense writes a small cloud and checks its labels against the documents: every
// pair at or above --min-similarity, with the exact Jaccard similarity of the labels'
// shingling.
func TestBenchDense(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := run(t, "", "bench", "dense", "--docs", "40", "--min-similarity", "0.7", "--out", dir)
	if code != ExitOK || !strings.Contains(stdout, "40 documents") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "dense.jsonl"))
	feats := map[string][]uint64{}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d struct{ ID, Text string }
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		feats[d.ID] = evaldata.RefShingles(d.Text)
		ids = append(ids, d.ID)
	}
	labels, _ := os.ReadFile(filepath.Join(dir, "labels.tsv"))
	listed := map[[2]string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(labels)), "\n")[1:] {
		f := strings.Split(line, "\t")
		s, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		listed[[2]string{f[0], f[1]}] = s
	}
	n := 0
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			s := minhash.Jaccard(feats[a], feats[b])
			got, ok := listed[[2]string{a, b}]
			if ok != (s >= 0.7) || ok && got != s {
				t.Fatalf("%s ~ %s: Jaccard %v, labelled %v (%v)", a, b, s, got, ok)
			}
			if ok {
				n++
			}
		}
	}
	if n != len(listed) || n < 100 {
		t.Fatalf("%d labelled pairs, %d found by brute force", len(listed), n)
	}
	for _, bad := range [][]string{{"bench", "dense"}, {"bench", "dense", "--out", dir, "--docs", "1"}, {"bench", "dense", "--out", dir, "--min-similarity", "2"}} {
		if _, _, code := run(t, "", bad...); code != ExitUsage {
			t.Errorf("%q: exit %d", bad, code)
		}
	}
}
