package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/internal/measure"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/simhash"
)

// levelsJSON says at which exact levels two documents are equal.
type levelsJSON struct {
	Raw  bool `json:"raw"`
	Text bool `json:"text"`
	Main bool `json:"main"`
}

// sideJSON describes one document of a comparison as the detector sees it.
type sideJSON struct {
	Title   string `json:"title,omitempty"`
	Method  string `json:"method,omitempty"`
	Words   int    `json:"words"`
	SimHash string `json:"simhash"`
}

// comparison is the answer of POST /v1/compare.
type comparison struct {
	// Levels, Distance, Similarity and Near are the detector's view: its fingerprints
	// and its near rule.
	Levels     levelsJSON `json:"levels"`
	Distance   int        `json:"simhash_distance"`
	Similarity float64    `json:"minhash_similarity"`
	Near       bool       `json:"near"`
	A          sideJSON   `json:"a"`
	B          sideJSON   `json:"b"`
	// Measures are every measure of the two main texts, as `neardup compare` gives them.
	Measures *measure.Result `json:"measures"`
	// Diff is the word diff of the two main texts.
	Diff measure.Diff `json:"diff"`
}

// compareDocs compares two documents by the detector's fingerprints and by every measure
// of their main texts.
func compareDocs(d *neardup.Detector, cj compareJSON) (*comparison, error) {
	opt := d.Options()
	var c comparison
	var fps [2]neardup.Fingerprints
	var mains [2]string
	for i, text := range []string{cj.A, cj.B} {
		doc := neardup.Document{ID: string(rune('a' + i)), Text: text}
		mains[i] = text
		if cj.HTML {
			doc.Text, doc.HTML = "", []byte(text)
			var err error
			if mains[i], err = d.Fingerprinter().MainText(doc); err != nil {
				return nil, errorf(http.StatusBadRequest, "invalid_document", "%v", err)
			}
		}
		fp, err := d.Fingerprinter().Fingerprint(doc)
		if err != nil {
			return nil, err
		}
		fps[i] = fp
	}
	a, b := &fps[0], &fps[1]
	c.Levels = levelsJSON{a.Raw == b.Raw, a.Text == b.Text, a.Main == b.Main}
	c.Distance = simhash.Distance(a.SimHash, b.SimHash)
	if len(a.MinHash) == len(b.MinHash) && len(a.MinHash) > 0 {
		c.Similarity = minhash.Similarity(a.MinHash, b.MinHash)
	}
	enough := a.Words >= opt.MinWords && b.Words >= opt.MinWords
	bySim, byMin := c.Distance <= opt.Distance, c.Similarity >= opt.Threshold
	switch opt.Near {
	case neardup.NearSimHash:
		c.Near = bySim
	case neardup.NearMinHash:
		c.Near = byMin
	case neardup.NearBoth:
		c.Near = bySim && byMin
	default:
		c.Near = bySim || byMin
	}
	c.Near = c.Near && enough
	c.A = sideJSON{a.Title, a.Method, a.Words, formatSimHash(a.SimHash)}
	c.B = sideJSON{b.Title, b.Method, b.Words, formatSimHash(b.SimHash)}
	res, err := measure.Compare(measure.Text{Name: "a", Text: mains[0]}, measure.Text{Name: "b", Text: mains[1]},
		measure.Options{Unit: opt.Shingle.Unit, K: opt.Shingle.K, Normalize: opt.Shingle, MinHashK: opt.MinHashK})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", neardup.ErrOptions, err)
	}
	c.Measures = res
	c.Diff = measure.WordDiff(mains[0], mains[1])
	return &c, nil
}

func (s *Server) compare(w http.ResponseWriter, r *http.Request) error {
	d, cj, err := decodeRequest(s, w, r, decodeCompare)
	if err != nil {
		return err
	}
	var c *comparison
	if err := s.do(r.Context(), func(context.Context) error {
		var err error
		c, err = compareDocs(d, cj)
		return err
	}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}
