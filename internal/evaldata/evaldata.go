// Package evaldata loads the labelled third-party evaluation sets in ../shared/eval (see
// their README and SOURCE.md files) for neardup's accuracy tests and reports: the
// documents as text and the reference pairs their labels give.
//
// The text of an HTML page is its visible text as the labels define it: script, style and
// comments removed, tags stripped, entities decoded; RefShingles is the labels' feature set.
// Both are deliberately simple, matching how the reference similarities were computed; they
// are not main-content extraction nor neardup's own shingling.
//
// # Caveats
//
// The sets live outside the module. Root finds them from the working directory (tests run
// in their package directory) or from NEARDUP_EVAL; a checkout without them gets an error
// wrapping ErrNoData that names where it looked. Tests hand that error to Need, which
// skips them (and fails them under CI=true), and a package's TestMain calls Main, which
// says how many were skipped.
package evaldata

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/text/encoding/charmap"
)

// Doc is one document of a set: ID is its path relative to the set's folder.
type Doc struct {
	ID   string
	Text string
}

// Pair is a reference pair of documents with the similarity the labels give.
type Pair struct {
	A, B    string
	Jaccard float64
}

// ErrNoData is the error of Root when the evaluation sets are not found.
var ErrNoData = errors.New("evaldata: no evaluation data")

// Root returns the folder of the evaluation sets: $NEARDUP_EVAL if set, else the first
// shared/eval found in the working directory's parents (the checkout sits beside shared/).
func Root() (string, error) {
	if dir := os.Getenv("NEARDUP_EVAL"); dir != "" {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("evaldata: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, "shared", "eval")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("%w: no shared/eval above %s; set NEARDUP_EVAL to the evaluation folder", ErrNoData, wd)
		}
	}
}

