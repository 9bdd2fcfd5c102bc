package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"
)

// dedupCorpus writes a JSONL corpus: 60 documents of 200 random words, 10 exact copies
// (case changed) and 10 near copies (two words changed) of them, and one bad line.
func dedupCorpus(t *testing.T, dir string) (path string, lines []string) {
	r := rand.New(rand.NewPCG(9, 9))
	var bases []string
	for i := range 80 {
		var text string
		switch {
		case i >= 60 && i < 70:
			text = strings.ToUpper(bases[i-60])
		case i >= 70:
			w := strings.Fields(bases[i-70])
			w[3], w[150] = "changed", "words"
			text = strings.Join(w, " ")
		default:
			w := make([]string, 200)
			for j := range w {
				w[j] = fmt.Sprintf("w%d", r.IntN(10000))
			}
			text = strings.Join(w, " ")
			bases = append(bases, text)
		}
		b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("doc%02d", i), "text": text, "meta": map[string]any{"rank": i % 3}})
		lines = append(lines, string(b))
		if i == 40 {
			lines = append(lines, `{"id": "broken", "text": `) // invalid JSON
		}
	}
	path = filepath.Join(dir, "corpus.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, lines
}

func readOut(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDedup(t *testing.T) {
	dir := t.TempDir()
	input, lines := dedupCorpus(t, dir)
	outs := map[string]string{}
	for _, threads := range []string{"1", "2"} {
		out := filepath.Join(dir, "out"+threads)
		_, stderr, code := run(t, "", "dedup", "--out", out, "--threads", threads, "--priority-field", "meta.rank", input)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stderr, "corpus.jsonl:42") || !strings.Contains(stderr, "80 documents (1 bad records skipped): 10 exact duplicates") {
			t.Errorf("stderr %q", stderr)
		}
		for _, name := range []string{"clusters.jsonl", "pairs.jsonl", "keep.txt", "drop.txt", "bad.jsonl", "report.html", "corpus/corpus.jsonl"} {
			outs[threads+name] = readOut(t, out, name)
			if threads == "2" && outs["1"+name] != outs["2"+name] {
				t.Errorf("%s differs between --threads 1 and 2", name)
			}
		}
	}
	out := filepath.Join(dir, "out1")
	// Each base, its exact copy and its near copy make a cluster of 3 for the first 10
	// bases; the first (doc0N) is kept.
	keep, drop := readOut(t, out, "keep.txt"), readOut(t, out, "drop.txt")
	if strings.Count(keep, "\n") != 60 || strings.Count(drop, "\n") != 20 || !strings.HasPrefix(drop, "doc60\n") {
		t.Fatalf("keep %d lines, drop %q", strings.Count(keep, "\n"), drop)
	}
	var c struct {
		Cluster        int
		Representative string
		Size           int
		Members        []struct {
			ID         string
			Exact      bool
			Similarity float64
		}
	}
	first := strings.SplitN(readOut(t, out, "clusters.jsonl"), "\n", 2)[0]
	if err := json.Unmarshal([]byte(first), &c); err != nil || c.Representative != "doc00" || c.Size != 3 || !c.Members[1].Exact || c.Members[2].Similarity < 0.8 {
		t.Fatalf("first cluster %s (%v)", first, err)
	}
	checkDedupDir(t, out, keep, lines)

	// --keep priority: meta.rank 2 wins over the first.
	out = filepath.Join(dir, "prio")
	if _, stderr, code := run(t, "", "dedup", "--out", out, "--keep", "priority", "--priority-field", "meta.rank", "--method", "minhash", "--no-corpus", input); code != ExitOK {
		t.Fatalf("priority: %s", stderr)
	}
	if strings.Contains(readOut(t, out, "keep.txt"), "doc00\n") {
		t.Error("--keep priority kept doc00 (rank 0) over its copies")
	}
	if _, err := os.Stat(filepath.Join(out, "corpus")); !os.IsNotExist(err) {
		t.Error("--no-corpus wrote a corpus")
	}

	// --on-error fail stops at the bad line.
	if _, stderr, code := run(t, "", "dedup", "--out", filepath.Join(dir, "fail"), "--on-error", "fail", input); code != ExitError || !strings.Contains(stderr, "corpus.jsonl:42") {
		t.Errorf("--on-error fail: exit %d, %q", code, stderr)
	}
	for _, bad := range [][]string{
		{"dedup", input}, {"dedup", "--out", dir}, {"dedup", "--out", dir, "--method", "cosine", input},
		{"dedup", "--out", dir, "--threshold", "2", input}, {"dedup", "--out", dir, "--keep", "newest", input},
		{"dedup", "--out", dir, "--format", "csv", input}, {"dedup", "--out", dir, "--on-error", "retry", input},
	} {
		if _, _, code := run(t, "", bad...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d", bad, code, ExitUsage)
		}
	}
}

