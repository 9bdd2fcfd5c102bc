package lsh_test

import (
	"bufio"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/minhash"
)

// This file is a copy of minhash/evaldata_test.go (test helpers cannot be shared between
// packages without exporting them); keep the two in step.
//
// The evaluation data lives beside the repository (see ../shared/eval/README.md); tests that
// need it skip when it is absent.
const evalDir = "../../shared/eval/debian-doc-versions"

// evalSets are the two folders of debian-doc-versions.
var evalSets = []string{"postgresql-15.18-vs-15.20", "clang-15-vs-16"}

// pageText reproduces the reference text of the data's SOURCE.md: script, style and
// comments removed, then tags stripped, then entities decoded. It does by hand what the
// regular expressions `(?is)<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->`
// and then `<[^>]*>`, each replacing its matches by a space, would do, several times faster.
func pageText(page string) string {
	var b strings.Builder
	b.Grow(len(page))
	rest := page
	for {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		if n := skipBlock(rest); n > 0 {
			b.WriteByte(' ')
			rest = rest[n:]
			continue
		}
		b.WriteByte('<')
		rest = rest[1:]
	}
	s := b.String()
	b.Reset()
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		b.WriteByte(' ')
		s = s[i+j+1:]
	}
	return html.UnescapeString(b.String())
}

// skipBlock returns the length of the script element, style element or comment that s
// starts with, or 0.
func skipBlock(s string) int {
	if strings.HasPrefix(s, "<!--") {
		if j := strings.Index(s[4:], "-->"); j >= 0 {
			return 4 + j + 3
		}
		return 0
	}
	for _, name := range []string{"script", "style"} {
		n := 1 + len(name)
		if len(s) < n || !strings.EqualFold(s[1:n], name) || (len(s) > n && isWordByte(s[n])) {
			continue
		}
		end := "</" + name
		for k := n; ; {
			j := indexFold(s[k:], end)
			if j < 0 {
				return 0
			}
			k += j + len(end)
			m := k
			for m < len(s) && strings.IndexByte(" \t\n\f\r", s[m]) >= 0 {
				m++
			}
			if m < len(s) && s[m] == '>' {
				return m + 1
			}
		}
	}
	return 0
}

// indexFold returns the index of the first instance of sub, which starts with '<', in s
// ignoring ASCII case, or -1.
func indexFold(s, sub string) int {
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			return -1
		}
		i += j
		if len(s)-i >= len(sub) && strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
		i++
	}
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// textFeatures returns the sorted distinct word 5-shingle hashes of text.
func textFeatures(text string) []uint64 {
	return appendFeatures(nil, text)
}

// appendFeatures appends the word 5-shingle hashes of text to dst, sorted and distinct.
func appendFeatures(dst []uint64, text string) []uint64 {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r))
	})
	var d xxhash.Digest
	for i := 0; i+5 <= len(words); i++ {
		d.Reset()
		for j, w := range words[i : i+5] {
			if j > 0 {
				d.WriteString(" ")
			}
			d.WriteString(w)
		}
		dst = append(dst, d.Sum64())
	}
	return minhash.SortUnique(dst)
}

// evalPair is a pair of documents of a folder with its reference Jaccard.
type evalPair struct {
	a, b    string
	jaccard float64
}

// evalCorpus is one folder: the features of every page by its path ("a-15.18/x.html"),
// and the listed pairs.
type evalCorpus struct {
	name  string
	docs  map[string][]uint64
	pairs []evalPair
}

// evalCache holds the corpora once loaded, for the tests that share them.
var evalCache struct {
	once sync.Once
	c    []evalCorpus
	err  error
}

// loadEval loads both folders, or skips the test when the data is absent.
func loadEval(t testing.TB) []evalCorpus {
	t.Helper()
	if _, err := os.Stat(evalDir); err != nil {
		t.Skipf("evaluation data not found: %v", err)
	}
	evalCache.once.Do(func() { evalCache.c, evalCache.err = readEval() })
	if evalCache.err != nil {
		t.Fatal(evalCache.err)
	}
	return evalCache.c
}

func readEval() ([]evalCorpus, error) {
	var out []evalCorpus
	for _, name := range evalSets {
		dir := filepath.Join(evalDir, name)
		c := evalCorpus{name: name, docs: map[string][]uint64{}}
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			c.docs[filepath.ToSlash(rel)] = textFeatures(pageText(string(b)))
			return nil
		})
		if err != nil {
			return nil, err
		}
		f, err := os.Open(filepath.Join(dir, "similar_pairs_ge0.5.tsv"))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Split(sc.Text(), "\t")
			if len(fs) < 3 {
				return nil, fmt.Errorf("%s: malformed line %q", name, sc.Text())
			}
			if fs[0] == "doc_1" {
				continue
			}
			j, err := strconv.ParseFloat(fs[2], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			c.pairs = append(c.pairs, evalPair{fs[0], fs[1], j})
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
