package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDedupContainment runs dedup on a page and a copy with an eighth more text: by
// Jaccard at 0.9 they are not a pair; with --containment they are, at similarity 1 (the
// exact containment) with the lower Jaccard estimate beside it.
func TestDedupContainment(t *testing.T) {
	dir := t.TempDir()
	words := make([]string, 400)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i*7919%100003)
	}
	extra := make([]string, 50)
	for i := range extra {
		extra[i] = fmt.Sprintf("x%d", i)
	}
	var in strings.Builder
	for _, d := range []map[string]string{
		{"id": "small", "text": strings.Join(words, " ")},
		{"id": "large", "text": strings.Join(words, " ") + " " + strings.Join(extra, " ")},
	} {
		b, _ := json.Marshal(d)
		in.Write(append(b, '\n'))
	}
	input := filepath.Join(dir, "in.jsonl")
	os.WriteFile(input, []byte(in.String()), 0o644)
	for _, c := range []struct {
		flags []string
		want  string // pairs.jsonl
	}{
		{nil, ""},
		{[]string{"--containment"}, `{"a":"small","b":"large","method":"minhash","similarity":1.0000,"estimate":0.`},
	} {
		out := filepath.Join(dir, fmt.Sprint(len(c.flags)))
		args := append([]string{"dedup", "--quiet", "--no-corpus", "--threshold", "0.9", "--out", out}, c.flags...)
		if _, stderr, code := run(t, "", append(args, input)...); code != ExitOK {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		pairs, _ := os.ReadFile(filepath.Join(out, "pairs.jsonl"))
		if !strings.HasPrefix(string(pairs), c.want) || (c.want == "") != (len(pairs) == 0) {
			t.Errorf("%q: pairs.jsonl %q, want %q...", c.flags, pairs, c.want)
		}
	}
}
