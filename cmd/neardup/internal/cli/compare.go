package cli

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/internal/measure"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
)

var compareCommand = &command{
	name:    "compare",
	args:    "A B",
	summary: "compare two documents by every measure, side by side",
	about: `Compares two documents, files A and B, by every measure neardup has:

  raw bytes equal        the SHA-256 of the bytes as they are
  normalized text equal  the SHA-256 of the normalized words joined by single spaces
                         (--unit chars: of the normalized text): equal when the texts
                         differ only in case, accents, punctuation, spacing or Unicode form
  Jaccard                exact |A and B| / |A or B| of the two sets of shingles
  containment            |A and B| / |A| (A in B) and |A and B| / |B| (B in A): high when
                         one text is inside the other, which Jaccard rates low
  MinHash estimate       the Jaccard estimate of two --k signatures (seed 0), as
                         'neardup minhash' makes them
  SimHash distance       the bits in which the two --scheme fingerprints differ, as
                         'neardup simhash' makes them; a scheme has its own pipeline, so
                         --unit and --k-shingle do not change it
  cosine                 of the shingles weighted by how often they occur (term frequency)
  edit similarity        1 - (Levenshtein distance / longer length), in characters of the
                         texts as they are; only when both have at most 10000 characters

Shingles are made as 'neardup minhash' makes them: normalized (NFKC, case and accents
folded, punctuation removed, unless the text-pipeline flags such as --keep-case or
--mask-numbers say otherwise, as in 'neardup dedup'), tokenized, word 5-shingles by
default, hashed (one hash per word, chained).
The output is a table with a header line naming A, B and the pipeline; with --json it is
one JSON object with every measure and the size of each document (bytes, tokens, features).

One of A and B may be "-", standard input. Each is read whole, gzip- or zstd-compressed input
decompressed, and one larger than --max-bytes (after decompression) is an error. Any
bytes are accepted, valid UTF-8 or not. HTML is compared as text, tags and all, unless
--html is given: then each page's main content is compared, as 'neardup check' and the
service fingerprint it (extract's main text, or the visible text where extraction fails
to find one), and only "raw bytes equal" looks at the pages as they are.
`,
	new: func() runner { return &compareCmd{} },
}

// compareCmd is "neardup compare".
type compareCmd struct {
	features textFlags
	k        int
	scheme   simhash.Scheme
	json     bool
	html     bool
	maxBytes int
}

func (c *compareCmd) define(fs *flag.FlagSet) {
	c.features.define(fs)
	defineSignatureK(fs, &c.k)
	fs.TextVar(&c.scheme, "scheme", simhash.SchemeNeardup, "compare SimHash fingerprints of `SCHEME`: neardup or simhash-py, as\n'neardup simhash --scheme' makes them (default neardup)")
	fs.BoolVar(&c.json, "json", false, "write one JSON object instead of the table (default false)")
	fs.BoolVar(&c.html, "html", false, "A and B are HTML pages: compare their main contents (default false)")
	fs.IntVar(&c.maxBytes, "max-bytes", 64<<20, "refuse a file larger than `N` bytes (default 67108864: 64 MiB)")
}

// compareResult is every measure of a comparison, and the --json output.
type compareResult = measure.Result

