package evaldata

import (
	"path/filepath"
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
	pages, err := htmlPages(dir, dir)
	if err != nil {
		return nil, nil, err
	}
	pairs, err := readPairs(filepath.Join(dir, "similar_pairs_ge0.5.tsv"), "")
	if err != nil {
		return nil, nil, err
	}
	return pages, pairs, nil
}
