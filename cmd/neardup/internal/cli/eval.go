package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/cmd/neardup/internal/evaluate"
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
func (c *evalCmd) runDedup(e *env, inputs []string) (map[evaluate.Pair]float64, bool, error) {
	var bad atomic.Int64 // counted by the reading goroutine and by the fingerprinting loop
	r, err := corpus.Open(inputs, corpus.Options{OnError: func(corpus.BadRecord) error { bad.Add(1); return nil }})
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	if err := c.text.check(); err != nil {
		return nil, false, err
	}
	opt := dedup.Options{Pipeline: neardup.Pipeline{
		Near: neardup.Near(c.method), Distance: distanceOption(c.distance), Threshold: c.threshold,
		NoExtract: c.noExtract, Shingle: c.text.options(shingle.Uniform),
	}}
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
	found, bySimilarity, err := evaluate.ReadRunPairs(&buf, "the run's pairs")
	if near := neardup.Near(c.method); near == dedup.SimHash || near == dedup.Exact {
		bySimilarity = false
	}
	return found, bySimilarity, err
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
	truth, err := readInput(e, c.labels, func(r io.Reader, shown string) (evaluate.Labels, error) {
		return evaluate.ReadLabels(r, shown, c.labelThreshold)
	})
	if err != nil {
		return err
	}
	if c.bands && truth.Unscored {
		return usagef("--bands needs labels with a score column")
	}
	var found map[evaluate.Pair]float64
	var bySimilarity bool
	if c.pairs != "" {
		type runPairs struct {
			found        map[evaluate.Pair]float64
			bySimilarity bool
		}
		var p runPairs
		p, err = readInput(e, c.pairs, func(r io.Reader, shown string) (runPairs, error) {
			found, bySim, err := evaluate.ReadRunPairs(r, shown)
			return runPairs{found, bySim}, err
		})
		found, bySimilarity = p.found, p.bySimilarity
	} else {
		found, bySimilarity, err = c.runDedup(e, args)
	}
	if err != nil {
		return err
	}
	if c.bands {
		return evaluate.WriteBands(e.stdout, evaluate.Bands(truth, found, c.labelThreshold), c.labelThreshold, c.json)
	}
	return evaluate.WriteSweep(e.stdout, evaluate.Sweep(truth, found, bySimilarity, c.labelThreshold), truth, len(found), c.json)
}

// readInput reads the named input ("-" for standard input) with read, which names it
// shown in errors.
func readInput[T any](e *env, name string, read func(r io.Reader, shown string) (T, error)) (T, error) {
	r, shown, closeInput, err := openInput(e, name)
	if err != nil {
		var zero T
		return zero, err
	}
	defer closeInput()
	return read(r, shown)
}
