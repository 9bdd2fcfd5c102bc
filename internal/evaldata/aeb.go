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
	raw, err := os.ReadFile(filepath.Join(base, "ground-truth.json"))
	if err != nil {
		return nil, fmt.Errorf("evaldata: %w", err)
	}
	var labels map[string]struct {
		ArticleBody string `json:"articleBody"`
		URL         string `json:"url"`
	}
	if err := json.Unmarshal(raw, &labels); err != nil {
		return nil, fmt.Errorf("evaldata: ground-truth.json: %w", err)
	}
	out := make([]Article, 0, len(labels))
	for id, l := range labels {
		page, err := readGzip(filepath.Join(base, "html", id+".html.gz"))
		if err != nil {
			return nil, err
		}
		out = append(out, Article{ID: id, URL: l.URL, HTML: page, Body: l.ArticleBody})
	}
	slices.SortFunc(out, func(a, b Article) int { return strings.Compare(a.ID, b.ID) })
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
