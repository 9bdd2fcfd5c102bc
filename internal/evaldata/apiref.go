package evaldata

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// APIReferenceFolder is the set of api-reference-dense: 580 generated SciPy API pages.
const APIReferenceFolder = "api-reference-dense/scipy-1.10.1-special-interpolate"

// APIReference returns the pages of api-reference-dense (IDs are their paths in the
// set's folder, such as "special/scipy.special.jv.html", as 'neardup dedup' names the
// files of a directory), in path order, and the reference pairs of
// similar_pairs_ge0.5.tsv (Jaccard of the whole visible page >= 0.5; every other pair is
// below).
func APIReference(root string) ([]Page, []Pair, error) {
	dir := filepath.Join(root, APIReferenceFolder)
	var pages []Page
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		page, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		pages = append(pages, Page{ID: filepath.ToSlash(rel), HTML: page})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("evaldata: %w", err)
	}
	pairs, err := readPairs(filepath.Join(dir, "similar_pairs_ge0.5.tsv"), "")
	if err != nil {
		return nil, nil, err
	}
	return pages, pairs, nil
}