// TestDedupWARCAndDir runs dedup on the corpus package's WARC fixture and a directory of
// gzipped HTML pages from the sample corpus, with extraction.
func TestDedupWARCAndDir(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "warc")
	if _, stderr, code := run(t, "", "dedup", "--out", out, "../../../../corpus/testdata/small.warc.gz"); code != ExitOK {
		t.Fatalf("warc: %s", stderr)
	}
	if entries, _ := os.ReadDir(filepath.Join(out, "corpus")); len(entries) != 1 {
		t.Errorf("warc: corpus/ holds %d files", len(entries))
	}
	pages := filepath.Join(dir, "pages")
	os.MkdirAll(filepath.Join(pages, "b"), 0o755)
	clang := "../../../../sample/clang-15-vs-16/"
	for _, p := range []struct{ from, to string }{
		{"a-15.0.6/LTOVisibility.html.gz", "a/LTOVisibility.html.gz"},
		{"b-16.0.6/LTOVisibility.html.gz", "b/LTOVisibility.html.gz"},
		{"a-15.0.6/Toolchain.html.gz", "a/Toolchain.html.gz"},
	} {
		b, err := os.ReadFile(filepath.Join(clang, p.from))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(pages, p.to)), 0o755)
		os.WriteFile(filepath.Join(pages, p.to), b, 0o644)
	}
	out = filepath.Join(dir, "dir")
	if _, stderr, code := run(t, "", "dedup", "--out", out, pages); code != ExitOK {
		t.Fatalf("dir: %s", stderr)
	}
	if got := readOut(t, out, "drop.txt"); got != "b/LTOVisibility.html.gz\n" {
		t.Errorf("dir: dropped %q", got)
	}
	if _, err := os.Stat(filepath.Join(out, "corpus", "a", "Toolchain.html.gz")); err != nil {
		t.Errorf("dir: corpus copy: %v", err)
	}
}

// TestDedupPipelineOptions checks that the text pipeline flags reach the fingerprints:
// two texts that differ only in their numbers are exact duplicates with --mask-numbers.
func TestDedupPipelineOptions(t *testing.T) {
	dir := t.TempDir()
	base := strings.Repeat("the meeting on 2024-05-01 moved to room 12 at 10:30 with 40 people ", 5)
	other := strings.NewReplacer("2024-05-01", "2025-01-09", "12", "7", "10:30", "11:15", "40", "9").Replace(base)
	lines := fmt.Sprintf("{\"id\":\"a\",\"text\":%q}\n{\"id\":\"b\",\"text\":%q}\n", base, other)
	input := filepath.Join(dir, "in.jsonl")
	os.WriteFile(input, []byte(lines), 0o644)
	for _, c := range []struct {
		flags []string
		drop  string
	}{
		{nil, ""},
		{[]string{"--mask-numbers"}, "b\n"},
		{[]string{"--mask-numbers", "--method", "exact", "--unit", "chars", "--k-shingle", "4"}, "b\n"},
	} {
		out := filepath.Join(dir, "out"+strings.Join(c.flags, ""))
		args := append(append([]string{"dedup", "--no-corpus", "--out", out}, c.flags...), input)
		if _, stderr, code := run(t, "", args...); code != ExitOK {
			t.Fatalf("%q: %s", c.flags, stderr)
		}
		if got := readOut(t, out, "drop.txt"); got != c.drop {
			t.Errorf("%q: dropped %q, want %q", c.flags, got, c.drop)
		}
	}
}

