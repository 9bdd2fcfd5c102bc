package shingle

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json from the current code")

// goldenCases freeze the features: normalization, tokenization, shingling and hashing
// together. A change in testdata/golden.json changes every stored fingerprint; it must
// be deliberate (go test -run TestGolden -update) and announced. The ASCII cases were
// also computed by an independent Python implementation, testdata/check_golden.py.
var goldenCases = []struct {
	name string
	opt  Options
	text string
}{
	{"english-words5", Options{}, "The quick brown fox jumps over the lazy dog; the quick brown fox jumps again."},
	{"english-bag-k3", Options{K: 3, Bag: true}, "A rose is a rose is a rose."},
	{"english-chars5", Options{Unit: Chars}, "Near-duplicate detection, at web scale!"},
	{"seeded-sampled", Options{Seed: 0x9E3779B97F4A7C15, SampleMod: 2}, "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness"},
	{"unicode-normalization", Options{K: 2}, "Ｆｕｌｌ-width ﬁne CAFÉ Straße İstanbul ΣΟΦΟΣ naïve"},
	{"cjk", Options{K: 3}, "我爱北京天安门 hello world 東京タワーへ行きました 한국어 텍스트"},
	{"masked", Options{K: 2, MaskNumbers: true}, "Posted Jan 31, 2024 at 12:30 pm: 1,024 views, 3rd reply, 2024-02-01"},
	{"stopwords", Options{K: 2, RemoveStopWords: true}, "It is not the size of the dog in the fight, it's the size of the fight in the dog"},
	{"long-words", Options{K: 2}, "Supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis incomprehensibilities characteristically sesquipedalian"},
	{"short", Options{}, "Hello, world"},
	{"empty", Options{}, " -- "},
}

func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", "golden.json")
	got := make(map[string][]string)
	for _, c := range goldenCases {
		s, err := New(c.opt)
		if err != nil {
			t.Fatal(err)
		}
		hs := []string{}
		for _, h := range s.AppendHashes(nil, c.text) {
			hs = append(hs, fmt.Sprintf("%016x", h))
		}
		got[c.name] = hs
	}
	if *update {
		b, err := json.MarshalIndent(got, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(goldenCases) {
		t.Errorf("%s has %d cases, the test %d", path, len(want), len(goldenCases))
	}
	for _, c := range goldenCases {
		if fmt.Sprint(got[c.name]) != fmt.Sprint(want[c.name]) {
			t.Errorf("%s: features changed:\n got %v\nwant %v", c.name, got[c.name], want[c.name])
		}
	}
}
