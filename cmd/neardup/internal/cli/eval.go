package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/shingle"
)

var evalCommand = &command{
	name:    "eval",
	args:    "--labels FILE (--pairs pairs.jsonl | INPUT...)",
	summary: "precision, recall and F1 of a dedup run against labelled pairs, with a threshold sweep",
	about: `Scores the pairs a 'neardup dedup' run found (its pairs.jsonl) against labelled
duplicates, and prints a table: for all its pairs (the first row, with the loosest score
among them), and at every stricter threshold its pairs allow (MinHash similarity in steps of 0.05, SimHash distance
in steps of 1 bit), the pairs predicted, true and false positives, false negatives,
precision, recall and F1.

--labels is either a TSV or CSV file of labelled pairs, "id_a id_b [score]" a line (a
header line is skipped; with a score column, a pair is a duplicate when its score is at
least --label-threshold), or a JSONL file of clusters as 'neardup dedup' writes them
(clusters.jsonl: every two members of a cluster are a duplicate pair). Labelled pairs
whose ids the run never saw still count as misses.

pairs.jsonl lists an exact group of n documents as n-1 pairs to its first document, and
documents with equal SimHash fingerprints through the first of them; eval expands those
groups (and the near pairs between them) to every pair they imply before scoring, so a
run is scored on the same pairs its clusters were made from.

Instead of --pairs, give the inputs themselves (as 'neardup dedup' takes them) to
deduplicate them in memory with --method, --distance, --threshold, --no-extract and the
text-pipeline flags, as 'neardup dedup' takes them, and score that run; standard error
names the effective parameters.

With --bands, the run is scored by band of labelled similarity instead (below 0.5 or
unlabelled, 0.5-0.7, 0.7-0.8, 0.8-0.9, 0.9 and above, and --label-threshold as an edge):
the labelled pairs and the pairs found in each band, recall in the bands at or above
--label-threshold, false positives and their share of the pairs found below it. It needs
labels with a score column.

With --json the table is one JSON object a line.
`,
	new: func() runner { return &evalCmd{} },
}

// evalCmd is "neardup eval".
type evalCmd struct {
	labels, pairs  string
	labelThreshold float64
	json, bands    bool
	// Deduplicating the inputs directly.
	method    dedupMethod
	distance  int
	threshold float64
	noExtract bool
	text      textFlags
}

func (c *evalCmd) define(fs *flag.FlagSet) {
	fs.StringVar(&c.labels, "labels", "", "the labelled pairs (TSV or CSV) or clusters (JSONL) in `FILE` (required)")
	fs.StringVar(&c.pairs, "pairs", "", "the pairs.jsonl `FILE` of a 'neardup dedup' run (required)")
	fs.Float64Var(&c.labelThreshold, "label-threshold", 0.8, "a labelled pair with a score column is a duplicate when its score is at least\n`S` (default 0.8)")
	fs.BoolVar(&c.json, "json", false, "write one JSON object per row instead of the table (default false)")
	fs.BoolVar(&c.bands, "bands", false, "instead of the sweep, score the run by band of labelled similarity\n(default false)")
	fs.TextVar(&c.method, "method", dedupMethod(dedup.All), "with inputs: deduplicate by `METHOD`, as 'neardup dedup --method' (default all)")
	fs.IntVar(&c.distance, "distance", neardup.DefaultDistance, fmt.Sprintf("with inputs: the SimHash distance in `BITS`, as 'neardup dedup' (default %d)", neardup.DefaultDistance))
	fs.Float64Var(&c.threshold, "threshold", neardup.DefaultBatchThreshold, fmt.Sprintf("with inputs: the MinHash similarity `S`, as 'neardup dedup' (default %g)", neardup.DefaultBatchThreshold))
	fs.BoolVar(&c.noExtract, "no-extract", false, "with inputs: fingerprint HTML on its whole visible text (default false)")
	c.text.define(fs)
}

