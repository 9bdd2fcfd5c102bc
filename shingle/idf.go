package shingle

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
)

// IDFTable holds the inverse document frequencies that Weighting IDF and TFIDF use,
// keyed by feature hash, so that it applies to shingles of any K. It is read-only once
// given to New and may then be shared by Shinglers in several goroutines.
type IDFTable struct {
	// Weights maps a feature hash to its weight.
	Weights map[uint64]float64
	// Default is the weight of features missing from Weights. LoadIDF sets it to the
	// largest weight in the file: a feature never seen in the corpus is as rare as the
	// rarest seen.
	Default float64
}

func (t *IDFTable) weight(h uint64) float64 {
	if w, ok := t.Weights[h]; ok {
		return w
	}
	return t.Default
}

// LoadIDF reads an IDF table from r, one feature a line: its text, a tab, and its
// weight as a decimal number (for example "near duplicate\t4.25"). The text of each line
// goes through the same pipeline as documents under opt (normalization, tokenization,
// hashing with opt.Seed) and must give exactly one feature: K words or fewer (Words) or K
// code points or fewer (Chars), since a text shorter than K is one shingle of all of it.
// Weights must be finite and not negative. Empty lines and lines starting with '#' are
// skipped. Errors wrap ErrIDF (or ErrOptions for opt) and give the line number; the
// weighting fields of opt are ignored.
func LoadIDF(r io.Reader, opt Options) (IDFTable, error) {
	opt.Weighting, opt.IDF, opt.SampleMod, opt.Bag = Uniform, IDFTable{}, 0, true
	s, err := New(opt)
	if err != nil {
		return IDFTable{}, err
	}
	t := IDFTable{Weights: make(map[uint64]float64)}
	sc := bufio.NewScanner(r)
	var hs []uint64
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		i := bytes.LastIndexByte(b, '\t')
		if i < 0 {
			return IDFTable{}, fmt.Errorf("%w: line %d: no tab between the feature and its weight", ErrIDF, line)
		}
		w, err := strconv.ParseFloat(string(bytes.TrimSpace(b[i+1:])), 64)
		if err != nil || w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
			return IDFTable{}, fmt.Errorf("%w: line %d: weight %q is not a finite number >= 0", ErrIDF, line, b[i+1:])
		}
		hs = s.AppendHashes(hs[:0], string(b[:i]))
		if len(hs) != 1 {
			return IDFTable{}, fmt.Errorf("%w: line %d: %q is %d shingles of %d %v; give one shingle", ErrIDF, line, b[:i], len(hs), s.k, opt.Unit)
		}
		t.Weights[hs[0]] = w
		t.Default = max(t.Default, w)
	}
	if err := sc.Err(); err != nil {
		return IDFTable{}, fmt.Errorf("shingle: reading IDF table: %w", err)
	}
	return t, nil
}
