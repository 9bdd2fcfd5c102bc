package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/neardup/neardup/internal/htmlpage"
	"github.com/neardup/neardup/internal/measure"
)

// Data is everything a report shows. Write reads it and neither keeps nor modifies any of
// its slices. The zero value is a valid, empty report.
type Data struct {
	// Title heads the page, for example "neardup dedup: corpus.jsonl".
	Title string
	// Params are the parameters of the run, shown in this order.
	Params []Field
	// Summary are its counts and costs (documents, duplicates, clusters, dropped bytes,
	// timings, peak memory...), shown in this order. A time stamp, if wanted, goes here:
	// the report has none of its own.
	Summary []Field
	// ClusterSizes is the distribution of cluster sizes, in any order; a size listed
	// twice counts twice.
	ClusterSizes []SizeCount
	// Scores is the histogram of the distances or similarities of the verified pairs.
	Scores Histogram
	// Largest are the clusters to read first, shown in this order: the largest that
	// hold near duplicates, then those of exact copies only (the page says so).
	Largest []Cluster
	// Borderline are clusters with a member near the threshold, shown in this order.
	Borderline []Cluster
	// Mirrors are the pairs of sites found to mirror each other, shown in this order.
	Mirrors []Mirror
}

// Field is one named value of Data.Params or Data.Summary, shown as given.
type Field struct {
	Name, Value string
}

// SizeCount says that Count clusters have Size members.
type SizeCount struct {
	Size, Count int
}

// Histogram is a histogram of pair scores.
type Histogram struct {
	// Label names the score and its unit, for example "SimHash distance (bits)" or
	// "MinHash similarity"; it labels the x axis.
	Label string
	// Bins are the histogram's bins, in any order. For integer scores centre each bin
	// on its integer (distance 3 is Lo 2.5, Hi 3.5) so the axis ticks fall under them.
	Bins []Bin
	// Threshold is drawn as a vertical marker at its value on the x axis; NaN draws none.
	Threshold float64
}

// Bin counts the scores in [Lo, Hi).
type Bin struct {
	Lo, Hi float64
	Count  int
}

// Cluster is a cluster of near-duplicate documents as the report shows it: its
// representative, and some members each set side by side with it.
type Cluster struct {
	// ID identifies the cluster in the engine's other outputs.
	ID int
	// Size is the number of documents in the cluster, Members shown or not.
	Size int
	// Representative is the member the others are compared with (the one kept).
	Representative Member
	// Members are the members shown, each compared word by word with Representative.
	Members []Member
}

// Member is one document of a Cluster. Its text is corpus content: untrusted, shown
// escaped, possibly truncated by the caller.
type Member struct {
	ID  string
	URL string
	// Score is its distance or similarity to the representative, formatted, for example
	// "3 bits" or "0.84".
	Score string
	Text  string
}

// Mirror is a pair of sites, each a host and a path prefix, that carry the same content
// under the same relative paths. Its fields are those of mirror.Mirror, in the same
// order, so report.Mirror(m) converts one.
type Mirror struct {
	HostA   string
	PrefixA string
	HostB   string
	PrefixB string
	// Shared is the number of relative paths with a page under both prefixes, and Same
	// how many of them have the same or nearly the same content.
	Shared int
	Same   int
	// Score is Same / Shared.
	Score float64
	// Coverage is Shared divided by the number of pages under the smaller prefix.
	Coverage float64
}

