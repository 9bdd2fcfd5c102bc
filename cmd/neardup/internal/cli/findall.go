package cli

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"time"

	"github.com/neardup/neardup/hamming"
	"github.com/neardup/neardup/simhash"
)

var findallCommand = &command{
	name:    "findall",
	args:    "[FILE|-]",
	summary: "find all pairs of fingerprints within a Hamming distance",
	about: `Reads unsigned 64-bit fingerprints, one per line, from FILE or, when FILE is "-" or
absent, from standard input: decimal (as simhash-cpp's simhash-find-all reads them) or
0x-prefixed hex. Surrounding whitespace, a trailing "\r" and blank lines are ignored;
any other line that is not such a number is an error naming the file and line.

Writes every pair of distinct values at most --distance bits apart, once, smaller value
first, sorted: "[a, b]" in decimal as simhash-cpp writes them, or
"a<TAB>b<TAB>distance" with --tsv (--format tsv, its old spelling, still works). Repeated values count once; identical
fingerprints are never paired, as upstream. With --clusters it writes the connected
components of those pairs instead, one per line: "[a, b, c]", or "a<TAB>b<TAB>c"
with --tsv, each ascending, ordered by their smallest value.

The search uses Manku et al.'s permuted tables: --blocks B cuts fingerprints into B
blocks and makes one pass per choice of B-K blocks ("B choose K" tables). Any B from
K+1 to 64 gives the same pairs; it only changes time and memory.
`,
	new: func() runner { return &findallCmd{} },
}

// unset is the default of a required integer flag.
const unset = math.MinInt

// findallCmd is "neardup findall".
type findallCmd struct {
	distance, blocks, threads int
	tsv                       bool
	format                    *deprecatedFlag
	clusters, verbose         bool
}

func (c *findallCmd) define(fs *flag.FlagSet) {
	fs.IntVar(&c.distance, "distance", unset, "report pairs at most `K` bits apart, 0 to 63 (required; 0 reports nothing,\nas simhash-cpp)")
	fs.IntVar(&c.blocks, "blocks", 0, "use a table design of `B` blocks, K+1 to 64 (default 0: chosen from the\nnumber of fingerprints and K; --verbose shows the choice)")
	fs.BoolVar(&c.tsv, "tsv", false, "write pairs and clusters as tab-separated values instead of simhash-cpp's\n\"[a, b]\" (default false)")
	c.format = deprecate(fs, "format", "--tsv", "json", "write pairs and clusters in `FORMAT`: json or tsv (default json)", func(v string) error {
		switch v {
		case "json", "tsv":
			c.tsv = v == "tsv"
			return nil
		}
		return fmt.Errorf("%q is not a format; use --tsv, or nothing for \"[a, b]\"", v)
	})
	fs.BoolVar(&c.clusters, "clusters", false, "write clusters (connected components of the pairs) instead of pairs\n(default false)")
	fs.IntVar(&c.threads, "threads", 0, "search with `T` goroutines (default 0: one per CPU, GOMAXPROCS)")
	fs.BoolVar(&c.verbose, "verbose", false, "describe the input, the table design and the time taken on standard\nerror (default false)")
}

// checkSearchFlags validates --distance, --blocks and --threads as findall and bench use
// them. An explicit design is checked by hamming, before any input is read.
func checkSearchFlags(distance, blocks, threads int) error {
	switch {
	case distance == unset:
		return usagef("--distance is required: give the largest Hamming distance of a pair, e.g. --distance 3")
	case distance < 0:
		return usagef("--distance %d is negative; use 0 to 63", distance)
	case distance >= hamming.Bits:
		return usagef("--distance %d is too large: fingerprints have 64 bits; use 0 to 63", distance)
	case blocks < 0:
		return usagef("--blocks %d is negative; use 0 (automatic) or %d to 64", blocks, distance+1)
	case threads < 0:
		return usagef("--threads %d is negative; use 0 (one per CPU) or more", threads)
	}
	if blocks > 0 {
		if _, err := hamming.Permutations(blocks, distance); err != nil {
			return err
		}
	}
	return nil
}

// effectiveThreads returns the number of goroutines a Finder with Threads t uses.
func effectiveThreads(t int) int {
	if t > 0 {
		return t
	}
	return runtime.GOMAXPROCS(0)
}

// designString describes the table design FindAll uses for n fingerprints.
func designString(blocks, distance, n int) string {
	how := "given"
	if blocks == 0 {
		blocks, how = hamming.AutoBlocks(n, distance), "automatic"
	}
	return fmt.Sprintf("%d blocks (%s), distance %d, %d tables", blocks, how, distance, binomial(blocks, distance))
}

// binomial returns n choose k for the small values of a table design.
func binomial(n, k int) int {
	r := 1
	for i := range min(k, n-k) {
		r = r * (n - i) / (i + 1)
	}
	return r
}

func (c *findallCmd) run(e *env, args []string) error {
	if err := checkSearchFlags(c.distance, c.blocks, c.threads); err != nil {
		return err
	}
	c.format.warn(e.stderr, "findall")
	format := "json"
	if c.tsv {
		format = "tsv"
	}
	if len(args) > 1 {
		return usagef("give one input file, not %d (concatenate them with cat and read \"-\")", len(args))
	}
	name := "-"
	if len(args) == 1 {
		name = args[0]
	}
	r, shown, closeInput, err := openInput(e, name)
	if err != nil {
		return err
	}
	fps, err := readFingerprints(r, shown)
	if cerr := closeInput(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}

	f := hamming.Finder{Distance: c.distance, Blocks: c.blocks, Threads: c.threads}
	start := time.Now()
	pairs, err := f.FindAll(fps)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if c.verbose {
		fmt.Fprintf(e.stderr, "neardup findall: %d fingerprints from %s; %s, %d threads; %d pairs in %v\n",
			len(fps), shown, designString(c.blocks, c.distance, len(fps)), effectiveThreads(c.threads), len(pairs), elapsed.Round(time.Microsecond))
	}

	w := bufio.NewWriterSize(e.stdout, 64<<10)
	if c.clusters {
		err = writeClusters(w, hamming.ClusterValues(pairs), format)
	} else {
		err = writePairs(w, pairs, format)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// writePairs writes pairs as "[a, b]" (json) or "a\tb\tdistance" (tsv) lines.
func writePairs(w io.Writer, pairs []hamming.Pair, format string) error {
	var buf []byte
	for _, p := range pairs {
		buf = buf[:0]
		if format == "tsv" {
			buf = strconv.AppendUint(buf, p.A, 10)
			buf = append(buf, '\t')
			buf = strconv.AppendUint(buf, p.B, 10)
			buf = append(buf, '\t')
			buf = strconv.AppendInt(buf, int64(simhash.Distance(p.A, p.B)), 10)
		} else {
			buf = append(buf, '[')
			buf = strconv.AppendUint(buf, p.A, 10)
			buf = append(buf, ", "...)
			buf = strconv.AppendUint(buf, p.B, 10)
			buf = append(buf, ']')
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// writeClusters writes each cluster as "[a, b, c]" (json) or "a\tb\tc" (tsv).
func writeClusters(w io.Writer, clusters [][]uint64, format string) error {
	sep := ", "
	if format == "tsv" {
		sep = "\t"
	}
	var buf []byte
	for _, c := range clusters {
		buf = buf[:0]
		if format == "json" {
			buf = append(buf, '[')
		}
		for i, v := range c {
			if i > 0 {
				buf = append(buf, sep...)
			}
			buf = strconv.AppendUint(buf, v, 10)
		}
		if format == "json" {
			buf = append(buf, ']')
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}