func (c *compareCmd) run(e *env, args []string) error {
	if len(args) != 2 {
		return usagef("give two files to compare, A and B, not %d", len(args))
	}
	if args[0] == "-" && args[1] == "-" {
		return usagef("only one of A and B can be standard input (-)")
	}
	if err := checkSignatureK(c.k); err != nil {
		return err
	}
	if err := c.features.check(); err != nil {
		return err
	}
	if c.maxBytes < 1 {
		return usagef("--max-bytes %d: use 1 or more", c.maxBytes)
	}
	var (
		texts [2]string
		sums  [2][sha256.Size]byte
		fpr   *neardup.Fingerprinter
	)
	if c.html {
		var err error
		if fpr, err = neardup.NewFingerprinter(neardup.Options{Pipeline: neardup.Pipeline{Extract: extract.Options{MaxBytes: c.maxBytes}}}); err != nil {
			return err
		}
	}
	for i, name := range args {
		b, shown, err := readPage(e, name, c.maxBytes)
		if err != nil {
			return err
		}
		sums[i] = sha256.Sum256(b) // here, so that the bytes need not be copied again later
		texts[i] = string(b)
		if fpr != nil {
			if texts[i], err = fpr.MainText(neardup.Document{ID: shown, HTML: b}); err != nil {
				return err
			}
		}
	}
	res, err := c.compare(args, texts, sums)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	if c.json {
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		w.Write(append(b, '\n'))
	} else {
		features := c.features.describe()
		if c.html {
			features = "main contents, " + features
		}
		writeCompareTable(w, res, features)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// compare computes every measure of the two texts, given their names and the SHA-256 of
// their bytes.
func (c *compareCmd) compare(names []string, texts [2]string, sums [2][sha256.Size]byte) (*compareResult, error) {
	return measure.Compare(
		measure.Text{Name: names[0], Text: texts[0], Sum: sums[0]},
		measure.Text{Name: names[1], Text: texts[1], Sum: sums[1]},
		measure.Options{Unit: c.features.unit, K: c.features.kShingle, Normalize: c.features.options(shingle.TF), MinHashK: c.k, Scheme: c.scheme})
}

// writeCompareTable writes res as a header line and an aligned table of measures.
// features describes the shingles, as in "word 5-shingles" (prefixed "main contents, "
// with --html).
func writeCompareTable(w io.Writer, res *compareResult, features string) {
	fmt.Fprintf(w, "A = %s, B = %s; %s, MinHash K=%d, SimHash %s\n\n",
		displayName(res.A.Name), displayName(res.B.Name), features, res.MinHashK, res.SimHashScheme)
	units := "words"
	if res.Unit == shingle.Chars {
		units = "characters"
	}
	yesNo := map[bool]string{true: "yes", false: "no"}
	edit := fmt.Sprintf("n/a (longer than %d characters)", minhash.MaxEditRunes)
	if res.EditSimilarity != nil {
		edit = ratio(*res.EditSimilarity)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range [][2]string{
		{"measure", "value"},
		{"size of A", fmt.Sprintf("%d bytes, %d %s, %d shingles", res.A.Bytes, res.A.Tokens, units, res.A.Features)},
		{"size of B", fmt.Sprintf("%d bytes, %d %s, %d shingles", res.B.Bytes, res.B.Tokens, units, res.B.Features)},
		{"raw bytes equal (SHA-256)", yesNo[res.RawEqual]},
		{"normalized text equal", yesNo[res.NormalizedEqual]},
		{"Jaccard", fmt.Sprintf("%s (%d of %d shingles)", ratio(res.Jaccard), res.Intersection, res.Union)},
		{"containment of A in B", fmt.Sprintf("%s (%d of %d)", ratio(res.ContainmentAInB), res.Intersection, res.A.Features)},
		{"containment of B in A", fmt.Sprintf("%s (%d of %d)", ratio(res.ContainmentBInA), res.Intersection, res.B.Features)},
		{fmt.Sprintf("MinHash estimate (K=%d)", res.MinHashK), fmt.Sprintf("%s (%d of %d values agree)", ratio(res.MinHash), res.MinHashAgree, res.MinHashK)},
		{fmt.Sprintf("SimHash distance (%s)", res.SimHashScheme), fmt.Sprintf("%d of 64 bits (%s, %s)", res.SimHashDistance, res.A.SimHash, res.B.SimHash)},
		{"cosine (term frequencies)", ratio(res.CosineTF)},
		{"edit similarity", edit},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	tw.Flush()
}

// ratio formats a similarity as the table shows it (measure.Ratio).
func ratio(v float64) string { return measure.Ratio(v) }

// displayName returns the name of an input for the table's header: "stdin" for "-", and
// names with unprintable characters quoted.
func displayName(name string) string {
	if name == "-" {
		return "stdin"
	}
	if strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) || r == utf8.RuneError }) {
		return strconv.Quote(name)
	}
	return name
}
