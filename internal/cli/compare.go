package cli

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

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
folded, punctuation removed), tokenized, word 5-shingles by default, hashed (one hash per word, chained).
The output is a table with a header line naming A, B and the pipeline; with --json it is
one JSON object with every measure and the size of each document (bytes, tokens, features).

One of A and B may be "-", standard input. Each is read whole, gzip- or zstd-compressed input
decompressed, and one larger than --max-bytes (after decompression) is an error. Any
bytes are accepted, valid UTF-8 or not. HTML is compared as text, tags and all; use
'neardup extract' first to compare main contents.
`,
	new: func() runner { return &compareCmd{} },
}

// compareCmd is "neardup compare".
type compareCmd struct {
	features featureFlags
	k        int
	scheme   simhash.Scheme
	json     bool
	maxBytes int
}

func (c *compareCmd) define(fs *flag.FlagSet) {
	c.features.define(fs)
	defineSignatureK(fs, &c.k)
	fs.TextVar(&c.scheme, "scheme", simhash.SchemeNeardup, "compare SimHash fingerprints of `SCHEME`: neardup or simhash-py, as\n'neardup simhash --scheme' makes them (default neardup)")
	fs.BoolVar(&c.json, "json", false, "write one JSON object instead of the table (default false)")
	fs.IntVar(&c.maxBytes, "max-bytes", 64<<20, "refuse a file larger than `N` bytes (default 67108864: 64 MiB)")
}

// compareDoc describes one of the two documents of a comparison.
type compareDoc struct {
	Name             string `json:"name"`
	Bytes            int    `json:"bytes"`
	Runes            int    `json:"runes"`
	Tokens           int    `json:"tokens"`
	Features         int    `json:"features"`
	SHA256           string `json:"sha256"`
	NormalizedSHA256 string `json:"normalized_sha256"`
	SimHash          string `json:"simhash"`
}

// compareResult is every measure of a comparison, and the --json output.
type compareResult struct {
	A               compareDoc     `json:"a"`
	B               compareDoc     `json:"b"`
	Unit            shingle.Unit   `json:"unit"`
	KShingle        int            `json:"k_shingle"`
	MinHashK        int            `json:"minhash_k"`
	SimHashScheme   simhash.Scheme `json:"simhash_scheme"`
	RawEqual        bool           `json:"raw_equal"`
	NormalizedEqual bool           `json:"normalized_equal"`
	Jaccard         float64        `json:"jaccard"`
	Intersection    int            `json:"intersection"`
	Union           int            `json:"union"`
	ContainmentAInB float64        `json:"containment_a_in_b"`
	ContainmentBInA float64        `json:"containment_b_in_a"`
	MinHash         float64        `json:"minhash_similarity"`
	MinHashAgree    int            `json:"minhash_agree"`
	SimHashDistance int            `json:"simhash_distance"`
	CosineTF        float64        `json:"cosine_tf"`
	EditSimilarity  *float64       `json:"edit_similarity"` // null when a text is too long
}

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
	)
	for i, name := range args {
		b, _, err := readPage(e, name, c.maxBytes)
		if err != nil {
			return err
		}
		sums[i] = sha256.Sum256(b) // here, so that the bytes need not be copied again later
		texts[i] = string(b)
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
		writeCompareTable(w, res, c.features.describe())
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// compare computes every measure of the two texts, given their names and the SHA-256 of
// their bytes.
func (c *compareCmd) compare(names []string, texts [2]string, sums [2][sha256.Size]byte) (*compareResult, error) {
	// One pass gives both the set and the term frequencies: AppendWeighted yields each
	// distinct shingle once, sorted by hash, the set that AppendHashes yields.
	s, err := shingle.New(c.features.options(shingle.TF))
	if err != nil {
		return nil, err
	}
	h := minhash.Hasher{K: c.k}
	res := &compareResult{
		Unit:          c.features.unit,
		KShingle:      c.features.k(),
		MinHashK:      c.k,
		SimHashScheme: c.scheme,
	}
	var (
		features [2][]uint64
		weighted [2][]minhash.Weighted
		sigs     [2]minhash.Signature
		fps      [2]uint64
		buf      []shingle.Feature
	)
	for i, d := range []struct {
		doc        *compareDoc
		name, text string
	}{{&res.A, names[0], texts[0]}, {&res.B, names[1], texts[1]}} {
		norm, tokens := normalizedSum(s, c.features.unit, d.text)
		buf = s.AppendWeighted(buf[:0], d.text)
		features[i] = make([]uint64, len(buf))
		weighted[i] = make([]minhash.Weighted, len(buf))
		for j, f := range buf {
			features[i][j] = f.Hash
			weighted[i][j] = minhash.Weighted(f)
		}
		sigs[i] = h.Signature(features[i])
		fps[i] = c.scheme.Fingerprint(d.text)
		*d.doc = compareDoc{
			Name:             d.name,
			Bytes:            len(d.text),
			Runes:            utf8.RuneCountInString(d.text),
			Tokens:           tokens,
			Features:         len(features[i]),
			SHA256:           hex.EncodeToString(sums[i][:]),
			NormalizedSHA256: hex.EncodeToString(norm[:]),
			SimHash:          fmt.Sprintf("%016x", fps[i]),
		}
	}
	res.RawEqual = res.A.SHA256 == res.B.SHA256
	res.NormalizedEqual = res.A.NormalizedSHA256 == res.B.NormalizedSHA256
	res.Jaccard = minhash.Jaccard(features[0], features[1])
	res.ContainmentAInB = minhash.Containment(features[0], features[1])
	res.ContainmentBInA = minhash.Containment(features[1], features[0])
	// Containment is |A and B| / |A|, exact in float64 for any set that fits in memory.
	res.Intersection = int(math.Round(res.ContainmentAInB * float64(len(features[0]))))
	res.Union = len(features[0]) + len(features[1]) - res.Intersection
	res.MinHash = minhash.Similarity(sigs[0], sigs[1])
	res.MinHashAgree = int(math.Round(res.MinHash * float64(c.k)))
	res.SimHashDistance = simhash.Distance(fps[0], fps[1])
	res.CosineTF = minhash.Cosine(weighted[0], weighted[1])
	if res.A.Runes <= minhash.MaxEditRunes && res.B.Runes <= minhash.MaxEditRunes {
		s := minhash.EditSimilarity(texts[0], texts[1])
		res.EditSimilarity = &s
	}
	return res, nil
}

// normalizedSum returns the SHA-256 of the units s makes of text, words joined by single
// spaces or code points as they are (they include the spaces between words), and the
// number of units.
func normalizedSum(s *shingle.Shingler, unit shingle.Unit, text string) (sum [sha256.Size]byte, units int) {
	h := sha256.New()
	for tok := range s.Tokens(text) {
		if units > 0 && unit == shingle.Words {
			h.Write([]byte{' '})
		}
		h.Write(tok)
		units++
	}
	h.Sum(sum[:0])
	return sum, units
}

// writeCompareTable writes res as a header line and an aligned table of measures.
// features describes the shingles, as in "word 5-shingles".
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

// ratio formats a similarity in [0, 1] with four decimals, without rounding a value
// below 1 up to 1.0000 or a value above 0 down to 0.0000.
func ratio(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	switch {
	case s == "1.0000" && v < 1:
		return ">0.9999"
	case s == "0.0000" && v > 0:
		return "<0.0001"
	}
	return s
}

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