// runDedup deduplicates the inputs in memory (the corpus defaults; bad records skipped
// and counted on standard error) and returns the pairs it finds, as readRunPairs would
// read them from its pairs.jsonl.
func (c *evalCmd) runDedup(e *env, inputs []string) (map[pairKey]float64, bool, error) {
	var bad atomic.Int64 // counted by the reading goroutine and by the fingerprinting loop
	r, err := corpus.Open(inputs, corpus.Options{OnError: func(corpus.BadRecord) error { bad.Add(1); return nil }})
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	if err := c.text.check(); err != nil {
		return nil, false, err
	}
	distance := distanceOption(c.distance)
	opt := dedup.Options{Pipeline: neardup.Pipeline{Near: neardup.Near(c.method), Distance: distance, Threshold: c.threshold, NoExtract: c.noExtract, Shingle: c.text.options(shingle.Uniform)}}
	res, err := dedup.Run(func() (neardup.Document, error) {
		rec, err := r.Next()
		if err != nil {
			return neardup.Document{}, err
		}
		return recordDocument(rec), nil
	}, opt, func(neardup.Document, error) error {
		bad.Add(1)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	fmt.Fprintf(e.stderr, "neardup eval: deduplicated %d documents with %s\n", len(res.Docs), dedupRules(res.Options, &c.text, ""))
	if n := bad.Load(); n > 0 {
		fmt.Fprintf(e.stderr, "neardup eval: %d bad records skipped (see 'neardup dedup' for the list)\n", n)
	}
	var buf bytes.Buffer
	if err := res.WritePairs(&buf); err != nil {
		return nil, false, err
	}
	found, bySimilarity, err := parseRunPairs(&buf, "the run's pairs")
	if neardup.Near(c.method) == dedup.SimHash || neardup.Near(c.method) == dedup.Exact {
		bySimilarity = false
	}
	return found, bySimilarity, err
}

// pairKey is an unordered pair of ids, smaller first.
type pairKey struct{ a, b string }

func newPairKey(a, b string) pairKey {
	if a > b {
		a, b = b, a
	}
	return pairKey{a, b}
}

// evalRow is one threshold of the sweep.
type evalRow struct {
	Threshold string  `json:"threshold"`
	Predicted int     `json:"predicted"`
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

func (c *evalCmd) run(e *env, args []string) error {
	switch {
	case c.labels == "":
		return usagef("give --labels FILE: the labelled pairs or clusters")
	case c.pairs == "" && len(args) == 0:
		return usagef("give --pairs FILE (a dedup run's pairs.jsonl), or the inputs to deduplicate")
	case c.pairs != "" && len(args) > 0:
		return usagef("give --pairs FILE or inputs to deduplicate, not both")
	}
	truth, err := readLabels(e, c.labels, c.labelThreshold)
	if err != nil {
		return err
	}
	if c.bands && truth.unscored {
		return usagef("--bands needs labels with a score column")
	}
	var found map[pairKey]float64
	var bySimilarity bool
	if c.pairs != "" {
		found, bySimilarity, err = readRunPairs(e, c.pairs)
	} else {
		found, bySimilarity, err = c.runDedup(e, args)
	}
	if err != nil {
		return err
	}
	if c.bands {
		return c.writeBands(e, truth, found)
	}
	// The sweep: from the run's own threshold (every pair) to the strictest.
	var levels []float64
	for _, s := range found {
		levels = append(levels, s)
	}
	slices.Sort(levels)
	levels = slices.Compact(levels)
	var cuts []float64
	if bySimilarity {
		if len(levels) > 0 {
			for t := 1.0; t >= levels[0]-1e-9; t -= 0.05 {
				cuts = append(cuts, t)
			}
			cuts = append(cuts, levels[0])
		}
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
	} else {
		for k := 0.0; len(levels) > 0 && k <= levels[len(levels)-1]; k++ {
			cuts = append(cuts, k)
		}
		slices.Reverse(cuts) // loosest first
	}
	if len(cuts) == 0 {
		cuts = []float64{0}
	}
	var rows []evalRow
	for _, t := range cuts {
		r := evalRow{Threshold: strconv.FormatFloat(t, 'f', -1, 64)}
		if bySimilarity {
			r.Threshold = "similarity >= " + strconv.FormatFloat(t, 'f', 4, 64)
		} else {
			r.Threshold = "distance <= " + strconv.FormatFloat(t, 'f', 0, 64)
		}
		if len(rows) == 0 {
			r.Threshold = "all pairs (" + r.Threshold + ")"
		}
		for p, s := range found {
			if (bySimilarity && s >= t-1e-9) || (!bySimilarity && s <= t) {
				r.Predicted++
				if l, ok := truth.pairs[p]; ok && l >= c.labelThreshold {
					r.TP++
				}
			}
		}
		r.FP, r.FN = r.Predicted-r.TP, truth.duplicates-r.TP
		if r.Predicted > 0 {
			r.Precision = float64(r.TP) / float64(r.Predicted)
		}
		if truth.duplicates > 0 {
			r.Recall = float64(r.TP) / float64(truth.duplicates)
		}
		if r.Precision+r.Recall > 0 {
			r.F1 = 2 * r.Precision * r.Recall / (r.Precision + r.Recall)
		}
		rows = append(rows, r)
	}
	w := bufio.NewWriter(e.stdout)
	if c.json {
		for _, r := range rows {
			b, _ := json.Marshal(r)
			w.Write(append(b, '\n'))
		}
	} else {
		fmt.Fprintf(w, "%d labelled duplicate pairs; %d pairs found by the run\n", truth.duplicates, len(found))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "threshold\tpredicted\tTP\tFP\tFN\tprecision\trecall\tF1\t")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.4f\t%.4f\t%.4f\t\n", r.Threshold, r.Predicted, r.TP, r.FP, r.FN, r.Precision, r.Recall, r.F1)
		}
		tw.Flush()
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// labels are the labelled pairs of a file: each pair's score (1 for a cluster's pairs and
// lines without a score), the pairs scored at least the threshold (the duplicates), and
// whether any pair came without a score.
type labels struct {
	pairs      map[pairKey]float64
	duplicates int
	unscored   bool
}

// readLabels reads labelled pairs (TSV/CSV) or clusters (JSONL).
func readLabels(e *env, name string, threshold float64) (labels, error) {
	r, shown, closeInput, err := openInput(e, name)
	if err != nil {
		return labels{}, err
	}
	defer closeInput()
	truth := labels{pairs: map[pairKey]float64{}}
	add := func(k pairKey, s float64) {
		if old, ok := truth.pairs[k]; !ok || s > old {
			if (!ok || old < threshold) && s >= threshold {
				truth.duplicates++
			}
			truth.pairs[k] = s
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxDocLine)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		if strings.HasPrefix(text, "{") {
			var c struct {
				Members []struct {
					ID string `json:"id"`
				} `json:"members"`
			}
			if err := json.Unmarshal([]byte(text), &c); err != nil {
				return labels{}, fmt.Errorf("%s:%d: not a cluster object: %v", shown, line, err)
			}
			for i, a := range c.Members {
				for _, b := range c.Members[i+1:] {
					add(newPairKey(a.ID, b.ID), 1)
				}
			}
			truth.unscored = true
			continue
		}
		sep := "\t"
		if !strings.Contains(text, "\t") {
			sep = ","
		}
		f := strings.Split(text, sep)
		if len(f) < 2 {
			return labels{}, fmt.Errorf("%s:%d: want two ids (and a score) separated by tabs or commas", shown, line)
		}
		score := 1.0
		if len(f) >= 3 {
			s, err := strconv.ParseFloat(strings.TrimSpace(f[2]), 64)
			if err != nil {
				if line == 1 {
					continue // the header
				}
				return labels{}, fmt.Errorf("%s:%d: score %q is not a number", shown, line, f[2])
			}
			score = s
		} else {
			truth.unscored = true
		}
		add(newPairKey(strings.TrimSpace(f[0]), strings.TrimSpace(f[1])), score)
	}
	if err := sc.Err(); err != nil {
		return labels{}, fmt.Errorf("reading %s: %w", shown, err)
	}
	return truth, nil
}

// readRunPairs reads a pairs.jsonl and returns every pair it implies with its score
// (similarity, or distance), and whether scores are similarities.
func readRunPairs(e *env, name string) (map[pairKey]float64, bool, error) {
	r, shown, closeInput, err := openInput(e, name)
	if err != nil {
		return nil, false, err
	}
	defer closeInput()
	return parseRunPairs(r, shown)
}

// parseRunPairs is readRunPairs of r, shown as name in errors.
func parseRunPairs(r io.Reader, shown string) (map[pairKey]float64, bool, error) {
	type runPair struct {
		A, B       string
		Method     string
		Distance   *float64
		Similarity *float64
	}
	var pairs []runPair
	parent := map[string]string{} // union-find of documents with the same content
	find := func(x string) string {
		for {
			p, ok := parent[x]
			if !ok || p == x {
				return x
			}
			parent[x] = parent[p] // path halving
			x = p
		}
	}
	bySimilarity := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxDocLine)
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
			for _, x := range []string{p.A, p.B} {
				if _, ok := parent[x]; !ok {
					parent[x] = x
				}
			}
			if ra, rb := find(p.A), find(p.B); ra != rb {
				parent[rb] = ra
			}
			continue
		}
		pairs = append(pairs, p)
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", shown, err)
	}
	groups := map[string][]string{}
	for x := range parent {
		groups[find(x)] = append(groups[find(x)], x)
	}
	members := func(x string) []string {
		if g := groups[find(x)]; g != nil {
			return g
		}
		return []string{x}
	}
	best := 1.0 // the score of identical content
	if !bySimilarity {
		best = 0
	}
	found := map[pairKey]float64{}
	for _, g := range groups {
		for i, a := range g {
			for _, b := range g[i+1:] {
				found[newPairKey(a, b)] = best
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
				if k := newPairKey(a, b); a != b {
					if old, ok := found[k]; !ok || (bySimilarity && s > old) || (!bySimilarity && s < old) {
						found[k] = s
					}
				}
			}
		}
	}
	return found, bySimilarity, nil
}
