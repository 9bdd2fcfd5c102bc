package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDedupAnnotate: --annotate writes every record into corpus/ with the dup_* fields,
// dup_kept false exactly for the ids of drop.txt.
func TestDedupAnnotate(t *testing.T) {
	dir := t.TempDir()
	input, _ := dedupCorpus(t, dir)
	out := filepath.Join(dir, "out")
	if _, stderr, code := run(t, "", "dedup", "--quiet", "--annotate", "--out", out, input); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	drop := map[string]bool{}
	for _, id := range strings.Fields(readOut(t, out, "drop.txt")) {
		drop[id] = true
	}
	lines := strings.Split(strings.TrimSuffix(readOut(t, out, "corpus/"+filepath.Base(input)), "\n"), "\n")
	if len(lines) != 80 || len(drop) == 0 {
		t.Fatalf("%d annotated records, %d dropped; want 80 and some", len(lines), len(drop))
	}
	for _, l := range lines {
		var r struct {
			ID      string
			Kept    *bool   `json:"dup_kept"`
			Cluster *int    `json:"dup_cluster"`
			Method  *string `json:"dup_method"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Kept == nil {
			t.Fatalf("%.80q: %v", l, err)
		}
		if *r.Kept == drop[r.ID] || (r.Method != nil) != drop[r.ID] || drop[r.ID] && r.Cluster == nil {
			t.Errorf("%s: kept %v, cluster %v, method %v; drop.txt has it: %v", r.ID, *r.Kept, r.Cluster, r.Method, drop[r.ID])
		}
	}
}

// TestDedupRemoved: --removed DIR receives the dropped records, corpus/ the kept; the
// flags' misuses are usage errors before any work.
func TestDedupRemoved(t *testing.T) {
	dir := t.TempDir()
	input, _ := dedupCorpus(t, dir)
	out, removed := filepath.Join(dir, "out"), filepath.Join(dir, "removed")
	if _, stderr, code := run(t, "", "dedup", "--quiet", "--removed", removed, "--out", out, input); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ids := func(path string) []string {
		var got []string
		for _, l := range strings.Split(strings.TrimSuffix(readOut(t, path, filepath.Base(input)), "\n"), "\n") {
			var r struct{ ID string }
			json.Unmarshal([]byte(l), &r)
			got = append(got, r.ID)
		}
		return got
	}
	if got, want := strings.Join(ids(removed), "\n")+"\n", readOut(t, out, "drop.txt"); got != want {
		t.Errorf("--removed holds %q, drop.txt %q", got, want)
	}
	if got, want := strings.Join(ids(filepath.Join(out, "corpus")), "\n")+"\n", readOut(t, out, "keep.txt"); got != want {
		t.Errorf("corpus/ holds %q, keep.txt %q", got, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--removed", removed}, "is not empty"},
		{[]string{"--removed", filepath.Join(dir, "o2", "r")}, "may not hold one another"},
		{[]string{"--removed", filepath.Join(dir, "r"), "--annotate"}, "give one of them"},
		{[]string{"--annotate", "--no-corpus"}, "--no-corpus"},
	} {
		args := append(append([]string{"dedup", "--out", filepath.Join(dir, "o2")}, tc.args...), input)
		if _, stderr, code := run(t, "", args...); code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want a usage error with %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "o2")); !os.IsNotExist(err) {
		t.Errorf("a refused run left --out (%v)", err)
	}
}
