package evaldata

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Article is one page of aeb-scrapinghub (the Article Extraction Benchmark): its HTML and
// the manually prepared main text the labels give.
type Article struct {
	ID   string // the sha256 id, the file name in html/ without .html.gz
	URL  string
	HTML []byte // decompressed
	Body string // ground-truth.json's articleBody
}

// AEB returns the 181 pages of aeb-scrapinghub with their labels, sorted by ID.
func AEB(root string) ([]Article, error) {
	base := filepath.Join(root, "aeb-scrapinghub")
	labels, err := aebLabels(base)
	if err != nil {
		return nil, err
	}
	out := make([]Article, 0, len(labels))
	for _, l := range labels {
		page, err := readGzip(filepath.Join(base, "html", l.id+".html.gz"))
		if err != nil {
			return nil, err
		}
		out = append(out, Article{ID: l.id, URL: l.URL, HTML: page, Body: l.ArticleBody})
	}
	return out, nil
}

type aebLabel struct {
	id          string
	ArticleBody string `json:"articleBody"`
	URL         string `json:"url"`
}

// aebLabels reads ground-truth.json, sorted by id.
func aebLabels(base string) ([]aebLabel, error) {
	raw, err := os.ReadFile(filepath.Join(base, "ground-truth.json"))
	if err != nil {
		return nil, fmt.Errorf("evaldata: %w", err)
	}
	var labels map[string]aebLabel
	if err := json.Unmarshal(raw, &labels); err != nil {
		return nil, fmt.Errorf("evaldata: ground-truth.json: %w", err)
	}
	out := make([]aebLabel, 0, len(labels))
	for id, l := range labels {
		l.id = id
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b aebLabel) int { return strings.Compare(a.id, b.id) })
	return out, nil
}

func readGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("evaldata: %w", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("evaldata: %s: %w", path, err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		return nil, fmt.Errorf("evaldata: %s: %w", path, err)
	}
	return b, nil
}