// Write writes d as one self-contained HTML page to w: inline CSS and SVG, no script, no
// external resource. The bytes depend only on d. It returns an error, prefixed
// "report:", if d has a negative count, a cluster size below 1, a histogram bin that is
// not finite or has Hi below Lo, or if w fails; w gets nothing unless d is valid.
//
// Write is safe for concurrent use. It costs one word diff per member shown (bounded: see the package doc) and holds the
// whole page in memory before writing it.
func Write(w io.Writer, d Data) error {
	if err := validate(d); err != nil {
		return err
	}
	v := view{
		Title:      clean(d.Title),
		Params:     cleanFields(d.Params),
		Summary:    cleanFields(d.Summary),
		Sizes:      sizeTable(d.ClusterSizes),
		ScoreLabel: clean(d.Scores.Label),
		Largest:    clusterViews(d.Largest, "largest"),
		Borderline: clusterViews(d.Borderline, "borderline"),
	}
	if v.Title == "" {
		v.Title = "neardup report"
	}
	v.SizePlot = sizePlot(v.Sizes)
	bins := slices.SortedStableFunc(slices.Values(d.Scores.Bins), func(a, b Bin) int {
		return cmp.Or(cmp.Compare(a.Lo, b.Lo), cmp.Compare(a.Hi, b.Hi))
	})
	for _, b := range bins {
		v.BinRows = append(v.BinRows, binRow{formatFloat(b.Lo), formatFloat(b.Hi), formatCount(b.Count)})
	}
	if !math.IsNaN(d.Scores.Threshold) {
		v.Threshold = formatFloat(d.Scores.Threshold)
	}
	v.ScorePlot = scorePlot(bins, d.Scores.Threshold, v.ScoreLabel)
	for _, m := range d.Mirrors {
		v.Mirrors = append(v.Mirrors, mirrorRow{
			A:        clean(m.HostA + m.PrefixA),
			B:        clean(m.HostB + m.PrefixB),
			Shared:   formatCount(m.Shared),
			Same:     formatCount(m.Same),
			Score:    strconv.FormatFloat(m.Score, 'f', 2, 64),
			Coverage: strconv.FormatFloat(100*m.Coverage, 'f', 0, 64) + "%",
		})
	}
	var b htmlpage.Builder
	writePage(&b, v)
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// validate checks what the plots need of d.
func validate(d Data) error {
	for _, s := range d.ClusterSizes {
		if s.Size < 1 || s.Count < 0 {
			return fmt.Errorf("report: cluster size %d with count %d; sizes start at 1 and counts at 0", s.Size, s.Count)
		}
	}
	for _, b := range d.Scores.Bins {
		if math.IsNaN(b.Lo) || math.IsInf(b.Lo, 0) || math.IsNaN(b.Hi) || math.IsInf(b.Hi, 0) || b.Hi < b.Lo || b.Count < 0 {
			return fmt.Errorf("report: histogram bin [%g, %g) with count %d; bins need finite bounds, Lo <= Hi and a count from 0", b.Lo, b.Hi, b.Count)
		}
	}
	if t := d.Scores.Threshold; math.IsInf(t, 0) {
		return fmt.Errorf("report: histogram threshold %g; give a finite value, or NaN for none", t)
	}
	for _, c := range slices.Concat(d.Largest, d.Borderline) {
		if c.Size < 0 {
			return fmt.Errorf("report: cluster %d of size %d; sizes start at 0", c.ID, c.Size)
		}
	}
	return nil
}

// view is what the page shows: d cleaned, sorted, formatted and laid out.
type view struct {
	Title                 string
	Params, Summary       []Field
	Sizes                 []SizeCount
	SizePlot              *plot
	ScoreLabel, Threshold string
	BinRows               []binRow
	ScorePlot             *plot
	Largest, Borderline   []clusterView
	Mirrors               []mirrorRow
}

type binRow struct{ Lo, Hi, Count string }

type mirrorRow struct{ A, B, Shared, Same, Score, Coverage string }

type clusterView struct {
	Anchor         string
	ID, Size       string
	Shown          int
	Open           bool
	Representative Member
	Pairs          []pairView
}

type pairView struct {
	Member Member
	measure.Diff
}

// clusterViews lays out clusters, each with an anchor made of kind and its position,
// the first one open.
func clusterViews(cs []Cluster, kind string) []clusterView {
	var out []clusterView
	for i, c := range cs {
		v := clusterView{
			Anchor:         kind + "-" + strconv.Itoa(i+1),
			ID:             strconv.Itoa(c.ID),
			Size:           formatCount(c.Size),
			Shown:          1 + len(c.Members),
			Open:           i == 0,
			Representative: cleanMember(c.Representative),
		}
		for _, m := range c.Members {
			m = cleanMember(m)
			v.Pairs = append(v.Pairs, pairView{m, measure.WordDiff(v.Representative.Text, m.Text)})
		}
		out = append(out, v)
	}
	return out
}

// sizeTable returns sizes sorted by size with the counts of a repeated size added up.
func sizeTable(sizes []SizeCount) []SizeCount {
	out := slices.SortedFunc(slices.Values(sizes), func(a, b SizeCount) int { return cmp.Compare(a.Size, b.Size) })
	n := 0
	for _, s := range out {
		if n > 0 && out[n-1].Size == s.Size {
			out[n-1].Count += s.Count
			continue
		}
		out[n] = s
		n++
	}
	return out[:n]
}

// clean makes s valid UTF-8, so the page is; the page's writer escapes the rest.
func clean(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func cleanFields(fs []Field) []Field {
	out := make([]Field, len(fs))
	for i, f := range fs {
		out[i] = Field{clean(f.Name), clean(f.Value)}
	}
	return out
}

func cleanMember(m Member) Member {
	return Member{clean(m.ID), clean(m.URL), clean(m.Score), clean(m.Text)}
}

// formatCount formats n with its digits in groups of three: 1234567 is "1,234,567".
func formatCount(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatFloat formats x to six significant digits, without trailing zeros: a bound or
// threshold computed in floating point (0.8200000000000001) reads as the number it
// stands for (0.82), and no score here means anything past six digits.
func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
