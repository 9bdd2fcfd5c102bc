package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/cmd/neardup/internal/bench"
	"github.com/neardup/neardup/internal/atomicfile"
	"github.com/neardup/neardup/internal/evaldata"
)

var benchDenseCommand = &command{
	name:    "bench dense",
	args:    "",
	summary: "write a synthetic dense cloud of near-duplicates with exact Jaccard labels",
	about: `Writes a dense cloud of near-duplicates, the hard case for MinHash near its
threshold: --docs documents made from one template of 40 sentences, each with 1 to 6
sentences changed (half replaced, half with one word replaced), so that their pairwise
word-5-shingle Jaccard similarities spread from about 0.5 to 1, most of them between 0.6
and 0.9. The cloud depends only on --seed and --docs, and needs no data files.

--out DIR gets dense.jsonl ({"id":..., "text":...} a line) and labels.tsv (doc_1,
doc_2, jaccard_w5: every pair at or above --min-similarity with its exact Jaccard
similarity, lower-cased \w+ words, word 5-shingle sets, as the labelled sets in
../shared/eval). Score a dedup run on it by band of similarity:

  neardup bench dense --out cloud
  neardup dedup --no-corpus --split-punct --out run cloud/dense.jsonl
  neardup eval --bands --labels cloud/labels.tsv --pairs run/pairs.jsonl

It costs docs²/2 exact Jaccard merges, about a second at 1,000 documents.
`,
	new: func() runner { return &benchDenseCmd{} },
}

// benchDenseCmd is "neardup bench dense".
type benchDenseCmd struct {
	docs   int
	seed   uint64
	minSim float64
	out    string
}

// maxDenseDocs is the largest --docs: its labels are about 2 GB.
const maxDenseDocs = 10_000

func (c *benchDenseCmd) define(fs *flag.FlagSet) {
	fs.IntVar(&c.docs, "docs", 1000, fmt.Sprintf("generate `N` documents, 2 to %d (default 1000)", maxDenseDocs))
	fs.Uint64Var(&c.seed, "seed", 1, "seed the generator with `S` (default 1)")
	fs.Float64Var(&c.minSim, "min-similarity", 0.5, "label the pairs whose Jaccard similarity is at least `S`, 0 to 1 (default 0.5)")
	fs.StringVar(&c.out, "out", "", "write dense.jsonl and labels.tsv into `DIR`, created if missing (required)")
}

func (c *benchDenseCmd) run(e *env, args []string) error {
	switch {
	case len(args) > 0:
		return usagef("bench dense takes no arguments, got %q", args)
	case c.out == "":
		return usagef("give --out DIR: where to write the cloud and its labels")
	case c.docs < 2 || c.docs > maxDenseDocs:
		return usagef("--docs %d: give 2 to %d documents", c.docs, maxDenseDocs)
	case !(c.minSim >= 0 && c.minSim <= 1):
		return usagef("--min-similarity %v: give a similarity from 0 to 1", c.minSim)
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	docs, pairs := evaldata.DenseCloud(c.seed, c.docs, c.minSim)
	err := atomicfile.Write(filepath.Join(c.out, "dense.jsonl"), func(w io.Writer) error {
		return bench.WriteDenseDocs(w, docs)
	})
	if err != nil {
		return err
	}
	var bands bench.DenseBands
	err = atomicfile.Write(filepath.Join(c.out, "labels.tsv"), func(w io.Writer) (err error) {
		bands, err = bench.WriteDenseLabels(w, pairs)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%d documents, %d pairs at or above %g: %d below 0.7, %d in 0.7-0.8, %d in 0.8-0.9, %d at 0.9 or above; written to %s\n",
		len(docs), len(pairs), c.minSim, bands[0], bands[1], bands[2], bands[3], c.out)
	return nil
}
