package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/neardup/neardup/cmd/neardup/internal/bench"
)

var benchFindallCommand = &command{
	name:    "bench findall",
	args:    "",
	summary: "time findall on random fingerprints with planted near copies",
	about: `Runs simhash-py's bench.py workload: --random N random 64-bit fingerprints, plus
round(N*RATE) planted near copies (--plant RATE), each a copy of a random one of the N with
1 to K bits flipped (the count uniform in 1..K, at distinct random positions), all
shuffled. The generator is math/rand/v2's PCG seeded with (--seed, 0), so a seed always
gives the same input.

Times the find-all search only (not the generation), --repeat times, and reports the
best time, the number of pairs, how many of the planted (original, copy) pairs were found
(recall; a copy equal to another copy counts once) and the peak resident set size of the
process (VmHWM from /proc/self/status; 0 where that does not exist), which includes the
generated input. With --json the report goes to standard error and standard output gets
one JSON object.

The reference workload is --random 1000000 --plant 0.01 --distance 3.
`,
	new: func() runner { return &benchFindallCmd{} },
}

// maxBenchN is the largest --random: 2^31 fingerprints (16 GiB).
const maxBenchN = 1 << 31

// benchFindallCmd is "neardup bench findall".
type benchFindallCmd struct {
	n, distance, blocks, threads, repeat int
	plant                                float64
	seed                                 uint64
	json                                 bool
}

func (c *benchFindallCmd) define(fs *flag.FlagSet) {
	fs.IntVar(&c.n, "random", 0, "generate `N` random fingerprints, 1 to 2^31 (required)")
	fs.IntVar(&c.distance, "distance", unset, "search for pairs at most `K` bits apart, 1 to 63; planted copies differ in\n1 to K bits (required)")
	fs.IntVar(&c.blocks, "blocks", 0, "use a table design of `B` blocks, K+1 to 64 (default 0: automatic, as\nfindall)")
	fs.Float64Var(&c.plant, "plant", 0, "add round(N*`RATE`) near copies of random fingerprints, RATE 0 to 1\n(default 0)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed the generator with `S` (default 1)")
	fs.IntVar(&c.threads, "threads", 0, "search with `T` goroutines (default 0: one per CPU, GOMAXPROCS)")
	fs.IntVar(&c.repeat, "repeat", 1, "run the search `R` times and report the fastest (default 1)")
	fs.BoolVar(&c.json, "json", false, "write one JSON object to standard output and the report to standard\nerror (default false)")
}

func (c *benchFindallCmd) run(e *env, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q: bench findall generates its input; use --random N", args[0])
	}
	switch {
	case c.n == 0:
		return usagef("--random is required: give the number of random fingerprints, e.g. --random 1000000")
	case c.n < 0 || c.n > maxBenchN:
		return usagef("--random %d is out of range; use 1 to %d", c.n, maxBenchN)
	case c.distance == 0:
		return usagef("--distance 0 finds nothing (identical values are never paired); use 1 to 63")
	case !(c.plant >= 0 && c.plant <= 1):
		return usagef("--plant %v is not a rate; use 0 to 1 (0.01 plants one copy per 100 fingerprints)", c.plant)
	case c.repeat < 1:
		return usagef("--repeat %d: use 1 or more", c.repeat)
	}
	if err := checkSearchFlags(c.distance, c.blocks, c.threads); err != nil {
		return err
	}

	res, err := bench.Findall(bench.FindallOptions{
		N: c.n, Plant: c.plant, Distance: c.distance, Blocks: c.blocks, Threads: c.threads, Repeat: c.repeat, Seed: c.seed,
	})
	if err != nil {
		return err
	}
	res.Threads = effectiveThreads(c.threads)
	if !c.json {
		return writeBenchReport(e.stdout, res)
	}
	if err := writeBenchReport(e.stderr, res); err != nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if _, err := e.stdout.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// writeBenchReport writes the human-readable report of res.
func writeBenchReport(w io.Writer, res bench.FindallResult) error {
	how := "given"
	if res.Auto {
		how = "automatic"
	}
	total := res.N + res.Planted
	recall := "no planted pairs"
	if res.Recall != nil {
		recall = fmt.Sprintf("recall %.4f", *res.Recall)
	}
	rss := "unknown"
	if res.PeakRSSBytes > 0 {
		rss = fmt.Sprintf("%.1f MiB", float64(res.PeakRSSBytes)/(1<<20))
	}
	_, err := fmt.Fprintf(w, `bench findall
  input     %d fingerprints: %d random + %d planted copies (1-%d bits flipped), seed %d
  design    %d blocks (%s), distance %d, %d tables, %d threads
  time      %.3fs, best of %d (%.2fM fingerprints/s)
  pairs     %d
  planted   %d of %d planted pairs found, %s
  peak RSS  %s
`,
		total, res.N, res.Planted, res.Distance, res.Seed,
		res.Blocks, how, res.Distance, binomial(res.Blocks, res.Distance), res.Threads,
		res.Seconds, res.Repeat, float64(total)/res.Seconds/1e6,
		res.Pairs,
		res.PlantedRecovered, res.PlantedPairs, recall,
		rss)
	if err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}
