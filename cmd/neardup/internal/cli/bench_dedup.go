package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/cmd/neardup/internal/bench"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/atomicfile"
)

var benchDedupCommand = &command{
	name:    "bench dedup",
	args:    "",
	summary: "time the batch dedup engine on synthetic text with planted near copies",
	about: `Generates --docs documents of about --size bytes of synthetic English: a word-bigram
model of the main text of the Clang 16 manual (the sample corpus's pages, embedded in
this program), so the documents have real words, word lengths and local word order but
share few 5-word runs by chance. A share --plant of them are near copies: a copy of an earlier document with --edits words
replaced. Document i is made from (--seed, i) alone, so nothing is kept in memory but the
engine's own state, and a seed always gives the same corpus.

By default it runs the dedup engine on them as they are generated (no files: the
fingerprinting, search and clustering of 'neardup dedup'), and reports the time, documents
and MB per second, the duplicates found, the recall of the planted pairs (both documents
ended in one cluster) and the peak resident set size of the process. With --jsonl FILE it
writes the corpus as JSONL ({"id":..., "text":...} a line) instead, for timing the whole
'neardup dedup' run on it.

The reference workloads: --docs 100000 --size 2000 (a CORE-sized job), and --docs
10000000 --size 500 --method simhash.
`,
	new: func() runner { return &benchDedupCmd{} },
}

// benchDedupCmd is "neardup bench dedup".
type benchDedupCmd struct {
	docs, size, edits, threads int
	plant                      float64
	seed                       uint64
	method                     dedupMethod
	distance                   int
	threshold                  float64
	jsonl                      string
	json                       bool
}

func (c *benchDedupCmd) define(fs *flag.FlagSet) {
	fs.IntVar(&c.docs, "docs", 100_000, "generate `N` documents (default 100000)")
	fs.IntVar(&c.size, "size", 2000, "make each document about `BYTES` long (default 2000)")
	fs.Float64Var(&c.plant, "plant", 0.1, "make a share `RATE` of the documents near copies of earlier ones (default 0.1)")
	fs.IntVar(&c.edits, "edits", 3, "replace `E` words in each near copy (default 3)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed the generator with `S` (default 1)")
	fs.TextVar(&c.method, "method", dedupMethod(dedup.All), "deduplicate by `METHOD`: exact, simhash, minhash or all (default all)")
	fs.IntVar(&c.distance, "distance", neardup.DefaultDistance, fmt.Sprintf("simhash: the largest distance of a near-duplicate, `BITS` (default %d)", neardup.DefaultDistance))
	fs.Float64Var(&c.threshold, "threshold", neardup.DefaultBatchThreshold, fmt.Sprintf("minhash and all: the smallest similarity, `S` (default %g)", neardup.DefaultBatchThreshold))
	fs.IntVar(&c.threads, "threads", 0, "fingerprint on `N` goroutines; 0 means one per CPU (default 0)")
	fs.StringVar(&c.jsonl, "jsonl", "", "write the corpus to `FILE` as JSONL instead of running the engine\n(default \"\": run)")
	fs.BoolVar(&c.json, "json", false, "write one JSON object to standard output and the report to standard\nerror (default false)")
}

func (c *benchDedupCmd) run(e *env, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q: bench dedup generates its input", args[0])
	}
	switch {
	case c.docs < 1:
		return usagef("--docs %d: use 1 or more", c.docs)
	case c.size < 1:
		return usagef("--size %d: use 1 or more bytes", c.size)
	case !(c.plant >= 0 && c.plant <= 1):
		return usagef("--plant %v: use a rate from 0 to 1", c.plant)
	case c.edits < 0:
		return usagef("--edits %d: use 0 or more", c.edits)
	}
	s := bench.NewCorpus(c.seed, c.size, c.edits, c.plant)
	if c.jsonl != "" {
		return c.writeJSONL(s)
	}
	out, err := c.measure(s)
	if err != nil {
		return err
	}
	report := e.stdout
	if c.json {
		report = e.stderr
	}
	if err := c.writeReport(report, out); err != nil {
		return err
	}
	if c.json {
		b, _ := json.Marshal(out)
		if _, err := e.stdout.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// writeJSONL writes the workload to --jsonl instead of running it.
func (c *benchDedupCmd) writeJSONL(s *bench.Corpus) error {
	return atomicfile.Write(c.jsonl, func(w io.Writer) error { return bench.WriteCorpusJSONL(w, s, c.docs) })
}

// measure runs dedup on the workload and returns what it took and found.
func (c *benchDedupCmd) measure(s *bench.Corpus) (bench.DedupResult, error) {
	out, err := bench.Dedup(s, c.docs, dedup.Options{Pipeline: neardup.Pipeline{Near: neardup.Near(c.method), Distance: distanceOption(c.distance), Threshold: c.threshold}, Threads: c.threads, Expected: c.docs})
	if err != nil {
		return out, usagef("%v", err)
	}
	return out, nil
}

// writeReport writes the human-readable report of a run.
func (c *benchDedupCmd) writeReport(w io.Writer, out bench.DedupResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "workload\t%d documents, %s of synthetic text (%d bytes each), %d planted near copies (%d words edited)\n", out.Docs, humanBytes(out.Bytes), c.size, out.PlantedPairs, c.edits)
	fmt.Fprintf(tw, "method\t%s on %d threads\n", out.Method, out.Threads)
	fmt.Fprintf(tw, "time\t%.2f s: %.0f documents/s, %.1f MB/s (generation included)\n", out.Seconds, out.DocsPerSecond, out.MBPerSecond)
	var stages []string
	for _, t := range out.Timings {
		stages = append(stages, fmt.Sprintf("%s %.2f s", t.Stage, t.Seconds))
	}
	fmt.Fprintf(tw, "stages\t%s\n", strings.Join(stages, ", "))
	fmt.Fprintf(tw, "found\t%d clusters, %d documents dropped\n", out.Clusters, out.Dropped)
	fmt.Fprintf(tw, "planted recall\t%.4f (%d of %d pairs in one cluster)\n", out.Recall, out.PlantedRecovered, out.PlantedPairs)
	fmt.Fprintf(tw, "peak RSS\t%s\n", humanBytes(int64(out.PeakRSSBytes)))
	return tw.Flush()
}
