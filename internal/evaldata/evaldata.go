// Package evaldata loads the labelled third-party evaluation sets in ../shared/eval (see
// their README and SOURCE.md files) for neardup's accuracy tests and reports: the
// documents as text and the reference pairs their labels give.
//
// The text of an HTML page is its visible text as the labels define it: script, style and
// comments removed, tags stripped, entities decoded. This is deliberately simple, matching
// how the reference similarities were computed; it is not main-content extraction.
//
// # Caveats
//
// The sets live outside the module. Root finds them from the working directory (tests run
// in their package directory) or from NEARDUP_EVAL; a checkout without them gets an error
// naming where it looked.
package evaldata

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
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
			return "", fmt.Errorf("evaldata: no shared/eval above %s; set NEARDUP_EVAL to the evaluation folder", wd)
		}
	}
}

// VisibleText returns the visible text of an HTML document: text nodes outside script,
// style, head-only elements and comments, entities decoded, with a space between nodes.
func VisibleText(page []byte) string {
	z := html.NewTokenizer(bytes.NewReader(page))
	var b strings.Builder
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken:
			if name, _ := z.TagName(); isHidden(name) {
				skip++
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); isHidden(name) && skip > 0 {
				skip--
			}
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
				b.WriteByte(' ')
			}
		}
	}
}

func isHidden(tag []byte) bool {
	switch string(tag) {
	case "script", "style", "title", "noscript", "template":
		return true
	}
	return false
}

// Debian returns the pages of both debian-doc-versions folders as visible text (IDs such as
// "clang-15-vs-16/a-15.0.6/APINotes.html") and the reference pairs of
// similar_pairs_ge0.5.tsv (word 5-shingle Jaccard >= 0.5; every other pair is below).
func Debian(root string) ([]Doc, []Pair, error) {
	base := filepath.Join(root, "debian-doc-versions")
	var docs []Doc
	var pairs []Pair
	for _, set := range []string{"clang-15-vs-16", "postgresql-15.18-vs-15.20"} {
		dir := filepath.Join(base, set)
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
				return err
			}
			page, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(base, path)
			docs = append(docs, Doc{ID: filepath.ToSlash(rel), Text: VisibleText(page)})
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("evaldata: %w", err)
		}
		p, err := readPairs(filepath.Join(dir, "similar_pairs_ge0.5.tsv"), set+"/")
		if err != nil {
			return nil, nil, err
		}
		pairs = append(pairs, p...)
	}
	return docs, pairs, nil
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
		docs = append(docs, Doc{ID: filepath.ToSlash(rel), Text: VisibleText(msg)})
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