// VisibleText reproduces the reference text of the labels (SOURCE.md): script, style and
// comments removed, then tags stripped, then entities decoded. It does by hand what the
// regular expressions `(?is)<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->`
// and then `<[^>]*>`, each replacing its matches by a space, would do, several times faster.
func VisibleText(page string) string {
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

// RefShingles returns the reference feature set of the labels: lower-cased words (runs of
// Unicode letters, digits, marks and underscores, as Python's \w+), their word 5-shingles
// hashed with XXH64 over the words joined by spaces, sorted and distinct. Texts of fewer
// than five words have none.
func RefShingles(text string) []uint64 {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r))
	})
	var out []uint64
	var d xxhash.Digest
	for i := 0; i+5 <= len(words); i++ {
		d.Reset()
		for j, w := range words[i : i+5] {
			if j > 0 {
				d.WriteString(" ")
			}
			d.WriteString(w)
		}
		out = append(out, d.Sum64())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// debianFolders are the two sets of debian-doc-versions.
var debianFolders = []string{"postgresql-15.18-vs-15.20", "clang-15-vs-16"}

// Debian returns the pages of both debian-doc-versions folders as visible text (IDs such as
// "clang-15-vs-16/a-15.0.6/APINotes.html") and the reference pairs of
// similar_pairs_ge0.5.tsv (word 5-shingle Jaccard >= 0.5; every other pair is below).
func Debian(root string) ([]Doc, []Pair, error) {
	pages, pairs, err := DebianPages(root)
	if err != nil {
		return nil, nil, err
	}
	docs := make([]Doc, len(pages))
	for i, p := range pages {
		docs[i] = Doc{ID: p.ID, Text: VisibleText(string(p.HTML))}
	}
	return docs, pairs, nil
}

// Page is one HTML page of debian-doc-versions as it is on disk.
type Page struct {
	ID   string // "clang-15-vs-16/a-15.0.6/APINotes.html": folder, release, path
	HTML []byte
}

// DebianPages is Debian with the pages' HTML instead of their visible text, in the order
// of the folders, then releases (a before b), then paths.
func DebianPages(root string) ([]Page, []Pair, error) {
	base := filepath.Join(root, "debian-doc-versions")
	var pages []Page
	var pairs []Pair
	for _, set := range debianFolders {
		dir := filepath.Join(base, set)
		got, err := htmlPages(dir, base)
		if err != nil {
			return nil, nil, err
		}
		pages = append(pages, got...)
		p, err := readPairs(filepath.Join(dir, "similar_pairs_ge0.5.tsv"), set+"/")
		if err != nil {
			return nil, nil, err
		}
		pairs = append(pairs, p...)
	}
	return pages, pairs, nil
}

// Aligned is one line of a debian-doc-versions aligned_pairs.tsv: a path and how its two
// releases' pages compare.
type Aligned struct {
	Folder, Path string // "clang-15-vs-16", "APINotes.html"
	Class        string // exact_bytes, same_visible_text, near_dup_ge0.9, ..., only_a, only_b
}

// DebianAligned returns the aligned_pairs.tsv lines of both folders.
func DebianAligned(root string) ([]Aligned, error) {
	var out []Aligned
	for _, set := range debianFolders {
		path := filepath.Join(root, "debian-doc-versions", set, "aligned_pairs.tsv")
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("evaldata: %w", err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		for i, line := range lines[1:] {
			f := strings.Split(strings.TrimRight(line, "\r"), "\t")
			if len(f) < 7 {
				return nil, fmt.Errorf("evaldata: %s:%d: want 7 or more tab-separated fields", path, i+2)
			}
			out = append(out, Aligned{Folder: set, Path: f[0], Class: f[6]})
		}
	}
	return out, nil
}

// Set is one folder of debian-doc-versions with the labels' own features.
type Set struct {
	Name  string
	Docs  map[string][]uint64 // RefShingles of each page, by its path in the folder
	Pairs []Pair              // ids are paths in the folder
}

// LoadDebianSets is DebianSets of Root.
func LoadDebianSets() ([]Set, error) {
	root, err := Root()
	if err != nil {
		return nil, err
	}
	return DebianSets(root)
}

// DebianSets returns each debian-doc-versions folder as a Set.
func DebianSets(root string) ([]Set, error) {
	docs, pairs, err := Debian(root)
	if err != nil {
		return nil, err
	}
	var out []Set
	for _, name := range debianFolders {
		set := Set{Name: name, Docs: map[string][]uint64{}}
		prefix := name + "/"
		for _, d := range docs {
			if rest, ok := strings.CutPrefix(d.ID, prefix); ok {
				set.Docs[rest] = RefShingles(d.Text)
			}
		}
		for _, p := range pairs {
			a, okA := strings.CutPrefix(p.A, prefix)
			b, okB := strings.CutPrefix(p.B, prefix)
			if okA && okB {
				set.Pairs = append(set.Pairs, Pair{A: a, B: b, Jaccard: p.Jaccard})
			}
		}
		out = append(out, set)
	}
	return out, nil
}

// Spam returns the spamassassin-2003-subset message bodies (the text after the first blank
// line, tags stripped) with IDs such as "spam-1/0001.x.txt", and the reference pairs of
// similar_body_pairs_ge0.5.tsv.
func Spam(root string) ([]Doc, []Pair, error) {
	base := filepath.Join(root, "spamassassin-2003-subset")
	dir := filepath.Join(base, "messages")
	var docs []Doc
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		msg, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		msg = bytes.ReplaceAll(msg, []byte("\r\n"), []byte("\n"))
		if i := bytes.Index(msg, []byte("\n\n")); i >= 0 {
			msg = msg[i+2:]
		} else {
			msg = nil
		}
		rel, _ := filepath.Rel(dir, path)
		docs = append(docs, Doc{ID: filepath.ToSlash(rel), Text: VisibleText(string(msg))})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("evaldata: %w", err)
	}
	pairs, err := readPairs(filepath.Join(base, "similar_body_pairs_ge0.5.tsv"), "")
	return docs, pairs, err
}

// readPairs reads a TSV whose first three columns are doc_1, doc_2 and a Jaccard value,
// after a header line, prefixing both ids.
func readPairs(path, prefix string) ([]Pair, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("evaldata: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	pairs := make([]Pair, 0, len(lines))
	for i, line := range lines[1:] {
		f := strings.Split(strings.TrimRight(line, "\r"), "\t")
		if len(f) < 3 {
			return nil, fmt.Errorf("evaldata: %s:%d: want 3 or more tab-separated fields", path, i+2)
		}
		j, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return nil, fmt.Errorf("evaldata: %s:%d: %w", path, i+2, err)
		}
		pairs = append(pairs, Pair{A: prefix + f[0], B: prefix + f[1], Jaccard: j})
	}
	return pairs, nil
}

// Answer is one text of the Clough-Stevenson corpus: a student answer or a task's source.
type Answer struct {
	Doc
	Task     string // "a", "b" or "c"
	Category string // cut, light, heavy, non, or orig for the source
}

// Clough returns the answers and sources of clough-stevenson-tasks-abc, decoded leniently:
// UTF-8 when valid, Windows-1252 otherwise.
func Clough(root string) ([]Answer, error) {
	base := filepath.Join(root, "clough-stevenson-tasks-abc")
	f, err := os.Open(filepath.Join(base, "labels.csv"))
	if err != nil {
		return nil, fmt.Errorf("evaldata: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	var out []Answer
	for line := 0; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("evaldata: labels.csv: %w", err)
		}
		if line == 0 || len(rec) < 3 {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(base, "texts", rec[0]))
		if err != nil {
			return nil, fmt.Errorf("evaldata: %w", err)
		}
		text := string(raw)
		if !utf8.Valid(raw) {
			dec, err := charmap.Windows1252.NewDecoder().Bytes(raw)
			if err != nil {
				return nil, fmt.Errorf("evaldata: %s: %w", rec[0], err)
			}
			text = string(dec)
		}
		out = append(out, Answer{Doc: Doc{ID: rec[0], Text: text}, Task: rec[1], Category: rec[2]})
	}
}

// htmlPages reads the .html files under dir, in path order, each named by its path
// relative to base with forward slashes.
func htmlPages(dir, base string) ([]Page, error) {
	var pages []Page
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		page, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, path)
		pages = append(pages, Page{ID: filepath.ToSlash(rel), HTML: page})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("evaldata: %w", err)
	}
	return pages, nil
}
