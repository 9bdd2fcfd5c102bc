package evaluate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxLine is the longest line ReadLabels and ReadRunPairs read, as the command line's
// other line readers.
const maxLine = 64 << 20

// Pair is an unordered pair of document ids, smaller first.
type Pair struct{ A, B string }

// NewPair returns the pair of a and b, in either order.
func NewPair(a, b string) Pair {
	if a > b {
		a, b = b, a
	}
	return Pair{a, b}
}

// Labels are the labelled pairs of a file: each pair's score (1 for a cluster's pairs
// and lines without a score), the number of pairs scored at least the threshold (the
// duplicates), and whether any pair came without a score.
type Labels struct {
	Pairs      map[Pair]float64
	Duplicates int
	Unscored   bool
}

// add records a labelled pair, keeping the highest score of a pair given twice.
func (l *Labels) add(k Pair, s, threshold float64) {
	if old, ok := l.Pairs[k]; !ok || s > old {
		if (!ok || old < threshold) && s >= threshold {
			l.Duplicates++
		}
		l.Pairs[k] = s
	}
}

// ReadLabels reads labelled pairs, "id_a id_b [score]" a line separated by tabs or
// commas (a header line is skipped), or clusters as `neardup dedup` writes them (every
// two members of a cluster are a pair scored 1). A pair is a duplicate when its score is
// at least threshold. shown names r in errors.
func ReadLabels(r io.Reader, shown string, threshold float64) (Labels, error) {
	truth := Labels{Pairs: map[Pair]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		var err error
		switch {
		case strings.TrimSpace(text) == "":
		case strings.HasPrefix(text, "{"):
			err = truth.addCluster(text, threshold)
		default:
			err = truth.addLine(text, line, threshold)
		}
		if err != nil {
			return Labels{}, fmt.Errorf("%s:%d: %w", shown, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return Labels{}, fmt.Errorf("reading %s: %w", shown, err)
	}
	return truth, nil
}

// addCluster adds every pair of a cluster line of clusters.jsonl.
func (l *Labels) addCluster(text string, threshold float64) error {
	var c struct {
		Members []struct {
			ID string `json:"id"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		return fmt.Errorf("not a cluster object: %v", err)
	}
	for i, a := range c.Members {
		for _, b := range c.Members[i+1:] {
			l.add(NewPair(a.ID, b.ID), 1, threshold)
		}
	}
	l.Unscored = true
	return nil
}

// addLine adds the pair of a TSV or CSV line; a first line whose score is not a number
// is a header.
func (l *Labels) addLine(text string, line int, threshold float64) error {
	sep := "\t"
	if !strings.Contains(text, "\t") {
		sep = ","
	}
	f := strings.Split(text, sep)
	if len(f) < 2 {
		return fmt.Errorf("want two ids (and a score) separated by tabs or commas")
	}
	score := 1.0
	if len(f) >= 3 {
		s, err := strconv.ParseFloat(strings.TrimSpace(f[2]), 64)
		if err != nil {
			if line == 1 {
				return nil // the header
			}
			return fmt.Errorf("score %q is not a number", f[2])
		}
		score = s
	} else {
		l.Unscored = true
	}
	l.add(NewPair(strings.TrimSpace(f[0]), strings.TrimSpace(f[1])), score, threshold)
	return nil
}

// runPair is a line of pairs.jsonl.
type runPair struct {
	A, B       string
	Method     string
	Distance   *float64
	Similarity *float64
}

// sameContent is a union-find of the documents a run found to have the same content.
type sameContent map[string]string

func (u sameContent) find(x string) string {
	for {
		p, ok := u[x]
		if !ok || p == x {
			return x
		}
		u[x] = u[p] // path halving
		x = p
	}
}

func (u sameContent) union(a, b string) {
	for _, x := range []string{a, b} {
		if _, ok := u[x]; !ok {
			u[x] = x
		}
	}
	if ra, rb := u.find(a), u.find(b); ra != rb {
		u[rb] = ra
	}
}

// ReadRunPairs reads the pairs.jsonl of a `neardup dedup` run and returns every pair it
// implies with its score (similarity, or distance in bits), and whether the scores are
// similarities. shown names r in errors.
func ReadRunPairs(r io.Reader, shown string) (found map[Pair]float64, bySimilarity bool, err error) {
	var pairs []runPair
	same := sameContent{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var p runPair
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil || p.A == "" || p.B == "" {
			return nil, false, fmt.Errorf("%s:%d: not a pair object of 'neardup dedup' (%v)", shown, line, err)
		}
		if p.Similarity != nil {
			bySimilarity = true
		}
		if p.Method == "exact" || (p.Distance != nil && *p.Distance == 0) {
			same.union(p.A, p.B)
			continue
		}
		pairs = append(pairs, p)
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", shown, err)
	}
	return expand(same, pairs, bySimilarity), bySimilarity, nil
}

// expand returns every pair of documents with the same content, and every pair between
// the groups of two near documents, with the best score of each.
func expand(same sameContent, pairs []runPair, bySimilarity bool) map[Pair]float64 {
	groups := map[string][]string{}
	for x := range same {
		groups[same.find(x)] = append(groups[same.find(x)], x)
	}
	members := func(x string) []string {
		if g := groups[same.find(x)]; g != nil {
			return g
		}
		return []string{x}
	}
	best := 1.0 // the score of identical content
	if !bySimilarity {
		best = 0
	}
	found := map[Pair]float64{}
	for _, g := range groups {
		for i, a := range g {
			for _, b := range g[i+1:] {
				found[NewPair(a, b)] = best
			}
		}
	}
	for _, p := range pairs {
		s := best
		switch {
		case p.Similarity != nil:
			s = *p.Similarity
		case p.Distance != nil:
			s = *p.Distance
		}
		for _, a := range members(p.A) {
			for _, b := range members(p.B) {
				if k := NewPair(a, b); a != b {
					if old, ok := found[k]; !ok || (bySimilarity && s > old) || (!bySimilarity && s < old) {
						found[k] = s
					}
				}
			}
		}
	}
	return found
}