// TestDedupBadRecords mixes records the reader rejects (invalid JSON) with records that
// cannot be fingerprinted (a URL without a host): both are listed in bad.jsonl with their
// line and counted, from two goroutines (run it with -race).
func TestDedupBadRecords(t *testing.T) {
	dir := t.TempDir()
	input := badRecordsCorpus(t, dir)
	out := filepath.Join(dir, "out")
	_, stderr, code := run(t, "", "dedup", "--no-corpus", "--out", out, input)
	if code != ExitOK || !strings.Contains(stderr, "1000 documents (2000 bad records skipped)") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Each is named by its line, and the fingerprinter's by its id too. The reader's
	// come first: it runs ahead of the fingerprinting.
	lines := strings.Split(strings.TrimSuffix(readOut(t, out, "bad.jsonl"), "\n"), "\n")
	got := map[string]string{} // source: id
	for _, l := range lines {
		var b struct{ Source, ID, Error string }
		if err := json.Unmarshal([]byte(l), &b); err != nil || b.Error == "" {
			t.Fatalf("bad.jsonl line %s (%v)", l, err)
		}
		got[b.Source] = b.ID
	}
	if len(lines) != 2000 || len(got) != 2000 {
		t.Fatalf("bad.jsonl has %d lines for %d sources, want 2000", len(lines), len(got))
	}
	for i := range 3000 {
		var id string
		switch i % 3 {
		case 1:
			id = fmt.Sprintf("u%d", i)
		case 2:
			continue
		}
		source := fmt.Sprintf("%s:%d", input, i+1)
		if g, ok := got[source]; !ok || g != id {
			t.Fatalf("bad.jsonl: %s has id %q (listed: %v), want %q", source, g, ok, id)
		}
	}
}

// badRecordsCorpus writes a JSONL file of 3000 lines: 1000 invalid JSON (bad records for
// the reader), 1000 with a URL without a host (bad for the fingerprinter) and 1000 good
// ones (ids g2, g5, ...), and returns its path.
func badRecordsCorpus(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	for i := range 3000 {
		switch i % 3 {
		case 0:
			lines = append(lines, `{"id": "broken`)
		case 1:
			lines = append(lines, fmt.Sprintf(`{"id":"u%d","url":"http://","text":"a text %d"}`, i, i))
		default:
			lines = append(lines, fmt.Sprintf(`{"id":"g%d","text":"good text number %d here"}`, i, i))
		}
	}
	input := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(input, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return input
}

// checkDedupDir checks the deduplicated corpus, summary.json and bad.jsonl that TestDedup's
// run wrote to out, given the ids it kept and the lines of its input.
func checkDedupDir(t *testing.T, out, keep string, lines []string) {
	t.Helper()
	// The deduplicated corpus is the kept lines, unchanged and in order.
	var want []string
	for _, l := range lines {
		var rec struct{ ID string }
		if json.Unmarshal([]byte(l), &rec) == nil && strings.Contains(keep, rec.ID+"\n") {
			want = append(want, l)
		}
	}
	if got := readOut(t, out, "corpus/corpus.jsonl"); got != strings.Join(want, "\n")+"\n" {
		t.Errorf("deduplicated corpus: %d bytes, want %d", len(got), len(strings.Join(want, "\n"))+1)
	}
	var sum dedup.DirSummary
	if err := json.Unmarshal([]byte(readOut(t, out, "summary.json")), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Documents != 80 || sum.BadRecords != 1 || sum.Dropped != 20 || sum.Clusters != 10 || sum.PeakRSS == 0 || len(sum.Timings) < 4 {
		t.Errorf("summary %+v", sum)
	}
	if !strings.Contains(readOut(t, out, "bad.jsonl"), `corpus.jsonl:42`) {
		t.Error("bad.jsonl lacks the broken line")
	}
}
